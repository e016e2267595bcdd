//! `arbiter manpage` and `arbiter completions`: a page for the binary and for every
//! subcommand, generated from the argument parser; completions for each shell. (Rendering
//! the pages with `man -l` and loading the completions in bash are checked by
//! scripts/check-manual.sh.)

use std::process::Command;

fn arbiter(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(args)
        .output()
        .expect("run arbiter")
}

/// The subcommands `arbiter --help` lists (without `help`).
fn subcommands() -> Vec<String> {
    let help = String::from_utf8(arbiter(&["--help"]).stdout).unwrap();
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

#[test]
fn every_subcommand_has_a_manual_page() {
    let dir = std::env::temp_dir().join(format!("arbiter-manual-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = arbiter(&["manpage", "--out-dir", dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed = String::from_utf8(out.stdout).unwrap();
    let commands = subcommands();
    assert!(commands.len() >= 10, "{commands:?}");
    for page in std::iter::once("arbiter".to_string())
        .chain(commands.iter().map(|c| format!("arbiter-{c}")))
    {
        let path = dir.join(format!("{page}.1"));
        let roff = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(roff.contains(".TH "), "{page} has no title");
        assert!(roff.contains(".SH NAME"), "{page} has no NAME section");
        assert!(listed.contains(path.to_str().unwrap()), "{page} not listed");
    }
    // Nested subcommands get their own pages too.
    assert!(dir.join("arbiter-bsm-print.1").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn one_page_is_printed_by_its_command_path() {
    let out = arbiter(&["manpage", "bsm", "print"]);
    assert!(out.status.success());
    let roff = String::from_utf8(out.stdout).unwrap();
    assert!(roff.contains("arbiter\\-bsm\\-print"), "{roff}");
    let bad = arbiter(&["manpage", "bsm", "nonesuch"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("nonesuch"));
}

#[test]
fn completions_name_every_subcommand() {
    let commands = subcommands();
    for shell in ["bash", "zsh", "fish"] {
        let out = arbiter(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        for c in &commands {
            assert!(script.contains(c.as_str()), "{shell} completion lacks {c}");
        }
    }
}
