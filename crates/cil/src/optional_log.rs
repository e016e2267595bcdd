//! What libsepol logs while its resolution passes disable optionals, replayed for secilc's
//! `-v`/`-v -v` output. Our resolver reaches the same set of disabled optionals by a
//! fixpoint over rounds, but secilc's messages follow libsepol 3.4's schedule
//! (`cil_resolve_ast`): fourteen passes, each a walk of the whole tree in order resolving
//! the statements of that pass; an optional with a statement that fails is destroyed
//! when the pass ends, and if that happens after the `call` pass every later pass runs
//! again ("Resetting declarations"). The replay runs that schedule with the resolver's
//! own statement check, only when the lines are owed: at `-v` and above whenever an
//! optional was disabled, and at the default verbosity only when the resolver saw a
//! failure libsepol logs at any verbosity (see `quiet_lines_possible`).

use crate::ast::{Ast, DeclKind, Ns, NONE};
use crate::intern::Interner;
use crate::kw::{declaration_kws, Kw};
use crate::parse::Tree;
use crate::resolve::{Miss, Resolver};
use crate::Options;

/// libsepol's `CIL_PASS_CALL1`: an optional destroyed after this pass resets the passes
/// that follow it (`pass > CIL_PASS_CALL1`), and they start again at `CIL_PASS_CALL2`.
const PASS_CALL1: u8 = 7;
const PASS_CALL2: u8 = 8;
/// `CIL_PASS_MISC3`, the last pass.
const PASS_LAST: u8 = 14;

/// The libsepol resolution pass (`enum cil_pass`, 1..=14) that resolves statement `s`,
/// or 0 for a statement no pass resolves names of (declarations, containers).
fn pass_of(ast: &Ast, s: u32, opts: &Options) -> u8 {
    let st = &ast.stmts[s as usize];
    match st.kw {
        Kw::TunableIf if opts.preserve_tunables => 11,
        Kw::TunableIf => 1,
        Kw::BlockInherit => 3,
        // The macro is found in CIL_PASS_CALL1, the arguments in CIL_PASS_CALL2.
        Kw::Call if ast.call_of_stmt.contains_key(&s) => PASS_CALL2,
        Kw::Call => PASS_CALL1,
        Kw::TypeAliasActual | Kw::SensitivityAliasActual | Kw::CategoryAliasActual => 9,
        Kw::SidOrder
        | Kw::ClassOrder
        | Kw::CategoryOrder
        | Kw::SensitivityOrder
        | Kw::BooleanIf => 11,
        Kw::CategorySet => 12,
        Kw::SensitivityCategory | Kw::ClassCommon => 13,
        declaration_kws!() | Kw::HandleUnknown | Kw::Mls => 0,
        _ => PASS_LAST,
    }
}

/// What [`replay`] found.
#[derive(Default)]
pub(crate) struct Replay {
    /// The lines, in libsepol's order.
    pub lines: Vec<String>,
    /// The statement outside optionals that failed, if one did.
    pub fatal: Option<Fatal>,
}

/// A statement outside optionals that does not resolve.
pub(crate) struct Fatal {
    /// Its libsepol pass (`Pass N of resolution failed`).
    pub pass: u8,
    /// `Failed to resolve KW statement at FILE:LINE`, as the resolver reports it.
    pub line: String,
    /// The resolver's error lines before its `Failed to resolve … statement` line.
    pub lines: Vec<String>,
    /// A name was missing (libsepol's `SEPOL_ENOENT`, exit 254), not a malformed
    /// statement.
    pub missing: bool,
}

/// The `optional` statement that holds statement `s` most closely (its innermost
/// optional's), found through the statements' parents.
fn optional_stmt(ast: &Ast, s: u32) -> Option<u32> {
    let mut p = ast.stmts[s as usize].parent;
    // Parents come before their children, so the climb ends; the bound is a guard.
    for _ in 0..ast.stmts.len() {
        let st = ast.stmts.get(p as usize)?;
        if st.kw == Kw::Optional {
            return Some(p);
        }
        p = st.parent;
    }
    None
}

/// Whether optional `o` is `outer` or sits inside it.
fn within(ast: &Ast, mut o: u32, outer: u32) -> bool {
    while o != NONE {
        if o == outer {
            return true;
        }
        o = ast.optionals[o as usize].parent;
    }
    false
}

/// The lines libsepol 3.4 logs during resolution, in its order, at verbosity `opts.verbose`
/// (info lines from 2, warnings from 1): for each statement of an optional that fails,
/// `Failed to resolve KW statement at FILE:LINE` and `Disabling optional 'NAME' at
/// FILE:LINE` (preceded by the resolver's own error line for a missing permission or call
/// argument), `Resetting declarations` when a pass after the calls destroyed optionals,
/// and the expandtypeattribute conflict warning. The replay stops at a failing statement
/// outside optionals (the caller reports that error), whose own error line and pass
/// [`Replay::fatal`] holds. `tree` and `ast` are left qualified as they were given
/// (everything live). Below verbosity 1 there is nothing to replay unless `errors` asks
/// for the error lines, which libsepol prints at any verbosity: for a build that failed,
/// or one whose disabled optionals may owe them ([`quiet_lines_possible`]).
pub(crate) fn replay(
    tree: &mut Tree,
    int: &Interner,
    ast: &mut Ast,
    names: &[String],
    opts: &Options,
    errors: bool,
) -> Replay {
    let mut out = Replay::default();
    if opts.verbose == 0 && !errors {
        return out;
    }
    let mut by_pass: Vec<Vec<u32>> = vec![Vec::new(); PASS_LAST as usize + 1];
    for s in 0..ast.stmts.len() as u32 {
        let p = pass_of(ast, s, opts);
        if p != 0 {
            by_pass[p as usize].push(s);
        }
    }
    let expands = by_pass[PASS_LAST as usize]
        .iter()
        .any(|&s| ast.stmts[s as usize].kw == Kw::ExpandTypeAttribute);
    // Without optionals or expandtypeattributes there is nothing to log but a failure's
    // lines (at `-v -v` always looked for, as a failure's pass is logged there).
    if ast.optionals.is_empty() && !expands && !errors && opts.verbose < 2 {
        return out;
    }
    let info = opts.verbose >= 2;
    let loc = |tree: &Tree, ast: &Ast, s: u32| {
        let st = &ast.stmts[s as usize];
        crate::ast::loc(tree, names, st.file, st.node)
    };
    let mut destroyed = vec![false; ast.optionals.len()];
    let mut requalified = false;
    // Per type attribute declaration: libsepol's `used` expand bits (true 1, false 2),
    // cleared when declarations are reset.
    let mut expand_bits: crate::intern::FxHashMap<u32, u8> = Default::default();
    let mut pass = 1u8;
    'passes: while pass <= PASS_LAST {
        let mut events: Vec<String> = Vec::new();
        let mut to_destroy: Vec<u32> = Vec::new();
        let mut fatal = false;
        {
            let mut r = Resolver::new(tree, int, ast);
            r.tunables_are_bools = opts.preserve_tunables;
            r.disabled.clone_from(&destroyed);
            r.recompute_live();
            // The optional whose failure is being recorded (libsepol's
            // `disabled_optional`): failures inside it add nothing to destroy.
            let mut open: Option<u32> = None;
            for &s in &by_pass[pass as usize] {
                if !r.stmt_live(s) {
                    continue;
                }
                let st = ast.stmts[s as usize];
                match r.check(s) {
                    Err(Miss::Missing) if st.opt != NONE => {
                        if let Some(lines) = error_line(&r, int, tree, ast, s, names) {
                            events.extend(lines.split('\n').map(String::from));
                        }
                        if let Some(o) = info.then(|| optional_stmt(ast, s)).flatten() {
                            let name = tree
                                .kids(ast.stmts[o as usize].node)
                                .get(1)
                                .and_then(|&n| tree.sym(n))
                                .map(|n| int.str(n).into_owned())
                                .unwrap_or_default();
                            events.push(format!(
                                "Failed to resolve {} statement at {}",
                                st.kw.text(),
                                loc(tree, ast, s)
                            ));
                            events.push(format!(
                                "Disabling optional '{name}' at {}",
                                loc(tree, ast, o)
                            ));
                        }
                        if !open.is_some_and(|c| within(ast, st.opt, c)) {
                            open = Some(st.opt);
                            to_destroy.push(st.opt);
                        }
                    }
                    Ok(()) if st.kw == Kw::ExpandTypeAttribute && opts.verbose >= 1 => {
                        expand_conflicts(&r, int, tree, ast, s, &mut expand_bits, &mut events);
                    }
                    Ok(()) => {}
                    Err(miss) => {
                        let extra = match miss {
                            Miss::Missing => error_line(&r, int, tree, ast, s, names),
                            _ => None,
                        };
                        out.fatal = Some(Fatal {
                            pass,
                            line: format!(
                                "Failed to resolve {} statement at {}",
                                st.kw.text(),
                                loc(tree, ast, s)
                            ),
                            lines: extra
                                .map(|l| l.split('\n').map(String::from).collect())
                                .unwrap_or_default(),
                            missing: matches!(miss, Miss::Missing),
                        });
                        fatal = true;
                        break;
                    }
                }
            }
        }
        out.lines.append(&mut events);
        if fatal {
            break 'passes;
        }
        if to_destroy.is_empty() {
            pass += 1;
            continue;
        }
        if pass > PASS_CALL1 {
            if info {
                out.lines.push("Resetting declarations".into());
            }
            expand_bits.clear();
            pass = PASS_CALL2;
        } else {
            pass += 1;
        }
        for o in to_destroy {
            destroyed[o as usize] = true;
        }
        if !ast.scopes.is_empty() {
            // Names in blocks that found a declaration in a destroyed optional now find
            // one further out, as libsepol's re-resolution does.
            let mut r = Resolver::new(tree, int, ast);
            r.disabled.clone_from(&destroyed);
            r.recompute_live();
            let live = r.live_opt.clone();
            drop(r);
            for st in &mut ast.stmts {
                st.node = st.src;
            }
            if crate::qualify::qualify(tree, int, ast, Some(&live)).is_err() {
                break 'passes;
            }
            requalified = true;
        }
    }
    if requalified {
        for st in &mut ast.stmts {
            st.node = st.src;
        }
        // The same call the compiler made before the replay, so it cannot fail now.
        let _ = crate::qualify::qualify(tree, int, ast, None);
    }
    out
}

/// The error line libsepol's resolver logs (at `CIL_ERR`) before the "Failed to resolve
/// … statement" of statement `s`, when the failing name is a call argument or a
/// permission of a resolved class.
fn error_line(
    r: &Resolver<'_>,
    int: &Interner,
    tree: &Tree,
    ast: &Ast,
    s: u32,
    names: &[String],
) -> Option<String> {
    let st = &ast.stmts[s as usize];
    match st.kw {
        Kw::Call => {
            let call = &ast.calls[*ast.call_of_stmt.get(&s)? as usize];
            let (i, _) = call
                .resolved
                .iter()
                .zip(call.params.iter())
                .enumerate()
                .find(|(_, (&v, &(ns, _)))| {
                    matches!((ns, tree.sym(v)), (Some(ns), Some(sym)) if r.lookup(ns, sym).is_none())
                })?;
            let written = tree.sym(*call.args(tree).get(i)?)?;
            Some(format!(
                "Failed to resolve {} in call argument list at {}",
                int.str(written),
                crate::ast::loc(tree, names, st.file, st.node)
            ))
        }
        _ => {
            let cp = classperms_after_prereqs(r, tree, ast, s)?;
            missing_permission(r, int, tree, ast, cp)
        }
    }
}

/// The permission list `(CLASS (PERMS))` of statement `s` when libsepol would resolve
/// it: every name its resolver looks up before the list (`cil_resolve_avrule`: source
/// and target; `cil_resolve_classpermissionset`: the set; `cil_resolve_classmapping`:
/// the map class and its permission; `cil_resolve_constrain`: nothing) resolves.
fn classperms_after_prereqs(r: &Resolver<'_>, tree: &Tree, ast: &Ast, s: u32) -> Option<u32> {
    let st = &ast.stmts[s as usize];
    let kids = tree.kids(st.node);
    let named = |ns: Ns, n: u32| tree.sym(n).is_some_and(|sym| r.lookup(ns, sym).is_some());
    match st.kw {
        Kw::Allow | Kw::AuditAllow | Kw::DontAudit | Kw::NeverAllow if kids.len() == 4 => {
            let target = |n: u32| tree.sym(n) == Some(Kw::SelfKw.sym()) || named(Ns::Types, n);
            (named(Ns::Types, kids[1]) && target(kids[2])).then_some(kids[3])
        }
        Kw::ClassPermissionSet if kids.len() == 3 => {
            named(Ns::ClassPermissions, kids[1]).then_some(kids[2])
        }
        Kw::ClassMapping if kids.len() == 4 => {
            let map = r.lookup(Ns::Classes, tree.sym(kids[1])?)?;
            ast.perm_index(map, tree.sym(kids[2])?)?;
            Some(kids[3])
        }
        Kw::Constrain | Kw::MlsConstrain if kids.len() == 3 => Some(kids[1]),
        _ => None,
    }
}

/// libsepol's `__cil_resolve_perms` lines for the permission list `cp` (`(CLASS
/// (PERMS))`) when its class resolves and a permission does not: `Failed to resolve
/// permission P` (`… for map class`), then one `Failed to resolve permission list` per
/// nested list it sits in.
fn missing_permission(
    r: &Resolver<'_>,
    int: &Interner,
    tree: &Tree,
    ast: &Ast,
    cp: u32,
) -> Option<String> {
    if !tree.is_list(cp) {
        return None;
    }
    let cp = tree.kids(cp);
    let (&class, &perms) = (cp.first()?, cp.get(1)?);
    let cd = r.lookup(Ns::Classes, tree.sym(class)?)?;
    let map = ast.decls[cd as usize].kind == DeclKind::ClassMap;
    let common = r.class_common(cd);
    let has = |p| {
        ast.perm_index(cd, p).is_some() || common.is_some_and(|c| ast.perm_index(c, p).is_some())
    };
    // Depth-first in written order: the first unknown name, and how many lists below the
    // permission list it sits (each level adds libsepol's line).
    let mut stack = vec![(perms, 0usize)];
    while let Some((n, depth)) = stack.pop() {
        if let Some(p) = tree.sym(n) {
            let operator = matches!(
                Kw::of(p),
                Some(Kw::And | Kw::Or | Kw::Xor | Kw::Not | Kw::All)
            );
            if !operator && !has(p) {
                let mut line = format!("Failed to resolve permission {}", int.str(p));
                if map {
                    line.push_str(" for map class");
                }
                for _ in 1..depth {
                    line.push_str("\nFailed to resolve permission list");
                }
                return Some(line);
            }
        } else {
            stack.extend(tree.kids(n).iter().rev().map(|&k| (k, depth + 1)));
        }
    }
    None
}

/// Whether a build at verbosity 0 that resolved (`res`, the resolver's final state) may
/// owe the lines libsepol logs at `CIL_ERR` for statements of the optionals it disabled
/// (a permission its class lacks, a call argument that does not resolve), so that
/// [`replay`] must run. Without a disabled optional there are none. A permission line
/// needs a permission missing from a class that resolved: the resolver checks every
/// statement with everything live first and notes every such miss, and every class
/// whose permissions come from optionals (`Resolver::err_hint`). A call-argument line
/// needs an argument missing while libsepol's optionals are still those of some round:
/// a name missing then is missing at the end too (fewer optionals are live), so a call
/// of a disabled optional whose argument resolves in the final state owes none. The
/// Debian stores have neither, so their thousands of disabled optionals cost a scan of
/// the flags here; a policy with calls, a scan of its calls.
pub(crate) fn quiet_lines_possible(
    res: &Resolver<'_>,
    tree: &Tree,
    ast: &Ast,
    opts: &Options,
) -> bool {
    if opts.verbose != 0 || !res.disabled.iter().any(|&d| d) {
        return false;
    }
    let class_from_optional = ast
        .class_common
        .values()
        .any(|&(st, _)| ast.stmts[st as usize].opt != NONE);
    res.err_hint.get()
        || class_from_optional
        || ast.call_of_stmt.iter().any(|(&s, &c)| {
            let opt = ast.stmts[s as usize].opt;
            opt != NONE
                && !res.live_opt[opt as usize]
                && ast.calls[c as usize]
                    .resolved
                    .iter()
                    .zip(ast.calls[c as usize].params.iter())
                    .any(|(&v, &(ns, _))| {
                        matches!((ns, tree.sym(v)), (Some(ns), Some(sym)) if res.lookup(ns, sym).is_none())
                    })
        })
}

/// libsepol's `cil_type_used` for an `expandtypeattribute` that resolved: each attribute
/// it names gets the statement's expand bit, and one holding both logs the conflict
/// warning and keeps "false".
fn expand_conflicts(
    r: &Resolver<'_>,
    int: &Interner,
    tree: &Tree,
    ast: &Ast,
    s: u32,
    bits: &mut crate::intern::FxHashMap<u32, u8>,
    events: &mut Vec<String>,
) {
    let kids = tree.kids(ast.stmts[s as usize].node);
    let (Some(&names), Some(&value)) = (kids.get(1), kids.get(2)) else {
        return;
    };
    let bit = if tree.sym(value) == Some(Kw::True.sym()) {
        1
    } else {
        2
    };
    let atoms: Vec<u32> = if tree.is_list(names) {
        tree.kids(names).to_vec()
    } else {
        vec![names]
    };
    for a in atoms {
        let Some(sym) = tree.sym(a) else { continue };
        let Some(d) = r.lookup(Ns::Types, sym) else {
            continue;
        };
        if ast.decls[d as usize].kind != DeclKind::TypeAttribute {
            continue;
        }
        let b = bits.entry(d).or_default();
        *b |= bit;
        if *b == 3 {
            let full = int.str(ast.decls[d as usize].name);
            let base = full.rsplit('.').next().unwrap_or(&full);
            events.push(format!(
                "Conflicting use of expandtypeattribute. Expandtypeattribute was set to both true or false for {base}. Resolving to false. "
            ));
            *b = 2;
        }
    }
}

/// The report of a resolution failure with libsepol's lines around it: the replay's lines
/// (run now, for the error lines, when the earlier replay was skipped) go to
/// `resolve_log`; the failing statement's own error line (a missing permission or call
/// argument) goes before its `Failed to resolve … statement` line, and at `-v -v`
/// libsepol's `Problem at …` and `Pass N of resolution failed` after it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn resolve_failed(
    e: crate::Fail,
    known: Option<Fatal>,
    tree: &mut Tree,
    int: &Interner,
    ast: &mut Ast,
    names: &[String],
    opts: &Options,
    resolve_log: &mut Vec<String>,
) -> crate::CilError {
    let mut e = crate::CilError::from(e);
    let fatal = match known {
        Some(f) => Some(f),
        None => {
            let r = replay(tree, int, ast, names, opts, true);
            *resolve_log = r.lines;
            r.fatal
        }
    };
    let Some(f) = fatal else { return e };
    // The resolver reports the first statement, in written order, whose name is missing;
    // libsepol the first in its pass order (a booleanif, pass 11, before an attribute
    // set, pass 14): the replay's statement is the one secilc names.
    let ours_missing = e.status == 254
        && e.messages
            .first()
            .is_some_and(|m| m.starts_with("Failed to resolve ") && m.contains(" statement at "));
    if f.missing && ours_missing && e.messages[0] != f.line {
        e.messages[0].clone_from(&f.line);
    }
    let Some(at) = e.messages.iter().position(|m| *m == f.line) else {
        return e;
    };
    if opts.verbose >= 2 {
        let loc = f.line.rsplit(" at ").next().unwrap_or_default();
        e.messages.splice(
            at + 1..at + 1,
            [
                format!("Problem at {loc}"),
                format!("Pass {} of resolution failed", f.pass),
            ],
        );
    }
    e.messages.splice(at..at, f.lines);
    e
}

/// [`replay`] at verbosity 0 for the error lines only ([`quiet_lines_possible`]), after a
/// resolution that may have requalified names for the optionals it disabled: the names
/// are qualified again as at the start (everything live), as the replay and a new
/// resolution expect. The lines go to `log`.
pub(crate) fn replay_from_start(
    tree: &mut Tree,
    int: &Interner,
    ast: &mut Ast,
    names: &[String],
    opts: &Options,
    log: &mut Vec<String>,
) -> Result<(), crate::Fail> {
    if !ast.scopes.is_empty() {
        for st in &mut ast.stmts {
            st.node = st.src;
        }
        crate::qualify::qualify(tree, int, ast, None)?;
    }
    *log = replay(tree, int, ast, names, opts, true).lines;
    Ok(())
}
