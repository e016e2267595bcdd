//! `arbiter bsm print|reduce|preselect`: praudit, auditreduce and au_preselect on the
//! command line. Thin: the work is in `arbiter-bsm`.

use crate::out::progress::{self, Bar};
use crate::out::{CliError, Out};
use arbiter_bsm::{
    Config, Mask, Outcome, Preselector, PrintOptions, Printer, ReduceError, ReduceOptions, Reducer,
};
use arbiter_io::quote;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Print trails like OpenBSM's praudit (stdin when no FILE is given).
    Print(PrintArgs),
    /// Select records like OpenBSM's auditreduce, writing them as a trail to stdout.
    ///
    /// Options as auditreduce: -A -a TIME -b TIME -c MASK -d DAY -e EUID -f EGID -g RGID
    /// -j PID -m EVENT -o file=RE|pid=N|msgqid=N|semid=N|shmid=N -r RUID -u AUID -v -z GLOB,
    /// plus --etc DIR and --extended (examine every header/subject/return form and never let
    /// one undecodable record suppress the rest of its file, as auditreduce does).
    Reduce(ReduceArgs),
    /// Does MASK select EVENT? Prints `selected` (exit 0) or `not selected` (exit 1).
    Preselect(PreselectArgs),
    /// Check the audit_* files: what libbsm rejects (and, with --strict, what it silently
    /// accepts), by file and line. Exit 1 if anything is reported.
    Config(ConfigArgs),
}

#[derive(clap::Args)]
pub struct ConfigArgs {
    /// Directory with the audit_* files (default /etc/security, else built-in).
    #[arg(long)]
    etc: Option<PathBuf>,
    /// Also report what libbsm accepts silently (unknown classes, duplicate event numbers,
    /// numbers that are not numbers, CR line ends, split long lines).
    #[arg(long)]
    strict: bool,
}

#[derive(clap::Args)]
pub struct PrintArgs {
    /// One record per line.
    #[arg(short = 'l')]
    oneline: bool,
    /// Raw numbers (token ids, event numbers, epoch seconds).
    #[arg(short = 'r', conflicts_with = "short")]
    raw: bool,
    /// Short event names (AUE_...).
    #[arg(short = 's')]
    short: bool,
    /// XML output.
    #[arg(short = 'x')]
    xml: bool,
    /// Do not resolve uids and gids to names.
    #[arg(short = 'n')]
    noresolve: bool,
    /// Field delimiter.
    #[arg(short = 'd', default_value = ",")]
    delim: String,
    /// Directory with audit_event and audit_class (default /etc/security, else built-in).
    #[arg(long)]
    etc: Option<PathBuf>,
    /// Also report every undecodable token (with its byte offset) on stderr. Where a
    /// trail stops being readable before its end is always reported.
    #[arg(long)]
    check: bool,
    /// After a damaged record header, resume at the next plausible record (whose trailer
    /// has the BSM magic) instead of stopping there as praudit does.
    #[arg(long)]
    resync: bool,
    /// JSON lines: one object per record with its offset, its tokens (as text) and any
    /// decoding error.
    #[arg(long, conflicts_with = "xml")]
    json: bool,
    /// Trail files.
    files: Vec<PathBuf>,
}

#[derive(clap::Args)]
pub struct ReduceArgs {
    /// auditreduce's options and trail files.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<std::ffi::OsString>,
}

#[derive(clap::Args)]
pub struct PreselectArgs {
    /// Directory with the audit_* files (default /etc/security, else built-in).
    #[arg(long)]
    etc: Option<PathBuf>,
    /// Event name (AUE_OPEN_R) or number.
    #[arg(long)]
    event: String,
    /// Mask in audit_control syntax (lo,+fr,-fw,^ex).
    #[arg(long)]
    mask: String,
    /// Ask about a failed event (default: a successful one).
    #[arg(long, conflicts_with = "both")]
    failure: bool,
    /// Ask about either outcome (the kernel's check at system call entry).
    #[arg(long)]
    both: bool,
    /// Name the class bits involved.
    #[arg(long)]
    explain: bool,
}

pub fn run(c: Command, out: &mut Out) -> Result<ExitCode, CliError> {
    match c {
        Command::Print(a) => print(a, out),
        Command::Reduce(a) => reduce(a, out),
        Command::Preselect(a) => preselect(a, out),
        Command::Config(a) => check_config(a, out),
    }
}

fn config(etc: Option<&std::path::Path>) -> Result<Config, arbiter_bsm::IoError> {
    Config::locate(etc)
}

fn print(a: PrintArgs, out: &mut Out) -> Result<ExitCode, CliError> {
    let cfg = config(a.etc.as_deref())?;
    let opts = PrintOptions {
        oneline: a.oneline,
        raw: a.raw,
        short: a.short,
        xml: a.xml,
        noresolve: a.noresolve,
        delim: a.delim.into_bytes(),
        json: a.json,
        resync: a.resync,
    };
    let printer = Printer::new(&cfg.events, opts);
    let mut head = Vec::new();
    if a.xml {
        printer.xml_header(&mut head);
        out.write_all(&head)?;
    }
    let report = |name: &str, s: &arbiter_bsm::PrintSummary| {
        if a.check {
            for e in &s.bad_tokens {
                crate::diag!("arbiter: {name}: {e}");
            }
        }
        for f in &s.framing {
            if a.resync {
                crate::diag!("arbiter: {name}: {f}; resynchronised at the next record");
            } else {
                crate::diag!(
                    "arbiter: {name}: {f}; the rest of the file is not printed (--resync goes on)"
                );
            }
        }
    };
    if a.files.is_empty() {
        let bar = Bar::bytes("stdin", None);
        let s = printer
            .print_stream(bar.read(std::io::stdin().lock()), &mut *out)
            .map_err(|e| stream_error("stdin", e))?;
        report("stdin", &s);
        // praudit returns 1 after reading standard input, without the XML footer.
        return Ok(ExitCode::from(1));
    }
    for f in &a.files {
        let file = match open_trail(f) {
            Ok(d) => d,
            Err(e) => {
                crate::diag!("{e}");
                continue;
            }
        };
        let bar = Bar::bytes(&f.display().to_string(), progress::file_len(&file));
        let s = match printer.print_stream(bar.read(file), &mut *out) {
            Ok(s) => s,
            // As when a file cannot be opened: say so and go on with the next.
            Err(arbiter_bsm::StreamError::Read(e)) => {
                crate::diag!("{}: {e}", f.display());
                continue;
            }
            Err(e) => return Err(stream_error(&f.display().to_string(), e)),
        };
        report(&f.display().to_string(), &s);
    }
    if a.xml {
        let mut tail = Vec::new();
        printer.xml_footer(&mut tail);
        out.write_all(&tail)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Opens a trail for streaming (a file, FIFO or `/dev/stdin`; nothing is read yet).
/// A directory is refused here, with the error reading it would give.
fn open_trail(p: &std::path::Path) -> Result<std::fs::File, arbiter_bsm::IoError> {
    const EISDIR: i32 = 21;
    let err = |source| arbiter_bsm::IoError::File {
        path: p.into(),
        source,
    };
    let file = std::fs::File::open(p).map_err(err)?;
    match file.metadata() {
        Ok(m) if m.is_dir() => Err(err(std::io::Error::from_raw_os_error(EISDIR))),
        _ => Ok(file),
    }
}

/// A read failure names the input; a write failure is about standard output.
fn stream_error(input: &str, e: arbiter_bsm::StreamError) -> CliError {
    match e {
        arbiter_bsm::StreamError::Read(e) => CliError::Message(format!("{input}: {e}")),
        // The one writer has recorded the failure; `out::finish` reports it (or exits
        // quietly on a closed pipe).
        arbiter_bsm::StreamError::Write(e) => CliError::Io(e),
    }
}

fn reduce(a: ReduceArgs, out: &mut Out) -> Result<ExitCode, CliError> {
    // Trail paths need not be UTF-8 (crate::args: placeholders for the option parser).
    let argv = crate::args::Args::new(a.args);
    let mut args = Vec::new();
    let mut etc = None;
    let mut it = argv.strings.iter().cloned();
    while let Some(x) = it.next() {
        if x == "--etc" {
            let dir = it.next().ok_or("--etc needs a directory")?;
            etc = Some(PathBuf::from(argv.path(&dir)));
        } else if let Some(d) = x.strip_prefix("--etc=") {
            etc = Some(PathBuf::from(argv.path(d)));
        } else {
            args.push(x);
        }
    }
    let cfg = config(etc.as_deref())?;
    let (opts, files) = match ReduceOptions::parse(&args, &cfg) {
        Ok(x) => x,
        Err(e @ ReduceError::Usage(_)) => {
            crate::diag!("arbiter bsm reduce: {e}");
            return Ok(ExitCode::from(64));
        }
        Err(e) => {
            crate::diag!("arbiter bsm reduce: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let reducer = Reducer::new(opts, &cfg);
    let inputs: Vec<Option<PathBuf>> = if files.is_empty() {
        vec![None]
    } else {
        files
            .into_iter()
            .map(|f| Some(PathBuf::from(argv.path(&f))))
            .collect()
    };
    for f in inputs {
        let s = match &f {
            None => {
                let bar = Bar::bytes("stdin", None);
                reducer
                    .reduce_stream(bar.read(std::io::stdin().lock()), &mut *out)
                    .map_err(|e| stream_error("stdin", e))?
            }
            Some(p) => match open_trail(p) {
                Ok(file) => match reducer.reduce_stream(
                    Bar::bytes(&p.display().to_string(), progress::file_len(&file)).read(file),
                    &mut *out,
                ) {
                    Ok(s) => s,
                    Err(arbiter_bsm::StreamError::Read(e)) => {
                        out.flush()?;
                        crate::diag!("arbiter bsm reduce: {}: {e}", p.display());
                        return Ok(ExitCode::from(1));
                    }
                    Err(e) => return Err(stream_error(&p.display().to_string(), e)),
                },
                Err(_) => {
                    crate::diag!("arbiter bsm reduce: Couldn't open {}", p.display());
                    return Ok(ExitCode::from(1));
                }
            },
        };
        if s.suppressed_after_error > 0 {
            crate::diag!(
                "arbiter bsm reduce: {} record(s) dropped only because an earlier record had an undecodable token (auditreduce's behaviour; --extended keeps them)",
                s.suppressed_after_error
            );
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn check_config(a: ConfigArgs, out: &mut Out) -> Result<ExitCode, CliError> {
    let cfg = config(a.etc.as_deref())?;
    let mut reported = 0;
    let mut text = String::new();
    let all = cfg
        .classes
        .diagnostics()
        .iter()
        .chain(cfg.events.diagnostics(a.strict))
        .chain(cfg.users.diagnostics());
    for d in all {
        let kind = if d.rejected {
            "rejected"
        } else {
            "accepted silently"
        };
        text.push_str(&format!("{}: {kind}\n", d.error));
        reported += 1;
    }
    let flags = cfg.control.flags_mask(&cfg.classes);
    let naflags = cfg.control.naflags_mask(&cfg.classes);
    for (key, m) in [("flags", &flags), ("naflags", &naflags)] {
        if let Err(e) = m {
            text.push_str(&format!("audit_control: {key}: {e}: rejected\n"));
            reported += 1;
        }
    }
    out.write_all(text.as_bytes())?;
    crate::diag!(
        "{} classes, {} event lines ({} enumerated), {} users; {} finding(s)",
        cfg.classes.entries().len(),
        cfg.events.parsed_lines(),
        cfg.events.enumerate().count(),
        cfg.users.entries().len(),
        reported
    );
    Ok(if reported == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn preselect(a: PreselectArgs, out: &mut Out) -> Result<ExitCode, CliError> {
    let cfg = config(a.etc.as_deref())?;
    let event = match a.event.parse::<u16>() {
        Ok(n) => n,
        Err(_) => {
            cfg.events
                .by_name(a.event.as_bytes())
                .ok_or(format!("{}: no such event in audit_event", quote(&a.event)))?
                .number
        }
    };
    let mask = Mask::parse(&a.mask, &cfg.classes)
        .map_err(|e| format!("--mask {}: {e}", quote(&a.mask)))?;
    let outcome = if a.both {
        Outcome::Both
    } else if a.failure {
        Outcome::Failure
    } else {
        Outcome::Success
    };
    let pre = Preselector::new(&cfg.events);
    let sel = pre.preselect(event, &mask, outcome);
    let names = |bits: u32| {
        let n = cfg.classes.names_of(bits);
        if n.is_empty() {
            "none".to_string()
        } else {
            n.join(",")
        }
    };
    let selected = sel.is_some_and(|s| s.selected());
    writeln!(
        out,
        "{}",
        if selected { "selected" } else { "not selected" }
    )?;
    if a.explain {
        match sel {
            None => writeln!(
                out,
                "event {event} is not in audit_event (au_preselect returns -1)"
            )?,
            Some(s) => {
                writeln!(
                    out,
                    "event {event} class 0x{:08x} ({})",
                    s.class,
                    names(s.class)
                )?;
                writeln!(
                    out,
                    "mask success 0x{:08x} failure 0x{:08x}",
                    mask.success, mask.failure
                )?;
                writeln!(out, "matched 0x{:08x} ({})", s.matched, names(s.matched))?;
            }
        }
    }
    Ok(if selected {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Records in the generated trail.
    #[arg(long, default_value_t = 1_000_000)]
    records: usize,
    /// Seconds per lookup measurement (at least).
    #[arg(long, default_value_t = 0.5)]
    seconds: f64,
    /// Timed repetitions (medians are reported).
    #[arg(long, default_value_t = 5)]
    repetitions: usize,
    /// Also keep the generated trail in this file.
    #[arg(long)]
    save_trail: Option<PathBuf>,
}

/// OpenBSM praudit's speed on the reference machine (research brief: 204,000 records in
/// about 31 s with `-n`).
const PRAUDIT_RECORDS_PER_SECOND: f64 = 6_500.0;

pub fn bench(a: BenchArgs, out: &mut Out) -> Result<ExitCode, CliError> {
    use arbiter_lab::bsm_study as b;
    let reps = a.repetitions.max(1);
    let cfg = Config::builtin();
    let bar = Bar::steps("arbiter bench bsm");
    bar.step("class-map lookups");
    let maps = b::class_maps(&cfg, a.seconds, reps);
    bar.step("the synthetic trail");
    let trail = b::synthetic_trail(&cfg, a.records, 42);
    let path = std::env::temp_dir().join(format!("arbiter-bsm-bench-{}.bsm", std::process::id()));
    std::fs::write(&path, &trail).map_err(|e| CliError::file(path.display(), e))?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = std::process::Command::new(&exe);
    cmd.args(["bsm", "print", "-l", "-n"])
        .arg(&path)
        .stdout(std::process::Stdio::null());
    bar.step("whole-process print and reduce");
    let whole = b::process_rate(&mut cmd, a.records, reps);
    let mut rcmd = std::process::Command::new(&exe);
    rcmd.args(["bsm", "reduce", "-c", "lo"])
        .arg(&path)
        .stdout(std::process::Stdio::null());
    let whole_reduce = b::process_rate(&mut rcmd, a.records, reps);
    match &a.save_trail {
        // A rename over a special file (`--save-trail /dev/null`) would replace the device
        // itself with a regular file: those are written into, as is any other destination
        // the rename cannot reach.
        Some(keep) => {
            let special = std::fs::metadata(keep).is_ok_and(|m| !m.is_file());
            let moved = if special {
                Err(std::io::Error::other("special file"))
            } else {
                std::fs::rename(&path, keep)
            };
            let r = moved
                .or_else(|_| std::fs::copy(&path, keep).map(|_| ()))
                .map_err(|e| format!("{}: {e}", keep.display()));
            let _ = std::fs::remove_file(&path);
            r?
        }
        None => {
            let _ = std::fs::remove_file(&path);
        }
    }
    let (whole, whole_reduce) = (whole?, whole_reduce?);
    let lopts = PrintOptions {
        oneline: true,
        noresolve: true,
        ..PrintOptions::default()
    };
    bar.step("print and reduce in process");
    let print_l = b::print_rate(&cfg, &trail, lopts, reps);
    let xopts = PrintOptions {
        xml: true,
        noresolve: true,
        ..PrintOptions::default()
    };
    let print_x = b::print_rate(&cfg, &trail, xopts, reps);
    let (reduce_c, sel_c) = b::reduce_rate(&cfg, &trail, &["-c", "lo"], reps);
    let (reduce_m, sel_m) = b::reduce_rate(&cfg, &trail, &["-m", "AUE_EXECVE", "-u", "1001"], reps);
    drop(bar);
    let base = maps.first().map(|m| m.one).unwrap_or_default();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load = load.split_whitespace().next().unwrap_or("?").to_string();
    let r = |x: b::Rate| serde_json::json!({"wall": x.wall, "cpu": x.cpu});
    if a.json {
        let rows: Vec<serde_json::Value> = maps
            .iter()
            .map(|m| {
                serde_json::json!({"design": m.design, "lookups_per_s_1_thread": r(m.one),
                    "lookups_per_s_2_threads": r(m.two),
                    "scaling_2_threads": {"wall": m.two.wall / m.one.wall, "cpu": m.two.cpu / m.one.cpu},
                    "vs_rwlock_1_thread": {"wall": m.one.wall / base.wall, "cpu": m.one.cpu / base.cpu}})
            })
            .collect();
        let v = serde_json::json!({
            "load_average_1min": load,
            "class_maps": rows,
            "trail_records": a.records,
            "trail_bytes": trail.len(),
            "print_whole_process_l_records_per_s": r(whole),
            "print_whole_process_vs_praudit": {"wall": whole.wall / PRAUDIT_RECORDS_PER_SECOND, "cpu": whole.cpu / PRAUDIT_RECORDS_PER_SECOND},
            "reduce_whole_process_c_lo_records_per_s": r(whole_reduce),
            "print_in_process_l_records_per_s": r(print_l),
            "print_in_process_x_records_per_s": r(print_x),
            "reduce_in_process_c_lo_records_per_s": r(reduce_c),
            "reduce_c_lo_selected": sel_c,
            "reduce_in_process_m_u_records_per_s": r(reduce_m),
            "reduce_m_u_selected": sel_m,
            "repetitions": reps,
        });
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let m6 = |x: f64| x / 1e6;
    writeln!(out, "(1-minute load average at the end: {load}; per-CPU-second figures discount waiting for a CPU)")?;
    writeln!(
        out,
        "event -> class lookups, M/s (median of {reps}; {} s per measurement)",
        a.seconds
    )?;
    writeln!(
        out,
        "{:<14} {:>10} {:>10} {:>10} {:>10} {:>9} {:>9}",
        "design", "1t wall", "1t cpu", "2t wall", "2t cpu", "2t/1t cpu", "vs (a)"
    )?;
    for m in &maps {
        writeln!(
            out,
            "{:<14} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>8.2}x {:>8.1}x",
            m.design,
            m6(m.one.wall),
            m6(m.one.cpu),
            m6(m.two.wall),
            m6(m.two.cpu),
            m.two.cpu / m.one.cpu,
            m.one.cpu / base.cpu
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "trail: {} records, {} bytes (generated by the crate's writer)",
        a.records,
        trail.len()
    )?;
    writeln!(
        out,
        "records/s, M           wall      cpu   vs praudit (~{PRAUDIT_RECORDS_PER_SECOND}/s, cpu)"
    )?;
    let mut line = |name: &str, x: b::Rate| {
        writeln!(
            out,
            "{name:<20} {:>8.2} {:>8.2} {:>10.0}x",
            m6(x.wall),
            m6(x.cpu),
            x.cpu / PRAUDIT_RECORDS_PER_SECOND
        )
    };
    line("print -l (process)", whole)?;
    line("print -l (in proc)", print_l)?;
    line("print -x (in proc)", print_x)?;
    line("reduce -c lo (proc)", whole_reduce)?;
    line("reduce -c lo", reduce_c)?;
    line("reduce -m -u", reduce_m)?;
    writeln!(
        out,
        "(reduce -c lo selects {sel_c}; -m AUE_EXECVE -u 1001 selects {sel_m})"
    )?;
    Ok(ExitCode::SUCCESS)
}
