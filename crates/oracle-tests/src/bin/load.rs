//! Load benchmark: arbiter's policy reader against libsepol's `policydb_read`.
//!
//! ```text
//! cargo run --release -p arbiter-oracle-tests --features libsepol --bin load -- [--runs N] [--json] [--breakdown] [POLICY...]
//! ```
//!
//! For each policy (default: the two Debian policies) the file is read into memory once;
//! then, after one warm-up load of each, `Policy::from_bytes` and libsepol's
//! `policydb_init` + `policydb_read` (`sepol_oracle::policydb_read_only`) run alternately
//! `N` times (default 30) over the same buffer, so that both see the same machine state.
//! Each load is timed alone: freeing the result is outside the timed region. `Policy::open`
//! (mmap of the file) is timed separately, `N` times.
//!
//! Heap held after load is `heap_in_use()` (glibc `mallinfo2` in-use bytes) with the loaded
//! object alive, minus the same figure just before the load. Rust's default global
//! allocator is the system malloc, so one counter measures both engines.
//!
//! `faults` is the mean number of minor page faults per timed load: memory the allocator
//! takes fresh from the kernel (each engine's frees let glibc trim its heap, so the other
//! engine's next load often starts on new pages). In a virtual machine a fault costs a
//! microsecond or more, so this is a good part of each engine's time.
//!
//! The targets of the issue: arbiter's median load time at most 1/4 of libsepol's
//! (`time ratio <= 0.25`) and its heap at most 1/2 of libsepol's (`heap ratio <= 0.50`).
//!
//! `--loop arbiter|open|libsepol` only loads, untimed, `N` times with one engine: a driver
//! for profilers (`valgrind --tool=callgrind target/release/load --loop arbiter --runs 1`).
//!
//! `--breakdown` adds where arbiter's heap goes: each part of the `Policy` is cloned and the
//! clone's heap measured (clones are exact-sized, so excess capacity of the original's
//! vectors is reported separately), plus the bytes of all symbol names.
#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use arbiter_policy::Policy;
use sepol_oracle::{heap_in_use, policydb_read_only};

const DEFAULT_POLICIES: [&str; 2] = [arbiter_testkit::DEBIAN_DEFAULT, arbiter_testkit::DEBIAN_MLS];
const DEFAULT_RUNS: usize = 30;
const TIME_TARGET: f64 = 0.25;
const HEAP_TARGET: f64 = 0.5;

struct Options {
    runs: usize,
    json: bool,
    breakdown: bool,
    /// `--loop ENGINE`: only load with that engine, `runs` times, no timing (for profilers).
    profile: Option<String>,
    paths: Vec<String>,
}

fn usage() -> ! {
    eprintln!("usage: load [--runs N] [--json] [--breakdown] [POLICY...]");
    eprintln!("       load --loop arbiter|open|libsepol [--runs N] [POLICY...]   (for profilers)");
    std::process::exit(2)
}

fn parse_args() -> Options {
    let mut o = Options {
        runs: DEFAULT_RUNS,
        json: false,
        breakdown: false,
        profile: None,
        paths: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => {
                o.runs = match args.next().and_then(|v| v.parse().ok()) {
                    Some(n) if n > 0 => n,
                    _ => usage(),
                }
            }
            s if s.starts_with("--runs=") => {
                o.runs = match s["--runs=".len()..].parse() {
                    Ok(n) if n > 0 => n,
                    _ => usage(),
                }
            }
            "--json" => o.json = true,
            "--breakdown" => o.breakdown = true,
            "--loop" => match args.next().as_deref() {
                Some(e @ ("arbiter" | "open" | "libsepol")) => o.profile = Some(e.to_string()),
                _ => usage(),
            },
            "-h" | "--help" => usage(),
            s if s.starts_with('-') => usage(),
            _ => o.paths.push(a),
        }
    }
    if o.paths.is_empty() {
        o.paths = DEFAULT_POLICIES.iter().map(|s| s.to_string()).collect();
    }
    o
}

/// Median, minimum and 90th percentile of a set of durations, in milliseconds.
#[derive(Clone, Copy, Debug)]
struct Summary {
    median: f64,
    min: f64,
    p90: f64,
}

fn summarize(times: &mut [Duration]) -> Summary {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let n = times.len();
    let median = if n % 2 == 1 {
        ms(times[n / 2])
    } else {
        (ms(times[n / 2 - 1]) + ms(times[n / 2])) / 2.0
    };
    // Nearest-rank percentile.
    let p90 = ms(times[((n * 9).div_ceil(10)).clamp(1, n) - 1]);
    Summary {
        median,
        min: ms(times[0]),
        p90,
    }
}

struct Result {
    path: String,
    size: usize,
    runs: usize,
    arbiter: Summary,
    arbiter_open: Summary,
    sepol: Summary,
    arbiter_heap: usize,
    sepol_heap: usize,
    /// Mean minor page faults per load.
    arbiter_faults: u64,
    sepol_faults: u64,
    breakdown: Vec<(&'static str, usize)>,
}

impl Result {
    fn time_ratio(&self) -> f64 {
        self.arbiter.median / self.sepol.median
    }
    fn heap_ratio(&self) -> f64 {
        self.arbiter_heap as f64 / self.sepol_heap as f64
    }
}

fn bench(path: &str, o: &Options) -> std::result::Result<Result, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;

    // Warm-up: page cache, allocator arenas, lazy initialisation of both engines.
    drop(Policy::from_bytes(&bytes).map_err(|e| format!("{path}: arbiter: {e}"))?);
    drop(policydb_read_only(&bytes).map_err(|e| format!("{path}: libsepol: {e}"))?);
    drop(Policy::open(path).map_err(|e| format!("{path}: arbiter (open): {e}"))?);

    let mut arbiter = Vec::with_capacity(o.runs);
    let mut sepol = Vec::with_capacity(o.runs);
    let (mut arbiter_faults, mut sepol_faults) = (0, 0);
    for _ in 0..o.runs {
        let f = minor_faults();
        let t = Instant::now();
        let p = Policy::from_bytes(black_box(&bytes));
        arbiter.push(t.elapsed());
        arbiter_faults += minor_faults() - f;
        drop(black_box(p.map_err(|e| e.to_string())?));

        let f = minor_faults();
        let t = Instant::now();
        let db = policydb_read_only(black_box(&bytes));
        sepol.push(t.elapsed());
        sepol_faults += minor_faults() - f;
        drop(black_box(db.map_err(|e| e.to_string())?));
    }
    let mut open = Vec::with_capacity(o.runs);
    for _ in 0..o.runs {
        let t = Instant::now();
        let p = Policy::open(black_box(path));
        open.push(t.elapsed());
        drop(black_box(p.map_err(|e| e.to_string())?));
    }

    // Heap held with the loaded object alive.
    let before = heap_in_use();
    let policy = Policy::from_bytes(&bytes).map_err(|e| e.to_string())?;
    let arbiter_heap = heap_in_use().saturating_sub(before);
    let breakdown = if o.breakdown {
        breakdown(&policy)
    } else {
        Vec::new()
    };
    drop(policy);

    let before = heap_in_use();
    let db = policydb_read_only(&bytes).map_err(|e| e.to_string())?;
    let sepol_heap = heap_in_use().saturating_sub(before);
    drop(db);

    Ok(Result {
        path: path.to_string(),
        size: bytes.len(),
        runs: o.runs,
        arbiter: summarize(&mut arbiter),
        arbiter_open: summarize(&mut open),
        sepol: summarize(&mut sepol),
        arbiter_heap,
        sepol_heap,
        arbiter_faults: arbiter_faults / o.runs as u64,
        sepol_faults: sepol_faults / o.runs as u64,
        breakdown,
    })
}

/// Minor page faults of this process so far (`/proc/self/stat` field 10), 0 if unknown.
/// Fresh memory costs a fault per page on first touch, which is much of an allocation's
/// cost in a virtual machine; the table reports faults per load.
fn minor_faults() -> u64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // Fields after the parenthesised command name, which may contain spaces.
            let rest = &s[s.rfind(')')? + 2..];
            rest.split(' ').nth(7)?.parse().ok()
        })
        .unwrap_or(0)
}

/// Heap bytes a value holds, measured as the heap its clone takes.
fn clone_heap<T: Clone>(v: &T) -> usize {
    let before = heap_in_use();
    let c = v.clone();
    let held = heap_in_use().saturating_sub(before);
    drop(black_box(c));
    held
}

/// Unused capacity of a vector, in bytes (a clone does not show it).
fn slack<T>(v: &Vec<T>) -> usize {
    (v.capacity() - v.len()) * std::mem::size_of::<T>()
}

/// Where arbiter's heap goes, by part of the model.
fn breakdown(p: &Policy) -> Vec<(&'static str, usize)> {
    let names: usize = p
        .types
        .iter()
        .map(|t| t.name.len())
        .chain(p.type_aliases.iter().map(|a| a.name.len()))
        .chain(p.roles.iter().map(|r| r.name.len()))
        .chain(p.users.iter().map(|u| u.name.len()))
        .chain(p.bools.iter().map(|b| b.name.len()))
        .chain(p.classes.iter().map(|c| c.name.len()))
        .chain(
            p.classes
                .iter()
                .flat_map(|c| c.perms.iter().map(|q| q.name.len())),
        )
        .chain(
            p.commons
                .iter()
                .flat_map(|c| c.perms.iter().map(|q| q.name.len())),
        )
        .chain(p.sensitivities.iter().map(|s| s.name.len()))
        .chain(p.categories.iter().map(|s| s.name.len()))
        .sum();
    let attr_nodes: usize = p.type_attr_map.iter().map(|m| m.heap_bytes()).sum();
    let slack_total = slack(&p.avtab.entries)
        + slack(&p.avtab.xperms)
        + slack(&p.cond_avtab.entries)
        + slack(&p.cond_avtab.xperms)
        + slack(&p.cond_nodes)
        + slack(&p.type_attr_map)
        + slack(&p.filename_trans)
        + slack(&p.types)
        + slack(&p.roles)
        + slack(&p.users)
        + slack(&p.classes)
        + slack(&p.role_trans)
        + slack(&p.role_allow)
        + slack(&p.range_trans)
        + slack(&p.genfs);
    vec![
        (
            "avtab",
            clone_heap(&p.avtab.entries) + clone_heap(&p.avtab.xperms),
        ),
        ("avtab entries (count)", p.avtab.entries.len()),
        (
            "avtab entry size (bytes)",
            std::mem::size_of::<arbiter_policy::avtab::AvtabEntry>(),
        ),
        (
            "cond avtab + nodes",
            clone_heap(&p.cond_avtab.entries)
                + clone_heap(&p.cond_avtab.xperms)
                + clone_heap(&p.cond_nodes),
        ),
        ("cond avtab entries (count)", p.cond_avtab.entries.len()),
        ("type_attr_map", clone_heap(&p.type_attr_map)),
        ("  of which ebitmap node bytes", attr_nodes),
        ("filename transitions", clone_heap(&p.filename_trans)),
        ("filename transitions (count)", p.filename_trans.len()),
        (
            "types + aliases",
            clone_heap(&p.types) + clone_heap(&p.type_aliases),
        ),
        ("roles", clone_heap(&p.roles)),
        ("users", clone_heap(&p.users)),
        (
            "classes + commons",
            clone_heap(&p.classes) + clone_heap(&p.commons),
        ),
        ("booleans", clone_heap(&p.bools)),
        (
            "mls symbols",
            clone_heap(&p.sensitivities)
                + clone_heap(&p.sensitivity_aliases)
                + clone_heap(&p.categories)
                + clone_heap(&p.category_aliases),
        ),
        (
            "role/range transitions",
            clone_heap(&p.role_trans) + clone_heap(&p.role_allow) + clone_heap(&p.range_trans),
        ),
        (
            "ocontexts + genfs",
            clone_heap(&p.ocontexts) + clone_heap(&p.genfs),
        ),
        ("(symbol name bytes, in the above)", names),
        ("unused vector capacity", slack_total),
    ]
}

fn json_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

fn print_json(results: &[Result]) {
    let summary = |s: &Summary| {
        format!(
            "{{\"median_ms\": {:.4}, \"min_ms\": {:.4}, \"p90_ms\": {:.4}}}",
            s.median, s.min, s.p90
        )
    };
    let items: Vec<String> = results
        .iter()
        .map(|r| {
            let bd: Vec<String> = r
                .breakdown
                .iter()
                .map(|(k, v)| format!("{}: {v}", json_str(k)))
                .collect();
            format!(
                "{{\"path\": {}, \"bytes\": {}, \"runs\": {}, \
                 \"arbiter\": {{\"from_bytes\": {}, \"open\": {}, \"heap_bytes\": {}, \"page_faults\": {}}}, \
                 \"libsepol\": {{\"policydb_read\": {}, \"heap_bytes\": {}, \"page_faults\": {}}}, \
                 \"time_ratio\": {:.4}, \"heap_ratio\": {:.4}, \
                 \"time_target_met\": {}, \"heap_target_met\": {}, \"breakdown\": {{{}}}}}",
                json_str(&r.path),
                r.size,
                r.runs,
                summary(&r.arbiter),
                summary(&r.arbiter_open),
                r.arbiter_heap,
                r.arbiter_faults,
                summary(&r.sepol),
                r.sepol_heap,
                r.sepol_faults,
                r.time_ratio(),
                r.heap_ratio(),
                r.time_ratio() <= TIME_TARGET,
                r.heap_ratio() <= HEAP_TARGET,
                bd.join(", ")
            )
        })
        .collect();
    println!("[{}]", items.join(",\n "));
}

fn print_table(results: &[Result]) {
    let mark = |ok: bool| if ok { "ok" } else { "MISSED" };
    for r in results {
        println!("{} ({} bytes, {} runs each)", r.path, r.size, r.runs);
        println!(
            "  {:<26} {:>9} {:>9} {:>9} {:>12} {:>7}",
            "engine", "median ms", "min ms", "p90 ms", "heap bytes", "faults"
        );
        let row = |name: &str, s: &Summary, heap: Option<(usize, u64)>| {
            let (heap, faults) = match heap {
                Some((h, f)) => (h.to_string(), f.to_string()),
                None => ("-".into(), "-".into()),
            };
            println!(
                "  {:<26} {:>9.3} {:>9.3} {:>9.3} {:>12} {:>7}",
                name, s.median, s.min, s.p90, heap, faults
            )
        };
        row(
            "arbiter Policy::from_bytes",
            &r.arbiter,
            Some((r.arbiter_heap, r.arbiter_faults)),
        );
        row("arbiter Policy::open", &r.arbiter_open, None);
        row(
            "libsepol policydb_read",
            &r.sepol,
            Some((r.sepol_heap, r.sepol_faults)),
        );
        println!(
            "  ratio arbiter/libsepol: time {:.3} (target <= {TIME_TARGET}: {}), heap {:.3} (target <= {HEAP_TARGET}: {})",
            r.time_ratio(),
            mark(r.time_ratio() <= TIME_TARGET),
            r.heap_ratio(),
            mark(r.heap_ratio() <= HEAP_TARGET),
        );
        if !r.breakdown.is_empty() {
            println!("  arbiter heap by part:");
            for (k, v) in &r.breakdown {
                println!("    {k:<36} {v:>10}");
            }
        }
    }
}

/// Loads each policy `runs` times with one engine, untimed: a driver for
/// `valgrind --tool=callgrind` and the like.
fn profile_loop(engine: &str, o: &Options) -> std::result::Result<(), String> {
    for path in &o.paths {
        let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
        for _ in 0..o.runs {
            match engine {
                "arbiter" => drop(black_box(
                    Policy::from_bytes(black_box(&bytes)).map_err(|e| e.to_string())?,
                )),
                "open" => drop(black_box(Policy::open(path).map_err(|e| e.to_string())?)),
                _ => drop(black_box(
                    policydb_read_only(black_box(&bytes)).map_err(|e| e.to_string())?,
                )),
            }
        }
    }
    Ok(())
}

fn main() {
    let o = parse_args();
    if let Some(engine) = &o.profile {
        if let Err(e) = profile_loop(engine, &o) {
            eprintln!("{e}");
            std::process::exit(1);
        }
        return;
    }
    if !sepol_oracle::is_statically_linked() {
        eprintln!(
            "note: libsepol is linked dynamically; policydb_read goes through sepol_policydb_read"
        );
    }
    let mut results = Vec::new();
    let mut failed = false;
    for path in &o.paths {
        match bench(path, &o) {
            Ok(r) => results.push(r),
            Err(e) => {
                eprintln!("{e}");
                failed = true;
            }
        }
    }
    if o.json {
        print_json(&results);
    } else {
        print_table(&results);
    }
    if failed {
        std::process::exit(1);
    }
}
