//! The AVC benchmark: the 2025 kernel hash-slot study's two tables, side by side, for the
//! kernel-style chained cache and arbiter's cache, in one run.
//!
//! The study (Hongru Zhang, selinux@vger, Sept–Oct 2025; merged as the Linux 6.19 switch
//! of `avc_hash` to `av_hash`) sampled `/sys/fs/selinux/avc/hash_stats` during a stress
//! load and timed `avc_search_node`, for 512/512, 1024/512, 2048/512 and 8192/8192
//! entries/buckets (and 8192/4096 was proposed), with the original hash, Murmur3 and
//! Muladd. Its figures, for reference: at 8192/8192, 49.5 % / 11.4 (original), 60.3 % /
//! 7.4 (murmur3), 61.9 % / 6.6 (muladd) utilisation / longest chain, ~100 ns per search;
//! with the default 512 buckets holding 8192 entries, 277 ns per search.
//!
//! [`run`] replays a trace of queries through every (configuration, cache, hash) variant:
//! 1. a warm-up pass (lookup; on a miss compute through the source and insert);
//! 2. a measured pass of the same kind: hit ratio, the cost of each miss (compute +
//!    insert + reclaim, timer overhead subtracted), and hash statistics sampled at even
//!    intervals and averaged, as the study averaged its samples;
//! 3. with the cache frozen, timed passes of lookups only (the study's search latency —
//!    hits and misses as the trace has them) and of hits only; medians over repetitions.
//!
//! Then hit throughput with 1 and 2 threads (and any other counts asked for) on a frozen
//! cache of the largest configuration. Timings are reported next to their ratio to the
//! kernel-style cache with the original hash.

use std::fmt::Write as _;
use std::hint::black_box;
use std::sync::Barrier;
use std::time::Instant;

use serde_json::{json, Value};

use crate::cache_models::{KernelAvc, LockedAvc};
use crate::raw_compute_av;
use arbiter_avc::fake::RawAvc;
use arbiter_avc::{Avc, AvcConfig, HashKind, HashStats};
use arbiter_decide::DecisionSource;
pub use arbiter_testkit::Rng;
use arbiter_testkit::{median, thread_cpu_ns};

/// One access check of a trace.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Query {
    pub ssid: u32,
    pub tsid: u32,
    pub tclass: u16,
    pub requested: u32,
}

/// Shape of a synthetic trace.
#[derive(Clone, Debug)]
pub struct TraceOptions {
    /// Distinct (ssid, tsid, tclass) entries the trace uses (capped by the triples given).
    pub distinct: usize,
    /// Queries in the trace (at least `distinct`: every entry appears).
    pub queries: usize,
    /// Zipf exponent of entry popularity (0 = uniform; ~1 = a small hot set dominates).
    pub zipf: f64,
    pub seed: u64,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            distinct: 12_000,
            queries: 400_000,
            zipf: 1.0,
            seed: 0x5e11_0a5c,
        }
    }
}

/// A trace over `triples` (e.g. (source type, target type, class) of a real policy's
/// rules): `distinct` of them, chosen at random, queried with Zipf-distributed popularity
/// (which entries are hot is random too), every chosen entry at least once. Raw values
/// are then renumbered as SIDs in first-seen order, as the kernel's SID table allocates
/// them, so hot contexts get small SIDs — the dense, low-valued keys real caches see. Each
/// query requests one permission bit derived from its key.
pub fn synthetic_trace(triples: &[(u32, u32, u16)], opts: &TraceOptions) -> Vec<Query> {
    synthetic_trace_with_sids(triples, opts).0
}

/// [`synthetic_trace`], also returning the raw value each SID stands for (`raw[sid - 1]`),
/// so a caller whose raw values name real contexts can intern them in the same order.
pub fn synthetic_trace_with_sids(
    triples: &[(u32, u32, u16)],
    opts: &TraceOptions,
) -> (Vec<Query>, Vec<u32>) {
    let mut rng = Rng::new(opts.seed);
    let mut seen = std::collections::HashSet::new();
    let mut uniq: Vec<(u32, u32, u16)> = triples
        .iter()
        .copied()
        .filter(|t| seen.insert(*t))
        .collect();
    // Fisher–Yates: a random subset, in random popularity order.
    for i in (1..uniq.len()).rev() {
        let j = rng.below(i + 1);
        uniq.swap(i, j);
    }
    uniq.truncate(opts.distinct);
    let n = uniq.len();
    if n == 0 {
        return (Vec::new(), Vec::new());
    }
    let mut cdf = Vec::with_capacity(n);
    let mut acc = 0.0;
    for r in 0..n {
        acc += 1.0 / ((r + 1) as f64).powf(opts.zipf);
        cdf.push(acc);
    }
    let total = acc;
    let queries = opts.queries.max(n);
    let mut picks: Vec<usize> = Vec::with_capacity(queries);
    let mut used = vec![false; n];
    for _ in 0..queries {
        let u = rng.next_f64() * total;
        let r = cdf.partition_point(|&c| c <= u).min(n - 1);
        used[r] = true;
        picks.push(r);
    }
    // Entries never drawn replace random positions held by entries drawn more than once.
    let mut count = vec![0usize; n];
    for &p in &picks {
        count[p] += 1;
    }
    for r in (0..n).filter(|&r| !used[r]) {
        loop {
            let pos = rng.below(picks.len());
            let old = picks[pos];
            if count[old] > 1 {
                count[old] -= 1;
                picks[pos] = r;
                count[r] = 1;
                break;
            }
        }
    }
    let mut sids = std::collections::HashMap::new();
    let mut raws = Vec::new();
    let mut sid = |raw: u32| {
        let next = sids.len() as u32 + 1;
        *sids.entry(raw).or_insert_with(|| {
            raws.push(raw);
            next
        })
    };
    let trace = picks
        .iter()
        .map(|&r| {
            let (s, t, c) = uniq[r];
            let ssid = sid(s);
            let tsid = sid(t);
            let h = arbiter_avc::internals::arbiter(ssid, tsid, c as u32);
            Query {
                ssid,
                tsid,
                tclass: c,
                requested: 1 << (h >> 61),
            }
        })
        .collect();
    (trace, raws)
}

/// Why a trace file could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("trace line {line}: {reason}")]
pub struct TraceError {
    pub line: usize,
    pub reason: String,
}

/// Reads a trace: one query per line, `ssid tsid tclass [requested]` separated by
/// whitespace, decimal or `0x` hexadecimal, `requested` defaulting to 1; blank lines and
/// `#` comments are skipped.
pub fn parse_trace(text: &str) -> Result<Vec<Query>, TraceError> {
    fn num(tok: &str) -> Option<u64> {
        match tok.strip_prefix("0x").or_else(|| tok.strip_prefix("0X")) {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => tok.parse().ok(),
        }
    }
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let err = |reason: String| TraceError {
            line: i + 1,
            reason,
        };
        let toks: Vec<&str> = line.split_whitespace().collect();
        if !(3..=4).contains(&toks.len()) {
            return Err(err(format!(
                "expected `ssid tsid tclass [requested]`, got {} fields",
                toks.len()
            )));
        }
        let mut v = [0u64, 0, 0, 1];
        for (slot, tok) in v.iter_mut().zip(&toks) {
            *slot = num(tok).ok_or_else(|| err(format!("not a number: {tok}")))?;
        }
        let (ssid, tsid, tclass, requested) = (
            u32::try_from(v[0]).map_err(|_| err("ssid out of range".into()))?,
            u32::try_from(v[1]).map_err(|_| err("tsid out of range".into()))?,
            u16::try_from(v[2]).map_err(|_| err("tclass out of range".into()))?,
            u32::try_from(v[3]).map_err(|_| err("requested out of range".into()))?,
        );
        out.push(Query {
            ssid,
            tsid,
            tclass,
            requested,
        });
    }
    Ok(out)
}

/// Writes a trace in the format [`parse_trace`] reads.
pub fn format_trace(trace: &[Query]) -> String {
    let mut s = String::with_capacity(trace.len() * 16);
    for q in trace {
        let _ = writeln!(s, "{} {} {} {:#x}", q.ssid, q.tsid, q.tclass, q.requested);
    }
    s
}

/// Triples shaped like a policy's rules, for running without one: 400 domains and 4000
/// types with Zipf-skewed use, 120 classes (a few dominate), `n` distinct triples.
pub fn fake_triples(n: usize, seed: u64) -> Vec<(u32, u32, u16)> {
    let mut rng = Rng::new(seed ^ 0x7472_6970);
    let pick = |rng: &mut Rng, max: usize| -> usize {
        // Inverse-CDF of a rough Zipf(1) over 1..=max.
        let u = rng.next_f64();
        ((max as f64).powf(u) as usize).clamp(1, max)
    };
    let mut set = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(n);
    let mut guard = 0usize;
    while out.len() < n && guard < n * 100 {
        guard += 1;
        let s = pick(&mut rng, 400) as u32;
        let t = pick(&mut rng, 4000) as u32 + 400;
        let c = pick(&mut rng, 120) as u16;
        if set.insert((s, t, c)) {
            out.push((s, t, c));
        }
    }
    out
}

/// One (entries, slots) configuration of the study.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StudyConfig {
    pub entries: usize,
    pub slots: usize,
}

/// The study's configurations (with 8192/4096, proposed in the study's review).
pub const STUDY_CONFIGS: [StudyConfig; 5] = [
    StudyConfig {
        entries: 512,
        slots: 512,
    },
    StudyConfig {
        entries: 1024,
        slots: 512,
    },
    StudyConfig {
        entries: 2048,
        slots: 512,
    },
    StudyConfig {
        entries: 8192,
        slots: 8192,
    },
    StudyConfig {
        entries: 8192,
        slots: 4096,
    },
];

/// What to run.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub configs: Vec<StudyConfig>,
    /// Timed repetitions; medians are reported.
    pub repetitions: usize,
    /// Hash-statistics samples averaged per variant.
    pub samples: usize,
    /// Lookups per thread per throughput repetition.
    pub throughput_lookups: usize,
    /// Thread counts for the throughput measurement (ratios are relative to the first).
    pub threads: Vec<usize>,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            configs: STUDY_CONFIGS.to_vec(),
            repetitions: 7,
            samples: 64,
            throughput_lookups: 2_000_000,
            threads: vec![1, 2],
        }
    }
}

/// Which cache a variant measures.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Variant {
    /// [`KernelAvc`] with a hash.
    Kernel(HashKind),
    /// arbiter's cache with the configuration's slots and a hash.
    Arbiter(HashKind),
    /// arbiter's cache with its own layout for the entry count ([`AvcConfig::for_threshold`]).
    ArbiterDefault,
}

impl Variant {
    pub fn label(&self) -> String {
        match self {
            Variant::Kernel(h) => format!("kernel/{}", h.name()),
            Variant::Arbiter(h) => format!("arbiter/{}", h.name()),
            Variant::ArbiterDefault => "arbiter/default-layout".to_string(),
        }
    }

    fn all() -> Vec<Variant> {
        let mut v: Vec<Variant> = HashKind::ALL.into_iter().map(Variant::Kernel).collect();
        v.extend(HashKind::ALL.into_iter().map(Variant::Arbiter));
        v.push(Variant::ArbiterDefault);
        v
    }
}

/// Results of one variant in one configuration.
#[derive(Clone, Debug)]
pub struct VariantResult {
    pub variant: Variant,
    /// Buckets the variant used (differs from the configuration for the default layout).
    pub slots: usize,
    /// Mean sampled entries.
    pub entries: f64,
    /// Mean sampled fraction of buckets that are some entry's home (kernel: non-empty).
    pub bucket_utilization: f64,
    /// Mean sampled longest chain (arbiter: most entries sharing a home bucket).
    pub longest_chain: f64,
    /// Mean sampled longest probe in entries examined (kernel: = longest chain).
    pub longest_probe: f64,
    /// Median ns per lookup over the trace, cache frozen.
    pub ns_per_lookup: f64,
    /// Median ns per lookup over the trace's hits only.
    pub ns_per_hit: f64,
    /// Hit ratio of the measured pass.
    pub hit_ratio: f64,
    /// Mean ns per miss (compute + insert + reclaim), median over repetitions.
    pub ns_per_miss: f64,
}

/// One configuration's row.
#[derive(Clone, Debug)]
pub struct ConfigResult {
    pub config: StudyConfig,
    pub variants: Vec<VariantResult>,
}

/// Hit throughput of one cache at several thread counts.
#[derive(Clone, Debug)]
pub struct Throughput {
    pub label: String,
    /// (threads, million lookups per second over wall-clock time), medians.
    pub points: Vec<(usize, f64)>,
    /// (threads, million lookups per second of on-CPU time summed over threads), medians.
    pub on_cpu: Vec<(usize, f64)>,
}

fn ratio(points: &[(usize, f64)]) -> f64 {
    match (points.first(), points.last()) {
        (Some(a), Some(b)) if a.1 > 0.0 => b.1 / a.1,
        _ => 0.0,
    }
}

impl Throughput {
    /// Wall-clock throughput at the last thread count over the first.
    pub fn scaling(&self) -> f64 {
        ratio(&self.points)
    }

    /// On-CPU throughput at the last thread count over the first.
    pub fn scaling_on_cpu(&self) -> f64 {
        ratio(&self.on_cpu)
    }
}

/// Static quality of the hash functions for one configuration: `entries` keys drawn at
/// random from the trace's distinct keys, placed at once into `slots` buckets (no cache
/// dynamics), averaged over many draws. This isolates the hash from reclaim and is what
/// the study's metrics measure.
#[derive(Clone, Debug)]
pub struct HashQuality {
    pub config: StudyConfig,
    /// (hash, mean bucket utilisation, mean longest chain).
    pub per_hash: Vec<(HashKind, f64, f64)>,
}

/// Bucket spread of a structured key set (8192 keys into 8192 buckets) per hash.
#[derive(Clone, Debug)]
pub struct StructuredSpread {
    pub name: &'static str,
    /// (hash, bucket utilisation, longest chain).
    pub per_hash: Vec<(HashKind, f64, usize)>,
}

/// A goal from the issue, measured (reported, not asserted).
#[derive(Clone, Debug)]
pub struct Target {
    pub name: String,
    pub goal: String,
    pub measured: String,
    pub met: bool,
}

/// Everything [`run`] measured.
#[derive(Clone, Debug)]
pub struct Report {
    pub queries: usize,
    pub distinct: usize,
    pub sids: usize,
    pub repetitions: usize,
    pub samples: usize,
    pub configs: Vec<ConfigResult>,
    /// The kernel-style cache with the kernel's default 512 slots holding the largest
    /// entry count (the study's 277 ns case).
    pub kernel_default_slots: Option<VariantResult>,
    pub throughput: Vec<Throughput>,
    pub hash_quality: Vec<HashQuality>,
    pub structured: Vec<StructuredSpread>,
    pub targets: Vec<Target>,
}

/// The operations the measurement loops need, monomorphised per cache.
trait Subject {
    fn probe(&self, q: &Query) -> Option<u32>;
    /// The miss path: compute through the source, insert.
    fn fill(&mut self, q: &Query);
    fn hash_stats(&self) -> HashStats;
}

struct KernelSubject<'a, S: DecisionSource + ?Sized> {
    k: KernelAvc,
    src: &'a S,
}

impl<S: DecisionSource + ?Sized> Subject for KernelSubject<'_, S> {
    #[inline(always)]
    fn probe(&self, q: &Query) -> Option<u32> {
        self.k.search(q.ssid, q.tsid, q.tclass).map(|d| d.allowed.0)
    }
    fn fill(&mut self, q: &Query) {
        if let Ok(d) = raw_compute_av(self.src, q.ssid, q.tsid, q.tclass) {
            self.k.insert(q.ssid, q.tsid, q.tclass, d);
        }
    }
    fn hash_stats(&self) -> HashStats {
        self.k.hash_stats()
    }
}

impl<S: DecisionSource> Subject for Avc<S> {
    #[inline(always)]
    fn probe(&self, q: &Query) -> Option<u32> {
        self.lookup_r(q.ssid, q.tsid, q.tclass).map(|d| d.allowed.0)
    }
    fn fill(&mut self, q: &Query) {
        let _ = self.decision_r(q.ssid, q.tsid, q.tclass);
    }
    fn hash_stats(&self) -> HashStats {
        Avc::hash_stats(self)
    }
}

/// ns one `Instant::now()` pair costs (median), to subtract from per-miss timings.
fn timer_overhead() -> f64 {
    let mut v: Vec<f64> = (0..20_000)
        .map(|_| {
            let a = Instant::now();
            a.elapsed().as_nanos() as f64
        })
        .collect();
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Queries per timed chunk: short enough (tens to hundreds of µs) that most chunks run
/// without being preempted on a loaded machine, so the median chunk reflects the code and
/// not the neighbours.
const CHUNK: usize = 4096;

/// Median over chunks and repetitions of ns per probe.
#[inline(never)]
fn time_probes<T: Subject>(s: &T, qs: &[Query], reps: usize) -> f64 {
    let mut samples = Vec::new();
    for _ in 0..reps.max(1) {
        for chunk in qs.chunks(CHUNK) {
            let t = Instant::now();
            let mut acc = 0u32;
            for q in chunk {
                if let Some(a) = s.probe(black_box(q)) {
                    acc = acc.wrapping_add(a);
                }
            }
            black_box(acc);
            samples.push(t.elapsed().as_nanos() as f64 / chunk.len() as f64);
        }
    }
    median(&samples)
}

/// Mean of per-miss samples, ignoring those above 50x the median (a preemption, not a
/// miss: a miss with reclaim costs a few times the median, a time slice lost to another
/// process costs thousands). The mean, not the median, because the kernel-style cache
/// pays its reclaim on one miss in sixteen.
fn robust_mean(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let cut = v[v.len() / 2].max(1.0) * 50.0;
    let kept: Vec<f64> = v.into_iter().filter(|&x| x <= cut).collect();
    kept.iter().sum::<f64>() / kept.len().max(1) as f64
}

fn measure<T: Subject>(
    s: &mut T,
    variant: Variant,
    slots: usize,
    trace: &[Query],
    opts: &BenchOptions,
    overhead: f64,
) -> VariantResult {
    // 1. warm-up
    for q in trace {
        if s.probe(q).is_none() {
            s.fill(q);
        }
    }
    // 2. measured passes: hit ratio, miss cost, sampled hash statistics (first pass)
    let every = (trace.len() / opts.samples.max(1)).max(1);
    let (mut util, mut chain, mut probe, mut entries, mut nsamp) = (0.0, 0.0, 0.0, 0.0, 0usize);
    let mut hit_ratio = 0.0;
    let mut miss_ns = Vec::new();
    for rep in 0..opts.repetitions.clamp(1, 3) {
        let mut hits = 0usize;
        for (i, q) in trace.iter().enumerate() {
            if s.probe(q).is_some() {
                hits += 1;
            } else {
                let t = Instant::now();
                s.fill(q);
                miss_ns.push((t.elapsed().as_nanos() as f64 - overhead).max(0.0));
            }
            if rep == 0 && i % every == every - 1 {
                let h = s.hash_stats();
                util += h.buckets_used as f64 / h.buckets.max(1) as f64;
                chain += h.longest_chain as f64;
                probe += h.longest_probe as f64;
                entries += h.entries as f64;
                nsamp += 1;
            }
        }
        if rep == 0 {
            hit_ratio = hits as f64 / trace.len().max(1) as f64;
        }
    }
    let ns = nsamp.max(1) as f64;
    // 3. frozen: lookups over the trace, and over its hits
    let hits: Vec<Query> = trace
        .iter()
        .filter(|q| s.probe(q).is_some())
        .copied()
        .collect();
    let reps = opts.repetitions.max(1);
    VariantResult {
        variant,
        slots,
        entries: entries / ns,
        bucket_utilization: util / ns,
        longest_chain: chain / ns,
        longest_probe: probe / ns,
        ns_per_lookup: time_probes(s, trace, reps),
        ns_per_hit: time_probes(s, &hits, reps),
        hit_ratio,
        ns_per_miss: robust_mean(miss_ns),
    }
}

fn run_variant<S: DecisionSource + ?Sized>(
    v: Variant,
    c: StudyConfig,
    trace: &[Query],
    source: &S,
    opts: &BenchOptions,
    overhead: f64,
) -> Option<VariantResult> {
    match v {
        Variant::Kernel(h) => {
            let mut s = KernelSubject {
                k: KernelAvc::new(c.slots, c.entries, h).ok()?,
                src: source,
            };
            Some(measure(&mut s, v, c.slots, trace, opts, overhead))
        }
        Variant::Arbiter(h) => {
            let cfg = AvcConfig::for_threshold(c.entries).with_layout(c.entries, c.slots, h);
            let mut a = Avc::new(source, cfg).ok()?;
            Some(measure(&mut a, v, c.slots, trace, opts, overhead))
        }
        Variant::ArbiterDefault => {
            let cfg = AvcConfig::for_threshold(c.entries);
            let slots = cfg.slots;
            let mut a = Avc::new(source, cfg).ok()?;
            Some(measure(&mut a, v, slots, trace, opts, overhead))
        }
    }
}

/// Lookups per second over `hits` with `threads` threads, each starting at its own
/// offset, `n` lookups per thread: `(wall, on_cpu)` in millions per second. `wall` is
/// total lookups over elapsed time; `on_cpu` sums each thread's lookups over the time it
/// actually ran (so other processes competing for the cores do not count against the
/// cache, while coherence traffic between the threads still does).
fn throughput<F: Fn(&Query) -> Option<u32> + Sync>(
    probe: F,
    hits: &[Query],
    threads: usize,
    n: usize,
) -> (f64, f64) {
    if hits.is_empty() || threads == 0 {
        return (0.0, 0.0);
    }
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|sc| {
        let mut hs = Vec::new();
        for t in 0..threads {
            let (probe, barrier) = (&probe, &barrier);
            hs.push(sc.spawn(move || {
                let mut i = t * hits.len() / threads;
                let mut acc = 0u32;
                barrier.wait();
                let c0 = thread_cpu_ns();
                let t0 = Instant::now();
                for _ in 0..n {
                    if let Some(a) = probe(&hits[i]) {
                        acc = acc.wrapping_add(a);
                    }
                    i += 1;
                    if i == hits.len() {
                        i = 0;
                    }
                }
                black_box(acc);
                let wall = t0.elapsed().as_nanos() as f64;
                let cpu = match thread_cpu_ns() - c0 {
                    0 => wall,
                    d => d as f64,
                };
                (Instant::now(), cpu)
            }));
        }
        let t0 = Instant::now();
        barrier.wait();
        let mut end = t0;
        let mut on_cpu = 0.0;
        for h in hs {
            let (e, cpu) = h.join().expect("bench thread");
            end = end.max(e);
            on_cpu += n as f64 / cpu * 1e3;
        }
        (
            (threads * n) as f64 / end.duration_since(t0).as_secs_f64() / 1e6,
            on_cpu,
        )
    })
}

fn spread(h: HashKind, keys: &[(u32, u32, u16)], slots: usize) -> (f64, usize) {
    let bits = slots.trailing_zeros();
    let mut cnt = vec![0u32; slots];
    for &(s, t, c) in keys {
        cnt[h.bucket(s, t, c as u32, bits)] += 1;
    }
    let used = cnt.iter().filter(|&&c| c > 0).count();
    (
        used as f64 / slots as f64,
        cnt.iter().copied().max().unwrap_or(0) as usize,
    )
}

fn hash_quality(
    keys: &[(u32, u32, u16)],
    configs: &[StudyConfig],
    samples: usize,
) -> Vec<HashQuality> {
    let mut rng = Rng::new(0x6861_7368);
    configs
        .iter()
        .filter(|c| c.entries <= keys.len())
        .map(|&c| {
            let mut acc = vec![(0.0, 0.0); HashKind::ALL.len()];
            let mut pool = keys.to_vec();
            for _ in 0..samples.max(1) {
                // Partial Fisher-Yates: a uniform random subset of `entries` keys.
                for i in 0..c.entries {
                    let j = i + rng.below(pool.len() - i);
                    pool.swap(i, j);
                }
                for (a, h) in acc.iter_mut().zip(HashKind::ALL) {
                    let (u, ch) = spread(h, &pool[..c.entries], c.slots);
                    a.0 += u;
                    a.1 += ch as f64;
                }
            }
            let n = samples.max(1) as f64;
            HashQuality {
                config: c,
                per_hash: HashKind::ALL
                    .into_iter()
                    .zip(acc)
                    .map(|(h, (u, ch))| (h, u / n, ch / n))
                    .collect(),
            }
        })
        .collect()
}

fn structured_spreads() -> Vec<StructuredSpread> {
    type KeySet = (&'static str, Vec<(u32, u32, u16)>);
    let sets: Vec<KeySet> = vec![
        (
            "self checks (s, s, c)",
            (1..=8192).map(|i| (i, i, 1)).collect(),
        ),
        (
            "one source, target scan",
            (1..=8192).map(|i| (7, i, 1)).collect(),
        ),
        (
            "one target, source scan",
            (1..=8192).map(|i| (i, 7, 1)).collect(),
        ),
        (
            "SID grid 91x90",
            (1..=91)
                .flat_map(|a| (1..=90).map(move |b| (a, b, 1)))
                .take(8192)
                .collect(),
        ),
        (
            "64 SID pairs x 128 classes",
            (0..64u32)
                .flat_map(|p| (1..=128).map(move |c| (p + 1, 3 * p + 100, c)))
                .collect(),
        ),
        (
            "target SIDs strided by 512",
            (0..8192).map(|i| (3, 1 + 512 * i, 1)).collect(),
        ),
    ];
    sets.into_iter()
        .map(|(name, keys)| StructuredSpread {
            name,
            per_hash: HashKind::ALL
                .into_iter()
                .map(|h| {
                    let (u, ch) = spread(h, &keys, 8192);
                    (h, u, ch)
                })
                .collect(),
        })
        .collect()
}

/// Runs the whole benchmark (see the module header). `source` answers the misses.
pub fn run<S: DecisionSource + ?Sized>(trace: &[Query], source: &S, opts: &BenchOptions) -> Report {
    let overhead = timer_overhead();
    let mut sids = std::collections::HashSet::new();
    let mut keys = std::collections::HashSet::new();
    let mut distinct = Vec::new();
    for q in trace {
        sids.insert(q.ssid);
        sids.insert(q.tsid);
        if keys.insert((q.ssid, q.tsid, q.tclass)) {
            distinct.push((q.ssid, q.tsid, q.tclass));
        }
    }
    let mut configs = Vec::new();
    for &c in &opts.configs {
        let variants = Variant::all()
            .into_iter()
            .filter_map(|v| run_variant(v, c, trace, source, opts, overhead))
            .collect();
        configs.push(ConfigResult {
            config: c,
            variants,
        });
    }
    let big = opts.configs.iter().map(|c| c.entries).max().unwrap_or(8192);
    let kernel_default_slots = run_variant(
        Variant::Kernel(HashKind::Original),
        StudyConfig {
            entries: big,
            slots: arbiter_avc::AVC_CACHE_SLOTS,
        },
        trace,
        source,
        opts,
        overhead,
    );

    // Throughput on frozen caches of the largest configuration.
    let big_cfg = opts
        .configs
        .iter()
        .copied()
        .filter(|c| c.entries == big)
        .max_by_key(|c| c.slots)
        .unwrap_or(StudyConfig {
            entries: big,
            slots: big,
        });
    let reps = opts.repetitions.max(1);
    let throughput_rows = {
        let avc = Avc::new(source, AvcConfig::for_threshold(big)).expect("default layout is valid");
        let kernel = {
            let mut k =
                KernelAvc::new(big_cfg.slots, big, HashKind::Original).expect("study config");
            for q in trace {
                if k.search(q.ssid, q.tsid, q.tclass).is_none() {
                    if let Ok(d) = raw_compute_av(source, q.ssid, q.tsid, q.tclass) {
                        k.insert(q.ssid, q.tsid, q.tclass, d);
                    }
                }
            }
            k
        };
        let locked = LockedAvc::new(big_cfg.slots, big, HashKind::Original).expect("study config");
        for q in trace {
            let _ = avc.decision_r(q.ssid, q.tsid, q.tclass);
            let _ = locked.check(source, q.ssid, q.tsid, q.tclass);
        }
        let hits_a: Vec<Query> = trace
            .iter()
            .filter(|q| avc.lookup_r(q.ssid, q.tsid, q.tclass).is_some())
            .copied()
            .collect();
        let hits_k: Vec<Query> = trace
            .iter()
            .filter(|q| kernel.search(q.ssid, q.tsid, q.tclass).is_some())
            .copied()
            .collect();
        let hits_l: Vec<Query> = trace
            .iter()
            .filter(|q| locked.lookup(q.ssid, q.tsid, q.tclass).is_some())
            .copied()
            .collect();
        let n = opts.throughput_lookups.max(1);
        let labels = [
            "arbiter/default-layout".to_string(),
            format!("kernel/original {}/{}", big, big_cfg.slots),
            format!("libselinux-style {}/{}", big, big_cfg.slots),
        ];
        let mut rows: Vec<Throughput> = labels
            .into_iter()
            .map(|label| Throughput {
                label,
                points: Vec::new(),
                on_cpu: Vec::new(),
            })
            .collect();
        for &t in &opts.threads {
            let mut m: [(Vec<f64>, Vec<f64>); 3] = Default::default();
            for _ in 0..reps {
                let r = [
                    throughput(
                        |q| avc.lookup_r(q.ssid, q.tsid, q.tclass).map(|d| d.allowed.0),
                        &hits_a,
                        t,
                        n,
                    ),
                    throughput(
                        |q| kernel.search(q.ssid, q.tsid, q.tclass).map(|d| d.allowed.0),
                        &hits_k,
                        t,
                        n,
                    ),
                    throughput(
                        |q| locked.lookup(q.ssid, q.tsid, q.tclass).map(|d| d.allowed.0),
                        &hits_l,
                        t,
                        n / 4,
                    ),
                ];
                for (acc, (w, c)) in m.iter_mut().zip(r) {
                    acc.0.push(w);
                    acc.1.push(c);
                }
            }
            for (row, (w, c)) in rows.iter_mut().zip(m) {
                row.points.push((t, median(&w)));
                row.on_cpu.push((t, median(&c)));
            }
        }
        rows
    };

    let mut report = Report {
        queries: trace.len(),
        distinct: keys.len(),
        sids: sids.len(),
        repetitions: reps,
        samples: opts.samples,
        configs,
        kernel_default_slots,
        throughput: throughput_rows,
        hash_quality: hash_quality(&distinct, &opts.configs, opts.samples),
        structured: structured_spreads(),
        targets: Vec::new(),
    };
    report.targets = targets(&report);
    report
}

fn find(r: &Report, entries: usize, slots: usize, v: Variant) -> Option<&VariantResult> {
    r.configs
        .iter()
        .find(|c| c.config.entries == entries && c.config.slots == slots)
        .and_then(|c| c.variants.iter().find(|x| x.variant == v))
}

fn targets(r: &Report) -> Vec<Target> {
    let mut t = Vec::new();
    let def = find(r, 8192, 8192, Variant::ArbiterDefault)
        .or_else(|| find(r, 8192, 4096, Variant::ArbiterDefault));
    let base = find(r, 8192, 8192, Variant::Kernel(HashKind::Original));
    if let (Some(d), Some(b)) = (def, base) {
        let x = b.ns_per_hit / d.ns_per_hit.max(1e-9);
        t.push(Target {
            name: "hit speed-up at 8192 entries vs kernel/original 8192/8192".into(),
            goal: ">= 5x".into(),
            measured: format!("{x:.1}x ({:.1} ns vs {:.1} ns)", d.ns_per_hit, b.ns_per_hit),
            met: x >= 5.0,
        });
    }
    if let (Some(d), Some(b)) = (def, r.kernel_default_slots.as_ref()) {
        let x = b.ns_per_hit / d.ns_per_hit.max(1e-9);
        t.push(Target {
            name: format!(
                "hit speed-up at 8192 entries vs kernel/original {}/512 (study: 277 ns)",
                8192
            ),
            goal: ">= 5x".into(),
            measured: format!("{x:.1}x ({:.1} ns vs {:.1} ns)", d.ns_per_hit, b.ns_per_hit),
            met: x >= 5.0,
        });
    }
    if let Some(d) = def {
        t.push(Target {
            name: "cached hit at 8192 entries (arbiter default layout)".into(),
            goal: "< 15 ns".into(),
            measured: format!("{:.1} ns", d.ns_per_hit),
            met: d.ns_per_hit < 15.0,
        });
    }
    if let Some(a) = find(r, 8192, 8192, Variant::Arbiter(HashKind::Arbiter)) {
        t.push(Target {
            name: "longest probe at 8192/8192 (arbiter cache, arbiter hash)".into(),
            goal: "<= 6.6 (study's best longest chain)".into(),
            measured: format!(
                "{:.1} (longest chain {:.1})",
                a.longest_probe, a.longest_chain
            ),
            met: a.longest_probe <= 6.6,
        });
    }
    if let Some(tp) = r.throughput.first() {
        let (a, b) = (
            tp.points.first().map_or(0, |p| p.0),
            tp.points.last().map_or(0, |p| p.0),
        );
        t.push(Target {
            name: format!(
                "{} hit throughput, {b} vs {a} threads, on-CPU time",
                tp.label
            ),
            goal: ">= 1.9x".into(),
            measured: format!(
                "{:.2}x (wall clock: {:.2}x)",
                tp.scaling_on_cpu(),
                tp.scaling()
            ),
            met: tp.scaling_on_cpu() >= 1.9,
        });
    }
    t
}

const COL: usize = 14;

fn table_header(out: &mut String, labels: &[String]) {
    let _ = write!(out, "{:<15}", "entries/slots");
    for l in labels {
        let _ = write!(out, "|{:>w$}", l, w = COL);
    }
    out.push('\n');
    out.push_str(&"-".repeat(15 + labels.len() * (COL + 1)));
    out.push('\n');
}

fn short(v: &Variant) -> String {
    match v {
        Variant::Kernel(h) => format!("k/{}", h.name()),
        Variant::Arbiter(h) => format!("a/{}", h.name()),
        Variant::ArbiterDefault => "a/default".into(),
    }
}

impl Report {
    /// The plain-text tables.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "AVC benchmark: {} queries, {} distinct entries, {} SIDs; medians of {} repetitions; hash stats = mean of {} samples",
            self.queries, self.distinct, self.sids, self.repetitions, self.samples
        );
        let _ = writeln!(o, "k/ = kernel-style chained cache (avc.c model), a/ = arbiter cache; a/default = arbiter hash and arbiter's own slot count for the entry count");
        let Some(first) = self.configs.first() else {
            return o;
        };
        let labels: Vec<String> = first.variants.iter().map(|v| short(&v.variant)).collect();
        let row = |o: &mut String,
                   c: &ConfigResult,
                   f: &dyn Fn(&VariantResult, &VariantResult) -> String| {
            let _ = write!(
                o,
                "{:<15}",
                format!("{}/{}", c.config.entries, c.config.slots)
            );
            let base = c
                .variants
                .iter()
                .find(|v| v.variant == Variant::Kernel(HashKind::Original))
                .unwrap_or(&c.variants[0]);
            for v in &c.variants {
                let _ = write!(o, "|{:>w$}", f(v, base), w = COL);
            }
            o.push('\n');
        };

        let _ = writeln!(o, "\n(a) bucket utilization / longest chain, sampled during the run  (study, 8192/8192: original 49.5%/11.4, murmur3 60.3%/7.4, muladd 61.9%/6.6)\n    a/ columns: buckets that are some entry's home / most entries sharing a home, bounded at 6 by the probe window (keys beyond evict within it)");
        table_header(&mut o, &labels);
        for c in &self.configs {
            row(&mut o, c, &|v, _| {
                format!(
                    "{:.1}%/{:.1}",
                    100.0 * v.bucket_utilization,
                    v.longest_chain
                )
            });
        }
        let _ = writeln!(o, "\n(a') longest probe (entries examined to reach the deepest entry; kernel: = longest chain) / mean entries");
        table_header(&mut o, &labels);
        for c in &self.configs {
            row(&mut o, c, &|v, _| {
                format!("{:.1}/{:.0}", v.longest_probe, v.entries)
            });
        }
        let _ = writeln!(o, "\n(b) ns per lookup over the trace, cache frozen, median of 4096-query chunks (ratio vs k/original)  (study: ~80-120 ns; 8192 entries in 512 slots: 277 ns)");
        table_header(&mut o, &labels);
        for c in &self.configs {
            row(&mut o, c, &|v, b| {
                format!(
                    "{:.1} {:.2}x",
                    v.ns_per_lookup,
                    v.ns_per_lookup / b.ns_per_lookup.max(1e-9)
                )
            });
        }
        let _ = writeln!(o, "\n(b') ns per hit (ratio vs k/original)");
        table_header(&mut o, &labels);
        for c in &self.configs {
            row(&mut o, c, &|v, b| {
                format!(
                    "{:.1} {:.2}x",
                    v.ns_per_hit,
                    v.ns_per_hit / b.ns_per_hit.max(1e-9)
                )
            });
        }
        let _ = writeln!(o, "\n(c) hit ratio / ns per miss (source compute + insert + reclaim; mean, preemptions excluded)");
        table_header(&mut o, &labels);
        for c in &self.configs {
            row(&mut o, c, &|v, _| {
                format!("{:.1}%/{:.0}", 100.0 * v.hit_ratio, v.ns_per_miss)
            });
        }
        if let Some(k) = &self.kernel_default_slots {
            let _ = writeln!(
                o,
                "\nkernel-style, original hash, {} entries in the default {} slots: {:.1}%/{:.1} utilization/chain, {:.1} ns/lookup, {:.1} ns/hit, hit ratio {:.1}%",
                k.entries.round(),
                k.slots,
                100.0 * k.bucket_utilization,
                k.longest_chain,
                k.ns_per_lookup,
                k.ns_per_hit,
                100.0 * k.hit_ratio
            );
        }
        if let Some(c) = self.configs.first() {
            if let Some(d) = c
                .variants
                .iter()
                .find(|v| v.variant == Variant::ArbiterDefault)
            {
                let _ = writeln!(
                    o,
                    "(a/default slots per row: {})",
                    self.configs
                        .iter()
                        .filter_map(|c| c
                            .variants
                            .iter()
                            .find(|v| v.variant == Variant::ArbiterDefault))
                        .map(|v| v.slots.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                let _ = d;
            }
        }
        if !self.hash_quality.is_empty() {
            let _ = writeln!(
                o,
                "\n(d) hash quality alone: utilization / longest chain, keys drawn at random from the trace and placed at once (mean of {} draws)",
                self.samples
            );
            let labels: Vec<String> = HashKind::ALL.iter().map(|h| h.name().to_string()).collect();
            table_header(&mut o, &labels);
            for q in &self.hash_quality {
                let _ = write!(
                    o,
                    "{:<15}",
                    format!("{}/{}", q.config.entries, q.config.slots)
                );
                for (_, u, c) in &q.per_hash {
                    let _ = write!(o, "|{:>w$}", format!("{:.1}%/{:.2}", 100.0 * u, c), w = COL);
                }
                o.push('\n');
            }
            let _ = writeln!(o, "\n(d') structured key sets, 8192 keys in 8192 buckets: utilization / longest chain");
            let _ = write!(o, "{:<27}", "key set");
            for l in &labels {
                let _ = write!(o, "|{:>w$}", l, w = COL);
            }
            o.push('\n');
            for st in &self.structured {
                let _ = write!(o, "{:<27}", st.name);
                for (_, u, c) in &st.per_hash {
                    let _ = write!(o, "|{:>w$}", format!("{:.0}%/{}", 100.0 * u, c), w = COL);
                }
                o.push('\n');
            }
        }
        let _ = writeln!(o, "\n(e) hit throughput, million lookups/s (frozen cache, hits only): wall clock | on-CPU time (per-thread schedstat)");
        for t in &self.throughput {
            let pts: Vec<String> = t
                .points
                .iter()
                .zip(&t.on_cpu)
                .map(|((n, w), (_, c))| format!("{n} thr: {w:.1} | {c:.1}"))
                .collect();
            let _ = writeln!(
                o,
                "{:<32} {}   scaling {:.2}x | {:.2}x",
                t.label,
                pts.join("   "),
                t.scaling(),
                t.scaling_on_cpu()
            );
        }
        let _ = writeln!(o, "\ntargets (reported, not asserted)");
        for t in &self.targets {
            let _ = writeln!(
                o,
                "  [{}] {}: goal {}, measured {}",
                if t.met { "met" } else { "MISSED" },
                t.name,
                t.goal,
                t.measured
            );
        }
        o
    }

    /// The same data as JSON.
    pub fn to_json(&self) -> Value {
        let var = |v: &VariantResult| {
            json!({
                "variant": v.variant.label(),
                "slots": v.slots,
                "entries": v.entries,
                "bucket_utilization": v.bucket_utilization,
                "longest_chain": v.longest_chain,
                "longest_probe": v.longest_probe,
                "ns_per_lookup": v.ns_per_lookup,
                "ns_per_hit": v.ns_per_hit,
                "hit_ratio": v.hit_ratio,
                "ns_per_miss": v.ns_per_miss,
            })
        };
        json!({
            "queries": self.queries,
            "distinct": self.distinct,
            "sids": self.sids,
            "repetitions": self.repetitions,
            "samples": self.samples,
            "configs": self.configs.iter().map(|c| json!({
                "entries": c.config.entries,
                "slots": c.config.slots,
                "variants": c.variants.iter().map(var).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "kernel_default_slots": self.kernel_default_slots.as_ref().map(var),
            "throughput": self.throughput.iter().map(|t| json!({
                "label": t.label,
                "points": t.points.iter().zip(&t.on_cpu).map(|((n, w), (_, c))| json!({
                    "threads": n, "mlookups_per_s_wall": w, "mlookups_per_s_on_cpu": c,
                })).collect::<Vec<_>>(),
                "scaling_wall": t.scaling(),
                "scaling_on_cpu": t.scaling_on_cpu(),
            })).collect::<Vec<_>>(),
            "hash_quality": self.hash_quality.iter().map(|q| json!({
                "entries": q.config.entries,
                "slots": q.config.slots,
                "hashes": q.per_hash.iter().map(|(h, u, c)| json!({
                    "hash": h.name(), "bucket_utilization": u, "longest_chain": c,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "structured": self.structured.iter().map(|st| json!({
                "set": st.name,
                "hashes": st.per_hash.iter().map(|(h, u, c)| json!({
                    "hash": h.name(), "bucket_utilization": u, "longest_chain": c,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "targets": self.targets.iter().map(|t| json!({
                "name": t.name, "goal": t.goal, "measured": t.measured, "met": t.met,
            })).collect::<Vec<_>>(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_avc::fake::FakeSource;

    #[test]
    fn trace_shape() {
        let triples = fake_triples(3000, 7);
        assert_eq!(triples.len(), 3000);
        let opts = TraceOptions {
            distinct: 1000,
            queries: 20_000,
            zipf: 1.0,
            seed: 3,
        };
        let t = synthetic_trace(&triples, &opts);
        assert_eq!(t.len(), 20_000);
        let distinct: std::collections::HashSet<_> =
            t.iter().map(|q| (q.ssid, q.tsid, q.tclass)).collect();
        assert_eq!(distinct.len(), 1000);
        // SIDs in first-seen order: the first query uses SIDs 1 and 1 or 2.
        assert_eq!(t[0].ssid, 1);
        assert!(t[0].tsid <= 2);
        let mut max = 0;
        for q in &t {
            for s in [q.ssid, q.tsid] {
                assert!(s <= max + 1, "SID {s} before {}", max + 1);
                max = max.max(s);
            }
            assert_eq!(q.requested.count_ones(), 1);
        }
        // Deterministic.
        assert_eq!(t, synthetic_trace(&triples, &opts));
    }

    #[test]
    fn trace_files_round_trip() {
        let t = synthetic_trace(
            &fake_triples(100, 1),
            &TraceOptions {
                distinct: 50,
                queries: 300,
                zipf: 1.0,
                seed: 2,
            },
        );
        assert_eq!(parse_trace(&format_trace(&t)).unwrap(), t);
        let text = "# comment\n1 2 3\n\n0x10 0X20 7 0x6  # trailing\n";
        assert_eq!(
            parse_trace(text).unwrap(),
            [
                Query {
                    ssid: 1,
                    tsid: 2,
                    tclass: 3,
                    requested: 1
                },
                Query {
                    ssid: 16,
                    tsid: 32,
                    tclass: 7,
                    requested: 6
                }
            ]
        );
        assert_eq!(parse_trace("1 2").unwrap_err().line, 1);
        assert_eq!(
            parse_trace("1 2 3\n1 2 70000").unwrap_err(),
            TraceError {
                line: 2,
                reason: "tclass out of range".into()
            }
        );
        assert!(parse_trace("1 x 3").is_err());
    }

    #[test]
    fn small_run_produces_all_tables() {
        let src = FakeSource::new();
        let trace = synthetic_trace(
            &fake_triples(2000, 1),
            &TraceOptions {
                distinct: 600,
                queries: 5000,
                zipf: 1.0,
                seed: 1,
            },
        );
        let opts = BenchOptions {
            configs: vec![
                StudyConfig {
                    entries: 128,
                    slots: 64,
                },
                StudyConfig {
                    entries: 512,
                    slots: 512,
                },
            ],
            repetitions: 2,
            samples: 4,
            throughput_lookups: 2000,
            threads: vec![1, 2],
        };
        let r = run(&trace, &src, &opts);
        assert_eq!(r.configs.len(), 2);
        assert_eq!(r.configs[0].variants.len(), 9);
        for c in &r.configs {
            for v in &c.variants {
                assert!(v.hit_ratio > 0.0 && v.hit_ratio < 1.0, "{:?}", v);
                assert!(v.entries <= c.config.entries as f64 + 16.0);
            }
        }
        let text = r.to_text();
        assert!(text.contains("(a) bucket utilization"));
        assert!(text.contains("(b) ns per lookup"));
        let j = r.to_json();
        assert_eq!(j["configs"][1]["variants"][0]["variant"], "kernel/original");
        assert_eq!(r.throughput.len(), 3);
    }
}
