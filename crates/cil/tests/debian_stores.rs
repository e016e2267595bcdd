//! Debian's default and MLS module stores compiled by arbiter and by secilc 3.4 (`-N`, as
//! semodule runs it with `expand-check=0`): the written policies must be byte-identical (with a
//! section-by-section report when they are not) and the file_contexts text too. The default
//! store is also built without `-N`, and with a module that violates its checks.

mod common;

use arbiter_cil::{compile, write_policy, Compiled, Options};
use arbiter_policy::Policy;

fn check_store(store: &str) {
    if common::skip() {
        return;
    }
    let Some(sources) = common::store_sources(store) else {
        if std::env::var_os("ARBITER_NO_SECILC").is_some() {
            return;
        }
        panic!("module store {store} not installed");
    };
    let dir = common::scratch(store);
    let run = common::secilc(&dir, &["-N"], &sources);
    assert_eq!(run.status, 0, "secilc failed: {}", run.stderr);
    let their_bytes = run.policy.as_deref().expect("policy");
    let opts = Options {
        disable_neverallow: true,
        ..Options::default()
    };
    let ours = compile(&sources, &opts).unwrap_or_else(|e| panic!("arbiter failed: {e}"));
    assert_same_policy(store, &ours, &opts, their_bytes);
    // What a user sees at the default verbosity: secilc's stderr, byte for byte.
    let written = write_policy(&ours, &opts).unwrap_or_else(|e| panic!("{store}: writing: {e}"));
    assert_eq!(
        stderr_text(&[ours.warnings.clone(), written.warnings].concat()),
        run.stderr,
        "{store}: stderr at verbosity 0"
    );
    let fc = run.file_contexts.expect("file_contexts");
    assert!(
        ours.file_contexts == fc,
        "{store}: file_contexts differ (ours {} bytes, secilc {} bytes)",
        ours.file_contexts.len(),
        fc.len()
    );
    // seusers / users_extra as semodule installed them for this store.
    let active = std::path::Path::new("/var/lib/selinux")
        .join(store)
        .join("active");
    if let Ok(s) = std::fs::read(active.join("seusers.linked")) {
        assert_eq!(
            String::from_utf8_lossy(&ours.seusers),
            String::from_utf8_lossy(&s)
        );
    }
    if let Ok(s) = std::fs::read(active.join("users_extra.linked")) {
        assert_eq!(
            String::from_utf8_lossy(&ours.users_extra),
            String::from_utf8_lossy(&s)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Lines as secilc prints them on stderr (each ended by a newline).
fn stderr_text(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// Our written bytes equal secilc's; when they do not, the panic carries the
/// section-by-section differences.
fn assert_same_policy(what: &str, ours: &Compiled, opts: &Options, their_bytes: &[u8]) {
    let written = write_policy(ours, opts).unwrap_or_else(|e| panic!("{what}: writing: {e}"));
    if written.bytes != their_bytes {
        let theirs = Policy::from_bytes(their_bytes).expect("secilc output readable");
        let diffs = common::compare(&ours.policy, &theirs);
        panic!(
            "{what}: policy bytes differ (ours {} bytes, secilc {}):\n{}",
            written.bytes.len(),
            their_bytes.len(),
            diffs.join("\n")
        );
    }
}

#[test]
fn debian_default_store_matches_secilc() {
    check_store("default");
}

#[test]
fn debian_mls_store_matches_secilc() {
    check_store("mls");
}

/// Debian's default store with `-O` (secilc's optimiser after the compile): the optimised
/// policy written by arbiter equals secilc's byte for byte. One store only: secilc -O takes
/// about ten seconds on it.
#[test]
fn debian_default_store_optimized_matches_secilc() {
    if common::skip() {
        return;
    }
    let Some(sources) = common::store_sources("default") else {
        if std::env::var_os("ARBITER_NO_SECILC").is_some() {
            return;
        }
        panic!("module store default not installed");
    };
    let dir = common::scratch("optimized");
    let run = common::secilc(&dir, &["-N", "-O"], &sources);
    assert_eq!(run.status, 0, "secilc -O failed: {}", run.stderr);
    let opts = Options {
        disable_neverallow: true,
        optimize: true,
        ..Options::default()
    };
    let ours = compile(&sources, &opts).unwrap_or_else(|e| panic!("arbiter -O failed: {e}"));
    assert_same_policy(
        "default -O",
        &ours,
        &opts,
        run.policy.as_deref().expect("policy"),
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Random module subsets of Debian's default store (base plus a seeded choice of the
/// others): many optionals lose what they require and switch off, exercising the optional
/// fixpoint against libsepol's reset-and-retry. `ARBITER_CIL_SUBSETS=N` runs N subsets
/// (default 2, to keep CI short).
#[test]
fn debian_module_subsets_match_secilc() {
    if common::skip() {
        return;
    }
    let Some(all) = common::store_sources("default") else {
        if std::env::var_os("ARBITER_NO_SECILC").is_some() {
            return;
        }
        panic!("module store default not installed");
    };
    let n: u64 = std::env::var("ARBITER_CIL_SUBSETS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    for seed in 1..=n {
        // xorshift: a fixed, reproducible choice per seed.
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let subset: Vec<_> = all
            .iter()
            .filter(|s| s.name.contains("/base/") || next() % 4 == 0)
            .cloned()
            .collect();
        let dir = common::scratch("subset");
        let run = common::secilc(&dir, &["-N"], &subset);
        let opts = Options {
            disable_neverallow: true,
            ..Options::default()
        };
        let ours = compile(&subset, &opts);
        // stderr at the default verbosity, byte for byte (the names differ: ours are the
        // store's paths, secilc's its scratch copies, so the lines naming a file are
        // compared with the names mapped).
        let ours_stderr = match &ours {
            Ok(out) => match write_policy(out, &opts) {
                Ok(w) => stderr_text(&[out.warnings.clone(), w.warnings].concat()),
                Err(e) => stderr_text(&[out.warnings.clone(), e.messages].concat()),
            },
            Err(e) => stderr_text(&e.messages),
        };
        let mut mapped = ours_stderr;
        for (i, s) in subset.iter().enumerate() {
            let copy = dir.join(format!("{i:04}-cil")).display().to_string();
            mapped = mapped.replace(&format!("{}:", s.name), &format!("{copy}:"));
        }
        assert_eq!(mapped, run.stderr, "subset {seed}: stderr at verbosity 0");
        match (ours, run.status) {
            (Ok(out), 0) => {
                assert_same_policy(
                    &format!("subset {seed} ({} modules)", subset.len()),
                    &out,
                    &opts,
                    run.policy.as_deref().expect("policy"),
                );
                assert!(
                    Some(&out.file_contexts) == run.file_contexts.as_ref(),
                    "subset {seed}: file_contexts differ"
                );
            }
            (Ok(_), st) => panic!("subset {seed}: secilc failed ({st}): {}", run.stderr),
            (Err(e), 0) => panic!("subset {seed}: arbiter failed, secilc succeeded: {e}"),
            (Err(e), st) => assert_eq!(i32::from(e.status), st, "subset {seed}: {e}"),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A subset of Debian's default store (base and about a fifth of the other modules, the
/// first choice of the test above) at `-N -v` and `-N -v -v`, stderr byte for byte
/// (the test above compares it at the default verbosity). At `-v -v`: many optionals lose what they require,
/// so secilc's stderr holds thousands of libsepol's `Failed to resolve … statement` /
/// `Disabling optional …` lines and its `Resetting declarations` rounds; ours must be the
/// same, line for line (the exit status too: libsepol at `-v` keeps duplicate file
/// contexts and may then refuse conflicting ones).
#[test]
fn debian_module_subset_verbose_log_matches_secilc() {
    if common::skip() {
        return;
    }
    let Some(all) = common::store_sources("default") else {
        if std::env::var_os("ARBITER_NO_SECILC").is_some() {
            return;
        }
        panic!("module store default not installed");
    };
    let mut x = 0x9E37_79B9_7F4A_7C15u64 | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let subset: Vec<_> = all
        .iter()
        .filter(|s| s.name.contains("/base/") || next() % 4 == 0)
        .cloned()
        .collect();
    for verbose in [1u8, 2] {
        let dir = common::scratch("subset-verbose");
        let mut args = vec!["-N"];
        args.extend(std::iter::repeat_n("-v", verbose as usize));
        let run = common::secilc(&dir, &args, &subset);
        // The names secilc was given (`common::secilc` writes `NNNN-cil` files).
        let renamed: Vec<_> = subset
            .iter()
            .enumerate()
            .map(|(i, s)| arbiter_cil::Source {
                name: dir.join(format!("{i:04}-cil")).display().to_string(),
                text: s.text.clone(),
            })
            .collect();
        let opts = Options {
            disable_neverallow: true,
            verbose,
            ..Options::default()
        };
        let (status, lines) = match compile(&renamed, &opts)
            .and_then(|c| Ok([c.warnings.clone(), write_policy(&c, &opts)?.warnings].concat()))
        {
            Ok(lines) => (0, lines),
            Err(e) => (i32::from(e.status), e.messages),
        };
        let _ = std::fs::remove_dir_all(&dir);
        if verbose == 2 {
            assert!(
                run.stderr.contains("Disabling optional"),
                "the subset no longer disables optionals"
            );
        }
        assert_eq!(status, run.status, "exit status at verbosity {verbose}");
        let ours: String = lines.iter().map(|l| format!("{l}\n")).collect();
        if ours != run.stderr {
            let (o, t): (Vec<_>, Vec<_>) = (ours.lines().collect(), run.stderr.lines().collect());
            let at = o
                .iter()
                .zip(&t)
                .position(|(a, b)| a != b)
                .unwrap_or(o.len().min(t.len()));
            panic!(
                "verbosity {verbose}: log differs at line {} (ours {} lines, secilc {}):\n  ours:   {:?}\n  secilc: {:?}",
                at + 1,
                o.len(),
                t.len(),
                o.get(at),
                t.get(at)
            );
        }
    }
}

/// Debian's default store without `-N`: secilc's neverallow and bounds checks pass and the
/// policy is the same; then with one more module that breaks two of base's neverallows,
/// a neverallowx and a typebounds, both fail with the same report, line for line. The two
/// secilc runs go side by side (each takes seconds).
#[test]
fn debian_default_store_checks_match_secilc() {
    if common::skip() {
        return;
    }
    let Some(sources) = common::store_sources("default") else {
        if std::env::var_os("ARBITER_NO_SECILC").is_some() {
            return;
        }
        panic!("module store default not installed");
    };
    let mut bad = sources.clone();
    bad.push(arbiter_cil::Source {
        name: "zz-violations.cil".into(),
        text: b"(allow httpd_t shadow_t (file (read write)))
(allow httpd_t memory_device_t (chr_file (read)))
(typebounds httpd_t httpd_sys_script_t)
(allow httpd_sys_script_t etc_t (file (ioctl)))
(neverallowx httpd_t etc_t (ioctl file (0x5401)))
"
        .to_vec(),
    });
    let (dir, bad_dir) = (common::scratch("checks"), common::scratch("checks-bad"));
    let (run, bad_run) = std::thread::scope(|s| {
        let t = s.spawn(|| common::secilc(&bad_dir, &[], &bad));
        let run = common::secilc(&dir, &[], &sources);
        (run, t.join().expect("secilc thread"))
    });
    assert_eq!(run.status, 0, "secilc failed: {}", run.stderr);
    let opts = Options::default();
    let ours = compile(&sources, &opts).unwrap_or_else(|e| panic!("arbiter failed: {e}"));
    assert_same_policy(
        "default without -N",
        &ours,
        &opts,
        run.policy.as_deref().expect("policy"),
    );

    // Our sources under the names secilc was given, so messages name the same files.
    for (i, s) in bad.iter_mut().enumerate() {
        let base = std::path::Path::new(&s.name)
            .file_name()
            .map(|b| b.to_string_lossy().into_owned())
            .unwrap_or_default();
        s.name = bad_dir.join(format!("{i:04}-{base}")).display().to_string();
    }
    let err = compile(&bad, &opts).expect_err("the violations module must fail");
    assert_eq!(
        i32::from(err.status),
        bad_run.status,
        "exit status; secilc said:\n{}",
        bad_run.stderr
    );
    assert!(
        bad_run
            .stderr
            .contains("Child type httpd_sys_script_t exceeds bounds"),
        "{}",
        bad_run.stderr
    );
    let ours_text = err.messages.join("\n");
    assert!(
        ours_text.trim_end() == bad_run.stderr.trim_end(),
        "reports differ:\n--- ours\n{ours_text}\n--- secilc\n{}",
        bad_run.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&bad_dir);
}
