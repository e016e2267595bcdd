//! `arbiter bench avc`: the access vector cache study, side by side in one run.
//!
//! Reproduces the 2025 hash-slot study's tables (bucket utilization and longest chain, ns
//! per lookup) for 512/512, 1024/512, 2048/512, 8192/8192 and 8192/4096 entries/slots, for
//! each hash function, in a kernel-style chained cache and in arbiter's cache, plus
//! arbiter's default layout, hit ratio, miss cost and 1- and 2-thread hit throughput.
//!
//! The trace comes from a real policy: (source, target, class) triples of its allow rules
//! with concrete member types, queried with Zipf-skewed popularity; contexts get SIDs in
//! first-seen order, as the kernel allocates them. `--trace FILE` replays any workload of
//! `SCONTEXT TCONTEXT TCLASS` lines instead. Decisions on misses come from the real
//! security server.

use crate::load;
use crate::out::progress::Bar;
use crate::out::{CliError, Out};
use arbiter_decide::SecurityServer;
use arbiter_io::{Crlf, Lines};
use arbiter_lab::avc_study::{self as bench, BenchOptions, Query, TraceOptions};
use arbiter_policy::avtab::AvtabKind;
use arbiter_policy::mls::{Context, MlsRange};
use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::{RoleId, TypeId};
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(clap::Subcommand)]
pub enum Which {
    /// The access vector cache study.
    Avc(AvcArgs),
    /// BSM: event-class map designs, praudit-style printing, auditreduce-style selection.
    Bsm(crate::cmd::bsm::BenchArgs),
    /// Policy reload under load: reload times, verified answers, hit scaling.
    ///
    /// Readers check through the cache while a writer reloads policies and flips booleans;
    /// every answer verified; hit scaling with and without a shared reference count.
    Reload(ReloadArgs),
    /// The Landlock domain layout study (coalesced hash vs sorted array vs kernel-style tree).
    Landlock(crate::cmd::landlock::BenchArgs),
}

#[derive(clap::Args)]
pub struct ReloadArgs {
    /// A policy to alternate (repeat for more; default: the Debian default and MLS policies
    /// when installed, else the embedded one).
    #[arg(long = "policy")]
    policies: Vec<String>,
    /// Live SIDs to create before reloading.
    #[arg(long, default_value_t = 10_000)]
    sids: usize,
    /// Seconds of reloading under load.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Cache hits per thread in the hit-scaling measurement.
    #[arg(long, default_value_t = 4_000_000)]
    lookups: usize,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

fn run_reload(a: ReloadArgs, out: &mut Out) -> Result<ExitCode, CliError> {
    let mut names = a.policies.clone();
    if names.is_empty() {
        names = arbiter_lab::debian_policies()
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        if names.is_empty() {
            names.push(load::BUILTIN_NAME.to_string());
        }
    }
    let bar = Bar::steps("arbiter bench reload");
    bar.step("reading the policies");
    let policies: Vec<_> = names.iter().map(load::policy).collect::<Result<_, _>>()?;
    crate::diag!(
        "arbiter bench reload: {} SIDs, {} s, alternating {}",
        a.sids,
        a.seconds,
        names.join(" / ")
    );
    bar.step(format!("reloading for {} s", a.seconds));
    let rep = arbiter_lab::reload::run(
        &policies,
        &arbiter_lab::reload::Options {
            sids: a.sids,
            seconds: a.seconds,
            ..Default::default()
        },
    )?;
    bar.step("cache scaling, 1 and 2 threads");
    let scaling = arbiter_lab::reload::scaling(&policies[0], a.lookups.max(1), 5)?;
    drop(bar);
    let mut j = rep.to_json();
    j["scaling"] = scaling.to_json();
    j["policies"] = serde_json::json!(names);
    if a.json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&j).map_err(|e| e.to_string())?
        )?;
    } else {
        writeln!(
            out,
            "reloads {} (boolean commits {}), reload median {:.3} ms, max {:.3} ms",
            rep.reloads, rep.commits, rep.reload_ms_median, rep.reload_ms_max
        )?;
        writeln!(
            out,
            "SIDs converted {} (invalid under the last policy: {})",
            rep.sids_converted, rep.sids_invalidated
        )?;
        writeln!(
            out,
            "checks {} (verified {}), mismatches {}, errors {}",
            rep.checks, rep.verified, rep.mismatches, rep.errors
        )?;
        writeln!(
            out,
            "longest check {:.1} µs; p99.99 steady {:.0} ns, during reloads {:.0} ns",
            rep.max_stall_us, rep.p9999_ns_steady, rep.p9999_ns_during_reload
        )?;
        writeln!(
            out,
            "cache hits/s: arbiter {:.1} M (1 thread) -> {:.1} M (2 threads) = {:.2}x; shared refcount {:.1} M -> {:.1} M = {:.2}x",
            scaling.arbiter_1 / 1e6,
            scaling.arbiter_2 / 1e6,
            scaling.arbiter_2 / scaling.arbiter_1,
            scaling.refcount_1 / 1e6,
            scaling.refcount_2 / 1e6,
            scaling.refcount_2 / scaling.refcount_1
        )?;
    }
    Ok(if rep.mismatches == 0 && rep.errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[derive(clap::Args)]
pub struct AvcArgs {
    /// Policy to build the trace from and decide with (default: the embedded one).
    #[arg(long, default_value = load::BUILTIN_NAME)]
    policy: String,
    /// Replay this workload (lines `SCONTEXT TCONTEXT TCLASS`) instead of a synthetic trace.
    #[arg(long)]
    trace: Option<std::path::PathBuf>,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Queries in the synthetic trace.
    #[arg(long, default_value_t = 400_000)]
    queries: usize,
    /// Distinct (source, target, class) entries in the synthetic trace.
    #[arg(long, default_value_t = 12_000)]
    distinct: usize,
    /// Zipf exponent of entry popularity.
    #[arg(long, default_value_t = 1.0)]
    zipf: f64,
    /// Timed repetitions (medians are reported).
    #[arg(long, default_value_t = 7)]
    repetitions: usize,
    /// A shorter run (fewer queries, repetitions and throughput lookups).
    #[arg(long)]
    quick: bool,
}

pub fn run(w: Which, out: &mut Out) -> Result<ExitCode, CliError> {
    match w {
        Which::Avc(a) => run_avc(a, out),
        Which::Reload(a) => run_reload(a, out),
        Which::Bsm(b) => crate::cmd::bsm::bench(b, out),
        Which::Landlock(a) => crate::cmd::landlock::bench(a, out),
    }
}

fn run_avc(a: AvcArgs, out: &mut Out) -> Result<ExitCode, CliError> {
    let bar = Bar::steps("arbiter bench avc");
    bar.step("reading the policy and the trace");
    let server = Arc::new(SecurityServer::new(load::policy(&a.policy)?));
    let mut opts = BenchOptions {
        repetitions: a.repetitions,
        ..BenchOptions::default()
    };
    let trace = match &a.trace {
        Some(path) => read_trace(&server, path)?,
        None => {
            let mut topts = TraceOptions {
                distinct: a.distinct,
                queries: a.queries,
                zipf: a.zipf,
                ..TraceOptions::default()
            };
            if a.quick {
                topts.queries = topts.queries.min(100_000);
            }
            policy_trace(&server, &topts)?
        }
    };
    if a.quick {
        opts.repetitions = opts.repetitions.min(3);
        opts.throughput_lookups = 500_000;
    }
    if trace.is_empty() {
        return Err("the trace is empty".into());
    }
    crate::diag!("arbiter bench avc: {} queries on {}", trace.len(), a.policy);
    bar.step(format!("{} timed repetitions", opts.repetitions));
    let report = bench::run(&trace, &server, &opts);
    drop(bar);
    if a.json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&report.to_json()).map_err(|e| e.to_string())?
        )?;
    } else {
        write!(out, "{}", report.to_text())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Why a workload cannot be built or read; a line's error names the file and line.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The trace file cannot be opened or read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// What failed.
        source: std::io::Error,
    },
    /// A line over the batch limit or not UTF-8.
    #[error("{path}: {source}")]
    Line {
        /// The file.
        path: String,
        /// The line's problem (it names the line).
        source: arbiter_io::LineError,
    },
    /// A line without exactly three fields.
    #[error("{path}:{line}: expected `SCONTEXT TCONTEXT TCLASS`, got {fields} fields")]
    Fields {
        /// The file.
        path: String,
        /// The line number.
        line: u64,
        /// How many fields it has.
        fields: usize,
    },
    /// A context or class the policy refuses.
    #[error("{path}:{line}: {source}")]
    Decide {
        /// The file.
        path: String,
        /// The line number.
        line: u64,
        /// The security server's reason (boxed: it is large).
        source: Box<arbiter_decide::DecideError>,
    },
    /// A type of the synthetic trace has no valid context (a bug in the trace builder).
    #[error("internal: a trace type has no context")]
    NoContext,
    /// A synthetic context the SID table refuses.
    #[error(transparent)]
    Sid(Box<arbiter_decide::DecideError>),
}

/// A valid context for each concrete type: the first user's low level, role object_r
/// (which the kernel exempts from role checks), so every type of the policy can appear.
fn type_contexts(server: &SecurityServer) -> Vec<Option<Context>> {
    let snap = server.snapshot();
    let p = &snap.policy;
    let user = snap
        .names()
        .user("system_u")
        .or_else(|| arbiter_policy::UserId::from_index(0))
        .filter(|u| u.index() < p.users.len());
    p.types
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let user = user?;
            if t.flavor != TypeFlavor::Type {
                return None;
            }
            let low = p.users[user.index()].range.low.clone();
            let c = Context {
                user,
                role: RoleId::new(1)?,
                ty: TypeId::from_index(i)?,
                range: MlsRange {
                    low: low.clone(),
                    high: low,
                },
            };
            p.context_is_valid(&c).ok().map(|_| c)
        })
        .collect()
}

/// Triples of (source type, target type, class) from the policy's allow rules, expanded
/// to member types, turned into a Zipf trace whose SIDs are interned in first-seen order.
fn policy_trace(server: &SecurityServer, topts: &TraceOptions) -> Result<Vec<Query>, TraceError> {
    let snap = server.snapshot();
    let p = &snap.policy;
    let contexts = type_contexts(server);
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); p.types.len()];
    for (t, map) in p.type_attr_map.iter().enumerate() {
        if contexts.get(t).is_some_and(|c| c.is_some()) {
            for a in map.iter() {
                if let Some(m) = members.get_mut(a as usize) {
                    m.push(t as u32);
                }
            }
        }
    }
    let mut triples = Vec::new();
    let mut k = 0usize;
    for e in p.avtab.entries.iter().chain(p.cond_avtab.entries.iter()) {
        if e.key.kind != AvtabKind::Allowed {
            continue;
        }
        let (ms, mt) = (
            &members[e.key.source.index()],
            &members[e.key.target.index()],
        );
        if ms.is_empty() || mt.is_empty() {
            continue;
        }
        // A few deterministic member pairs per rule.
        for j in 0..3 {
            k = k
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let s = ms[(k >> 33) % ms.len()];
            let t = mt[((k >> 17) + j) % mt.len()];
            triples.push((s, t, e.key.class.value()));
        }
    }
    let (trace, raws) = bench::synthetic_trace_with_sids(&triples, topts);
    // Intern contexts in first-seen order and map the trace's SIDs to the server's.
    let mut sid_of = Vec::with_capacity(raws.len());
    for raw in raws {
        let ctx = contexts[raw as usize]
            .clone()
            .ok_or(TraceError::NoContext)?;
        sid_of.push(
            server
                .context_struct_to_sid(ctx)
                .map_err(|e| TraceError::Sid(Box::new(e)))?
                .get(),
        );
    }
    Ok(trace
        .into_iter()
        .map(|q| Query {
            ssid: sid_of[q.ssid as usize - 1],
            tsid: sid_of[q.tsid as usize - 1],
            ..q
        })
        .collect())
}

/// Reads `SCONTEXT TCONTEXT TCLASS` lines; each query requests every permission.
/// Reads a workload, line by line and bounded as every batch input (a trace is a file of
/// any size, or a pipe); the first bad line stops the benchmark with its number.
fn read_trace(server: &SecurityServer, path: &std::path::Path) -> Result<Vec<Query>, TraceError> {
    let name = path.display().to_string();
    let read = |source| TraceError::Read {
        path: name.clone(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read)?;
    let mut lines = Lines::new(
        std::io::BufReader::new(file),
        crate::cmd::BATCH_LINE_MAX,
        Crlf::Strip,
    );
    let mut out = Vec::new();
    while let Some(line) = lines.next_line().map_err(read)? {
        let t = line
            .text(crate::cmd::BATCH_LINE_MAX)
            .map_err(|source| TraceError::Line {
                path: name.clone(),
                source,
            })?
            .trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = t.split_ascii_whitespace().collect();
        let n = line.number;
        if f.len() != 3 {
            return Err(TraceError::Fields {
                path: name,
                line: n,
                fields: f.len(),
            });
        }
        let err = |source| TraceError::Decide {
            path: name.clone(),
            line: n,
            source: Box::new(source),
        };
        let s = server.context_to_sid(f[0]).map_err(err)?;
        let tt = server.context_to_sid(f[1]).map_err(err)?;
        let c = server.known_class(f[2]).map_err(err)?;
        out.push(Query {
            ssid: s.get(),
            tsid: tt.get(),
            tclass: c.value(),
            requested: u32::MAX,
        });
    }
    Ok(out)
}
