// Temporary profiling helper (not part of the deliverable).
use arbiter_avc::fake::FakeSource;
use arbiter_avc::{Avc, AvcConfig};
use std::hint::black_box;
use std::time::Instant;
fn med(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}
fn main() {
    let src = FakeSource::new();
    let avc = Avc::new(&src, AvcConfig::for_threshold(8192)).unwrap();
    let keys: Vec<(u32, u32, u16, u32, u32)> = (0..64u32)
        .map(|i| {
            let (s, t, c) = (i % 8 + 1, i / 8 + 20, (i % 3) as u16 + 1);
            let d = avc.decision(s, t, c).unwrap();
            let granted = d.allowed & d.allowed.wrapping_neg();
            let denied = !d.allowed & (!d.allowed).wrapping_neg();
            (s, t, c, granted, denied)
        })
        .collect();
    let n = 200_000;
    let run = |pick: &dyn Fn(&(u32, u32, u16, u32, u32)) -> u32| {
        let mut v = Vec::new();
        for _ in 0..30 {
            let t = Instant::now();
            let mut acc = 0u32;
            for i in 0..n {
                let k = &keys[i & 63];
                acc = acc.wrapping_add(pick(black_box(k)));
            }
            black_box(acc);
            v.push(t.elapsed().as_nanos() as f64 / n as f64);
        }
        med(v)
    };
    println!(
        "lookup   {:.2}",
        run(&|k| avc.lookup(k.0, k.1, k.2).map_or(0, |d| d.allowed))
    );
    println!(
        "granted  {:.2}",
        run(&|k| avc
            .has_perm_noaudit(k.0, k.1, k.2, k.3)
            .map_or(0, |d| d.allowed))
    );
    println!(
        "denied   {:.2}",
        run(&|k| avc
            .has_perm_noaudit(k.0, k.1, k.2, k.4)
            .map_or_else(|e| e.denied, |d| d.allowed))
    );
    println!(
        "has_perm granted {:.2}",
        run(&|k| avc
            .has_perm(k.0, k.1, k.2, k.3, &[])
            .map_or(0, |d| d.allowed))
    );
    println!(
        "has_perm denied  {:.2}",
        run(&|k| avc
            .has_perm(k.0, k.1, k.2, k.4, &[])
            .map_or_else(|e| e.denied, |d| d.allowed))
    );
}
