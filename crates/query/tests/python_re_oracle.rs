//! sesearch's regex dialect (Python's `re`), checked against Python itself and against
//! the real `sesearch`:
//!
//! - every pattern of [`CORPUS`] is compiled by `python3`'s `re` and by arbiter, and
//!   searched in every type, class, role and Boolean name of the Debian policy plus a set
//!   of Unicode subjects: the same names must match, and a pattern Python rejects must be
//!   rejected. arbiter may refuse a pattern Python accepts only when the pattern uses a
//!   construct the engine lacks ([`UNTRANSLATABLE`]), and must say so.
//! - every pattern is given to `sesearch` and to `arbiter search` with `-rs`, `-rt`,
//!   `-rc`, `-rb` and `-rd` on this repository's `default.33`, and the patterns that part
//!   the dialects on the Debian policy (every pattern with every option there with
//!   `ARBITER_REGEX_DEBIAN_ALL=1`; setools takes seconds per query on it): stdout byte for
//!   byte and the exit status must agree (errors are compared on exit status).

mod oracle;

use arbiter_policy::Policy;
use arbiter_query::search::{self, SearchArgs};
use arbiter_query::Index;
use std::io::Write;
use std::process::{Command, Stdio};

const DEBIAN: &str = arbiter_testkit::DEBIAN_DEFAULT;

/// Patterns where the dialects part ways, and plain ones around them.
const CORPUS: &[&str] = &[
    // POSIX-looking classes: sets of their letters for Python.
    "[[:alpha:]]",
    "[[:digit:]]_t",
    "[[:alnum:]_]+",
    "[:alpha:]",
    "[[:upper:]]",
    "^[[:lower:]]+_t$",
    "[[:space:]]",
    "[[=a=]]",
    "[[.hyphen.]]",
    // \A and \Z.
    "_t\\Z",
    "\\Ahttpd",
    "\\Ahttpd_t\\Z",
    "exec_t\\Z",
    "\\Z",
    "\\A",
    // Python's repeat forms and literal braces.
    "^[a-z]{,3}_t$",
    "s{,2}h",
    "^.{,5}$",
    "x{,}",
    "^[a-z]{2,}_t$",
    "^.{3}_t$",
    "{",
    "a{",
    "{x",
    "_t{",
    "{}",
    "x{1,2",
    "{,",
    "a{1,x}",
    "\\{",
    "{3}",
    "a{3,1}",
    "^s{0}sh",
    "t{1}_t$",
    // Flags.
    "(?i)HTTPD",
    "(?i:HTTPD)_t",
    "(?x) http d _t",
    "(?x)[ ]",
    "(?x)ssh  # a comment",
    "(?s).",
    "(?m)^init",
    "(?a)^\\w+_t$",
    "(?-i:http)",
    "(?i)(?-i:HTTP)d",
    "a(?i)b",
    "(?L)x",
    "(?au)x",
    "(?i)(?x) S S H",
    "(?#comment)ssh",
    "(?i-i:x)",
    "(?z)",
    // Escapes.
    "\\d",
    "^\\w+_t$",
    "\\W",
    "\\s",
    "^\\S+$",
    "\\x68ttpd",
    "\\u0068ttpd",
    "\\U00000068ttpd",
    "\\150ttpd",
    "\\0",
    "\\.",
    "\\-",
    "\\q",
    "\\_",
    "\\bssh",
    "\\Bsh",
    "\\1",
    "\\x6",
    "\\",
    "\\777",
    // Alternations and anchors.
    "^(httpd|sshd)_t$",
    "^init|^kernel",
    "|",
    "ssh||nothing",
    "^$",
    "$",
    "^",
    "(|ssh)d_t",
    "^(?:user|staff)_",
    "_t$|_exec_t$",
    // Character-class edge cases.
    "[]a]",
    "[^]a]",
    "[a-]",
    "[-a]",
    "[a\\-z]",
    "[\\w.]",
    "[\\d-z]",
    "[z-a]",
    "^[^a-z_]",
    "[\\]]",
    "[\\x41-\\x5a]",
    "[&&]",
    "[a-z&&[^x]]_t",
    "[a-z--x]",
    "[[]",
    "[a[b]",
    "[ab",
    "[\\b]",
    "[.]",
    "[\\s]",
    "[^\\W\\d]_t$",
    "[\\A]",
    "[\\8]",
    "[\\101]",
    // Repeats.
    "a**",
    "*a",
    "ss+?h",
    "s{2}?h",
    "^*",
    "\\b*",
    "(?#c)*",
    // Groups.
    "(?P<x>ssh)d",
    "(?P<x>a)(?P<x>b)",
    "(?P<1>a)",
    "(?P<>a)",
    "((",
    ")",
    "()",
    "(?:)",
    "(?",
    // Unicode subjects.
    "é",
    "[é-ë]",
    "\\u00e9",
    "^\\d$",
    "^\\w$",
    "^\\s$",
    "(?i)ǆ",
    "(?i)k",
    // Constructs the engine lacks.
    "(a)\\1",
    "(?P<n>a)(?P=n)",
    "(?=a)",
    "(?!a)b",
    "(?<=a)b",
    "(?<!a)b",
    "(a)?(?(1)b|c)",
    "(?>a)",
    "a*+",
    "\\N{LATIN SMALL LETTER H}ttpd",
];

/// Corpus entries that use a construct the `regex` engine lacks; arbiter refuses them.
const UNTRANSLATABLE: &[&str] = &[
    "(a)\\1",
    "(?P<n>a)(?P=n)",
    "(?=a)",
    "(?!a)b",
    "(?<=a)b",
    "(?<!a)b",
    "(a)?(?(1)b|c)",
    "(?>a)",
    "a*+",
    "\\N{LATIN SMALL LETTER H}ttpd",
];

/// Subjects that tell Unicode readings apart (none empty or with a newline: symbol names
/// are neither; see `python_re` for the two readings that differ there).
const UNICODE_SUBJECTS: &[&str] = &[
    "é", "ê", "É", "٣", "½", "²", "Ⅻ", "\u{1c}", "\u{85}", "\u{a0}", "a b", "a\tb", "ß", "ẞ",
    "\u{212a}", "ǅ", "ǆ", "Ǆ", "_", "‿", "\u{301}", "a{", "x]", "[:]", "{3}", "a-z", "&&", "\u{8}",
];

fn python_matches(patterns: &[&str], subjects: &[String]) -> Vec<Result<Vec<bool>, String>> {
    let script = r#"
import json, re, sys
data = json.load(sys.stdin)
out = []
for p in data["patterns"]:
    try:
        c = re.compile(p)
    except Exception as e:
        out.append({"error": "%s: %s" % (type(e).__name__, e)})
        continue
    out.append({"matches": "".join("1" if c.search(s) else "0" for s in data["subjects"])})
json.dump(out, sys.stdout)
"#;
    let mut child = Command::new("/usr/bin/python3")
        .args(["-W", "ignore", "-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    let input = serde_json::json!({ "patterns": patterns, "subjects": subjects }).to_string();
    let mut stdin = child.stdin.take().expect("stdin");
    let feeder = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("python3 output");
    feeder.join().expect("feeder").expect("write to python3");
    assert!(out.status.success(), "python3 failed");
    let v: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("JSON");
    v.into_iter()
        .map(|o| match o["matches"].as_str() {
            Some(m) => Ok(m.bytes().map(|b| b == b'1').collect()),
            None => Err(o["error"].as_str().unwrap_or_default().to_string()),
        })
        .collect()
}

fn debian() -> Option<Policy> {
    if !std::path::Path::new(DEBIAN).exists() {
        assert!(
            std::env::var_os("ARBITER_SKIP_SETOOLS").is_some(),
            "{DEBIAN} missing; install selinux-policy-default or set ARBITER_SKIP_SETOOLS=1"
        );
        return None;
    }
    Some(Policy::open(std::path::Path::new(DEBIAN)).expect("Debian policy"))
}

#[test]
fn corpus_is_large_enough_and_its_refusals_are_in_it() {
    assert!(CORPUS.len() >= 60);
    for p in UNTRANSLATABLE.iter().chain(DEBIAN_SAMPLE) {
        assert!(CORPUS.contains(p), "{p}");
    }
}

#[test]
fn every_pattern_matches_the_names_python_re_search_matches() {
    let Some(policy) = debian() else { return };
    let mut subjects: Vec<String> = policy.types.iter().map(|t| t.name.to_string()).collect();
    subjects.extend(policy.classes.iter().map(|c| c.name.to_string()));
    subjects.extend(policy.roles.iter().map(|r| r.name.to_string()));
    subjects.extend(policy.bools.iter().map(|b| b.name.to_string()));
    subjects.extend(UNICODE_SUBJECTS.iter().map(|s| s.to_string()));
    let theirs = python_matches(CORPUS, &subjects);
    let mut failures = Vec::new();
    for (p, want) in CORPUS.iter().zip(&theirs) {
        let ours = arbiter_query::python_re::translate(p)
            .map_err(|e| e.to_string())
            .and_then(|t| regex::Regex::new(&t).map_err(|e| format!("engine: {e}")));
        match (ours, want) {
            (Ok(re), Ok(want)) => {
                let diff: Vec<&str> = subjects
                    .iter()
                    .zip(want)
                    .filter(|(s, w)| re.is_match(s) != **w)
                    .map(|(s, _)| s.as_str())
                    .take(5)
                    .collect();
                if !diff.is_empty() {
                    failures.push(format!("{p:?}: differs on {diff:?}"));
                }
            }
            (Err(e), Ok(_)) => {
                if !(UNTRANSLATABLE.contains(p) && e.contains("cannot be translated")) {
                    failures.push(format!("{p:?}: Python accepts, arbiter says {e}"));
                }
            }
            (Ok(_), Err(e)) => {
                failures.push(format!("{p:?}: Python rejects ({e}), arbiter accepts"))
            }
            (Err(_), Err(_)) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The policy of this repository the whole corpus runs on (setools answers on it in
/// milliseconds; on Debian's each query takes seconds).
fn small_policy() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../policies/bin/default.33")
        .to_string_lossy()
        .into_owned()
}

/// Patterns run on Debian's policy by default (all of the corpus with
/// `ARBITER_REGEX_DEBIAN_ALL=1`): the readings that part the dialects.
const DEBIAN_SAMPLE: &[&str] = &[
    "[[:alpha:]]",
    "^[[:lower:]]+_t$",
    "exec_t\\Z",
    "^[a-z]{,3}_t$",
    "_t{",
    "(?i)HTTPD",
    "^\\w+_t$",
    "(?x) http d _t",
];

#[test]
fn every_pattern_gives_sesearch_output_for_each_regex_option() {
    if !oracle::oracle_available("/usr/bin/sesearch") {
        return;
    }
    let Some(debian) = debian() else { return };
    let small_path = small_policy();
    let small = Policy::open(std::path::Path::new(&small_path)).expect("policies/bin/default.33");
    // Each regex option, with criteria that keep Debian's output to some hundred rules.
    let shapes: &[&[&str]] = &[
        &["-A", "-s", "{}", "-rs"],
        &["-A", "-t", "{}", "-rt"],
        &["-A", "-c", "{}", "-rc"],
        &["-A", "-b", "{}", "-rb"],
        &["-T", "-D", "{}", "-rd"],
    ];
    let debian_shapes: &[&[&str]] = &[
        &["-T", "-c", "process", "-s", "{}", "-rs"],
        &["-A", "-s", "sshd_t", "-c", "process", "-t", "{}", "-rt"],
        &["-A", "-s", "passwd_t", "-t", "shadow_t", "-c", "{}", "-rc"],
        &["-T", "-b", "{}", "-rb"],
        &["-T", "-c", "process", "-s", "init_t", "-D", "{}", "-rd"],
    ];
    let argv = |shape: &[&str], p: &str, path: &str| -> Vec<String> {
        let mut v: Vec<String> = shape
            .iter()
            .map(|a| {
                if *a == "{}" {
                    p.to_string()
                } else {
                    a.to_string()
                }
            })
            .collect();
        v.push(path.to_string());
        v
    };
    // (on Debian's policy?, argv)
    let mut cases: Vec<(bool, Vec<String>)> = Vec::new();
    for p in CORPUS {
        for shape in shapes {
            cases.push((false, argv(shape, p, &small_path)));
        }
    }
    let all = std::env::var_os("ARBITER_REGEX_DEBIAN_ALL").is_some();
    for (i, p) in CORPUS.iter().enumerate() {
        if all {
            for shape in debian_shapes {
                cases.push((true, argv(shape, p, DEBIAN)));
            }
        } else if DEBIAN_SAMPLE.contains(p) {
            let shape = debian_shapes[i % debian_shapes.len()];
            cases.push((true, argv(shape, p, DEBIAN)));
        }
    }
    assert!(cases.iter().filter(|c| c.0).count() >= DEBIAN_SAMPLE.len());
    let argvs: Vec<Vec<String>> = cases.iter().map(|c| c.1.clone()).collect();
    let theirs = oracle::run_oracle("/usr/bin/sesearch", &argvs, 2);
    assert_eq!(theirs.len(), cases.len(), "the harness answered every case");
    let (small_index, debian_index) = (Index::new(&small), Index::new(&debian));
    let mut failures = Vec::new();
    let mut with_rules = 0;
    for ((on_debian, argv), theirs) in cases.iter().zip(&theirs) {
        let index = if *on_debian {
            &debian_index
        } else {
            &small_index
        };
        let pattern = argv
            .iter()
            .position(|a| a.starts_with("-r"))
            .map(|i| &argv[i - 1]);
        let (out, code) = match SearchArgs::parse(argv) {
            Err(e) => (e.0, 2),
            Ok(args) => {
                let (text, code) = search::execute(index, &args);
                (text, i64::from(code))
            }
        };
        if theirs.code == 0 && !theirs.out.is_empty() {
            with_rules += 1;
        }
        let refused = pattern.is_some_and(|p| UNTRANSLATABLE.contains(&p.as_str()));
        if refused && theirs.code == 0 {
            // The engine lacks the construct: arbiter must refuse and say why.
            if code == 0 || !out.contains("cannot be translated") {
                failures.push(format!("{argv:?}: not refused ({code}): {out}"));
            }
            continue;
        }
        if theirs.code != 0 || code != 0 {
            if (theirs.code == 0) != (code == 0) {
                failures.push(format!(
                    "{argv:?}: exit {code} vs sesearch {} ({} / {})",
                    theirs.code,
                    out.trim_end(),
                    theirs.out.trim_end()
                ));
            }
            continue;
        }
        if out != theirs.out {
            failures.push(format!(
                "{argv:?}: {} lines vs sesearch {}",
                out.lines().count(),
                theirs.out.lines().count()
            ));
        }
    }
    eprintln!(
        "{} cases, {with_rules} with rules, {} differences",
        cases.len(),
        failures.len()
    );
    assert!(with_rules > 150, "too few cases print rules: {with_rules}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Generated patterns over the characters that matter to either dialect, against Python on
/// a few hundred subjects: the same names match, Python's rejections are rejections, and a
/// refusal is only ever for a construct the engine lacks. (No subject holds a number that
/// is not a digit, like `½`: there `\b` reads word characters as the engine does.)
#[test]
fn generated_patterns_match_as_python_re_matches() {
    const ALPHABET: &[&str] = &[
        "a",
        "t",
        "_",
        "s",
        "h",
        "[",
        "]",
        "^",
        "-",
        "\\",
        "(",
        ")",
        "?",
        "*",
        "+",
        "{",
        "}",
        ",",
        "2",
        "|",
        "$",
        ".",
        ":",
        "P",
        "<",
        ">",
        "=",
        "!",
        "#",
        " ",
        "(?i)",
        "(?x)",
        "\\d",
        "\\w",
        "\\s",
        "\\W",
        "\\Z",
        "\\A",
        "\\b",
        "\\B",
        "é",
        "&",
        "~",
        "[:alpha:]",
    ];
    let count = oracle::case_count("ARBITER_REGEX_GENERATED", 3000);
    let mut rng = oracle::Rng(0x7e57_9a77_e2e5);
    let patterns: Vec<String> = (0..count)
        .map(|_| {
            let len = 1 + rng.below(8);
            (0..len)
                .map(|_| *rng.pick(ALPHABET).unwrap_or(&"a"))
                .collect()
        })
        .collect();
    let mut subjects: Vec<String> = [
        "httpd_t",
        "sshd_t",
        "ssh_home_t",
        "a",
        "t",
        "_",
        "s_h",
        "at",
        "tt_t",
        "a-b",
        "a{2}",
        "a]",
        "[:]",
        ":",
        "é",
        "É",
        "A_T",
        "a b",
        "ss",
        "h2",
        "a,2",
        "x",
        "ssh|t",
        "a$",
        "(a)",
        "a.b",
        "#",
        "a\tb",
        "٣",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(policy) = debian() {
        subjects.extend(policy.types.iter().step_by(25).map(|t| t.name.to_string()));
    }
    let refs: Vec<&str> = patterns.iter().map(String::as_str).collect();
    let theirs = python_matches(&refs, &subjects);
    let mut failures = Vec::new();
    let mut compared = 0;
    for (p, want) in patterns.iter().zip(&theirs) {
        let ours = arbiter_query::python_re::translate(p)
            .map_err(|e| e.to_string())
            .and_then(|t| regex::Regex::new(&t).map_err(|e| format!("engine: {e}")));
        match (ours, want) {
            (Ok(re), Ok(want)) => {
                compared += 1;
                if let Some((s, _)) = subjects
                    .iter()
                    .zip(want)
                    .find(|(s, w)| re.is_match(s) != **w)
                {
                    failures.push(format!("{p:?}: differs on {s:?}"));
                }
            }
            (Err(e), Ok(_)) if !e.contains("cannot be translated") => {
                failures.push(format!("{p:?}: Python accepts, arbiter says {e}"))
            }
            (Ok(_), Err(e)) => {
                failures.push(format!("{p:?}: Python rejects ({e}), arbiter accepts"))
            }
            _ => {}
        }
    }
    assert!(compared > count / 4, "only {compared} patterns both accept");
    assert!(
        failures.is_empty(),
        "{} of {count}:\n{}",
        failures.len(),
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
