//! Shared pieces of the differential tests against sedta and seinfoflow 4.4.1: running the
//! real tools, running ours in-process on a graph built once per policy, and the one
//! normalisation the comparison applies.

#![allow(dead_code)]

use arbiter_analysis::dta::DomainTransitionGraph;
use arbiter_analysis::infoflow::InfoFlowGraph;
use arbiter_analysis::sedta::{self, DtaArgs};
use arbiter_analysis::seinfoflow::{self, InfoFlowArgs, ViewCache};
use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::Policy;
use arbiter_query::Index;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// What a tool printed on stdout, the last line of its stderr, and its exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub out: String,
    pub err: String,
    pub code: i32,
}

/// Whether the oracle is installed; fails loudly when not, unless ARBITER_SKIP_SETOOLS is
/// set, so CI cannot pass without comparing.
pub fn oracle_available(tool: &str) -> bool {
    let ok = Path::new(tool).exists();
    if !ok && std::env::var_os("ARBITER_SKIP_SETOOLS").is_none() {
        panic!("{tool} missing; install setools or set ARBITER_SKIP_SETOOLS=1");
    }
    ok
}

/// Runs `/usr/bin/<tool> ARGS` with a fixed hash seed (so a failure can be re-run; the
/// seed-dependent parts are still normalised).
pub fn theirs(tool: &str, args: &[String]) -> Outcome {
    let o = Command::new(format!("/usr/bin/{tool}"))
        .args(args)
        .env("PYTHONHASHSEED", "1")
        .output()
        .unwrap_or_else(|e| panic!("running {tool}: {e}"));
    let err = String::from_utf8_lossy(&o.stderr);
    Outcome {
        out: String::from_utf8_lossy(&o.stdout).into_owned(),
        err: last_error(&err),
        code: o.status.code().unwrap_or(-1),
    }
}

/// The message of an argparse error (`prog: error: MSG` → `MSG`), or the last line.
fn last_error(stderr: &str) -> String {
    let last = stderr.lines().last().unwrap_or("");
    match last.split_once(": error: ") {
        Some((_, m)) => m.to_string(),
        None => last.to_string(),
    }
}

/// The one normalisation the analyses' differential tests apply, to both sides alike:
/// what setools 4.4.1 prints in an order that changes with Python's hash seed, or with the
/// wall clock, is put in one form. Nothing else is touched (rule order, type order, blank
/// lines, counts, every other line are compared as printed).
///
/// - sedta `--full`: the `Entrypoint X:` blocks of each transition come from a Python set,
///   so they are sorted by their header line (the rules inside a block keep their order).
/// - sechecker's report: the `Start time:` and `End time:` lines (wall clock) lose their
///   value; each run of consecutive `    * Expected rule with source "…" not found.` lines,
///   and each run of `… target …` lines, is sorted (setools lists them from a Python set of
///   types or roles; arbiter sorts by name).
/// - sechecker's `-v` log: in `Overlap in expect_… and exempt_…: A, B` lines the names are
///   sorted (setools joins a Python set).
pub fn normalise(text: &str) -> String {
    sechecker_lines(&entrypoint_blocks(text))
}

/// sedta's entrypoint blocks, sorted per transition (see [`normalise`]).
fn entrypoint_blocks(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with("Entrypoint ") {
            out.push(lines[i]);
            i += 1;
            continue;
        }
        let mut j = i;
        while j < lines.len()
            && (lines[j].is_empty()
                || lines[j].starts_with('\t')
                || lines[j].starts_with("Entrypoint "))
        {
            j += 1;
        }
        let mut blocks: Vec<Vec<&str>> = Vec::new();
        for &l in &lines[i..j] {
            match blocks.last_mut() {
                Some(b) if !l.starts_with("Entrypoint ") => b.push(l),
                _ => blocks.push(vec![l]),
            }
        }
        let tail = lines[i..j]
            .iter()
            .rev()
            .take_while(|l| l.is_empty())
            .count();
        for b in blocks.iter_mut() {
            while b.last() == Some(&"") {
                b.pop();
            }
        }
        blocks.sort_by(|a, b| a[0].cmp(b[0]));
        let n = blocks.len();
        for (k, b) in blocks.into_iter().enumerate() {
            out.extend(b);
            if k + 1 < n {
                out.extend(["", ""]);
            }
        }
        out.extend((0..tail).map(|_| ""));
        i = j;
    }
    out.join("\n")
}

/// sechecker's clock lines, `Expected rule` runs and `Overlap` names (see [`normalise`]).
fn sechecker_lines(report: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut run: Vec<String> = Vec::new();
    let mut run_kind = "";
    let flush = |out: &mut Vec<String>, run: &mut Vec<String>| {
        run.sort();
        out.append(run);
    };
    for line in report.lines() {
        let kind = if line.starts_with("    * Expected rule with source \"") {
            "source"
        } else if line.starts_with("    * Expected rule with target \"") {
            "target"
        } else {
            ""
        };
        if kind != run_kind {
            flush(&mut out, &mut run);
            run_kind = kind;
        }
        if !kind.is_empty() {
            run.push(line.to_string());
            continue;
        }
        if let Some((head, names)) = line
            .strip_prefix("Overlap in expect_")
            .and_then(|_| line.split_once(": "))
        {
            let mut names: Vec<&str> = names.split(", ").collect();
            names.sort_unstable();
            out.push(format!("{head}: {}", names.join(", ")));
        } else if line.starts_with("Start time: ") {
            out.push("Start time: <normalised>".to_string());
        } else if line.starts_with("End time: ") {
            out.push("End time: <normalised>".to_string());
        } else {
            out.push(line.to_string());
        }
    }
    flush(&mut out, &mut run);
    let mut s = out.join("\n");
    if report.ends_with('\n') {
        s.push('\n');
    }
    s
}

struct Loaded {
    index: &'static Index<'static>,
    dta: &'static DomainTransitionGraph<'static, 'static>,
    infoflow: Mutex<HashMap<Option<String>, &'static InfoFlowGraph<'static, 'static>>>,
}

fn loaded(path: &str) -> &'static Loaded {
    static CACHE: Mutex<Option<HashMap<String, &'static Loaded>>> = Mutex::new(None);
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let map = cache.get_or_insert_with(HashMap::new);
    if let Some(l) = map.get(path) {
        return l;
    }
    let policy: &'static Policy = Box::leak(Box::new(
        Policy::open(path).unwrap_or_else(|e| panic!("{path}: {e}")),
    ));
    let index: &'static Index<'static> = Box::leak(Box::new(Index::new(policy)));
    let dta = Box::leak(Box::new(DomainTransitionGraph::new(index)));
    let l: &'static Loaded = Box::leak(Box::new(Loaded {
        index,
        dta,
        infoflow: Mutex::new(HashMap::new()),
    }));
    map.insert(path.to_string(), l);
    l
}

/// The index of a policy (loaded once per test process).
pub fn index(path: &str) -> &'static Index<'static> {
    loaded(path).index
}

/// Our sedta: the same command line, run in-process on the cached graph.
pub fn ours_dta(args: &[String]) -> Outcome {
    let a = match DtaArgs::parse(args) {
        Ok(a) => a,
        Err(e) => {
            return Outcome {
                out: String::new(),
                err: e.to_string(),
                code: 2,
            }
        }
    };
    let l = loaded(&a.policy);
    let mut out = Vec::new();
    let code = sedta::run(l.dta, &a, &mut out).expect("writing to a Vec");
    Outcome {
        out: String::from_utf8(out).expect("utf-8"),
        err: String::new(),
        code: code.into(),
    }
}

/// Our seinfoflow, in-process, with the graph of each (policy, map) built once.
pub fn ours_infoflow(args: &[String]) -> Outcome {
    let a = match InfoFlowArgs::parse(args) {
        Ok(a) => a,
        Err(e) => {
            return Outcome {
                out: String::new(),
                err: e.to_string(),
                code: 2,
            }
        }
    };
    let l = loaded(&a.policy);
    let map = match a.load_map() {
        Ok(m) => m,
        Err(e) => {
            return Outcome {
                out: format!("{e}\n"),
                err: String::new(),
                code: 1,
            }
        }
    };
    let g = {
        let mut graphs = l.infoflow.lock().unwrap_or_else(|e| e.into_inner());
        *graphs
            .entry(a.map.clone())
            .or_insert_with(|| Box::leak(Box::new(InfoFlowGraph::new(l.index, &map))))
    };
    let mut cache = ViewCache::default();
    let mut out = Vec::new();
    let code = seinfoflow::run(g, &mut cache, &a, &mut out).expect("writing to a Vec");
    Outcome {
        out: String::from_utf8(out).expect("utf-8"),
        err: String::new(),
        code: code.into(),
    }
}

/// Compares one case; returns a description of the difference, if any.
pub fn compare(tool: &str, args: &[String]) -> Option<String> {
    let theirs = theirs(tool, args);
    let ours = if tool == "sedta" {
        ours_dta(args)
    } else {
        ours_infoflow(args)
    };
    let (t, o) = (normalise(&theirs.out), normalise(&ours.out));
    if t == o && theirs.code == ours.code && (theirs.code != 2 || theirs.err == ours.err) {
        return None;
    }
    let first = t.lines().zip(o.lines()).position(|(a, b)| a != b);
    Some(format!(
        "{tool} {}\n  status {} vs ours {}\n  stderr {:?} vs ours {:?}\n  first differing line {:?}: {:?} vs ours {:?}\n  lines {} vs ours {}",
        args.join(" "),
        theirs.code,
        ours.code,
        theirs.err,
        ours.err,
        first,
        first.and_then(|i| t.lines().nth(i)),
        first.and_then(|i| o.lines().nth(i)),
        t.lines().count(),
        o.lines().count()
    ))
}

/// The types (not attributes) of a policy, by name.
pub fn types(path: &str) -> Vec<String> {
    let index = index(path);
    let mut v: Vec<String> = index
        .policy()
        .types
        .iter()
        .filter(|d| d.flavor == TypeFlavor::Type)
        .map(|d| d.name.to_string())
        .collect();
    v.sort();
    v
}

/// Our own small policies that setools 4.4.1 reads (format 24 to 33).
pub fn small_policies() -> Vec<PathBuf> {
    let dir = arbiter_testkit::repo_policies().join("bin");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| {
        p.extension()
            .and_then(|e| e.to_str())
            .and_then(|e| e.parse::<u32>().ok())
            .is_some_and(|v| (30..=33).contains(&v))
    });
    v.sort();
    v
}

/// Splits a command line written as one string.
pub fn argv(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

/// The members of the `domain` attribute (all types when the policy has none): the
/// sources worth asking about.
pub fn domains(path: &str) -> Vec<String> {
    let index = index(path);
    match index.type_or_attr("domain") {
        Some(d) if index.is_attribute(d) && !index.expand(d).is_empty() => {
            let mut v: Vec<String> = index
                .expand(d)
                .iter()
                .map(|&t| index.type_name(t).to_string())
                .collect();
            v.sort();
            v
        }
        _ => types(path),
    }
}
