//! Every output listed in `tests/data/bsm/EXPECTED.tsv` (OpenBSM's own praudit and
//! auditreduce, `TZ=UTC`), reproduced byte for byte through the library, with the same
//! exit status: once from trails held in memory and once from trails trickled through a
//! reader in uneven small pieces (the streaming path a pipe takes).

mod common;

use arbiter_bsm::{Config, PrintOptions, Printer, ReduceOptions, Reducer};
use std::path::Path;

/// How a trail reaches the printer or the reducer.
#[derive(Clone, Copy, Debug)]
enum Feed {
    /// The whole trail as one slice.
    Memory,
    /// Through [`common::Trickle`]: reads of 1 to 4093 bytes.
    Trickle,
}

fn print_one(p: &Printer<'_>, data: &[u8], out: &mut Vec<u8>, feed: Feed) {
    match feed {
        Feed::Memory => {
            p.print_trail(data, out).expect("write");
        }
        Feed::Trickle => {
            p.print_stream(common::Trickle::new(data), out)
                .expect("write");
        }
    }
}

/// Runs one praudit command line; returns (stdout, exit status).
fn praudit(
    args: &[String],
    stdin: Option<&str>,
    dir: &Path,
    cfg: &Config,
    feed: Feed,
) -> (Vec<u8>, i32) {
    let mut opts = PrintOptions::default();
    let mut files = Vec::new();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "-n" => opts.noresolve = true,
            "-l" => opts.oneline = true,
            "-r" => opts.raw = true,
            "-s" => opts.short = true,
            "-x" => opts.xml = true,
            "-d" => {
                i += 1;
                opts.delim = args[i].clone().into_bytes();
            }
            f => files.push(f.to_string()),
        }
        i += 1;
    }
    let xml = opts.xml;
    let p = Printer::new(&cfg.events, opts);
    let mut out = Vec::new();
    if xml {
        p.xml_header(&mut out);
    }
    if let Some(f) = stdin {
        let data = std::fs::read(dir.join(f)).expect("stdin file");
        print_one(&p, &data, &mut out, feed);
        return (out, 1);
    }
    for f in &files {
        let data = std::fs::read(dir.join(f)).expect("trail");
        print_one(&p, &data, &mut out, feed);
    }
    if xml {
        p.xml_footer(&mut out);
    }
    (out, 0)
}

fn auditreduce(args: &[String], dir: &Path, cfg: &Config, feed: Feed) -> (Vec<u8>, i32) {
    let (opts, files) = match ReduceOptions::parse(args, cfg) {
        Ok(x) => x,
        Err(arbiter_bsm::ReduceError::Usage(_)) => return (Vec::new(), 64),
        Err(_) => return (Vec::new(), 1),
    };
    let r = Reducer::new(opts, cfg);
    let mut out = Vec::new();
    for f in files {
        let data = std::fs::read(dir.join(f)).expect("trail");
        match feed {
            Feed::Memory => {
                r.reduce_trail(&data, &mut out);
            }
            Feed::Trickle => {
                r.reduce_stream(common::Trickle::new(&data), &mut out)
                    .expect("write");
            }
        }
    }
    (out, 0)
}

#[test]
fn every_expected_praudit_and_auditreduce_output_is_reproduced_byte_for_byte() {
    every_expected_output(Feed::Memory);
}

#[test]
fn every_expected_output_is_reproduced_from_a_trail_trickled_through_a_reader() {
    every_expected_output(Feed::Trickle);
}

fn every_expected_output(feed: Feed) {
    let dir = common::data_dir();
    let cfg = Config::load(&dir.join("etc")).expect("reference etc");
    let tsv = std::fs::read_to_string(dir.join("EXPECTED.tsv")).expect("EXPECTED.tsv");
    let mut checked = 0;
    let mut failures = Vec::new();
    let mut rows = 0;
    for line in tsv.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        assert!(f.len() >= 4, "malformed EXPECTED.tsv row: {line}");
        rows += 1;
        let (output, command, status) = (f[1], f[2], f[3].parse::<i32>().expect("exit status"));
        let (words, stdin) = common::shell_words(command);
        let (got, code) = match words[0].as_str() {
            "praudit" => praudit(&words[1..], stdin.as_deref(), &dir, &cfg, feed),
            "auditreduce" => auditreduce(&words[1..], &dir, &cfg, feed),
            other => panic!("unknown tool {other} in {command}"),
        };
        let want = common::read_expected(&dir.join(output));
        if got != want || code != status {
            let at = got
                .iter()
                .zip(&want)
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(want.len()));
            failures.push(format!(
                "{feed:?}: {command}: exit {code} (want {status}), {} bytes (want {}), first difference at byte {at}",
                got.len(),
                want.len()
            ));
        }
        checked += 1;
    }
    assert_eq!(checked, rows);
    assert!(checked >= 600, "only {checked} cases in EXPECTED.tsv");
    assert!(
        failures.is_empty(),
        "{} of {checked} outputs differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn embedded_defaults_print_like_the_reference_configuration() {
    let dir = common::data_dir();
    let builtin = Config::builtin();
    let loaded = Config::load(&dir.join("etc")).expect("reference etc");
    let data = std::fs::read(dir.join("synthetic/small.bsm")).expect("small.bsm");
    let opts = PrintOptions {
        noresolve: true,
        ..PrintOptions::default()
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    Printer::new(&builtin.events, opts.clone())
        .print_trail(&data, &mut a)
        .expect("write");
    Printer::new(&loaded.events, opts)
        .print_trail(&data, &mut b)
        .expect("write");
    assert_eq!(a, b);
    assert_eq!(
        a,
        std::fs::read(dir.join("synthetic/small.bsm.praudit-n.txt")).expect("expected")
    );
}
