//! `arbiter bench landlock`: the domain layout study, side by side in one run.
//!
//! Three workloads, each checked against the same domain in three layouts (coalesced hash,
//! sorted array, kernel-style tree of separately allocated rules):
//!
//! - `depth10_100`: one layer, 100 rules; files at depth 10 (`/1/2/…/9/f`) whose only
//!   granting rule is on `/1`, with rules on every directory of the path, so a check looks
//!   up 9 rules and walks to the top (the RFC's "depth 10, 100 rules");
//! - `typical_18`: two layers, 18 rules like a desktop sandbox (`/usr`, `/etc`, `/tmp`, …),
//!   a mix of allowed and denied opens (the RFC's "typical");
//! - `16x10000`: 16 layers × 10,000 rules over 40,000 objects, depth-10 walks.
//!
//! Times are per-thread CPU time (`CLOCK_THREAD_CPUTIME_ID`), so that other processes on a
//! shared machine do not count; the two-thread figure is also given by wall clock.
//! It reports median ns per check, memory per rule and per (rule, layer) entry, the time to
//! merge the 16th layer (and all 16) of the big domain, and the throughput of two threads
//! checking one shared domain relative to one.

use crate::landlock_tree::TreeDomain;
use arbiter_landlock::access::{fs, AccessFs};
use arbiter_landlock::check::check_walk;
use arbiter_landlock::{Domain, Layout, ObjectId, Rules, Ruleset};
use arbiter_testkit::{median, thread_cpu_ns, Rng};
use std::hint::black_box;
use std::time::Instant;

/// Benchmark options.
#[derive(Clone, Debug)]
pub struct Options {
    /// Timed repetitions (medians are reported).
    pub repetitions: usize,
    /// Checks per repetition.
    pub checks: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            repetitions: 11,
            checks: 300_000,
        }
    }
}

/// Figures for one layout on one workload.
#[derive(Clone, Debug)]
pub struct LayoutFigures {
    /// `hash`, `sorted` or `tree`.
    pub layout: &'static str,
    /// Median ns per check.
    pub ns_per_check: f64,
    /// Rule-storage bytes per rule (domain buffer or kernel slab objects).
    pub bytes_per_rule: f64,
    /// Rule-storage bytes per (rule, layer) entry.
    pub bytes_per_entry: f64,
}

/// Figures for one workload.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Name.
    pub name: &'static str,
    /// Layers.
    pub layers: usize,
    /// Distinct rules (objects with a rule).
    pub rules: usize,
    /// (rule, layer) entries.
    pub entries: usize,
    /// Fraction of checks that are allowed.
    pub allowed_fraction: f64,
    /// Per layout.
    pub layouts: Vec<LayoutFigures>,
}

/// The whole report.
#[derive(Clone, Debug)]
pub struct Report {
    /// Workloads.
    pub workloads: Vec<Workload>,
    /// Median ms to merge the 16th layer of 10,000 rules onto 15 such layers (sorted, hash).
    pub merge_last_ms: (f64, f64),
    /// Median ms to build all 16 layers from nothing (sorted, hash).
    pub merge_all_ms: (f64, f64),
    /// Two threads' check throughput on one domain divided by one thread's, by CPU time per
    /// check (what the threads would do with a core each: 2.0 means no interference).
    pub two_thread_scaling: f64,
    /// The same by wall-clock time, which a loaded machine drags down.
    pub two_thread_wall: f64,
}

type Query = (Vec<Option<ObjectId>>, AccessFs);

fn time_checks<R: Rules>(dom: &R, queries: &[Query], opts: &Options) -> f64 {
    let rounds = (opts.checks / queries.len()).max(1);
    let mut samples = Vec::new();
    for _ in 0..opts.repetitions {
        let t = thread_cpu_ns();
        let mut allowed = 0usize;
        for _ in 0..rounds {
            for (walk, req) in queries {
                allowed += usize::from(check_walk(dom, black_box(walk), *req).is_ok());
            }
        }
        black_box(allowed);
        samples.push((thread_cpu_ns() - t) as f64 / (rounds * queries.len()) as f64);
    }
    median(&samples)
}

fn stack(rulesets: &[Ruleset], layout: Layout) -> Domain {
    let mut d: Option<Domain> = None;
    for r in rulesets {
        d = Some(Domain::restrict(d.as_ref(), r, layout).expect("at most 16 layers"));
    }
    d.expect("at least one layer")
}

fn flat_rule_bytes(d: &Domain) -> usize {
    // Everything but the header, the per-layer masks and the two terminating slots.
    let terminators = if d.layout() == Layout::Hash { 24 } else { 8 };
    d.memory_bytes()
        - std::mem::size_of::<Domain>()
        - d.hierarchy().len() * 8
        - d.num_layers() * 4
        - terminators
}

fn measure(
    name: &'static str,
    rulesets: &[Ruleset],
    queries: &[Query],
    opts: &Options,
) -> Workload {
    let sorted = stack(rulesets, Layout::Sorted);
    let hash = sorted.with_layout(Layout::Hash);
    let tree = TreeDomain::from_domain(&sorted, 0x5eed);
    let rules = sorted.num_fs_rules() + sorted.num_net_rules();
    let entries = sorted.num_entries();
    let allowed = queries
        .iter()
        .filter(|(w, r)| check_walk(&sorted, w, *r).is_ok())
        .count();
    let per = |bytes: usize| (bytes as f64 / rules as f64, bytes as f64 / entries as f64);
    let mut layouts = Vec::new();
    let (r, e) = per(flat_rule_bytes(&hash));
    layouts.push(LayoutFigures {
        layout: "hash",
        ns_per_check: time_checks(&hash, queries, opts),
        bytes_per_rule: r,
        bytes_per_entry: e,
    });
    let (r, e) = per(flat_rule_bytes(&sorted));
    layouts.push(LayoutFigures {
        layout: "sorted",
        ns_per_check: time_checks(&sorted, queries, opts),
        bytes_per_rule: r,
        bytes_per_entry: e,
    });
    let (r, e) = per(tree.kernel_memory_bytes());
    layouts.push(LayoutFigures {
        layout: "tree",
        ns_per_check: time_checks(&tree, queries, opts),
        bytes_per_rule: r,
        bytes_per_entry: e,
    });
    Workload {
        name,
        layers: sorted.num_layers(),
        rules,
        entries,
        allowed_fraction: allowed as f64 / queries.len() as f64,
        layouts,
    }
}

/// Object ids `base..base+n` for a chain of directories.
fn chain(base: u32, n: u32) -> Vec<ObjectId> {
    (base..base + n).map(ObjectId).collect()
}

fn depth10_100() -> (Vec<Ruleset>, Vec<Query>) {
    let mut r = Ruleset::new(u64::from(fs::ALL), 0, 0).expect("valid");
    // Ten paths /1/…/9/f sharing nothing: rules on each directory; READ_FILE only on /1.
    let mut queries = Vec::new();
    for p in 0..10u32 {
        let dirs = chain(p * 10, 9); // dirs[0] = /1 … dirs[8] = /9
        r.add_path_beneath(dirs[0], true, u64::from(fs::READ_FILE))
            .expect("valid");
        for d in &dirs[1..] {
            r.add_path_beneath(*d, true, u64::from(fs::WRITE_FILE | fs::MAKE_REG))
                .expect("valid");
        }
        // And one rule elsewhere: 100 rules in all.
        r.add_path_beneath(ObjectId(1000 + p), true, u64::from(fs::READ_FILE))
            .expect("valid");
        // The walk: the file (no object), /9 … /1, the root (no object).
        let mut walk = vec![None];
        walk.extend(dirs.iter().rev().map(|d| Some(*d)));
        walk.push(None);
        queries.push((walk, fs::READ_FILE));
    }
    (vec![r], queries)
}

fn typical_18() -> (Vec<Ruleset>, Vec<Query>) {
    // Objects: 0 /usr 1 /etc 2 /tmp 3 /dev 4 /proc 5 /bin 6 /lib 7 /home/u 8 /run 9 /var/tmp
    // 10 /dev/null 11 /sys 12 /opt.
    let rx = u64::from(fs::EXECUTE | fs::READ_FILE | fs::READ_DIR);
    let rw = u64::from(fs::ALL & !fs::EXECUTE);
    let mut l1 = Ruleset::new(u64::from(fs::ALL), 0, 0).expect("valid");
    for (o, a) in [
        (0, rx),
        (1, rx),
        (2, rw),
        (3, rx),
        (4, rx),
        (5, rx),
        (6, rx),
        (7, rw),
        (8, rw),
        (9, rw),
    ] {
        l1.add_path_beneath(ObjectId(o), true, a).expect("valid");
    }
    let mut l2 = Ruleset::new(
        u64::from(fs::READ_FILE | fs::WRITE_FILE | fs::EXECUTE),
        0,
        0,
    )
    .expect("valid");
    let l2_rights = u64::from(fs::READ_FILE | fs::WRITE_FILE | fs::EXECUTE);
    for o in [0, 1, 2, 5, 6, 7, 11, 12] {
        l2.add_path_beneath(ObjectId(o), true, l2_rights)
            .expect("valid");
    }
    let q = |objs: &[Option<u32>], r: AccessFs| (objs.iter().map(|o| o.map(ObjectId)).collect(), r);
    let queries = vec![
        // /usr/lib/x86_64-linux-gnu/libc.so.6 read
        q(&[None, None, None, Some(0), None], fs::READ_FILE),
        // /usr/bin/python3 exec
        q(&[None, None, Some(0), None], fs::EXECUTE | fs::READ_FILE),
        // /etc/ssl/certs/ca.pem read
        q(&[None, None, None, Some(1), None], fs::READ_FILE),
        // /tmp/x write
        q(&[None, Some(2), None], fs::WRITE_FILE),
        // /home/u/.config/app/settings read+write
        q(
            &[None, None, None, Some(7), None, None],
            fs::READ_FILE | fs::WRITE_FILE,
        ),
        // /home/other/secret read: denied
        q(&[None, None, None, None], fs::READ_FILE),
        // /etc/shadow write: denied
        q(&[None, Some(1), None], fs::WRITE_FILE),
        // /proc/self/status read: layer 2 denies
        q(&[None, None, Some(4), None], fs::READ_FILE),
    ];
    (vec![l1, l2], queries)
}

fn big_16x10000() -> (Vec<Ruleset>, Vec<Query>) {
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    const OBJECTS: u64 = 40_000;
    // 64 query paths of depth 10 over objects 40,000.. (dirs have objects: rules elsewhere).
    let paths: Vec<Vec<ObjectId>> = (0..64)
        .map(|p| chain(OBJECTS as u32 + p * 10, 10))
        .collect();
    let mut rulesets = Vec::new();
    for _ in 0..16 {
        let mut r = Ruleset::new(u64::from(fs::ALL), 0, 0).expect("valid");
        // Each layer grants READ_FILE on one ancestor of every query path (any depth).
        for p in &paths {
            let d = p[rng.below(10)];
            r.add_path_beneath(d, true, u64::from(fs::READ_FILE))
                .expect("valid");
        }
        while r.fs_rules().len() < 10_000 {
            let o = ObjectId(rng.below(OBJECTS as usize) as u32);
            r.add_path_beneath(o, true, 1 + rng.below(0xffff) as u64)
                .expect("valid");
        }
        rulesets.push(r);
    }
    let queries = paths
        .iter()
        .map(|p| {
            let mut walk = vec![None];
            walk.extend(p.iter().rev().map(|d| Some(*d)));
            (walk, fs::READ_FILE)
        })
        .collect();
    (rulesets, queries)
}

fn time_merges(rulesets: &[Ruleset], layout: Layout, opts: &Options) -> (f64, f64) {
    let parent = stack(&rulesets[..rulesets.len() - 1], layout);
    let last = &rulesets[rulesets.len() - 1];
    let mut one = Vec::new();
    let mut all = Vec::new();
    for _ in 0..opts.repetitions {
        let t = thread_cpu_ns();
        black_box(Domain::restrict(Some(&parent), last, layout).expect("16 layers"));
        one.push((thread_cpu_ns() - t) as f64 / 1e6);
        let t = thread_cpu_ns();
        black_box(stack(rulesets, layout));
        all.push((thread_cpu_ns() - t) as f64 / 1e6);
    }
    (median(&one), median(&all))
}

/// (CPU-time scaling, wall-clock scaling) of two threads over one.
fn two_threads(dom: &Domain, queries: &[Query], opts: &Options) -> (f64, f64) {
    let n = opts.checks;
    // Returns the thread's CPU ns.
    let run = |dom: &Domain| {
        let t = thread_cpu_ns();
        let mut allowed = 0usize;
        for i in 0..n {
            let (w, r) = &queries[i % queries.len()];
            allowed += usize::from(check_walk(dom, black_box(w), *r).is_ok());
        }
        black_box(allowed);
        (thread_cpu_ns() - t) as f64
    };
    let (mut cpu, mut wall) = (Vec::new(), Vec::new());
    for _ in 0..opts.repetitions {
        let t = Instant::now();
        let one_cpu = run(dom);
        let one_wall = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| run(dom));
            let b = s.spawn(|| run(dom));
            (a.join().expect("thread"), b.join().expect("thread"))
        });
        let two_wall = t.elapsed().as_secs_f64();
        cpu.push(2.0 * one_cpu / ((a + b) / 2.0));
        wall.push(2.0 * one_wall / two_wall);
    }
    (median(&cpu), median(&wall))
}

/// Runs the whole study.
pub fn run(opts: &Options) -> Report {
    let mut workloads = Vec::new();
    let (r, q) = depth10_100();
    workloads.push(measure("depth10_100", &r, &q, opts));
    let (r, q) = typical_18();
    workloads.push(measure("typical_18", &r, &q, opts));
    let (big, bq) = big_16x10000();
    workloads.push(measure("16x10000", &big, &bq, opts));
    let (s1, sa) = time_merges(&big, Layout::Sorted, opts);
    let (h1, ha) = time_merges(&big, Layout::Hash, opts);
    let dom = stack(&big, Layout::default());
    let (two_thread_scaling, two_thread_wall) = two_threads(&dom, &bq, opts);
    Report {
        workloads,
        merge_last_ms: (s1, h1),
        merge_all_ms: (sa, ha),
        two_thread_scaling,
        two_thread_wall,
    }
}

impl Report {
    /// Plain-text tables.
    pub fn text(&self) -> String {
        let mut s = String::new();
        s.push_str("workload      layers  rules  entries  allowed  layout  ns/check  vs tree  B/rule  B/entry\n");
        for w in &self.workloads {
            let tree = w
                .layouts
                .iter()
                .find(|l| l.layout == "tree")
                .map_or(f64::NAN, |l| l.ns_per_check);
            for l in &w.layouts {
                s.push_str(&format!(
                    "{:<13} {:>6} {:>6} {:>8} {:>7.0}%  {:<6} {:>8.1} {:>7.2}x {:>7.1} {:>8.1}\n",
                    w.name,
                    w.layers,
                    w.rules,
                    w.entries,
                    w.allowed_fraction * 100.0,
                    l.layout,
                    l.ns_per_check,
                    tree / l.ns_per_check,
                    l.bytes_per_rule,
                    l.bytes_per_entry
                ));
            }
        }
        s.push_str(&format!(
            "merge 16th layer (10,000 rules onto 15x10,000): sorted {:.2} ms, hash {:.2} ms\n",
            self.merge_last_ms.0, self.merge_last_ms.1
        ));
        s.push_str(&format!(
            "build all 16 layers:                            sorted {:.2} ms, hash {:.2} ms\n",
            self.merge_all_ms.0, self.merge_all_ms.1
        ));
        s.push_str(&format!(
            "2 threads / 1 thread on one domain: {:.2}x by CPU time per check, {:.2}x by wall clock\n",
            self.two_thread_scaling, self.two_thread_wall
        ));
        s
    }

    /// JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "workloads": self.workloads.iter().map(|w| serde_json::json!({
                "name": w.name,
                "layers": w.layers,
                "rules": w.rules,
                "entries": w.entries,
                "allowed_fraction": w.allowed_fraction,
                "layouts": w.layouts.iter().map(|l| serde_json::json!({
                    "layout": l.layout,
                    "ns_per_check": l.ns_per_check,
                    "bytes_per_rule": l.bytes_per_rule,
                    "bytes_per_entry": l.bytes_per_entry,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "merge_last_ms": {"sorted": self.merge_last_ms.0, "hash": self.merge_last_ms.1},
            "merge_all_ms": {"sorted": self.merge_all_ms.0, "hash": self.merge_all_ms.1},
            "two_thread_scaling_cpu": self.two_thread_scaling,
            "two_thread_scaling_wall": self.two_thread_wall,
        })
    }
}
