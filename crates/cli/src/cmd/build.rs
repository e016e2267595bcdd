//! `arbiter build`: secilc 3.4's command line (CIL files to a binary policy and
//! file_contexts), and `arbiter build --store`, which rebuilds a libsemanage module store as
//! `semodule -B -n` does (with semodule's `-p`, `-s`, `-n`, `-D`, `-P`). The work is in `arbiter-cil` and `arbiter-store`.
//!
//! secilc mode follows secilc's option parsing (GNU `getopt_long` with the option string
//! `o:f:U:hvt:M:PQDmNOc:GX:n`): usage on stdout and exit 1 for `-h`, a bad option value
//! or no input file; an unknown option is only complained about and the build goes on, as
//! in secilc; compiler failures exit with secilc's status (255, or 254 for unresolved
//! names). Outputs are written to temporary files and renamed once both are complete.

use crate::out::progress::Bar;
use crate::out::{CliError, Out};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use arbiter_cil::{Options, Source, Target};
use arbiter_policy::HandleUnknown;

#[derive(clap::Args)]
#[command(disable_help_flag = true)]
pub struct Args {
    /// secilc's options and CIL files, or `--store [-p ROOT] [-s NAME] -n`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    args: Vec<std::ffi::OsString>,
}

impl Args {
    /// The words after `build`, as clap would have collected them (`main` skips clap's
    /// parse for `build`).
    pub fn from_words(args: Vec<std::ffi::OsString>) -> Args {
        Args { args }
    }
}

const PROG: &str = "arbiter build";

fn usage(out: &mut Out) -> ExitCode {
    // A failed write is kept by `Out` and decides the exit status in `out::finish`.
    let _ = write!(
        out,
        "Usage: {PROG} [OPTION]... FILE...

Options:
  -o, --output=<file>            write binary policy to <file>
                                 (default: policy.<version>)
  -f, --filecontext=<file>       write file contexts to <file>
                                 (default: file_contexts)
  -t, --target=<type>            specify target architecture. may be selinux or
                                 xen. (default: selinux)
  -M, --mls true|false           build an mls policy. Must be true or false.
                                 This will override the (mls boolean) statement
                                 if present in the policy
  -c, --policyvers=<version>     build a binary policy with a given <version>
                                 (default: 33)
  -U, --handle-unknown=<action>  how to handle unknown classes or permissions.
                                 may be deny, allow, or reject. (default: deny)
                                 This will override the (handleunknown action)
                                 statement if present in the policy
  -D, --disable-dontaudit        do not add dontaudit rules to the binary policy
  -P, --preserve-tunables        treat tunables as booleans
  -Q, --qualified-names          Allow names containing dots (qualified names).
                                 Blocks, blockinherits, blockabstracts, and
                                 in-statements will not be allowed.
  -m, --multiple-decls           allow some statements to be re-declared
  -N, --disable-neverallow       do not check neverallow rules
  -G, --expand-generated         Expand and remove auto-generated attributes
  -X, --expand-size <SIZE>       Expand type attributes with fewer than <SIZE>
                                 members.
  -O, --optimize                 optimize final policy
  -v, --verbose                  increment verbosity level
  -h, --help                     display usage information
"
    );
    ExitCode::from(1)
}

/// `arbiter build --store -h`.
fn store_usage(out: &mut Out) -> ExitCode {
    let _ = write!(
        out,
        "Usage: {PROG} --store [-p ROOT] [-s NAME] [-D] [-P] -n

Rebuilds a libsemanage module store as `semodule -p ROOT -s NAME -B -n` does, writing the
same files; never loads the policy into the kernel.

Options:
  -p, --path=<root>              alternate root (default: /)
  -s, --store=<name>             store name (default: SELINUXTYPE of /etc/selinux/config)
  -n, --noreload                 required: arbiter never loads a policy
  -B, --build                    accepted (store mode always rebuilds)
  -D, --disable_dontaudit        remove dontaudits from the policy (semodule -D)
  -P, --preserve_tunables        preserve tunables in the policy (semodule -P)
  -h, --help                     display usage information
"
    );
    ExitCode::from(1)
}

pub fn run(a: Args, out: &mut Out) -> Result<ExitCode, CliError> {
    // clap swallows a first `--`, which getopt must see (`-- -N` names a file `-N`): the
    // words after the subcommand are taken from the process's own argument list.
    // Paths need not be UTF-8: such words reach getopt as placeholders and are turned back
    // into their bytes where they are used as paths (crate::args).
    let words: Vec<std::ffi::OsString> = std::env::args_os()
        .skip(1)
        .skip_while(|w| w != "build")
        .skip(1)
        .collect();
    let argv = if words.len() >= a.args.len() {
        crate::args::Args::new(words)
    } else {
        crate::args::Args::new(a.args)
    };
    // Before any thread starts: see `malloc_tuning` (15 MB of peak RSS in store mode).
    crate::malloc_tuning::fix_mmap_threshold();
    if argv.strings.iter().any(|s| s == "--store") {
        return Ok(run_store(&argv, out));
    }
    // The compile's small blocks from size classes on this thread (see `arena`).
    crate::arena::enable();
    Ok(run_secilc(&argv, out))
}

/// The largest CIL file read (secilc reads whole files too; Debian's largest module is
/// under 2 MB and its whole store 22.5 MB): a bound on memory for hostile inputs and
/// endless pipes.
const MAX_CIL_FILE: u64 = 1 << 30;

/// Reads one CIL input to its end (files, pipes and process substitution alike).
fn read_cil(path: &std::ffi::OsStr) -> std::io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    // A regular file's size sizes the buffer at once (a growing one cost the Debian store
    // 3,300 reallocations, 9.8 M instructions of copies); pipes report 0 and grow. No
    // BufReader: reading to the end into one buffer gains nothing from a second one.
    let size = file
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map_or(0, |m| m.len());
    arbiter_io::read_to_end_bounded_sized(file, MAX_CIL_FILE, size)
}

/// The options secilc takes, with whether each needs an argument.
const SHORT: &[(char, bool)] = &[
    ('o', true),
    ('f', true),
    ('U', true),
    ('h', false),
    ('v', false),
    ('t', true),
    ('M', true),
    ('P', false),
    ('Q', false),
    ('D', false),
    ('m', false),
    ('N', false),
    ('O', false),
    ('c', true),
    ('G', false),
    ('X', true),
    ('n', false),
];
const LONG: &[(&str, char, bool)] = &[
    ("help", 'h', false),
    ("verbose", 'v', false),
    ("target", 't', true),
    ("mls", 'M', true),
    ("policyversion", 'c', true),
    ("handle-unknown", 'U', true),
    ("disable-dontaudit", 'D', false),
    ("multiple-decls", 'm', false),
    ("disable-neverallow", 'N', false),
    ("preserve-tunables", 'P', false),
    ("qualified-names", 'Q', false),
    ("output", 'o', true),
    ("filecontexts", 'f', true),
    ("expand-generated", 'G', false),
    ("expand-size", 'X', true),
    ("optimize", 'O', false),
];

/// One parsed option: its letter and argument; `None` for getopt's `?` (already reported).
type Opt = Option<(char, Option<String>)>;

/// GNU `getopt_long` with argument permutation: options anywhere, `--` ends them, long
/// names may be abbreviated while unambiguous. Returns the options in order and the
/// operands.
fn getopt(
    args: &[String],
    short: &[(char, bool)],
    long: &[(&str, char, bool)],
) -> (Vec<Opt>, Vec<String>) {
    let (mut opts, mut operands) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            operands.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(body) = a.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let exact = long.iter().find(|l| l.0 == name);
            let matches: Vec<_> = long.iter().filter(|l| l.0.starts_with(name)).collect();
            let found = exact.or(if matches.len() == 1 {
                Some(matches[0])
            } else {
                None
            });
            let Some(&(lname, c, has_arg)) = found else {
                if matches.len() > 1 {
                    let names: Vec<String> =
                        matches.iter().map(|l| format!("'--{}'", l.0)).collect();
                    crate::diag!(
                        "{PROG}: option '--{name}' is ambiguous; possibilities: {}",
                        names.join(" ")
                    );
                } else {
                    crate::diag!("{PROG}: unrecognized option '{a}'");
                }
                opts.push(None);
                continue;
            };
            if has_arg {
                let v = inline.or_else(|| {
                    let v = args.get(i).cloned();
                    i += 1;
                    v
                });
                match v {
                    Some(v) => opts.push(Some((c, Some(v)))),
                    None => {
                        crate::diag!("{PROG}: option '--{lname}' requires an argument");
                        opts.push(None);
                    }
                }
            } else if inline.is_some() {
                crate::diag!("{PROG}: option '--{lname}' doesn't allow an argument");
                opts.push(None);
            } else {
                opts.push(Some((c, None)));
            }
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let chars: Vec<char> = a[1..].chars().collect();
            let mut j = 0;
            while j < chars.len() {
                let c = chars[j];
                j += 1;
                match short.iter().find(|s| s.0 == c) {
                    None => {
                        crate::diag!("{PROG}: invalid option -- '{c}'");
                        opts.push(None);
                    }
                    Some(&(_, false)) => opts.push(Some((c, None))),
                    Some(&(_, true)) => {
                        let rest: String = chars[j..].iter().collect();
                        j = chars.len();
                        let v = if !rest.is_empty() {
                            Some(rest)
                        } else {
                            let v = args.get(i).cloned();
                            i += 1;
                            v
                        };
                        match v {
                            Some(v) => opts.push(Some((c, Some(v)))),
                            None => {
                                crate::diag!("{PROG}: option requires an argument -- '{c}'");
                                opts.push(None);
                            }
                        }
                    }
                }
            }
            continue;
        }
        operands.push(a.clone());
    }
    (opts, operands)
}

/// C's `strtol` accepting the whole string (secilc rejects trailing text).
fn whole_number(s: &str) -> Option<i64> {
    let t = s.trim_start();
    if t.is_empty() {
        return None;
    }
    t.parse::<i64>().ok()
}

fn run_secilc(argv: &crate::args::Args, out: &mut Out) -> ExitCode {
    let (opts, files) = getopt(&argv.strings, SHORT, LONG);
    let mut o = Options::default();
    let (mut output, mut fc_out): (Option<String>, Option<String>) = (None, None);
    for opt in opts.into_iter().flatten() {
        let (c, v) = opt;
        let v = v.unwrap_or_default();
        match c {
            'v' => o.verbose = o.verbose.saturating_add(1),
            't' => match v.as_str() {
                "selinux" => o.target = Target::Selinux,
                "xen" => o.target = Target::Xen,
                _ => {
                    crate::diag!("Unknown target: {v}");
                    return usage(out);
                }
            },
            'M' => match v.to_ascii_lowercase().as_str() {
                "true" | "1" => o.mls = Some(true),
                "false" | "0" => o.mls = Some(false),
                _ => return usage(out),
            },
            'c' => {
                let Some(n) = whole_number(&v) else {
                    crate::diag!("Bad policy version: {v}");
                    return usage(out);
                };
                if !(15..=33).contains(&n) {
                    crate::diag!("Policy version must be between 15 and 33");
                    return usage(out);
                }
                o.policy_version = n as u32;
            }
            'U' => match v.to_ascii_lowercase().as_str() {
                "deny" => o.handle_unknown = Some(HandleUnknown::Deny),
                "allow" => o.handle_unknown = Some(HandleUnknown::Allow),
                "reject" => o.handle_unknown = Some(HandleUnknown::Reject),
                _ => return usage(out),
            },
            'D' => o.disable_dontaudit = true,
            'm' => o.multiple_decls = true,
            'N' => o.disable_neverallow = true,
            'P' => o.preserve_tunables = true,
            'Q' => o.qualified_names = true,
            'o' => output = Some(v),
            'f' => fc_out = Some(v),
            'G' => o.expand_generated = true,
            'X' => {
                let Some(n) = whole_number(&v) else {
                    crate::diag!("Bad attribute expand size: {v}");
                    return usage(out);
                };
                if n < 0 {
                    crate::diag!("Attribute expand size must be > 0");
                    return usage(out);
                }
                o.expand_size = n.min(u32::MAX as i64) as u32;
            }
            'O' => o.optimize = true,
            'h' => return usage(out),
            _ => {
                // `-n`: in secilc's option string without a handler.
                crate::diag!("Unsupported option: (null)");
                return usage(out);
            }
        }
    }
    if files.is_empty() {
        crate::diag!("No cil files specified");
        return usage(out);
    }
    let bar = Bar::steps(PROG);
    bar.step("reading and compiling CIL");
    // Each file is read when the compiler asks for it and dropped once parsed (secilc's
    // order too: a file that cannot be read stops the build after the ones before it).
    let sources = files.iter().filter_map(|f| match read_cil(argv.path(f)) {
        // secilc skips empty files.
        Ok(text) if text.is_empty() => None,
        Ok(text) => Some(Ok(Source {
            name: argv.display(f),
            text,
        })),
        Err(e) if e.get_ref().is_some_and(|i| i.is::<arbiter_io::TooLarge>()) => {
            Some(Err(arbiter_cil::CilError {
                messages: vec![format!("{}: {e}", argv.display(f))],
                status: 255,
            }))
        }
        Err(_) => Some(Err(arbiter_cil::CilError {
            messages: vec![format!("Could not open file: {}", argv.display(f))],
            status: 255,
        })),
    });
    // On this (the main) thread when its stack may grow far enough: no compiler thread to
    // start and wait for, and the compile's memory comes from the main heap.
    let compiled = if crate::stack::main_stack_allows(arbiter_cil::IN_PLACE_STACK) {
        arbiter_cil::compile_each_in_place(sources, &o)
    } else {
        arbiter_cil::compile_each(sources, &o)
    };
    let compiled = match compiled {
        Ok(c) => c,
        Err(e) => {
            for m in &e.messages {
                crate::diag!("{m}");
            }
            return ExitCode::from(e.status);
        }
    };
    for w in &compiled.warnings {
        crate::diag!("{w}");
    }
    bar.step("writing the binary policy");
    let bytes = match arbiter_cil::write_policy(&compiled, &o) {
        Ok(w) => {
            for m in &w.warnings {
                crate::diag!("{m}");
            }
            w.bytes
        }
        Err(e) => {
            for m in &e.messages {
                crate::diag!("{m}");
            }
            return ExitCode::from(e.status);
        }
    };
    bar.step("writing the files");
    let output = output.unwrap_or_else(|| format!("policy.{}", o.policy_version));
    let fc_out = fc_out.unwrap_or_else(|| "file_contexts".into());
    let (output, fc_out) = (Path::new(argv.path(&output)), Path::new(argv.path(&fc_out)));
    let (policy_dest, fc_dest) = (Destination::of(output), Destination::of(fc_out));
    let policy_tmp = match policy_dest.stage(&bytes) {
        Ok(p) => p,
        Err(_) => {
            crate::diag!("Failure opening binary file for writing");
            return ExitCode::from(255);
        }
    };
    let fc_tmp = match fc_dest.stage(&compiled.file_contexts) {
        Ok(p) => p,
        Err(_) => {
            if let Some(t) = &policy_tmp {
                let _ = std::fs::remove_file(t);
            }
            crate::diag!("Failure opening file contexts file for writing");
            return ExitCode::from(255);
        }
    };
    let staged = [
        (&policy_tmp, &policy_dest, &bytes[..], output),
        (&fc_tmp, &fc_dest, &compiled.file_contexts[..], fc_out),
    ];
    for (tmp, dest, data, shown) in staged {
        if let Err(e) = dest.commit(tmp.as_deref(), data) {
            for t in [&policy_tmp, &fc_tmp].into_iter().flatten() {
                let _ = std::fs::remove_file(t);
            }
            crate::diag!("{}: {e}", shown.display());
            return ExitCode::from(255);
        }
    }
    // Both files are complete and in place and the process ends next: freeing the
    // policy's tables one allocation at a time would only delay the exit (about 2 % of
    // the instructions of a small build), so they are left to it.
    std::mem::forget(compiled);
    std::mem::forget(bytes);
    ExitCode::SUCCESS
}

/// Where an output goes. A regular file (or a path that does not exist yet) is replaced
/// atomically: the bytes go to a temporary file beside it, renamed over it once complete, so
/// a failure leaves the old file as it was; through a symbolic link, the file the link names
/// is replaced and the link kept (as secilc's `fopen` writes through it). Anything else that
/// exists — `/dev/null`, `/dev/stdout`, a FIFO — is written in place: renaming over it would
/// replace the device or pipe itself with a regular file.
enum Destination {
    /// Replace this regular file (the link's target when the path was a link).
    Replace(PathBuf),
    /// Write into this special file as it is.
    InPlace(PathBuf),
}

impl Destination {
    fn of(path: &Path) -> Destination {
        match std::fs::metadata(path) {
            Ok(m) if !m.is_file() => Destination::InPlace(path.to_path_buf()),
            Ok(_) => Destination::Replace(
                std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
            ),
            Err(_) => Destination::Replace(path.to_path_buf()),
        }
    }

    /// Prepares the write: the temporary file, complete, for a replacement; nothing for an
    /// in-place write (its failures show in [`Destination::commit`]).
    fn stage(&self, bytes: &[u8]) -> std::io::Result<Option<PathBuf>> {
        match self {
            Destination::Replace(dest) => write_temp(dest, bytes).map(Some),
            Destination::InPlace(_) => Ok(None),
        }
    }

    /// Puts the bytes in place: renames the staged file over the destination, or writes
    /// them into the special file.
    fn commit(&self, staged: Option<&Path>, bytes: &[u8]) -> std::io::Result<()> {
        match (self, staged) {
            (Destination::Replace(dest), Some(tmp)) => std::fs::rename(tmp, dest),
            (Destination::InPlace(dest), _) => std::fs::OpenOptions::new()
                .write(true)
                .open(dest)
                .and_then(|mut f| f.write_all(bytes).and_then(|()| f.flush())),
            (Destination::Replace(_), None) => Err(std::io::Error::other("nothing staged")),
        }
    }
}

/// Writes `bytes` to a new temporary file beside `dest` (mode 0644 as secilc's `fopen`
/// under the usual umask) and returns its path.
///
/// Not synced to disk: secilc's `fopen`/`fwrite`/`fclose` gives no durability either, and
/// an `fsync` per output was most of the gap between this process's wall time and its CPU
/// time on a small policy (a wait of 1–13 ms each on an ext4 root). What the rename
/// guarantees is kept: a reader sees the old file or the complete new one, never a partial
/// one, and a failure leaves the old file as it was. (`build --store`, which replaces the
/// store a running system boots from, syncs its files before renaming them.)
fn write_temp(dest: &Path, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let dir = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = dest.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.arbiter-tmp.{}", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)?;
    let r = f.write_all(bytes);
    if let Err(e) = r {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(tmp)
}

/// SELINUXTYPE from `/etc/selinux/config` (libselinux's default store name).
fn default_store_name() -> String {
    std::fs::read_to_string("/etc/selinux/config")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.trim()
                    .strip_prefix("SELINUXTYPE=")
                    .map(|v| v.trim().to_string())
            })
        })
        .unwrap_or_else(|| "default".into())
}

fn run_store(argv: &crate::args::Args, out: &mut Out) -> ExitCode {
    let rest: Vec<String> = argv
        .strings
        .iter()
        .filter(|a| *a != "--store")
        .cloned()
        .collect();
    let (opts, operands) = getopt(
        &rest,
        &[
            ('p', true),
            ('s', true),
            ('n', false),
            ('B', false),
            ('D', false),
            ('P', false),
            ('h', false),
        ],
        &[
            ("path", 'p', true),
            ("store", 's', true),
            ("noreload", 'n', false),
            ("build", 'B', false),
            ("disable_dontaudit", 'D', false),
            ("preserve_tunables", 'P', false),
            ("help", 'h', false),
        ],
    );
    let (mut root, mut name, mut noreload) = (PathBuf::from("/"), None, false);
    let (mut disable_dontaudit, mut preserve_tunables) = (false, false);
    for opt in opts {
        match opt {
            Some(('p', Some(v))) => root = PathBuf::from(argv.path(&v)),
            Some(('s', Some(v))) => name = Some(v),
            Some(('n', _)) => noreload = true,
            // `-B` is what store mode does anyway; accepted so semodule's line works.
            Some(('B', _)) => {}
            Some(('D', _)) => disable_dontaudit = true,
            Some(('P', _)) => preserve_tunables = true,
            _ => return store_usage(out),
        }
    }
    if !operands.is_empty() {
        crate::diag!("{PROG}: --store takes no files (found `{}`)", operands[0]);
        return store_usage(out);
    }
    if !noreload {
        crate::diag!("{PROG}: --store needs -n: arbiter builds the store's files but never loads a policy into the kernel");
        return ExitCode::from(1);
    }
    let req = arbiter_store::StoreBuild {
        root,
        name: name.unwrap_or_else(default_store_name),
        disable_dontaudit,
        preserve_tunables,
    };
    let bar = Bar::steps(PROG);
    let result = arbiter_store::build_store(&req, &mut |phase: &str| bar.step(phase.to_string()));
    drop(bar);
    match result {
        Ok(report) => {
            for w in &report.warnings {
                crate::diag!("{w}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            crate::diag!("{e}");
            match e {
                arbiter_store::StoreError::Compile(c) => ExitCode::from(c.status),
                _ => ExitCode::from(255),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn getopt_permutes_operands_and_splits_clusters() {
        let (o, f) = getopt(
            &s(&[
                "a.cil", "-NMtrue", "-o", "out", "b.cil", "--pol=31", "--", "-x",
            ]),
            SHORT,
            LONG,
        );
        assert_eq!(f, s(&["a.cil", "b.cil", "-x"]));
        let o: Vec<_> = o.into_iter().flatten().collect();
        assert_eq!(o[0], ('N', None));
        assert_eq!(o[1], ('M', Some("true".into())));
        assert_eq!(o[2], ('o', Some("out".into())));
        assert_eq!(o[3], ('c', Some("31".into())));
    }

    #[test]
    fn unknown_option_is_reported_not_fatal() {
        let (o, f) = getopt(&s(&["-z", "x.cil"]), SHORT, LONG);
        assert_eq!(o, vec![None]);
        assert_eq!(f, s(&["x.cil"]));
    }
}
