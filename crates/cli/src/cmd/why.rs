//! `arbiter why`: audit2why / audit2allow over AVC denial logs (the work is in
//! `arbiter-denials`). One option per audit2allow option it implements; those it does not
//! implement are accepted by the parser only to be refused with a message.

use crate::load;
use crate::out::progress::{self, Bar};
use crate::out::{CliError, Out};
use arbiter_denials::package::{self, PackageError};
use arbiter_denials::{
    BoolDescriptions, Engine, Explanation, Generation, Malformed, Mode, ModuleName, Newlines,
    Options, ProblemKind, Session, TypeFilter,
};
use std::io::{self, BufReader, Write};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

/// Problems printed on stderr before the rest are only counted.
const SHOWN_PROBLEMS: usize = 50;
/// What `audit2allow -a` reads.
const AUSEARCH: &str = "/sbin/ausearch";
const AUSEARCH_ARGS: [&str; 2] = [
    "-m",
    "AVC,USER_AVC,MAC_POLICY_LOAD,DAEMON_START,SELINUX_ERR",
];
/// What `audit2allow -d` reads.
const DMESG: &str = "/bin/dmesg";

/// Explain AVC denials as `audit2why -p POLICY` does, or generate what `audit2allow -p
/// POLICY` generates (--allow, or any of -m -M -r -D -x).
///
/// The output is byte-identical to policycoreutils 3.4's, except that the types and roles
/// of a require block are sorted (audit2allow prints them in Python's randomised set
/// order, different on every run).
#[derive(clap::Args)]
pub struct Args {
    /// Binary policy file (policy.NN), or `builtin`.
    policy: std::ffi::OsString,
    /// Logs to read: audit.log, `ausearch -i` output, journal / dmesg text, Android logcat.
    /// Standard input when none is given (or for `-`).
    files: Vec<std::ffi::OsString>,
    /// Add arbiter's full explanation: granting and would-be-granting rules, every boolean
    /// that would grant it, constraints term by term, role and bounds checks (audit2why
    /// reports only).
    #[arg(long)]
    explain: bool,
    /// Print the rules `audit2allow -p POLICY` would generate instead of explanations.
    #[arg(long)]
    allow: bool,
    /// JSON Lines: one object per record (with --allow: one object holding the rules).
    #[arg(long)]
    json: bool,
    /// audit2allow -i: read this log (as a FILE argument does).
    #[arg(short = 'i', long = "input", value_name = "FILE")]
    input: Vec<std::ffi::OsString>,
    /// audit2allow -a: read the audit log through `/sbin/ausearch -m
    /// AVC,USER_AVC,MAC_POLICY_LOAD,DAEMON_START,SELINUX_ERR`.
    #[arg(short = 'a', long = "all")]
    all: bool,
    /// audit2allow -d: read the kernel log through `/bin/dmesg`.
    #[arg(short = 'd', long = "dmesg")]
    dmesg: bool,
    /// audit2allow -w: audit2why's report (the default; conflicts with rule generation).
    #[arg(short = 'w', long = "why")]
    why: bool,
    /// audit2allow -m: a module named NAME (`module NAME 1.0;`, a require block, the
    /// rules). Implies --allow and -r.
    #[arg(short = 'm', long = "module", value_name = "NAME")]
    module: Option<String>,
    /// audit2allow -M: write the module to NAME.te in the current directory and build
    /// NAME.pp with /usr/bin/checkmodule and /usr/bin/semodule_package (Debian packages
    /// checkpolicy, semodule-utils). Implies --allow and -r.
    #[arg(short = 'M', long = "module-package", value_name = "NAME")]
    module_package: Option<String>,
    /// audit2allow -r: a require block for the generated rules (its types and roles sorted,
    /// where audit2allow prints them in random set order). Implies --allow.
    #[arg(short = 'r', long = "requires")]
    requires: bool,
    /// audit2allow -D: dontaudit rules instead of allow rules. Implies --allow.
    #[arg(short = 'D', long = "dontaudit")]
    dontaudit: bool,
    /// audit2allow -x: allowxperm rules for the logged ioctl commands. Implies --allow.
    #[arg(short = 'x', long = "xperms")]
    xperms: bool,
    /// audit2allow -o: append the generated rules to FILE instead of printing them.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<std::path::PathBuf>,
    /// audit2allow -N: no refpolicy interface calls (arbiter's only style).
    #[arg(short = 'N', long = "noreference")]
    noreference: bool,
    /// audit2allow --debug (unused by audit2allow 3.4 too): accepted, no effect.
    #[arg(long)]
    debug: bool,
    /// audit2allow -R (refpolicy interface calls): not implemented, refused.
    #[arg(short = 'R', long = "reference")]
    reference: bool,
    /// audit2allow --interface-info (for -R): not implemented, refused.
    #[arg(long = "interface-info", value_name = "FILE")]
    interface_info: Option<String>,
    /// audit2allow --perm-map (for -R): not implemented, refused.
    #[arg(long = "perm-map", value_name = "FILE")]
    perm_map: Option<String>,
    /// audit2allow -b (messages since boot): not implemented, refused.
    #[arg(short = 'b', long = "boot")]
    boot: bool,
    /// audit2allow -l: only records after the last policy load (or auditd start) count;
    /// reports are held until the input ends.
    #[arg(short = 'l', long = "lastreload")]
    lastreload: bool,
    /// audit2allow -t: only denials whose source or target type matches REGEX (anchored at
    /// the start, as Python's re.match; Rust regex syntax) become rules. Needs --allow (or
    /// another generation option): audit2why's reports are not filtered.
    #[arg(short = 't', long = "type", value_name = "REGEX")]
    type_regex: Option<String>,
    /// audit2allow -v: a comment before each generated rule naming its access and where its
    /// first denial came from (comm, exe, AVC_PATH path). Implies --allow.
    #[arg(short = 'v', long = "verbose")]
    verbose: bool,
    /// audit2allow -e/--explain: a comment before each generated rule quoting every denial
    /// it stands for (header, contexts, permissions, comm, exe, path, the record wrapped at
    /// 80 columns). Implies --allow. (arbiter's --explain explains audit2why reports.)
    #[arg(short = 'e')]
    explain_rules: bool,
}

/// Where the input comes from.
enum Input {
    /// Files (`-` for standard input).
    Files(Vec<std::ffi::OsString>),
    /// A program's output (`-a`, `-d`).
    Program(&'static str, &'static [&'static str]),
}

pub fn run(a: Args, out: &mut Out) -> Result<ExitCode, CliError> {
    refuse_unimplemented(&a)?;
    let generation = Generation {
        module: a
            .module
            .as_deref()
            .or(a.module_package.as_deref())
            .map(ModuleName::parse)
            .transpose()
            .map_err(|e| e.to_string())?,
        requires: a.requires,
        dontaudit: a.dontaudit,
        xperms: a.xperms,
        explain: if a.explain_rules {
            Explanation::Long
        } else if a.verbose {
            Explanation::Short
        } else {
            Explanation::None
        },
        mls_kernel: package::kernel_mls_enabled(),
    };
    let generates = a.allow
        || generation.module.is_some()
        || generation.requires
        || generation.dontaudit
        || generation.xperms
        || generation.explain != Explanation::None
        || a.output.is_some();
    check_conflicts(&a, generates)?;
    let input = if a.all {
        Input::Program(AUSEARCH, &AUSEARCH_ARGS)
    } else if a.dmesg {
        Input::Program(DMESG, &[])
    } else {
        let mut files = a.files.clone();
        files.extend(a.input.iter().cloned());
        if files.is_empty() {
            files.push("-".into());
        }
        Input::Files(files)
    };

    let engine = Engine::new(load::policy(&a.policy)?);
    let opts = Options {
        mode: if generates { Mode::Allow } else { Mode::Why },
        explain: a.explain,
        json: a.json,
        program_output: matches!(input, Input::Program(..)),
        last_reload: a.lastreload,
    };
    let mut session = Session::new(&engine, opts)
        .with_descriptions(BoolDescriptions::system())
        .with_generation(generation);
    if let Some(pattern) = &a.type_regex {
        session = session.with_type_filter(TypeFilter::new(pattern).map_err(|e| e.to_string())?);
    }

    // -M and -o collect the text; otherwise it streams to standard output.
    let collect = a.module_package.is_some() || a.output.is_some();
    let mut text: Vec<u8> = Vec::new();
    let sink: &mut dyn Write = if collect { &mut text } else { &mut *out };
    feed(&mut session, &input, sink)?;
    let summary = session.finish(&mut *sink)?;
    let mut err = io::stderr().lock();
    if !summary.selinux_seen && !opts.program_output {
        let _ = writeln!(err, "Nothing to do");
        return Ok(ExitCode::SUCCESS);
    }
    report_problems(&summary, &mut err);
    if let Some(path) = &a.output {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| CliError::file(path.display(), e))?;
        f.write_all(&text)
            .map_err(|e| CliError::file(path.display(), e))?;
    }
    if let Some(name) = &a.module_package {
        let name = ModuleName::parse(name).map_err(|e| e.to_string())?;
        let te = String::from_utf8(text).map_err(|e| e.to_string())?;
        let mls = package::kernel_mls_enabled();
        package::build(Path::new("."), &name, &te, mls).map_err(|e| match e {
            PackageError::Compile(_) | PackageError::Package(_) => format!("-M {e}"),
            e => e.to_string(),
        })?;
        out.write_all(package::activation_notice(&name).as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// An option `why` refuses.
#[derive(Debug, thiserror::Error)]
pub enum OptionError {
    /// An audit2allow option arbiter does not implement.
    #[error("why: audit2allow's {0} is not implemented by arbiter")]
    Unimplemented(&'static str),
    /// Options that make no sense together, or that audit2allow refuses together.
    #[error("why: {0}")]
    Conflict(&'static str),
}

/// audit2allow options arbiter does not implement: refused, never ignored.
fn refuse_unimplemented(a: &Args) -> Result<(), OptionError> {
    let refused = [
        (a.reference, "-R/--reference (refpolicy interface calls)"),
        (
            a.interface_info.is_some(),
            "--interface-info (refpolicy interface calls)",
        ),
        (
            a.perm_map.is_some(),
            "--perm-map (refpolicy interface calls)",
        ),
        (a.boot, "-b/--boot (audit messages since the last boot)"),
    ];
    match refused.iter().find(|(set, _)| *set) {
        Some((_, what)) => Err(OptionError::Unimplemented(what)),
        None => Ok(()),
    }
}

/// Combinations that make no sense (or that audit2allow refuses) are errors.
fn check_conflicts(a: &Args, generates: bool) -> Result<(), OptionError> {
    let has_files = !a.files.is_empty() || !a.input.is_empty();
    let conflicts = [
        (a.all && has_files, "-a/--all conflicts with -i/--input and FILE"),
        (a.all && a.dmesg, "-a/--all conflicts with -d/--dmesg"),
        (a.dmesg && has_files, "-d/--dmesg conflicts with -i/--input and FILE"),
        (
            a.module_package.is_some() && a.module.is_some(),
            "--module-package conflicts with --module",
        ),
        (
            a.module_package.is_some() && a.output.is_some(),
            "--module-package conflicts with --output",
        ),
        (
            a.module_package.is_some() && a.json,
            "--module-package writes a policy module, not JSON",
        ),
        (
            a.why && generates,
            "-w/--why (audit2why's report) conflicts with rule generation (--allow -m -M -r -D -x -v -e -o)",
        ),
        (
            a.explain && generates,
            "--explain explains audit2why reports; it does not apply to generated rules",
        ),
        (
            a.type_regex.is_some() && !generates,
            "-t/--type filters generated rules (audit2why's reports are not filtered): add --allow",
        ),
        (
            a.reference && a.noreference,
            "-R/--reference conflicts with -N/--noreference",
        ),
    ];
    match conflicts.iter().find(|(c, _)| *c) {
        Some((_, what)) => Err(OptionError::Conflict(what)),
        None => Ok(()),
    }
}

fn feed(session: &mut Session<'_>, input: &Input, out: &mut dyn Write) -> io::Result<()> {
    match input {
        Input::Files(files) => {
            for f in files {
                let name = Path::new(f).display().to_string();
                let named = |e: io::Error| io::Error::new(e.kind(), format!("{name}: {e}"));
                if f == "-" {
                    let bar = Bar::bytes("stdin", None);
                    session
                        .feed_with("-", bar.read(io::stdin().lock()), Newlines::Lf, &mut *out)
                        .map_err(named)?;
                } else {
                    let file = std::fs::File::open(f).map_err(named)?;
                    let bar = Bar::bytes(&name, progress::file_len(&file));
                    session
                        .feed(&name, BufReader::new(bar.read(file)), &mut *out)
                        .map_err(named)?;
                }
            }
        }
        Input::Program(program, args) => {
            // As sepolgen: standard output read whole, standard error passed through, the
            // exit status not looked at (ausearch exits 1 when nothing matches).
            let o = Command::new(program)
                .args(*args)
                .stdin(Stdio::null())
                .stderr(Stdio::inherit())
                .output()
                .map_err(|e| {
                    let hint = if *program == AUSEARCH {
                        " (Debian package auditd)"
                    } else {
                        ""
                    };
                    io::Error::new(e.kind(), format!("could not run {program}{hint}: {e}"))
                })?;
            session.feed_with(program, &o.stdout[..], Newlines::Lf, &mut *out)?;
        }
    }
    Ok(())
}

/// Every over-long line (whose content was not, or only in part, read), then the first
/// [`SHOWN_PROBLEMS`] other problems, then the counts.
fn report_problems(summary: &arbiter_denials::Summary, err: &mut impl Write) {
    let long = |p: &&arbiter_denials::Problem| {
        matches!(p.what, ProblemKind::Malformed(Malformed::TooLong { .. }))
    };
    for p in summary.problems.iter().filter(long) {
        let _ = writeln!(err, "arbiter why: {p}");
    }
    for p in summary
        .problems
        .iter()
        .filter(|p| !long(p))
        .take(SHOWN_PROBLEMS)
    {
        let _ = writeln!(err, "arbiter why: {p}");
    }
    let total = summary.malformed + summary.unknown;
    if total > 0 {
        let _ = writeln!(
            err,
            "arbiter why: {} record(s) read, {} line(s) unreadable, {} denial(s) not explained (names unknown to the policy){}",
            summary.records,
            summary.malformed,
            summary.unknown,
            if total as usize > SHOWN_PROBLEMS {
                format!("; every over-long line and the first {SHOWN_PROBLEMS} other problems shown")
            } else {
                String::new()
            }
        );
    }
}
