//! The CIL compiler: CIL source text (the SELinux Common Intermediate Language, as
//! `secilc` and `semodule` compile it) to an [`arbiter_policy::Policy`], plus the text
//! outputs secilc writes beside it (`file_contexts`, and semodule's `seusers` and
//! `users_extra`). It reproduces libsepol 3.4 (Debian 12's secilc): the same symbol values,
//! the same rules in the same list orders, the same accept/reject decisions and exit
//! statuses, the same messages where they matter (file and line of the failing statement).
//!
//! ```no_run
//! use arbiter_cil::{compile, Options, Source};
//! let sources = vec![Source { name: "base.cil".into(), text: std::fs::read("base.cil")? }];
//! let opts = Options { disable_neverallow: true, ..Options::default() }; // secilc -N
//! match compile(&sources, &opts) {
//!     Ok(out) => println!("{} types", out.policy.types.len()),
//!     Err(e) => {
//!         eprintln!("{e}");
//!         std::process::exit(e.status.into());
//!     }
//! }
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! [`write_policy`] writes the result as secilc does (the policy writer's libsepol-3.4
//! layout with [`CIL_AVTAB_SLOTS`], at the `-c` version, with libsepol's warnings for what
//! that version drops); its bytes equal secilc's. The [`Policy`] `compile` returns already
//! holds every list in the order libsepol writes it (the unconditional table in hash-slot order, conditional nodes newest
//! first, role transitions and allows reversed, object contexts sorted).
//!
//! # How it works
//!
//! A pipeline of small passes over dense data (the brief `cil.md` is the reference):
//!
//! 1. **parse** (`parse`): every file is lexed and parsed into one flat arena of lists
//!    whose elements are list indexes or interned identifiers (`u32` each); nesting stops
//!    at libsepol's 4,096 levels with its message (no recursion).
//! 2. **ast** (`ast`, `blocks`): the block structure first (`blocks`: every block as
//!    written, the targets of `in`, `blockinherit`, `blockabstract` and the inheritance-loop
//!    check, as libsepol's passes before any copy exists decide them); then statements in
//!    walk order with their enclosing optional, booleanif and namespace (scope);
//!    blockinherit copies and macro call bodies are walked at the statement's place, `in`
//!    bodies at the end of their block (latest first), so walk order is libsepol's value
//!    order (cil.md §1.1). Declarations enter the symbol tables (re-declarations fail
//!    here), names in blocks as `block.name`; chosen `tunableif` branches are appended to
//!    their container as libsepol copies them.
//! 3. **qualify** (`qualify`, only when the input has blocks or macros): every statement
//!    in a block or a call body is replaced by a copy whose names are the qualified names
//!    they find in libsepol's lookup order (cil.md §5.4), and macro parameters by the
//!    call's arguments (anonymous ones as qualified copies); the later passes then see one
//!    global namespace.
//! 4. **resolve** (`resolve`): every name of every statement is looked up; an optional
//!    holding an unresolvable name is disabled, which removes its declarations, until a
//!    fixpoint (libsepol's reset-and-retry loop); outside optionals it is fatal (exit 254).
//!    With blocks or macros, a round that disables optionals re-runs **qualify** without
//!    their declarations (names then find outer ones, as libsepol's reset does) and
//!    resolves again, until the disabled set stops growing.
//! 5. **lower** (`lower`): symbol values in libsepol 3.4's orders, attribute sets and the
//!    kept-attribute decision, av/type/xperm rules, conditionals (node sharing by truth
//!    table), constraints, role and range transitions, verification of users and contexts,
//!    object contexts sorted with glibc's merge sort, and the text outputs.
//! 6. **check** (`check`, without `-N`): on the finished policy, as secilc runs them:
//!    `neverallow` and `neverallowx` (libsepol's `check_assertion`, one check per
//!    extended-permission entry), then user, role and type bounds (`hierarchy.c`), every
//!    violation reported with the CIL rules that grant it and their enclosing blocks,
//!    calls, optionals and booleanif branches. The bounds statements themselves (no
//!    attribute, one parent, no loop) are checked with or without `-N`.
//! 7. **optimise** (with `-O`): `arbiter_policy::optimize::optimize`, libsepol's
//!    `policydb_optimize` over secilc's avtab size.
//!
//! Set `ARBITER_CIL_TIMES=1` to have each phase's wall time and the peak RSS so far printed
//! on stderr. On Debian's default module store (314 files, 22.5 MB) `arbiter build -N`
//! takes about 0.2 s of CPU, 0.80 G instructions and 44 MB against secilc's 5.6 s and
//! 183 MB (see `scripts/bench-build.sh` and docs/building.md); [`compile_each`] keeps only
//! one file's text in memory at a time.
//!
//! # What is supported
//!
//! Types, attributes (`typeattributeset` expressions with `and or xor not all`),
//! `expandtypeattribute`, aliases, `typebounds`, `typepermissive`; roles, role attributes,
//! `roletype`, `roleallow`, `roletransition`, `rolebounds`; users, `userrole`,
//! `userlevel`, `userrange`, `userbounds`, `userattribute`/`userattributeset`, `userprefix`, `selinuxuser`,
//! `selinuxuserdefault`; classes, commons, `classorder` (with `unordered`), `classcommon`,
//! `classpermission`/`classpermissionset`, `classmap`/`classmapping`; booleans and
//! `booleanif`, tunables and `tunableif` (and `-P`); `optional`; sensitivities, categories,
//! aliases, orders, `sensitivitycategory`, `categoryset`, named and anonymous levels, ranges
//! and contexts, `mls`; `allow`/`auditallow`/`dontaudit`/`neverallow`, `allowx`/
//! `auditallowx`/`dontauditx`/`neverallowx` with `permissionx`; `typetransition` (named too),
//! `typechange`, `typemember`, `rangetransition`; `constrain`, `mlsconstrain`,
//! `validatetrans`, `mlsvalidatetrans`; `defaultuser/role/type/range`; `sid`, `sidorder`,
//! `sidcontext`; `filecon`, `portcon`, `genfscon`, `fsuse`, `netifcon`, `nodecon`,
//! `ipaddr`, `ibpkeycon`, `ibendportcon`, Xen's `pirqcon`, `iomemcon`, `ioportcon`,
//! `pcidevicecon`, `devicetreecon` (written by `-t xen`); `policycap`,
//! `handleunknown`. Options: `-M`,
//! `-U`, `-D`, `-P`, `-N`, `-G`, `-X`, `-O`, `-c`, `-m` (for `type`/`typeattribute`).
//!
//! Namespaces: `block` (names `a.b.name`, dotted and `.`-rooted references, lookup up
//! the enclosing blocks then global), `in` (also `before`/`after`), `blockinherit`
//! (copies at the statement's place, inheritance loops refused as secilc does),
//! `blockabstract`, `macro` and `call` (parameters `type role user sensitivity category
//! categoryset level levelrange class classmap classpermission ipaddr boolean
//! string name`, anonymous arguments, body declarations in the caller's namespace,
//! recursion refused).
//!
//! Blocks and macros may sit in `in` bodies (declared in the target block, and copied with
//! it for in-before bodies) and in `tunableif` branches (the chosen branch joins its
//! container); a `blockabstract` inside an inherited block is left out of the copies, as
//! libsepol leaves it. What libsepol 3.4 cannot copy fails as it fails: an `in` inside a
//! chosen tunableif branch or inside a block that is inherited.
//!
//! Xen's object contexts
//! (`pirqcon`, `iomemcon`, `ioportcon`, `pcidevicecon`, `devicetreecon`) are accepted in a
//! SELinux policy as secilc accepts them there (numbers parsed, contexts verified,
//! duplicates refused at `-v`) and, as there, not written; `-t xen` writes them (versions
//! 24 and 30 only, as libsepol), and refuses Linux object contexts, which libsepol would
//! write into the Xen tables of the same index. Not yet as secilc (failing, never a
//! silently different policy): at `-v`, duplicate context rules
//! are refused as secilc 3.4 refuses them, but the message does not list their locations.
//!
//! Error messages follow secilc's for parse errors, unresolved names, re-declarations,
//! context verification, the neverallow, neverallowx and bounds reports (line for line)
//! and the bounds statements' errors; other errors say what is wrong in our own words,
//! with secilc's exit status.

// One `unsafe` block: the lexer's SSE2 classifier (`parse::stops16`), called where
// the build enables SSE2; everything else stays safe.
#![deny(unsafe_code)]

mod ast;
mod bits;
mod blocks;
mod check;
mod intern;
mod kw;
mod lower;
mod msort;
mod optional_log;
mod parse;
mod progress;
mod qualify;
mod resolve;
mod write;
mod xencon;

pub use write::{write_policy, WrittenPolicy};

use arbiter_policy::{HandleUnknown, Policy};

/// The number of avtab slots secilc 3.4 allocates (`MAX_AVTAB_SIZE` rules give 2^20 slots),
/// whatever the policy's size: the written order of the avtab depends on it.
pub const CIL_AVTAB_SLOTS: u32 = 1 << 20;

/// One input file: the name shown in messages (secilc shows the path it was given;
/// `semodule` the module's store path) and its bytes.
#[derive(Clone, Debug)]
pub struct Source {
    pub name: String,
    pub text: Vec<u8>,
}

/// Which kind of policy to build (`secilc -t`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Target {
    #[default]
    Selinux,
    Xen,
}

/// secilc's options, one field each (`secilc --help`).
#[derive(Clone, Debug)]
pub struct Options {
    /// `-t`
    pub target: Target,
    /// `-M`: force MLS on or off over the policy's `(mls …)` statement.
    pub mls: Option<bool>,
    /// `-c`: the format version to write (15..=33); part of the options because it changes
    /// what the compiler keeps.
    pub policy_version: u32,
    /// `-U`: overrides `handleunknown`.
    pub handle_unknown: Option<HandleUnknown>,
    /// `-D`
    pub disable_dontaudit: bool,
    /// `-P`
    pub preserve_tunables: bool,
    /// `-Q`
    pub qualified_names: bool,
    /// `-m`
    pub multiple_decls: bool,
    /// `-N`: skip neverallow and bounds checks.
    pub disable_neverallow: bool,
    /// `-G`
    pub expand_generated: bool,
    /// `-X`
    pub expand_size: u32,
    /// `-O`
    pub optimize: bool,
    /// `-v` count (0 = errors only).
    pub verbose: u8,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            target: Target::Selinux,
            mls: None,
            policy_version: 33,
            handle_unknown: None,
            disable_dontaudit: false,
            preserve_tunables: false,
            qualified_names: false,
            multiple_decls: false,
            disable_neverallow: false,
            expand_generated: false,
            expand_size: 1,
            optimize: false,
            verbose: 0,
        }
    }
}

/// What a successful compilation produces.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The policy, its lists in libsepol 3.4's order (write it with the writer's libsepol
    /// layout and [`CIL_AVTAB_SLOTS`] to get secilc's bytes).
    pub policy: Policy,
    /// `secilc -f`'s text.
    pub file_contexts: Vec<u8>,
    /// libsepol's `cil_selinuxusers_to_string` text (semodule's `seusers`).
    pub seusers: Vec<u8>,
    /// libsepol's `cil_userprefixes_to_string` text (semodule's `users_extra`).
    pub users_extra: Vec<u8>,
    /// Messages secilc prints on stderr for a successful build at this verbosity.
    pub warnings: Vec<String>,
}

/// Why a compilation failed: the messages secilc would print and its exit status.
#[derive(Debug, thiserror::Error)]
#[error("{}", messages.join("\n"))]
pub struct CilError {
    /// secilc's stderr lines, each naming file:line where secilc does.
    pub messages: Vec<String>,
    /// secilc's exit status for this failure (255 most errors, 254 unresolved names).
    pub status: u8,
}

/// A failure inside the pipeline: the messages and secilc's exit status.
#[derive(Debug)]
pub(crate) struct Fail {
    pub messages: Vec<String>,
    pub status: u8,
}

impl Fail {
    /// An error secilc reports with `SEPOL_ERR` (exit 255).
    pub fn bad(messages: Vec<String>) -> Fail {
        Fail {
            messages,
            status: 255,
        }
    }
}

impl From<Fail> for CilError {
    fn from(f: Fail) -> Self {
        CilError {
            messages: f.messages,
            status: f.status,
        }
    }
}

/// Stack for the compiling thread. Passes recurse over expression nesting, which the
/// parser bounds at 4096 levels; this leaves room for that in unoptimised builds too.
const COMPILE_STACK: usize = 256 << 20;

/// The stack [`compile_each_in_place`] needs of its caller. The deepest recursion
/// measured, a constraint expression at the parser's 4096 levels, takes between 1 and
/// 2 MB in a release build (`ulimit -s 1024` overflows, 2048 does not); 64 MB leaves
/// room for unoptimised builds and for passes not measured.
pub const IN_PLACE_STACK: usize = 64 << 20;

/// Compiles `sources` (in command-line order) as secilc 3.4 does.
pub fn compile(sources: &[Source], opts: &Options) -> Result<Compiled, CilError> {
    compile_each(sources.iter().map(Ok), opts)
}

/// [`compile`] over sources handed over one at a time, as secilc reads them: each file is
/// parsed when it arrives and its text dropped at once, so the whole input (22.5 MB for a
/// distribution's module set) is never in memory together with the compiler's tables. An
/// `Err` item (a file that could not be read) stops the compile with that error, after the
/// files before it were parsed, which is secilc's order of messages. The compile runs on
/// a thread of its own with a 256 MB stack ([`compile_each_in_place`] runs it on the
/// caller's).
pub fn compile_each<I, S>(sources: I, opts: &Options) -> Result<Compiled, CilError>
where
    I: IntoIterator<Item = Result<S, CilError>>,
    I::IntoIter: Send,
    S: std::borrow::Borrow<Source>,
{
    let sources = sources.into_iter();
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("cil-compile".into())
            .stack_size(COMPILE_STACK)
            .spawn_scoped(s, || compile_each_in_place(sources, opts))
            .map_err(|e| CilError {
                messages: vec![format!("cannot start the compiler thread: {e}")],
                status: 255,
            })?
            .join()
            .unwrap_or_else(|_| Err(compiler_panicked()))
    })
}

/// A panic in the compiler, reported as a failed compile (exit status 255) whether it ended
/// the compiler thread or was caught on the caller's.
fn compiler_panicked() -> CilError {
    CilError {
        messages: vec!["internal error: the compiler panicked".into()],
        status: 255,
    }
}

/// [`compile_each`] on the calling thread, which must have [`IN_PLACE_STACK`] bytes of
/// stack (`arbiter build` runs it on the process's main thread once the stack limit
/// allows that much). It spares the compiler thread's start and the wait for it, and
/// the compile allocates from the calling thread's heap instead of a new arena's: on a
/// small policy about 5 % of the process's CPU time and 60 of its 1,050 page faults.
pub fn compile_each_in_place<I, S>(sources: I, opts: &Options) -> Result<Compiled, CilError>
where
    I: IntoIterator<Item = Result<S, CilError>>,
    S: std::borrow::Borrow<Source>,
{
    // The files handed over, for the progress lines of a failure at `-v -v`.
    let mut names = Vec::new();
    let sources = sources.into_iter().inspect(|s| {
        if let Ok(s) = s {
            names.push(s.borrow().name.clone());
        }
    });
    // What resolution logged (optionals disabled), placed among the progress lines.
    let mut resolve_log = Vec::new();
    // A panic is a failed compile, as when it ends the compiler thread.
    let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        compile_here(sources, opts, &mut resolve_log)
    }))
    .unwrap_or_else(|_| Err(compiler_panicked()));
    compiled.map_err(|e| progress::with_failure_lines(&names, opts, &resolve_log, e))
}

/// The process's peak resident set (`VmHWM` of /proc/self/status), for the phase timings.
fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:").map(|v| v.trim().to_string()))
        })
        .unwrap_or_else(|| "unknown".into())
}

fn compile_here<S: std::borrow::Borrow<Source>>(
    sources: impl Iterator<Item = Result<S, CilError>>,
    opts: &Options,
    resolve_log: &mut Vec<String>,
) -> Result<Compiled, CilError> {
    let mut sources = sources.peekable();
    if sources.peek().is_none() {
        return Err(CilError {
            messages: vec!["No cil files specified".into()],
            status: 255,
        });
    }
    if !(15..=33).contains(&opts.policy_version) {
        return Err(CilError {
            messages: vec!["Policy version must be between 15 and 33".into()],
            status: 255,
        });
    }
    // Parse every file as it arrives.
    // `ARBITER_CIL_TIMES=1` prints each phase's wall time on stderr (for profiling).
    let timing = std::env::var_os("ARBITER_CIL_TIMES").is_some();
    let mut clock = std::time::Instant::now();
    let mut lap = |phase: &str| {
        if timing {
            eprintln!(
                "cil phase {phase}: {:?} (peak RSS so far: {})",
                clock.elapsed(),
                peak_rss()
            );
            clock = std::time::Instant::now();
        }
    };
    let mut interner = kw::Kw::interner();
    let mut tree = parse::Tree::default();
    let mut names = Vec::new();
    for src in sources {
        let src = src?;
        let src = src.borrow();
        // About one list per 32 bytes and one element per 8 bytes of CIL: reserved per
        // file (large arenas then grow by doubling, not by a dozen small steps).
        tree.nodes.reserve(src.text.len() / 32);
        tree.kids.reserve(src.text.len() / 8);
        interner.reserve_for_source(src.text.len());
        parse::parse_file(&mut tree, &mut interner, &src.name, &src.text).map_err(|m| {
            CilError {
                messages: vec![m, format!("Failure adding {}", src.name)],
                status: 255,
            }
        })?;
        names.push(src.name.clone());
    }
    lap("parse");
    let mut ast = ast::build(&tree, &mut interner, &names, opts).map_err(progress::cildb_failed)?;
    qualify::qualify(&mut tree, &interner, &mut ast, None).map_err(progress::cildb_failed)?;
    lap("ast");
    // Only with -v: libsepol's schedule of disabled optionals, for its messages.
    let replayed = optional_log::replay(&mut tree, &interner, &mut ast, &names, opts, false);
    *resolve_log = replayed.lines;
    let mut fatal = replayed.fatal;
    // With blocks or macros, names were qualified before optionals were decided: when
    // resolution disables optionals, names that found declarations inside them look
    // further out (libsepol re-resolves after removing them), until nothing changes.
    let mut disabled = vec![false; ast.optionals.len()];
    let mut quiet_replayed = false;
    let res = loop {
        let mut res = resolve::Resolver::new(&tree, &interner, &ast);
        res.tunables_are_bools = opts.preserve_tunables;
        res.disabled.clone_from(&disabled);
        res.recompute_live();
        let r = res.run(&names);
        // A failure outside optionals may come from a name that found a declaration in
        // an optional disabled earlier in the same round: retry with it gone first. A
        // success whose disabled optionals change no qualified name is final as it is
        // (the resolver's own rounds already rechecked what used their declarations, as
        // for an input without blocks).
        if ast.scopes.is_empty()
            || res.disabled == disabled
            || (r.is_ok() && !qualify::needs_requalify(&ast, &res.live_opt))
        {
            if let Err(e) = r {
                drop(res);
                let e = optional_log::resolve_failed(
                    e,
                    fatal.take(),
                    &mut tree,
                    &interner,
                    &mut ast,
                    &names,
                    opts,
                    resolve_log,
                );
                return Err(progress::cildb_failed(e));
            }
            if quiet_replayed || !optional_log::quiet_lines_possible(&res, &tree, &ast, opts) {
                break res;
            }
            // libsepol's error lines for disabled optionals, owed at any verbosity: the
            // replay from the first round's state, then the rounds again (same result).
            drop(res);
            quiet_replayed = true;
            optional_log::replay_from_start(
                &mut tree,
                &interner,
                &mut ast,
                &names,
                opts,
                resolve_log,
            )
            .map_err(progress::cildb_failed)?;
            disabled.fill(false);
            continue;
        }
        disabled.clone_from(&res.disabled);
        let live = res.live_opt.clone();
        drop(res);
        // Names that found nothing in the disabled optionals are qualified as before.
        if qualify::needs_requalify(&ast, &live) {
            for st in &mut ast.stmts {
                st.node = st.src;
            }
            qualify::qualify(&mut tree, &interner, &mut ast, Some(&live))
                .map_err(progress::cildb_failed)?;
        }
    };
    lap("resolve");
    let mut out = lower::lower(&tree, &interner, &ast, &res, &names, opts)?;
    lap("lower");
    if opts.optimize {
        // secilc optimises the finished policydb, after the neverallow checks.
        arbiter_policy::optimize::optimize(&mut out.policy, CIL_AVTAB_SLOTS).map_err(|e| {
            CilError {
                messages: vec![
                    match e {
                        arbiter_policy::optimize::OptimizeError::UnsupportedVersion(_) => {
                            "libsepol.policydb_optimize: Optimizing policy versions between 20 and 23 is not supported".into()
                        }
                        other => format!("libsepol.policydb_optimize: {other}"),
                    },
                    "Failed to optimize policydb".into(),
                ],
                status: 255,
            }
        })?;
        lap("optimize");
    }
    Ok(Compiled {
        policy: out.policy,
        file_contexts: out.file_contexts,
        seusers: out.seusers,
        users_extra: out.users_extra,
        warnings: progress::success_lines(&names, opts, std::mem::take(resolve_log)),
    })
}
