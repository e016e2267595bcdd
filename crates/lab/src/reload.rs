//! Policy reload under load, and what a shared reference count costs.
//!
//! [`run`] starts one reader per core that checks a stream of (subject, object, class,
//! permissions) through the access vector cache while a writer alternates
//! `load_policy(A)` / `load_policy(B)` and boolean commits. Every 8th answer is verified
//! against the uncached decision of the policy state it was computed on (the writer keeps
//! the last few published states, so the verifier finds the one the answer names);
//! every check is timed, and its latency is filed as "during a reload" when a reload was
//! in progress when it started or ended, "steady" otherwise.
//!
//! [`scaling`] measures cache-hit throughput at 1 and 2 threads for arbiter's design (the
//! cache and the server shared by reference, nothing written on a hit) and for a
//! shared-refcount design that clones and drops one `Arc` per check, as AppArmor takes a
//! reference on the label for each check (the nginx scaling report).

use arbiter_avc::{Avc, AvcConfig};
use arbiter_decide::{internals, PermSet, SecurityServer, Sid, Snapshot};
use arbiter_policy::ValidPolicy;
use arbiter_testkit::{quantile, Rng};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Live SIDs to create before the run (contexts valid in the first policy).
    pub sids: usize,
    /// How long readers check while the writer reloads.
    pub seconds: f64,
    /// Reader threads.
    pub readers: usize,
    /// Pause between the writer's operations (a reload or a boolean commit).
    pub pause: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sids: 10_000,
            seconds: 5.0,
            readers: std::thread::available_parallelism().map_or(2, |n| n.get()),
            pause: Duration::from_millis(20),
        }
    }
}

/// The results (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Policy reloads performed.
    pub reloads: usize,
    /// Boolean commits performed.
    pub commits: usize,
    /// Median and longest `load_policy` call, in milliseconds.
    pub reload_ms_median: f64,
    /// Longest `load_policy` call, in milliseconds.
    pub reload_ms_max: f64,
    /// SIDs carried over by the last reload.
    pub sids_converted: usize,
    /// SIDs the last reload found invalid under its policy.
    pub sids_invalidated: usize,
    /// Checks performed by all readers.
    pub checks: u64,
    /// Checks verified against the uncached answer of their state.
    pub verified: u64,
    /// Verified answers that differed.
    pub mismatches: u64,
    /// Longest single check, in microseconds.
    pub max_stall_us: f64,
    /// 99.99th percentile check latency outside reloads, in nanoseconds.
    pub p9999_ns_steady: f64,
    /// 99.99th percentile check latency while a reload ran, in nanoseconds.
    pub p9999_ns_during_reload: f64,
    /// Errors seen (a check that failed is a failure of the run).
    pub errors: u64,
}

impl Report {
    /// The report as JSON (the keys the issue names).
    pub fn to_json(&self) -> Value {
        json!({
            "reloads": self.reloads,
            "commits": self.commits,
            "reload_ms_median": self.reload_ms_median,
            "reload_ms_max": self.reload_ms_max,
            "sids_converted": self.sids_converted,
            "sids_invalidated": self.sids_invalidated,
            "checks": self.checks,
            "verified": self.verified,
            "mismatches": self.mismatches,
            "errors": self.errors,
            "max_stall_us": self.max_stall_us,
            "p9999_ns_steady": self.p9999_ns_steady,
            "p9999_ns_during_reload": self.p9999_ns_during_reload,
        })
    }
}

/// Contexts valid in `server`'s policy: `USER:object_r:TYPE[:LEVEL]` for each type, then
/// category variants, until `n` (or the policy runs out).
pub fn live_contexts(server: &SecurityServer, n: usize) -> Vec<Sid> {
    let snap = server.snapshot();
    let p = &snap.policy;
    let user = ["system_u", "root"]
        .iter()
        .find(|u| snap.names().user(u).is_some())
        .copied()
        .unwrap_or("system_u");
    let types: Vec<&str> = p
        .types
        .iter()
        .filter(|t| t.flavor == arbiter_policy::symbols::TypeFlavor::Type)
        .map(|t| &*t.name)
        .collect();
    let levels: Vec<String> = if p.mls {
        std::iter::once("s0".to_string())
            .chain((0..1024).map(|c| format!("s0:c{c}")))
            .collect()
    } else {
        vec![String::new()]
    };
    let mut out = Vec::with_capacity(n);
    'outer: for level in &levels {
        for ty in &types {
            if out.len() >= n {
                break 'outer;
            }
            let ctx = if level.is_empty() {
                format!("{user}:object_r:{ty}")
            } else {
                format!("{user}:object_r:{ty}:{level}")
            };
            if let Ok(sid) = server.context_to_sid(&ctx) {
                out.push(sid);
            }
        }
    }
    out
}

/// One query of the stream.
struct Query {
    s: Sid,
    t: Sid,
    perms: usize,
}

/// The uncached verdict on `perms` (by name) under one snapshot: `None` when the state
/// cannot answer (a class or SID it does not know), which must match an error.
fn uncached_allowed(snap: &Snapshot, s: Sid, t: Sid, class: &str, perms: &[&str]) -> Option<bool> {
    let c = snap.names().class(class)?;
    let mut bits = 0u32;
    for p in perms {
        bits |= snap.names().perm(c, p)?;
    }
    let d = internals::compute_av(snap, snap.sids().context(s)?, snap.sids().context(t)?, c);
    Some(d.allowed.0 & bits == bits)
}

/// Per-reader latency samples (ns), split steady / during reload.
#[derive(Default)]
struct Samples {
    steady: Vec<f64>,
    reload: Vec<f64>,
    max_ns: u64,
    checks: u64,
    verified: u64,
    mismatches: u64,
    errors: u64,
}

/// Runs the reload workload over `policies` (at least one; they are loaded in turn).
pub fn run(policies: &[ValidPolicy], opts: &Options) -> Result<Report, String> {
    let first = policies.first().ok_or("no policy given")?;
    let server = Arc::new(SecurityServer::new(first.clone()));
    let sids = live_contexts(&server, opts.sids);
    if sids.len() < 2 {
        return Err("the policy yields fewer than 2 valid contexts".into());
    }
    let perm_names: [(&str, &[&str]); 4] = [
        ("file", &["read"]),
        ("file", &["getattr", "open"]),
        ("dir", &["search"]),
        ("file", &["write"]),
    ];
    let perm_sets: Vec<PermSet> = perm_names
        .iter()
        .map(|(c, p)| server.perm_set(c, p))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let avc = Avc::new(
        server.clone(),
        AvcConfig::for_threshold(8192).with_layout(8192, 8192, arbiter_avc::HashKind::Arbiter),
    )
    .map_err(|e| e.to_string())?;
    // A hot stream: most checks hit the cache between reloads.
    let mut rng = Rng::new(7);
    let hot = sids.len().min(400);
    let stream: Vec<Query> = (0..4096)
        .map(|_| Query {
            s: sids[rng.below(hot)],
            t: sids[rng.below(hot)],
            perms: rng.below(perm_sets.len()),
        })
        .collect();

    let stop = AtomicBool::new(false);
    let reloading = AtomicU64::new(0); // odd while a reload runs
    let recent: Mutex<VecDeque<Arc<Snapshot>>> = Mutex::new(VecDeque::from([server.snapshot()]));
    let bools: Vec<String> = server.booleans().into_iter().map(|(n, _)| n).collect();
    let deadline = Duration::from_secs_f64(opts.seconds);
    let barrier = Barrier::new(opts.readers + 1);

    let (writer, samples) = std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            barrier.wait();
            let start = Instant::now();
            let mut times = Vec::new();
            let mut last = None;
            let (mut reloads, mut commits) = (0usize, 0usize);
            let mut i = 0usize;
            let mut wrng = Rng::new(99);
            while start.elapsed() < deadline {
                i += 1;
                if i % 2 == 1 || bools.is_empty() {
                    let p = policies[(reloads + 1) % policies.len()].clone();
                    reloading.fetch_add(1, Ordering::SeqCst);
                    let t0 = Instant::now();
                    let r = server.load_policy(p);
                    let el = t0.elapsed();
                    reloading.fetch_add(1, Ordering::SeqCst);
                    match r {
                        Ok(r) => {
                            times.push(el.as_secs_f64() * 1e3);
                            last = Some(r);
                            reloads += 1;
                        }
                        Err(e) => return Err(format!("reload failed: {e}")),
                    }
                } else {
                    let snap = server.snapshot();
                    let names: Vec<String> = snap
                        .policy
                        .bools
                        .iter()
                        .map(|b| b.name.to_string())
                        .collect();
                    if let Some(name) = wrng.pick(&names) {
                        let v = wrng.below(2) == 1;
                        server
                            .set_booleans(&[(name.as_str(), v)])
                            .map_err(|e| e.to_string())?;
                        commits += 1;
                    }
                }
                {
                    let mut r = arbiter_testkit::lock(&recent);
                    r.push_back(server.snapshot());
                    while r.len() > 6 {
                        r.pop_front();
                    }
                }
                std::thread::sleep(opts.pause);
            }
            stop.store(true, Ordering::SeqCst);
            Ok((times, last, reloads, commits))
        });
        let readers: Vec<_> = (0..opts.readers)
            .map(|r| {
                let (avc, stream, perm_sets, stop, reloading, recent, barrier) = (
                    &avc, &stream, &perm_sets, &stop, &reloading, &recent, &barrier,
                );
                let perm_names = &perm_names;
                scope.spawn(move || {
                    let mut out = Samples::default();
                    barrier.wait();
                    let mut k = r * 977;
                    while !stop.load(Ordering::Relaxed) {
                        k = (k + 1) % stream.len();
                        let q = &stream[k];
                        let before = reloading.load(Ordering::Relaxed);
                        let t0 = Instant::now();
                        let v = avc.check(q.s, q.t, &perm_sets[q.perms]);
                        let ns = t0.elapsed().as_nanos() as u64;
                        let after = reloading.load(Ordering::Relaxed);
                        out.checks += 1;
                        out.max_ns = out.max_ns.max(ns);
                        if before % 2 == 1 || before != after {
                            out.reload.push(ns as f64);
                        } else if out.checks % 4 == 0 {
                            out.steady.push(ns as f64);
                        }
                        let v = match v {
                            Ok(v) => v,
                            Err(_) => {
                                out.errors += 1;
                                continue;
                            }
                        };
                        if out.checks % 8 == 0 {
                            let seq = v.decision.seqno;
                            let snap = {
                                let r = arbiter_testkit::lock(recent);
                                r.iter().find(|s| s.seqno == seq).cloned()
                            };
                            if let Some(snap) = snap {
                                let (class, perms) = perm_names[q.perms];
                                out.verified += 1;
                                if uncached_allowed(&snap, q.s, q.t, class, perms)
                                    != Some(v.allowed())
                                {
                                    out.mismatches += 1;
                                }
                            }
                        }
                    }
                    out
                })
            })
            .collect();
        let samples: Vec<Samples> = readers.into_iter().map(|h| h.join().unwrap()).collect();
        (writer.join().unwrap(), samples)
    });
    let (mut times, last, reloads, commits) = writer?;
    let mut rep = Report {
        reloads,
        commits,
        ..Report::default()
    };
    times.sort_by(f64::total_cmp);
    rep.reload_ms_median = arbiter_testkit::median(&times);
    rep.reload_ms_max = times.last().copied().unwrap_or(0.0);
    if let Some(r) = last {
        rep.sids_converted = r.sids.converted;
        rep.sids_invalidated = r.sids.invalidated;
    }
    let (mut steady, mut during) = (Vec::new(), Vec::new());
    for s in samples {
        rep.checks += s.checks;
        rep.verified += s.verified;
        rep.mismatches += s.mismatches;
        rep.errors += s.errors;
        rep.max_stall_us = rep.max_stall_us.max(s.max_ns as f64 / 1e3);
        steady.extend(s.steady);
        during.extend(s.reload);
    }
    rep.p9999_ns_steady = quantile(&steady, 0.9999);
    rep.p9999_ns_during_reload = quantile(&during, 0.9999);
    Ok(rep)
}

/// Cache-hit throughput (hits per second) at 1 and 2 threads.
#[derive(Clone, Debug, Default)]
pub struct Scaling {
    /// arbiter: 1 thread.
    pub arbiter_1: f64,
    /// arbiter: 2 threads.
    pub arbiter_2: f64,
    /// Shared refcount: 1 thread.
    pub refcount_1: f64,
    /// Shared refcount: 2 threads.
    pub refcount_2: f64,
}

impl Scaling {
    /// As JSON, with the ratios.
    pub fn to_json(&self) -> Value {
        json!({
            "arbiter_hits_per_s_1": self.arbiter_1,
            "arbiter_hits_per_s_2": self.arbiter_2,
            "arbiter_ratio": self.arbiter_2 / self.arbiter_1,
            "refcount_hits_per_s_1": self.refcount_1,
            "refcount_hits_per_s_2": self.refcount_2,
            "refcount_ratio": self.refcount_2 / self.refcount_1,
        })
    }
}

/// Measures [`Scaling`] on `policy` with `iters` checks per thread (median of `reps`).
pub fn scaling(policy: &ValidPolicy, iters: usize, reps: usize) -> Result<Scaling, String> {
    let server = Arc::new(SecurityServer::new(policy.clone()));
    let sids = live_contexts(&server, 64);
    let ps = server
        .perm_set("file", &["read"])
        .map_err(|e| e.to_string())?;
    let avc = Arc::new(Avc::new(server.clone(), AvcConfig::default()).map_err(|e| e.to_string())?);
    let mut rng = Rng::new(3);
    let keys: Vec<(Sid, Sid)> = (0..256)
        .map(|_| (sids[rng.below(sids.len())], sids[rng.below(sids.len())]))
        .collect();
    for (s, t) in &keys {
        avc.check(*s, *t, &ps).map_err(|e| e.to_string())?;
    }
    let rate = |threads: usize, refcount: bool| -> f64 {
        let mut runs: Vec<f64> = (0..reps.max(1))
            .map(|_| {
                let barrier = Barrier::new(threads);
                let t0 = Mutex::new(None::<Instant>);
                let total = std::thread::scope(|scope| {
                    let hs: Vec<_> = (0..threads)
                        .map(|i| {
                            let (avc, keys, ps, barrier, t0) = (&avc, &keys, &ps, &barrier, &t0);
                            scope.spawn(move || {
                                barrier.wait();
                                t0.lock().unwrap().get_or_insert_with(Instant::now);
                                let mut granted = 0usize;
                                for n in 0..iters {
                                    let (s, t) = keys[(n + i * 31) % keys.len()];
                                    let v = if refcount {
                                        // One shared count taken and released per check.
                                        let held = Arc::clone(avc);
                                        let v = held.check(s, t, ps);
                                        drop(held);
                                        v
                                    } else {
                                        avc.check(s, t, ps)
                                    };
                                    granted += v.map_or(0, |v| v.allowed() as usize);
                                }
                                std::hint::black_box(granted);
                            })
                        })
                        .collect();
                    for h in hs {
                        h.join().unwrap();
                    }
                    let start = t0.lock().unwrap().unwrap();
                    start.elapsed()
                });
                (threads * iters) as f64 / total.as_secs_f64()
            })
            .collect();
        arbiter_testkit::median(&std::mem::take(&mut runs))
    };
    Ok(Scaling {
        arbiter_1: rate(1, false),
        arbiter_2: rate(2, false),
        refcount_1: rate(1, true),
        refcount_2: rate(2, true),
    })
}
