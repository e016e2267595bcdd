//! `semodule -B -n` for one store: read, compile, derive, install (see the crate docs).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arbiter_cil::{CilError, Compiled, Options, Source};

use crate::conf::{conf_path, SemanageConf};
use crate::error::StoreError;
use crate::fc::{parse_seusers, parse_users_extra, split_fc};
use crate::fccheck::{FcCheck, Unsure};
use crate::homedirs::{genhomedircon, Generated, HostAccounts, Inputs};
use crate::install::{spawn_prog, Running, Staging};
use crate::modules::{active_modules, check_cil, Module, ModulesChecksum};
use crate::readahead::ReadAhead;

/// What to build: the store `name` under `root` (`semodule -p ROOT -s NAME -B`).
#[derive(Clone, Debug, Default)]
pub struct StoreBuild {
    pub root: PathBuf,
    pub name: String,
    /// `semodule -D`: leave out dontaudit rules, and record it in the store's
    /// `disable_dontaudit` flag file. Without it, `semodule -B` builds with dontaudit rules
    /// and removes the flag file; so does this builder.
    pub disable_dontaudit: bool,
    /// `semodule -P`: tunables become booleans (flag file `preserve_tunables`, likewise
    /// removed when not asked for).
    pub preserve_tunables: bool,
}

/// What a successful build did.
#[derive(Clone, Debug, Default)]
pub struct BuildReport {
    /// The modules compiled, in order.
    pub modules: Vec<String>,
    /// Every file written, in the order they were renamed into place.
    pub written: Vec<PathBuf>,
    /// Messages libsemanage would print (genhomedircon's, the compiler's).
    pub warnings: Vec<String>,
    /// Why `setfiles -c` was run as a program: `None` when its passing verdict was
    /// reached in process (see [`crate::FcCheck`]), else the reason it was not (the
    /// check found something it leaves to setfiles, or `[setfiles]` is not the default).
    pub setfiles_run: Option<String>,
}

/// Customisation files (`semanage boolean -m` and friends) whose merge into `policy.kern`
/// this builder does not implement: a store holding one is refused rather than built
/// without it.
const LOCAL_FILES: &[&str] = &[
    "booleans.local",
    "ports.local",
    "interfaces.local",
    "nodes.local",
    "users.local",
    "users_extra.local",
    "seusers.local",
    "pkeys.local",
    "ibendports.local",
];

fn under(root: &Path, abs: &str) -> PathBuf {
    root.join(abs.trim_start_matches('/'))
}

/// Builds the store, reporting each phase to `progress`.
pub fn build_store(
    req: &StoreBuild,
    progress: &mut dyn FnMut(&str),
) -> Result<BuildReport, StoreError> {
    let conf = SemanageConf::load(&conf_path(&req.root))?;
    refuse_unsupported(&conf)?;
    let store_dir = under(&req.root, &conf.store_root).join(&req.name);
    let active = store_dir.join("active");
    if !active.is_dir() {
        return Err(StoreError::store(
            &active,
            "no module store here (is -p/-s right?)",
        ));
    }
    for f in LOCAL_FILES {
        let p = active.join(f);
        if p.metadata().is_ok_and(|m| m.len() > 0) {
            return Err(StoreError::Unsupported(format!(
                "{} holds local customisations; merging them into policy.kern is not implemented",
                p.display()
            )));
        }
    }
    progress("reading modules");
    let modules = active_modules(&active.join("modules"))?;
    if modules.is_empty() {
        return Err(StoreError::store(
            &active.join("modules"),
            "no enabled modules to build",
        ));
    }
    check_cil(&modules, &conf.compiler_directory)?;

    let opts = Options {
        target: conf.target_platform,
        policy_version: conf.policy_version,
        handle_unknown: conf.handle_unknown,
        disable_dontaudit: req.disable_dontaudit,
        preserve_tunables: req.preserve_tunables,
        disable_neverallow: conf.expand_check == 0,
        optimize: conf.optimize_policy,
        ..Options::default()
    };
    // semodule compiles from its sandbox copy (`<store>/tmp/modules/…`) and its messages
    // name that path.
    let names: Vec<String> = modules
        .iter()
        .map(|m| {
            store_dir
                .join("tmp/modules")
                .join(m.dir.strip_prefix(active.join("modules")).unwrap_or(&m.dir))
                .join("cil")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    progress(&format!("compiling {} modules", modules.len()));
    let (compiled, checksum) = compile_streamed(&modules, names, &opts)?;
    let mut warnings = compiled.warnings.clone();
    let (fc, homedir_template) = split_fc(&compiled.file_contexts);
    let fc_local_path = active.join("file_contexts.local");
    let fc_local = match std::fs::read(&fc_local_path) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(StoreError::io(&fc_local_path, e)),
    };

    // The installed policy under /etc/selinux/NAME. Its file_contexts is staged first so
    // that sefcontext_compile runs on it while the policy is written and genhomedircon
    // runs; every external program runs beside our own work and they are all waited for
    // before anything is installed (see `Programs`).
    let etc = under(&req.root, "/etc/selinux").join(&req.name);
    let files = etc.join("contexts/files");
    let mode = conf.file_mode;
    let mut st = Staging::default();
    let mut progs = Programs::default();
    let staged_fc = st.stage(&files.join("file_contexts"), &fc, mode)?;
    progs.compile(&conf, staged_fc, files.join("file_contexts.bin"))?;
    if let Some(local) = &fc_local {
        let s = st.stage(&files.join("file_contexts.local"), local, mode)?;
        progs.compile(&conf, s, files.join("file_contexts.local.bin"))?;
    }

    progress("writing");
    // The policy is written on a thread of its own while genhomedircon runs here: both
    // only read the compiled policy, and `setfiles -c` can start only when both are done.
    // `setfiles -c` is decided in process when it surely passes (see `fccheck`), on a
    // third thread from here on: file_contexts and .local now, .homedirs once
    // genhomedircon has produced it.
    let check_in_process = conf.setfiles.as_ref().is_some_and(default_setfiles);
    let (written, homedirs, checked) = std::thread::scope(|s| {
        let writer = std::thread::Builder::new()
            .name("policy-writer".into())
            .spawn_scoped(s, || arbiter_cil::write_policy(&compiled, &opts))
            .map_err(|e| StoreError::Internal(format!("cannot start the policy writer: {e}")))?;
        let checker = if check_in_process {
            let (policy, fc, local) = (&compiled.policy, &fc, fc_local.as_deref());
            std::thread::Builder::new()
                .name("fc-check".into())
                .spawn_scoped(s, move || {
                    let names = arbiter_decide::Names::new(policy);
                    let check = FcCheck {
                        policy,
                        names: &names,
                    };
                    let verdict = check.file("file_contexts", fc, true).and_then(|()| {
                        local.map_or(Ok(()), |l| check.file("file_contexts.local", l, false))
                    });
                    (names, verdict)
                })
                .ok()
        } else {
            None
        };
        let homedirs = homedirs(&conf, &compiled, &homedir_template, &fc);
        let checked = match (checker.map(|c| c.join()), &homedirs) {
            (Some(Ok((names, Ok(())))), Ok(h)) => {
                let check = FcCheck {
                    policy: &compiled.policy,
                    names: &names,
                };
                match h.as_ref().map(|g| &g.text) {
                    Some(text) => check.file("file_contexts.homedirs", text, false),
                    None => Ok(()),
                }
            }
            (Some(Ok((_, Err(unsure)))), _) => Err(unsure),
            (Some(Err(_)), _) => Err(Unsure("the in-process check panicked".into())),
            (_, Err(_)) => Err(Unsure("genhomedircon failed".into())),
            (None, _) if check_in_process => Err(Unsure("the check thread did not start".into())),
            (None, _) => Err(Unsure("[setfiles] is not the default program".into())),
        };
        let written = writer
            .join()
            .map_err(|_| StoreError::Internal("the policy writer panicked".into()))?;
        // The writer's error first, as when the two ran one after the other.
        Ok::<_, StoreError>((written?, homedirs?, checked))
    })?;
    warnings.extend(written.warnings);
    let policy_bytes = written.bytes;
    if conf.disable_genhomedircon {
        warnings.push("WARNING: genhomedircon is disabled. See /etc/selinux/semanage.conf if you need to enable it.".into());
    }
    let homedirs = homedirs.map(|g| {
        warnings.extend(g.warnings);
        g.text
    });
    if let Some(h) = &homedirs {
        let s = st.stage(&files.join("file_contexts.homedirs"), h, mode)?;
        progs.compile(&conf, s, files.join("file_contexts.homedirs.bin"))?;
    }
    let kern = st.stage(
        &etc.join(format!("policy/policy.{}", conf.policy_version)),
        &policy_bytes,
        mode,
    )?;
    let setfiles_run = match (&conf.setfiles, &checked) {
        (Some(_), Err(Unsure(why))) => Some(why.clone()),
        _ => None,
    };
    if let (Some(setfiles), Err(_)) = (&conf.setfiles, &checked) {
        // semodule validates the new file contexts against the new policy before installing
        // (`setfiles -c`, which reads file_contexts.homedirs and .local beside the file it
        // is given, as they are in semodule's sandbox). It gets copies in a directory of
        // their own: sefcontext_compile is writing `.bin` files beside the staged ones, and
        // libselinux would prefer a newer `.bin` to the text.
        let check = st.scratch_dir(&files, "check")?;
        let copy = |name: &str, bytes: &[u8]| {
            let p = check.join(name);
            std::fs::write(&p, bytes).map_err(|e| StoreError::io(&p, e))?;
            Ok::<PathBuf, StoreError>(p)
        };
        let check_fc = copy("file_contexts", &fc)?;
        if let Some(local) = &fc_local {
            copy("file_contexts.local", local)?;
        }
        if let Some(h) = &homedirs {
            copy("file_contexts.homedirs", h)?;
        }
        progs.setfiles = Some(spawn_prog(setfiles, &kern, &check_fc)?);
    }

    let commit_num = read_commit_num(&active.join("commit_num"))? + 1;
    let mut commit_buf = [0u8; 32];
    let digits = commit_num.to_string();
    commit_buf[..digits.len()].copy_from_slice(digits.as_bytes());

    // The active store (libsemanage writes these with umask 077), written while the
    // external programs run.
    let a = |n: &str| active.join(n);
    // semanage_direct_commit creates or removes the store flags to match the build.
    for (flag, on) in [
        ("disable_dontaudit", req.disable_dontaudit),
        ("preserve_tunables", req.preserve_tunables),
    ] {
        if on {
            st.stage(&a(flag), b"", 0o600)?;
        } else {
            st.remove_on_commit(&a(flag));
        }
    }
    st.stage(&a("modules_checksum"), &checksum, 0o600)?;
    st.stage(&a("file_contexts"), &fc, 0o600)?;
    st.stage(&a("homedir_template"), &homedir_template, 0o600)?;
    // With no selinuxuser/userprefix statements libsemanage writes no `.linked` file and
    // clears its database, whose flush writes the file as a bare header.
    let seusers = if compiled.seusers.is_empty() {
        DBASE_HEADER.to_vec()
    } else {
        st.stage(&a("seusers.linked"), &compiled.seusers, 0o600)?;
        compiled.seusers.clone()
    };
    st.stage(&a("seusers"), &seusers, 0o600)?;
    if compiled.users_extra.is_empty() {
        st.stage(&a("users_extra"), DBASE_HEADER, 0o600)?;
    } else {
        st.stage(&a("users_extra.linked"), &compiled.users_extra, 0o600)?;
        st.stage(&a("users_extra"), &compiled.users_extra, 0o600)?;
    }
    st.stage(&a("policy.linked"), &policy_bytes, 0o600)?;
    st.stage(&a("policy.kern"), &policy_bytes, 0o600)?;
    if let Some(h) = &homedirs {
        st.stage(&a("file_contexts.homedirs"), h, 0o600)?;
    }
    st.stage(&a("commit_num"), &commit_buf, 0o600)?;
    st.stage(&etc.join("seusers"), &seusers, mode)?;

    progress("installing");
    // Everything of ours is staged: it is flushed to disk while the programs finish.
    st.start_sync()?;
    progs.finish(&mut st, mode)?;
    let written = st.commit()?;
    Ok(BuildReport {
        modules: modules.iter().map(|m| m.name.clone()).collect(),
        written,
        warnings,
        setfiles_run,
    })
}

/// genhomedircon's `file_contexts.homedirs` text and warnings, or `None` when
/// semanage.conf disables it (the caller adds libsemanage's warning).
fn homedirs(
    conf: &SemanageConf,
    compiled: &Compiled,
    homedir_template: &[u8],
    fc: &[u8],
) -> Result<Option<Generated>, StoreError> {
    if conf.disable_genhomedircon {
        return Ok(None);
    }
    let seusers =
        parse_seusers(&String::from_utf8_lossy(&compiled.seusers)).map_err(StoreError::Homedirs)?;
    let extra = parse_users_extra(&String::from_utf8_lossy(&compiled.users_extra))
        .map_err(StoreError::Homedirs)?;
    genhomedircon(
        &Inputs {
            policy: &compiled.policy,
            homedir_template,
            // libsemanage's policy fcontext database: the store's file_contexts only.
            file_contexts: fc,
            seusers: &seusers,
            users_extra: &extra,
            usepasswd: conf.usepasswd,
            ignoredirs: conf.ignoredirs.as_deref(),
        },
        &HostAccounts::from_system(),
    )
    .map(Some)
    .map_err(StoreError::Homedirs)
}

/// Whether `[setfiles]` is semanage.conf's default (`/sbin/setfiles -q -c $@ $<`, or
/// `/usr/sbin` where `/sbin` has none) and that program exists: the check `fccheck` stands
/// in for. Anything else is run, whatever it is.
fn default_setfiles(prog: &crate::conf::ExternalProg) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let default = SemanageConf::default();
    default.setfiles.as_ref() == Some(prog)
        && std::fs::metadata(&prog.path)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The external programs a build runs, started as soon as their inputs are staged and
/// waited for together before anything is installed. semodule runs them one after
/// another (`setfiles -c`, then `sefcontext_compile` on file_contexts, .local, .homedirs)
/// and stops at the first failure; they read and write only staged or scratch copies, so
/// running them at once changes no output, and a failure is reported as semodule would
/// report it: the first in semodule's order.
#[derive(Default)]
struct Programs {
    setfiles: Option<Running>,
    /// `sefcontext_compile` runs in semodule's order, each with the `.bin` it writes
    /// beside its staged input and where that `.bin` is installed.
    compiles: Vec<(Running, PathBuf, PathBuf)>,
}

impl Programs {
    /// Starts `sefcontext_compile` (if configured) on a staged file_contexts file.
    fn compile(
        &mut self,
        conf: &SemanageConf,
        staged: PathBuf,
        dest: PathBuf,
    ) -> Result<(), StoreError> {
        let Some(prog) = &conf.sefcontext_compile else {
            return Ok(());
        };
        let run = spawn_prog(prog, &staged, Path::new(""))?;
        let bin = PathBuf::from(format!("{}.bin", staged.display()));
        self.compiles.push((run, bin, dest));
        Ok(())
    }

    /// Waits for every program and stages the `.bin` files they wrote; the first failure
    /// in semodule's order is the error (the programs not yet waited for are stopped).
    fn finish(self, st: &mut Staging, mode: u32) -> Result<(), StoreError> {
        if let Some(s) = self.setfiles {
            s.finish()?;
        }
        for (run, bin, dest) in self.compiles {
            run.finish()?;
            st.adopt(&bin, &dest, mode)?;
        }
        Ok(())
    }
}

/// How many decompressed modules may be held ahead of the compiler (decompressed or
/// being decompressed, not yet parsed): enough to keep every reader busy while one of
/// them holds the largest module (claimed first, see `ReadAhead`), few enough that the
/// texts in flight stay a few MB.
const READ_AHEAD: usize = 12;

/// At most this many reader threads (each decompresses one module at a time).
const MAX_READERS: usize = 4;

/// Compiles the modules' CIL as reader threads decompress them (every core, see
/// `ReadAhead`) and the compiler parses each in build order as it arrives. Each text is
/// shared with a thread that hashes it into `modules_checksum` and dropped once both are
/// done with it: SHA-256 over the 22.5 MB of Debian's store is about a tenth of the
/// build's CPU time, and on the compiler's thread it lengthened the path to the last
/// parse. Errors come in today's order: a module that cannot be read (missing, damaged
/// bzip2) wins over any compiler error, as when every module was read before compiling.
fn compile_streamed(
    modules: &[Module],
    names: Vec<String>,
    opts: &Options,
) -> Result<(Compiled, Vec<u8>), StoreError> {
    let mut read_err: Option<StoreError> = None;
    let ahead = ReadAhead::new(modules, READ_AHEAD);
    let readers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_READERS)
        .min(modules.len().max(1));
    std::thread::scope(|s| {
        for i in 0..readers {
            let started = std::thread::Builder::new()
                .name(format!("module-reader-{i}"))
                .spawn_scoped(s, || ahead.work());
            if let Err(e) = started {
                ahead.stop();
                if i == 0 {
                    return Err(StoreError::Internal(format!(
                        "cannot start a module reader: {e}"
                    )));
                }
                break;
            }
        }
        let (to_hash, hash_queue) = std::sync::mpsc::channel::<Arc<Source>>();
        let hasher = std::thread::Builder::new()
            .name("modules-checksum".into())
            .spawn_scoped(s, move || {
                let mut sum = ModulesChecksum::new(modules.len());
                for source in hash_queue {
                    sum.add(&source.text);
                }
                sum
            });
        let hasher = match hasher {
            Ok(h) => h,
            Err(e) => {
                ahead.stop();
                return Err(StoreError::Internal(format!(
                    "cannot start the checksum thread: {e}"
                )));
            }
        };
        let compiled = {
            let (ahead, read_err) = (&ahead, &mut read_err);
            let sources = names.into_iter().map(move |name| match ahead.next() {
                Some(Ok(text)) => {
                    let source = Arc::new(Source { name, text });
                    // The receiver lives until every sender is gone.
                    let _ = to_hash.send(Arc::clone(&source));
                    Ok(source)
                }
                Some(Err(e)) => Err(stop_compile(read_err, e)),
                None => Err(stop_compile(
                    read_err,
                    StoreError::Internal("the module readers stopped early".into()),
                )),
            });
            arbiter_cil::compile_each(sources, opts)
        };
        if compiled.is_err() && read_err.is_none() {
            // The compiler stopped before reading every module: a later unreadable module
            // is still the error to report.
            read_err = std::iter::from_fn(|| ahead.next()).find_map(Result::err);
        }
        ahead.stop();
        let sum = hasher
            .join()
            .map_err(|_| StoreError::Internal("the checksum thread panicked".into()))?;
        if let Some(e) = read_err {
            return Err(e);
        }
        let compiled = compiled?;
        if !sum.is_complete() {
            return Err(StoreError::Internal(
                "the compiler did not read every module".into(),
            ));
        }
        Ok((compiled, sum.finish()))
    })
}

/// Records a read failure and returns the error that stops the compiler (the recorded
/// error is the one reported).
fn stop_compile(slot: &mut Option<StoreError>, e: StoreError) -> CilError {
    let msg = e.to_string();
    *slot = Some(e);
    CilError {
        messages: vec![msg],
        status: 255,
    }
}

/// What libsemanage's file databases write above their records (`dbase_file_flush`).
const DBASE_HEADER: &[u8] =
    b"# This file is auto-generated by libsemanage\n# Do not edit directly.\n\n";

/// Settings that change what semodule does in ways this builder does not reproduce: each
/// is refused by name rather than built differently.
fn refuse_unsupported(conf: &SemanageConf) -> Result<(), StoreError> {
    let what = if conf.save_previous {
        "save-previous = true (keeping the old store as previous/)"
    } else if conf.ignore_module_cache {
        "ignore-module-cache = true (recompiling every module from its HLL source)"
    } else if !conf.verify_module.is_empty()
        || !conf.verify_linked.is_empty()
        || !conf.verify_kernel.is_empty()
    {
        "[verify …] blocks (running policy verifiers)"
    } else {
        return Ok(());
    };
    Err(StoreError::Unsupported(format!(
        "semanage.conf sets {what}"
    )))
}

/// libsemanage's `semanage_direct_get_serial`: the decimal number at the start of
/// `commit_num` (0 when missing or unreadable as a number).
fn read_commit_num(path: &Path) -> Result<u64, StoreError> {
    match std::fs::read(path) {
        Ok(b) => {
            let s = String::from_utf8_lossy(&b[..b.len().min(32)]);
            let s = s.trim_start();
            let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
            Ok(s[..end].parse().unwrap_or(0))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(StoreError::io(path, e)),
    }
}
