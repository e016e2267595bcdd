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
    let mut v: Vec<PathBuf> = arbiter_testkit::debian_policies();
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

/// sediff's output with exactly its nondeterminism taken out, section by section:
///
/// - In the Allow/Auditallow/Dontaudit sections, the permissions of a modified rule
///   (`{ getattr open -read }`) are written in Python's per-process set order; arbiter
///   writes the kept, added and removed permissions each sorted. Each group is sorted.
/// - In the four constraint sections, the names of a constraint's name set
///   (`t1 == { a b }`) are in Python's hash order and the constraints sorted by that text;
///   arbiter writes the names sorted. Each `{ ... }` group's words are sorted and each
///   Added/Removed list re-sorted.
///
/// Every other line is compared byte for byte.
pub fn normalize_sediff(text: &str) -> String {
    text.split_inclusive("\n\n")
        .map(|block| {
            let title = block.split(" (").next().unwrap_or("");
            match title {
                "Allow Rules" | "Auditallow Rules" | "Dontaudit Rules" => block
                    .split_inclusive('\n')
                    .map(sort_modified_perms)
                    .collect(),
                "Constraints" | "MLS Constraints" | "Validatetrans" | "MLS Validatetrans" => {
                    sort_constraint_block(block)
                }
                _ => block.to_string(),
            }
        })
        .collect()
}

fn sort_modified_perms(line: &str) -> String {
    if !line.starts_with("      * ") {
        return line.to_string();
    }
    let (Some(open), Some(close)) = (line.find("{ "), line.find(" };")) else {
        return line.to_string();
    };
    let words: Vec<&str> = line[open + 2..close].split(' ').collect();
    let group = |keep: fn(&&str) -> bool| {
        let mut g: Vec<&str> = words.iter().copied().filter(keep).collect();
        g.sort_unstable();
        g
    };
    let mut all = group(|w| !w.starts_with(['+', '-']));
    all.extend(group(|w| w.starts_with('+')));
    all.extend(group(|w| w.starts_with('-')));
    format!("{}{}{}", &line[..open + 2], all.join(" "), &line[close..])
}

fn sort_constraint_block(block: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut run_start = 0;
    for line in block.lines() {
        let item = line.starts_with("      + ") || line.starts_with("      - ");
        let line = if item {
            sort_set_words(line)
        } else {
            line.to_string()
        };
        let same_run = item
            && lines
                .last()
                .is_some_and(|prev: &String| prev.get(..8) == line.get(..8));
        if !same_run {
            lines[run_start..].sort();
            run_start = lines.len();
        }
        lines.push(line);
    }
    lines[run_start..].sort();
    lines.join("\n") + "\n"
}

fn sort_set_words(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(open) = rest.find("{ ") {
        let Some(close) = rest[open..].find(" }") else {
            break;
        };
        let mut words: Vec<&str> = rest[open + 2..open + close].split(' ').collect();
        words.sort_unstable();
        out.push_str(&rest[..open + 2]);
        out.push_str(&words.join(" "));
        rest = &rest[open + close..];
    }
    out.push_str(rest);
    out
}

/// The sesearch option that selects a rule kind.
pub fn kind_option(k: arbiter_policy::avtab::AvtabKind) -> &'static str {
    use arbiter_policy::avtab::AvtabKind;
    match k {
        AvtabKind::Allowed => "--allow",
        AvtabKind::AuditAllow => "--auditallow",
        AvtabKind::AuditDeny => "--dontaudit",
        AvtabKind::Transition => "-T",
        AvtabKind::Member => "--type_member",
        AvtabKind::Change => "--type_change",
        AvtabKind::XpermsAllowed => "--allowxperm",
        AvtabKind::XpermsAuditAllow => "--auditallowxperm",
        AvtabKind::XpermsDontAudit => "--dontauditxperm",
    }
}

/// The number of cases: the env var, or the CI-sized default.
pub fn case_count(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
