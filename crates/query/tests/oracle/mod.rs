//! Shared pieces of the differential tests against setools: the policies compared on, a
//! small deterministic random generator, and a pool of harness processes that run the real
//! setools scripts with each policy loaded once.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What the tool printed and its exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub out: String,
    pub err: String,
    pub code: i64,
}

/// The policies the tests compare on: the Debian default and MLS policies and this
/// repository's own, at the format versions setools 4.4.1 can read: 24 to 33 (libsepol 3.4
/// stops at 33, and setools crashes with SIGSEGV on every rule query of a policy older than
/// 24, whose attributes have no names).
pub fn policies() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = [
        "/etc/selinux/default/policy/policy.33",
        "/etc/selinux/mls/policy/policy.33",
    ]
    .iter()
    .map(PathBuf::from)
    .filter(|p| p.exists())
    .collect();
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policies/bin");
    let mut mine: Vec<PathBuf> = std::fs::read_dir(&ours)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    mine.retain(|p| {
        p.extension()
            .and_then(|e| e.to_str())
            .and_then(|e| e.parse::<u32>().ok())
            .is_some_and(|v| (24..=33).contains(&v))
    });
    mine.sort();
    v.extend(mine);
    v
}

/// Whether the setools oracle is installed (the tests fail loudly when it is not, unless
/// ARBITER_SKIP_SETOOLS is set, so that CI cannot pass without comparing).
pub fn oracle_available(tool: &str) -> bool {
    let ok = Path::new(tool).exists()
        && Command::new("/usr/bin/python3")
            .args(["-c", "import setools"])
            .status()
            .is_ok_and(|s| s.success());
    if !ok && std::env::var_os("ARBITER_SKIP_SETOOLS").is_none() {
        panic!("{tool} or python3-setools missing; install setools or set ARBITER_SKIP_SETOOLS=1");
    }
    ok
}

/// xorshift64*: deterministic cases from a seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    /// True with probability `pct` percent.
    pub fn pct(&mut self, pct: u64) -> bool {
        self.next() % 100 < pct
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> Option<&'a T> {
        if v.is_empty() {
            None
        } else {
            Some(&v[self.below(v.len())])
        }
    }
}

/// Runs `tool` (a setools script) on every argv, split over `workers` harness processes.
#[allow(dead_code)]
pub fn run_oracle(tool: &str, cases: &[Vec<String>], workers: usize) -> Vec<Outcome> {
    run_oracle_with(tool, cases, workers, &[])
}

/// [`run_oracle`] with extra environment variables for the harness (for example
/// `ARBITER_SETOOLS_EXPAND=1`: every rule the tool prints is printed as `rule.expand()`).
pub fn run_oracle_with(
    tool: &str,
    cases: &[Vec<String>],
    workers: usize,
    env: &[(&str, &str)],
) -> Vec<Outcome> {
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let harness = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/setools_harness.py");
    let chunk = cases.len().div_ceil(workers.max(1)).max(1);
    let handles: Vec<_> = cases
        .chunks(chunk)
        .map(|part| {
            let part = part.to_vec();
            let harness = harness.clone();
            let tool = tool.to_string();
            let env = env.clone();
            std::thread::spawn(move || {
                let mut child = Command::new("/usr/bin/python3")
                    .arg(&harness)
                    .arg(&tool)
                    .env("PYTHONHASHSEED", "0")
                    .envs(env)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .spawn()
                    .expect("start the setools harness");
                let mut stdin = child.stdin.take().expect("harness stdin");
                let writer = std::thread::spawn(move || {
                    for argv in &part {
                        let line = serde_json::to_string(argv).expect("argv as JSON");
                        if writeln!(stdin, "{line}").is_err() {
                            break;
                        }
                    }
                });
                let reader = BufReader::new(child.stdout.take().expect("harness stdout"));
                let mut outs = Vec::new();
                for line in reader.lines() {
                    let line = line.expect("harness output");
                    let v: serde_json::Value = serde_json::from_str(&line).expect("harness JSON");
                    outs.push(Outcome {
                        out: v["out"].as_str().unwrap_or_default().to_string(),
                        err: v["err"].as_str().unwrap_or_default().to_string(),
                        code: v["code"].as_i64().unwrap_or(-1),
                    });
                }
                writer.join().expect("writer thread");
                let _ = child.wait();
                outs
            })
        })
        .collect();
    handles
        .into_iter()
        .flat_map(|h| h.join().expect("harness thread"))
        .collect()
}

/// The number of cases: the env var, or the CI-sized default.
pub fn case_count(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
