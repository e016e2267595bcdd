//! Benchmarks of the class-map designs, the printer and the selector, side by side in one
//! run (`arbiter bench bsm`). Medians of several repetitions; ratios against a baseline.

use arbiter_bsm::classmap::{load, ClassMap, FlatMap, LockFreeMap, RwLockMap};
use arbiter_bsm::{
    Addr, Config, ExecStrings, Header, PrintOptions, Printer, RecordWriter, ReduceOptions, Reducer,
    Subject, SubjectForm, Token,
};
use arbiter_testkit::{median, thread_cpu_ns, Rng};
use std::hint::black_box;
use std::time::Instant;

/// Writes a trail of `records` records with the token mix of `tests/data/bsm/synthetic/`
/// (header32 mostly, then header32_ex and 64-bit headers; subjects in all forms; paths,
/// attributes, exec arguments, text, arguments, sockets; return32/64 with ~18% failures),
/// events drawn from `config`'s `audit_event`.
pub fn synthetic_trail(config: &Config, records: usize, seed: u64) -> Vec<u8> {
    let events: Vec<u16> = config.events.enumerate().map(|e| e.number).collect();
    let mut r = Rng::new(seed);
    let mut w = RecordWriter::new();
    let paths: [&[u8]; 6] = [
        b"/etc/motd\0",
        b"/etc/passwd\0",
        b"/tmp/a,b\0",
        b"/usr/bin/ssh\0",
        b"/var/log/x\0",
        b"/home/u/f\0",
    ];
    let args: &[u8] = b"sh\0-c\0echo hello\0";
    let mut sec: u64 = 1_609_459_200;
    for i in 0..records {
        sec += r.below_u64(3);
        let event = events[r.below_u64(events.len() as u64) as usize];
        let hk = r.below_u64(100);
        let (id, host) = match hk {
            0..=71 => (0x14, None),
            72..=83 => (0x15, Some(Addr::V4([192, 168, 1, 5]))),
            84..=93 => (0x74, None),
            _ => (
                0x79,
                Some(Addr::V6([
                    0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
                ])),
            ),
        };
        w.begin(Header {
            id,
            size: 0,
            version: 11,
            event,
            modifier: 0,
            host,
            sec,
            msec: r.below_u64(1000),
        });
        match i % 5 {
            0 => w.token(&Token::Path(paths[r.below_u64(6) as usize])),
            1 => {
                w.token(&Token::ExecArgs(ExecStrings {
                    count: 3,
                    data: args,
                }));
                w.token(&Token::Path(b"/bin/sh\0"));
                w.token(&Token::Attr(arbiter_bsm::Attr {
                    wide: false,
                    mode: 0o100555,
                    uid: 0,
                    gid: 0,
                    fsid: 90,
                    nodeid: 1234,
                    dev: 5678,
                }));
            }
            2 => w.token(&Token::Text(b"successful authentication\0")),
            3 => w.token(&Token::Arg32 {
                no: 1,
                value: r.below_u64(1 << 20) as u32,
                text: b"flags\0",
            }),
            _ => w.token(&Token::SockInet32 {
                family: 2,
                port: [0, 80],
                addr: [10, 0, 0, 1],
            }),
        }
        let f = r.below_u64(8) as u8;
        let form = SubjectForm {
            process: false,
            wide: f & 2 == 2,
            ex: f & 4 == 4,
        };
        w.token(&Token::Subject(Subject {
            form,
            auid: 1000 + r.below_u64(8) as u32,
            euid: r.below_u64(3) as u32 * 1000,
            egid: 1000,
            ruid: 1000,
            rgid: 1000,
            pid: 80_000 + r.below_u64(10_000) as u32,
            sid: 500,
            port: 0,
            addr: if form.ex && f & 1 == 1 {
                Addr::V6([0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7])
            } else {
                Addr::V4([10, 1, 2, 3])
            },
        }));
        let status = if r.below_u64(100) < 18 { 13 } else { 0 };
        if r.below_u64(4) == 0 {
            w.token(&Token::Return64 {
                status,
                value: if status == 0 { 3 } else { u64::MAX },
            });
        } else {
            w.token(&Token::Return32 {
                status,
                value: if status == 0 { 3 } else { u32::MAX },
            });
        }
        w.end();
    }
    w.into_bytes()
}

/// CPU seconds of this process's waited-for children, from `/proc/self/stat` (`None` where
/// there is no procfs). Clock ticks are taken as 100 per second (Linux's USER_HZ on every
/// mainstream arch).
pub fn children_cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &s[s.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(13)?.parse::<u64>().ok()? + f.get(14)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

/// This thread's CPU seconds so far (an `Option` like [`children_cpu_seconds`], so rates
/// are computed one way).
fn thread_cpu_seconds() -> Option<f64> {
    Some(thread_cpu_ns() as f64 / 1e9)
}

/// Lookups per second (all threads together) of `map` over `events`, each of `threads`
/// threads passing over them for at least `min_seconds`, median of `reps` repetitions.
pub fn lookups_per_second<M: ClassMap>(
    map: &M,
    events: &[u16],
    min_seconds: f64,
    threads: usize,
    reps: usize,
) -> Rate {
    let mut rates = Vec::new();
    for _ in 0..reps {
        let barrier = std::sync::Barrier::new(threads);
        let elapsed: Vec<(f64, f64, Option<f64>)> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads)
                .map(|t| {
                    let barrier = &barrier;
                    s.spawn(move || {
                        barrier.wait();
                        let c0 = thread_cpu_seconds();
                        let t0 = Instant::now();
                        let mut acc = 0u32;
                        let mut rounds = 0usize;
                        // Passes over the event stream until `min_seconds` have elapsed.
                        while rounds < 4 || t0.elapsed().as_secs_f64() < min_seconds {
                            let shift = (rounds + t) & 7;
                            for &e in events {
                                acc = acc.wrapping_add(map.class_of(e) >> shift);
                            }
                            rounds += 1;
                        }
                        black_box(acc);
                        let wall = t0.elapsed().as_secs_f64();
                        let cpu = thread_cpu_seconds().zip(c0).map(|(a, b)| a - b);
                        ((rounds * events.len()) as f64, wall, cpu)
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().unwrap_or((0.0, f64::INFINITY, None)))
                .collect()
        });
        let total: f64 = elapsed.iter().map(|e| e.0).sum();
        let wall = elapsed.iter().map(|e| e.1).fold(0.0, f64::max);
        // CPU rate: the sum over threads of lookups per CPU second of that thread.
        let cpu: Option<f64> = elapsed
            .iter()
            .map(|e| e.2.filter(|&c| c > 0.0).map(|c| e.0 / c))
            .sum();
        rates.push(Rate {
            wall: total / wall,
            cpu: cpu.unwrap_or(0.0),
        });
    }
    median_rate(&rates)
}

/// One row of the class-map comparison.
#[derive(Clone, Debug)]
pub struct MapRow {
    /// Design name.
    pub design: &'static str,
    /// Lookups/s with one thread.
    pub one: Rate,
    /// Lookups/s with two threads (total).
    pub two: Rate,
}

/// Measures the three designs with the event → class map of `config`, each measurement
/// running for at least `min_seconds`.
pub fn class_maps(config: &Config, min_seconds: f64, reps: usize) -> Vec<MapRow> {
    let pairs = config.events.class_map();
    let mut r = Rng::new(7);
    // A system-call-like stream: events drawn from the table, 64 Ki of them (fits in L2).
    let events: Vec<u16> = (0..65_536)
        .map(|_| pairs[r.below_u64(pairs.len() as u64) as usize].0)
        .collect();
    let a = RwLockMap::default();
    let b = LockFreeMap::default();
    let c = FlatMap::default();
    load(&a, &pairs);
    load(&b, &pairs);
    load(&c, &pairs);
    fn row<M: ClassMap>(m: &M, events: &[u16], secs: f64, reps: usize) -> MapRow {
        MapRow {
            design: m.design(),
            one: lookups_per_second(m, events, secs, 1, reps),
            two: lookups_per_second(m, events, secs, 2, reps),
        }
    }
    vec![
        row(&a, &events, min_seconds, reps),
        row(&b, &events, min_seconds, reps),
        row(&c, &events, min_seconds, reps),
    ]
}

/// A throughput by wall-clock time and by CPU time (equal on a quiet machine; on a loaded
/// one the CPU-time figure is what the code itself costs).
#[derive(Clone, Copy, Debug, Default)]
pub struct Rate {
    /// Items per wall-clock second.
    pub wall: f64,
    /// Items per CPU second (0 if CPU time is unavailable).
    pub cpu: f64,
}

fn rate_of(items: f64, wall: f64, cpu: Option<f64>) -> Rate {
    Rate {
        wall: items / wall,
        cpu: cpu.filter(|&c| c > 0.0).map_or(0.0, |c| items / c),
    }
}

/// Median wall and CPU rates.
pub fn median_rate(v: &[Rate]) -> Rate {
    let w: Vec<f64> = v.iter().map(|r| r.wall).collect();
    let c: Vec<f64> = v.iter().map(|r| r.cpu).collect();
    Rate {
        wall: median(&w),
        cpu: median(&c),
    }
}

/// In-process printing speed (records/s) of `trail` with `opts`, median of `reps`.
pub fn print_rate(config: &Config, trail: &[u8], opts: PrintOptions, reps: usize) -> Rate {
    let p = Printer::new(&config.events, opts);
    let mut rates = Vec::new();
    let mut sink = std::io::sink();
    for _ in 0..reps {
        let c0 = thread_cpu_seconds();
        let t0 = Instant::now();
        let s = p.print_trail(trail, &mut sink).unwrap_or_default();
        let dt = t0.elapsed().as_secs_f64();
        let dc = thread_cpu_seconds().zip(c0).map(|(a, b)| a - b);
        rates.push(rate_of(s.records as f64, dt, dc));
    }
    median_rate(&rates)
}

/// In-process selection speed (records/s) of `trail` with auditreduce arguments `args`.
pub fn reduce_rate(config: &Config, trail: &[u8], args: &[&str], reps: usize) -> (Rate, u64) {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let Ok((o, _)) = ReduceOptions::parse(&args, config) else {
        return (Rate::default(), 0);
    };
    let r = Reducer::new(o, config);
    let mut rates = Vec::new();
    let mut out = Vec::with_capacity(trail.len());
    let mut selected = 0;
    for _ in 0..reps {
        out.clear();
        let c0 = thread_cpu_seconds();
        let t0 = Instant::now();
        let s = r.reduce_trail(trail, &mut out);
        let dt = t0.elapsed().as_secs_f64();
        let dc = thread_cpu_seconds().zip(c0).map(|(a, b)| a - b);
        selected = s.selected;
        rates.push(rate_of(s.records as f64, dt, dc));
    }
    (median_rate(&rates), selected)
}

/// Whole-process speed of a command over `records` records (wall clock, and the child's
/// CPU time from `/proc/self/stat`).
pub fn process_rate(
    cmd: &mut std::process::Command,
    records: usize,
    reps: usize,
) -> Result<Rate, String> {
    let mut rates = Vec::new();
    for _ in 0..reps {
        let c0 = children_cpu_seconds();
        let t0 = Instant::now();
        let st = cmd.status().map_err(|e| e.to_string())?;
        let dt = t0.elapsed().as_secs_f64();
        if !st.success() {
            return Err(format!("{cmd:?} failed: {st}"));
        }
        let dc = children_cpu_seconds().zip(c0).map(|(a, b)| a - b);
        rates.push(rate_of(records as f64, dt, dc));
    }
    Ok(median_rate(&rates))
}
