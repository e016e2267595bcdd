//! The hand-written CIL corpus (`tests/corpus/*.cil`), each case compiled after
//! `corpus/base.cil` by arbiter and by secilc 3.4 with the options named on a `; args:` line:
//! same exit status; on success the same policy bytes (written at the case's `-c` version;
//! a section-by-section report when they differ) and the same file_contexts bytes; on failure our messages name the failing file where secilc's do.
//! Cases with a `; messages: exact` line must print secilc's stderr line for line (the
//! neverallow and bounds reports, and the bounds statements' own errors).

mod common;

use arbiter_cil::{compile, write_policy, Source};
use arbiter_policy::Policy;
use std::path::{Path, PathBuf};

#[test]
fn corpus_cases_match_secilc() {
    if common::skip() {
        return;
    }
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let base_text = std::fs::read(here.join("base.cil")).expect("base.cil");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&here)
        .expect("corpus dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cil") && !p.ends_with("base.cil"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 20, "corpus went missing");
    let mut failures = Vec::new();
    for case in &cases {
        let text = std::fs::read(case).expect("case");
        let (args, opts) = common::case_args(&String::from_utf8_lossy(&text));
        let dir = common::scratch("corpus");
        let base_path = dir.join("base.cil");
        let case_path = dir.join(case.file_name().expect("name"));
        std::fs::write(&base_path, &base_text).expect("write");
        std::fs::write(&case_path, &text).expect("write");
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let theirs = common::secilc_files(&dir, &argv, &[base_path.clone(), case_path.clone()]);
        let sources = vec![
            Source {
                name: base_path.display().to_string(),
                text: base_text.clone(),
            },
            Source {
                name: case_path.display().to_string(),
                text: text.clone(),
            },
        ];
        let name = case
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        eprintln!("corpus case {name}");
        let ours = compile(&sources, &opts);
        match (ours, theirs.status) {
            (Ok(out), 0) => {
                let their_bytes = theirs.policy.as_deref().expect("policy");
                match write_policy(&out, &opts) {
                    Ok(w) if w.bytes == their_bytes => {}
                    Ok(w) => {
                        // Not byte-identical: the section-by-section report says where.
                        let pol = Policy::from_bytes(their_bytes).expect("secilc output readable");
                        let diffs = common::compare(&out.policy, &pol);
                        failures.push(format!(
                            "{name}: policy bytes differ (ours {} bytes, secilc {}):\n  {}",
                            w.bytes.len(),
                            their_bytes.len(),
                            diffs.join("\n  ")
                        ));
                    }
                    Err(e) => failures.push(format!("{name}: writing failed: {e}")),
                }
                if Some(&out.file_contexts) != theirs.file_contexts.as_ref() {
                    failures.push(format!(
                        "{name}: file_contexts differ:\n--- ours\n{}--- secilc\n{}",
                        String::from_utf8_lossy(&out.file_contexts),
                        String::from_utf8_lossy(theirs.file_contexts.as_deref().unwrap_or(b""))
                    ));
                }
            }
            (Ok(_), st) => failures.push(format!(
                "{name}: secilc failed ({st}) but arbiter succeeded; secilc said:\n{}",
                theirs.stderr
            )),
            (Err(e), 0) => {
                failures.push(format!("{name}: arbiter failed but secilc succeeded: {e}"))
            }
            (Err(e), st) => {
                if i32::from(e.status) != st {
                    failures.push(format!(
                        "{name}: exit status {} vs secilc {st}\n  ours: {e}\n  secilc: {}",
                        e.status, theirs.stderr
                    ));
                }
                // Neverallow failures, and cases that ask for it: the same text, line by line.
                let exact = String::from_utf8_lossy(&text)
                    .lines()
                    .take_while(|l| l.starts_with(';'))
                    .any(|l| l.trim() == "; messages: exact");
                if exact || theirs.stderr.starts_with("neverallow check failed") {
                    let ours_text = e.messages.join("\n");
                    let theirs_text = theirs.stderr.trim_end();
                    if ours_text.trim_end() != theirs_text {
                        failures.push(format!(
                            "{name}: report differs:\n--- ours\n{ours_text}\n--- secilc\n{theirs_text}"
                        ));
                    }
                }
                let case_str = case_path.display().to_string();
                if theirs.stderr.contains(&case_str) && !e.to_string().contains(&case_str) {
                    failures.push(format!(
                        "{name}: our error does not name {case_str}:\n  ours: {e}\n  secilc: {}",
                        theirs.stderr
                    ));
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
