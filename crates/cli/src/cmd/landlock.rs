//! `arbiter landlock check|run`: would these Landlock layers allow an operation, and a
//! sandboxer that applies the same configuration files for real.

use super::BATCH_LINE_MAX;
use crate::out::{CliError, Out};
use arbiter_io::{Crlf, Lines};
use arbiter_landlock::access::{fs_rights_of_abi, net_rights_of_abi, scopes_of_abi};
use arbiter_landlock::config::{load_layers, Layers};
use arbiter_landlock::sys::{self, KernelLayer};
use arbiter_landlock::{Evaluation, Layout, Op};
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Subcommand)]
pub enum Which {
    /// Would OP be allowed under these layers? Prints `allowed`, `denied ERRNO` (Landlock
    /// denies) or `fails ERRNO` (it fails for another reason); exit 0 allowed, 1 not, 2 error.
    ///
    /// OP: `read|write|readwrite|readdir|exec|mkdir|symlink|unlink|rmdir|truncate|mount PATH`,
    /// `open PATH FLAGS` (FLAGS: `rdonly`, `wronly` or `rdwr`, optionally `,trunc` and
    /// `,creat`), `mknod PATH reg|fifo|sock|char|block`, `ioctl PATH CMD`,
    /// `rename|exchange|link OLD NEW`, `bind-tcp|connect-tcp PORT`.
    Check(CheckArgs),
    /// Apply the layers to this process with the real syscalls (best effort by the kernel's
    /// ABI) and exec COMMAND.
    Run(RunArgs),
}

#[derive(clap::Args)]
pub struct CheckArgs {
    /// A landlockconfig file (TOML, or JSON by extension): one layer; repeat in order.
    #[arg(long = "layer", value_name = "CONFIG")]
    layers: Vec<PathBuf>,
    /// Say which layers denied which rights and which rules granted the others.
    #[arg(long)]
    explain: bool,
    /// One JSON object per answer.
    #[arg(long)]
    json: bool,
    /// Read operations from stdin, one per line, and answer each on one line.
    #[arg(long)]
    batch: bool,
    /// Rule index layout of the evaluator's domain (same verdicts).
    #[arg(long, value_parser = ["sorted", "hash"], default_value = "hash")]
    layout: String,
    /// The operation and its arguments.
    #[arg(last = true)]
    op: Vec<String>,
}

#[derive(clap::Args)]
pub struct RunArgs {
    /// A landlockconfig file: one layer; repeat in order.
    #[arg(long = "layer", value_name = "CONFIG")]
    layers: Vec<PathBuf>,
    /// The command and its arguments.
    #[arg(last = true, required = true)]
    command: Vec<std::ffi::OsString>,
}

pub fn run(w: Which, out: &mut Out) -> Result<ExitCode, CliError> {
    match w {
        Which::Check(a) => check(a, out),
        Which::Run(a) => sandbox(a),
    }
}

fn load(
    files: &[PathBuf],
    layout: Layout,
) -> Result<Layers, arbiter_landlock::config::ConfigError> {
    let layers = load_layers(files, layout)?;
    for r in &layers.resolved {
        for w in &r.warnings {
            crate::diag!("arbiter: warning: {w}");
        }
    }
    Ok(layers)
}

fn print(
    out: &mut impl Write,
    op: &str,
    ev: &Evaluation,
    explain: bool,
    json: bool,
) -> std::io::Result<()> {
    if json {
        let (verdict, errno) = match ev.outcome {
            arbiter_landlock::Outcome::Allowed => ("allowed", None),
            arbiter_landlock::Outcome::Denied(e) => ("denied", Some(e.name())),
            arbiter_landlock::Outcome::Fails(e) => ("fails", Some(e.name())),
        };
        let v = serde_json::json!({
            "op": op,
            "verdict": verdict,
            "errno": errno,
            "explanation": ev.explanation,
        });
        writeln!(out, "{v}")
    } else {
        writeln!(out, "{}", ev.outcome.line())?;
        if explain {
            for l in &ev.explanation {
                writeln!(out, "  {l}")?;
            }
        }
        Ok(())
    }
}

fn check(a: CheckArgs, out: &mut Out) -> Result<ExitCode, CliError> {
    let layout = if a.layout == "hash" {
        Layout::Hash
    } else {
        Layout::Sorted
    };
    let layers = load(&a.layers, layout)?;
    if !a.batch {
        let op = Op::parse(&a.op).map_err(|e| e.to_string())?;
        let ev = layers.sandbox.evaluate(&op);
        print(out, &op.to_string(), &ev, a.explain, a.json)?;
        return Ok(if ev.outcome == arbiter_landlock::Outcome::Allowed {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
    if !a.op.is_empty() {
        return Err("--batch reads operations from stdin; give none after --".into());
    }
    let mut bad = false;
    let mut lines = Lines::new(std::io::stdin().lock(), BATCH_LINE_MAX, Crlf::Strip);
    while let Some(line) = lines
        .next_line()
        .map_err(|e| format!("reading stdin: {e}"))?
    {
        let n = line.number;
        let parsed = line
            .text(BATCH_LINE_MAX)
            .map_err(|e| e.reason())
            .and_then(|text| {
                let words: Vec<&str> = text.split_whitespace().collect();
                if words.is_empty() || words[0].starts_with('#') {
                    return Ok(None);
                }
                Op::parse(&words).map(Some).map_err(|e| e.to_string())
            });
        match parsed {
            Ok(None) => {}
            Ok(Some(op)) => print(
                out,
                &op.to_string(),
                &layers.sandbox.evaluate(&op),
                a.explain,
                a.json,
            )?,
            Err(e) => {
                bad = true;
                if a.json {
                    let v = serde_json::json!({"line": n, "error": e});
                    writeln!(out, "{v}")?;
                } else {
                    writeln!(out, "error line {n}: {e}")?;
                }
            }
        }
        // One answer per line as it is asked, so a program driving the batch through a
        // pipe gets each answer before it writes the next question.
        out.flush()?;
    }
    Ok(if bad {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// One layer's path and port rules, masked to the kernel's ABI.
type MaskedRules = (Vec<(PathBuf, u16)>, Vec<(u64, u8)>);

fn sandbox(a: RunArgs) -> Result<ExitCode, CliError> {
    let layers = load(&a.layers, Layout::default())?;
    let abi = match sys::landlock_abi() {
        Ok(abi) => abi,
        Err(e) => {
            crate::diag!("arbiter: warning: Landlock is not available ({e}); running unsandboxed");
            0
        }
    };
    if abi > 0 {
        let (fs, net, sc) = (
            fs_rights_of_abi(abi),
            net_rights_of_abi(abi),
            scopes_of_abi(abi),
        );
        let masked: Vec<MaskedRules> = layers
            .resolved
            .iter()
            .map(|r| {
                (
                    r.paths
                        .iter()
                        .map(|(p, x)| (p.clone(), x & fs))
                        .filter(|(_, x)| *x != 0)
                        .collect(),
                    r.ports
                        .iter()
                        .map(|(p, x)| (*p, x & net))
                        .filter(|(_, x)| *x != 0)
                        .collect(),
                )
            })
            .collect();
        let kl: Vec<KernelLayer<'_>> = layers
            .resolved
            .iter()
            .zip(&masked)
            .filter_map(|(r, (paths, ports))| {
                let h = r.ruleset.handled();
                let l = KernelLayer {
                    fs: h.fs & fs,
                    net: h.net & net,
                    scoped: h.scope & sc,
                    paths,
                    ports,
                };
                (l.fs != 0 || l.net != 0 || l.scoped != 0).then_some(l)
            })
            .collect();
        sys::apply_layers(&kl).map_err(|e| format!("applying the layers failed: {e:?}"))?;
    }
    let err = std::process::Command::new(&a.command[0])
        .args(&a.command[1..])
        .exec();
    Err(format!("cannot run {}: {err}", a.command[0].to_string_lossy()).into())
}

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Timed repetitions (medians are reported).
    #[arg(long, default_value_t = 11)]
    repetitions: usize,
    /// Checks per repetition.
    #[arg(long, default_value_t = 300_000)]
    checks: usize,
}

/// `arbiter bench landlock`.
pub fn bench(a: BenchArgs, out: &mut Out) -> Result<ExitCode, CliError> {
    let opts = arbiter_lab::landlock_study::Options {
        repetitions: a.repetitions.max(1),
        checks: a.checks.max(1),
    };
    let bar = crate::out::progress::Bar::steps("arbiter bench landlock");
    bar.step(format!("{} repetitions", opts.repetitions));
    let report = arbiter_lab::landlock_study::run(&opts);
    drop(bar);
    let text = if a.json {
        format!("{}\n", report.json())
    } else {
        report.text()
    };
    out.write_all(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
