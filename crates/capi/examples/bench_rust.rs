//! The Rust side of `bench/run.sh`: the same queries as the C benchmark (read from the
//! file it writes), timed on `SecurityServer::compute_av` and on cache hits of
//! `Avc::has_perm`, with the C benchmark's loop shapes and clock (thread CPU time), so that the C figures can be
//! read against the engine's own. Prints `NAME<TAB>MEDIAN_NS<TAB>MIN_NS` lines.
//!
//! Usage: `bench_rust POLICY QUERIES_FILE [RUNS]`

use arbiter_avc::{Avc, AvcConfig};
use arbiter_decide::{AccessVector, SecurityServer, Sid};
use arbiter_policy::{ClassId, ValidPolicy};
use std::hint::black_box;
use std::sync::Arc;

/// This thread's CPU time in nanoseconds (as bench.c measures: the machine is shared, and
/// wall time would count the time other processes hold the cores).
fn cpu_ns() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant Linux knows.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

/// A server opened and queried through the exported C functions.
struct FfiServer(*mut arbiter::ArbServer);

impl FfiServer {
    fn open(path: &str) -> Result<FfiServer, Box<dyn std::error::Error>> {
        let path = std::ffi::CString::new(path)?;
        let mut h = std::ptr::null_mut();
        // SAFETY: a NUL-terminated path and a writable out-pointer.
        if unsafe { arbiter::arb_server_open(path.as_ptr(), &mut h) } != 0 {
            return Err("arb_server_open failed".into());
        }
        Ok(FfiServer(h))
    }

    fn sid(&self, ctx: &str) -> Result<u32, Box<dyn std::error::Error>> {
        let ctx = std::ffi::CString::new(ctx)?;
        let mut sid = 0;
        // SAFETY: a live handle, a NUL-terminated context, a writable out-pointer.
        match unsafe { arbiter::arb_context_to_sid(self.0, ctx.as_ptr(), &mut sid) } {
            0 => Ok(sid),
            _ => Err("arb_context_to_sid failed".into()),
        }
    }

    #[inline]
    fn compute_av(&self, s: u32, t: u32, c: u16) -> u32 {
        let mut d = arbiter::ArbAvDecision::default();
        // SAFETY: a live handle and a writable decision.
        unsafe { arbiter::arb_compute_av(self.0, s, t, c, &mut d) };
        d.allowed
    }
}

impl Drop for FfiServer {
    fn drop(&mut self) {
        // SAFETY: the handle from arb_server_open, freed once.
        unsafe { arbiter::arb_server_free(self.0) }
    }
}

type Hot = (Sid, Sid, ClassId, AccessVector);

/// Times `check` over the hot triples round-robin, 2,000,000 calls per run (generic, so
/// each check is inlined into its loop as the C calls are compiled into theirs).
fn time_hits(
    runs: usize,
    hot: &[Hot],
    check: impl Fn(Sid, Sid, ClassId, AccessVector) -> bool,
) -> Vec<f64> {
    const HOT: usize = 256;
    let calls = 2_000_000usize;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = cpu_ns();
        for i in 0..calls {
            let k = i & (HOT - 1);
            let (s, t, c, p) = hot[if k < hot.len() { k } else { 0 }];
            black_box(check(s, t, c, p));
        }
        times.push((cpu_ns() - start) / calls as f64);
    }
    times
}

fn report(name: &str, mut ns: Vec<f64>) {
    ns.sort_by(f64::total_cmp);
    println!("{name}\t{:.2}\t{:.2}", ns[ns.len() / 2], ns[0]);
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        return Err("usage: bench_rust POLICY QUERIES_FILE [RUNS]".into());
    }
    let runs: usize = args.get(3).map_or(Ok(15), |r| r.parse())?;
    let server = Arc::new(SecurityServer::new(ValidPolicy::open(&args[1])?));
    let mut queries: Vec<(Sid, Sid, ClassId)> = Vec::new();
    for line in std::fs::read_to_string(&args[2])?.lines() {
        let mut f = line.split('\t');
        let (Some(s), Some(t), Some(c)) = (f.next(), f.next(), f.next()) else {
            return Err(format!("bad query line {line:?}").into());
        };
        let class = ClassId::new(c.parse()?).ok_or("class 0")?;
        queries.push((server.context_to_sid(s)?, server.context_to_sid(t)?, class));
    }
    let n = queries.len() as f64;
    // The same decisions through the C entry point, called from this process on a second
    // server over the same policy: the wrapper's cost without the C process's
    // surroundings (libsepol's two copies of the policy share its caches). Runs alternate.
    let ffi = FfiServer::open(&args[1])?;
    let ffi_queries: Vec<(u32, u32, u16)> = std::fs::read_to_string(&args[2])?
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            Ok((ffi.sid(f[0])?, ffi.sid(f[1])?, f[2].parse()?))
        })
        .collect::<Result<_, Box<dyn std::error::Error>>>()?;
    let (mut times, mut ffi_times) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for _ in 0..runs {
        let start = cpu_ns();
        for &(s, t, c) in &queries {
            black_box(server.compute_av(s, t, c)?.allowed);
        }
        times.push((cpu_ns() - start) / n);
        let start = cpu_ns();
        for &(s, t, c) in &ffi_queries {
            black_box(ffi.compute_av(s, t, c));
        }
        ffi_times.push((cpu_ns() - start) / n);
    }
    report("rust SecurityServer::compute_av", times);
    report("rust-process arb_compute_av", ffi_times);

    // Cache hits: the first 256 granted triples, round-robin, as in bench.c.
    const HOT: usize = 256;
    let mut hot = Vec::new();
    for &(s, t, c) in &queries {
        let d = server.compute_av(s, t, c)?;
        if !d.allowed.is_empty() && hot.len() < HOT {
            hot.push((
                s,
                t,
                c,
                AccessVector(d.allowed.0 & d.allowed.0.wrapping_neg()),
            ));
        }
    }
    if hot.is_empty() {
        return Err("no query is granted anything: nothing to cache".into());
    }
    let avc = Avc::new(server.clone(), AvcConfig::for_threshold(8192))?;
    for &(s, t, c, p) in &hot {
        let _ = avc.has_perm(s, t, c, p, &[]);
    }
    // One check per hot triple in turn, 2,000,000 calls per run, as in bench.c.
    report(
        "rust Avc::has_perm hit",
        time_hits(runs, &hot, |s, t, c, p| {
            avc.has_perm(s, t, c, p, &[]).is_ok()
        }),
    );
    report(
        "rust Avc::has_perm_noaudit hit",
        time_hits(runs, &hot, |s, t, c, p| {
            avc.has_perm_noaudit(s, t, c, p).is_ok()
        }),
    );
    report(
        "rust Avc::compute_av hit",
        time_hits(runs, &hot, |s, t, c, _| avc.compute_av(s, t, c).is_ok()),
    );
    // The cache lookup alone (no permission test, no audit decision), for scale.
    report(
        "rust Avc::lookup hit",
        time_hits(runs, &hot, |s, t, c, _| avc.lookup(s, t, c).is_some()),
    );
    Ok(())
}
