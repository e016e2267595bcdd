//! The walk that builds the statement list: containers, `in`, `blockinherit` copies,
//! `call` bodies and chosen `tunableif` branches, in libsepol's order.

use super::*;

/// The stack marker for the end of a container.
pub(super) const MARK: u32 = u32::MAX - 1;

/// One walk item: a statement node (or [`MARK`]: the end of container `cont`) with where
/// it sits.
#[derive(Copy, Clone)]
pub(super) struct Item {
    n: u32,
    file: u32,
    opt: u32,
    cond: u32,
    branch: u32,
    scope: u32,
    cont: u32,
    parent: u32,
}

/// A container the walk is inside: a file's top level, an optional, a block (or a
/// block's copy), an `in` body. Chosen tunableif branches are appended at its end, and a
/// block's end also receives its `in` bodies.
pub(super) struct Cont {
    file: u32,
    opt: u32,
    scope: u32,
    /// The block whose `in` bodies come at the end, or [`NONE`].
    block: u32,
    /// Only the block as written receives `(in after ...)` bodies, copies do not.
    original: bool,
    ins_done: bool,
    /// For a macro call's body: the macro; else [`NONE`].
    macro_id: u32,
    /// The container this one sits in ([`NONE`] for a file's top level).
    up: u32,
    /// The statement making the container ([`NONE`] for a file's top level).
    stmt: u32,
}

/// How many statements copies may add (blockinherit copies can nest: a bound keeps
/// memory finite on hostile input).
pub(super) const MAX_STMTS: usize = 1 << 21;

/// Builds the statement list and declaration tables.
pub fn build(
    tree: &Tree,
    intm: &mut Interner,
    names: &[String],
    opts: &crate::Options,
) -> Result<Ast, Fail> {
    let int: &Interner = intm;
    // Every statement is a list, so the lists parsed bound the statement count (macro
    // bodies walked once per call can exceed it: the vector then grows). Reserved at once,
    // pages never written are never resident; growing by doubling instead copied the
    // list through the heap several times, and the freed copies stayed resident (about
    // 6 MB of peak RSS on the Debian store).
    let mut ast = Ast {
        by_sym: vec![NONE; int.len()],
        stmts: Vec::with_capacity(tree.nodes.len()),
        ..Ast::default()
    };
    let tunables = collect_tunables(tree);
    let blocks = crate::blocks::collect(tree, int, names, &tunables, opts.preserve_tunables)?;
    // Scope of each block as written (made on first use).
    let mut oscope: Vec<u32> = vec![NONE; blocks.list.len()];
    let mut tables: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
    // Macros copied into inheriting blocks: qualified name -> (macro, the scope its body's
    // lookups continue from).
    let mut copy_macros: FxHashMap<Vec<u8>, (u32, u32)> = FxHashMap::default();
    // Qualified names of the block instances walked (a copy may not repeat a block).
    let mut instances: std::collections::HashSet<Vec<u8>> = Default::default();
    let mut conts: Vec<Cont> = Vec::new();
    // Statements of chosen tunableif branches, appended at the end of their container as
    // libsepol's `cil_resolve_tunif` copies them there.
    let mut deferred: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    let mut stack: Vec<Item> = Vec::new();
    for (f, &(a, b)) in tree.files.iter().enumerate() {
        let c = conts.len() as u32;
        conts.push(Cont {
            file: f as u32,
            opt: NONE,
            scope: NONE,
            block: NONE,
            original: true,
            ins_done: true,
            macro_id: NONE,
            up: NONE,
            stmt: NONE,
        });
        let top = Item {
            n: MARK,
            file: f as u32,
            opt: NONE,
            cond: NONE,
            branch: NONE,
            scope: NONE,
            cont: c,
            parent: NONE,
        };
        stack.push(top);
        for &n in tree.kids[a as usize..b as usize].iter().rev() {
            stack.push(Item { n, ..top });
        }
        while let Some(it) = stack.pop() {
            let Item {
                n,
                file,
                opt,
                cond,
                branch,
                scope,
                cont,
                parent,
            } = it;
            if n == MARK {
                let c = &mut conts[cont as usize];
                let at = Item {
                    n: MARK,
                    file: c.file,
                    opt: c.opt,
                    cond: NONE,
                    branch: NONE,
                    scope: c.scope,
                    cont,
                    parent: c.stmt,
                };
                if let Some(list) = deferred.remove(&cont) {
                    stack.push(at);
                    for &x in list.iter().rev() {
                        stack.push(Item { n: x, ..at });
                    }
                } else if c.block != NONE && !c.ins_done {
                    c.ins_done = true;
                    let original = c.original;
                    stack.push(at);
                    // Applied in reverse document order: the latest `in` first; the
                    // `after` ones after all others.
                    let ins = &blocks.list[c.block as usize].ins;
                    let order: Vec<_> = ins
                        .iter()
                        .filter(|x| !x.2)
                        .chain(ins.iter().filter(|x| x.2 && original))
                        .collect();
                    for &&(inode, ifile, _) in order.iter().rev() {
                        let ci = conts.len() as u32;
                        conts.push(Cont {
                            file: ifile,
                            opt: at.opt,
                            scope: at.scope,
                            block: NONE,
                            original: true,
                            ins_done: true,
                            macro_id: NONE,
                            up: cont,
                            stmt: at.parent,
                        });
                        let body_at = blocks.in_nodes[&inode] as usize;
                        let base = Item {
                            n: MARK,
                            file: ifile,
                            cont: ci,
                            ..at
                        };
                        stack.push(base);
                        for &x in tree.kids(inode)[body_at..].iter().rev() {
                            stack.push(Item { n: x, ..base });
                        }
                    }
                }
                continue;
            }
            if ast.stmts.len() > MAX_STMTS {
                return Err(Fail::bad(vec![format!(
                    "More than {MAX_STMTS} statements after copying inherited blocks (at {})",
                    loc(tree, names, file, n)
                )]));
            }
            let here = || loc(tree, names, file, n);
            let kids = tree.kids(n);
            let kw = match kids.first().and_then(|&k| tree.sym(k)).and_then(Kw::of) {
                Some(k) => k,
                None => {
                    let what = kids
                        .first()
                        .and_then(|&k| tree.sym(k))
                        .map(|s| int.str(s).into_owned())
                        .unwrap_or_else(|| "(list)".into());
                    return Err(Fail::bad(vec![
                        format!("Unknown keyword {what} at {}", here()),
                        "Failed to build AST".into(),
                    ]));
                }
            };
            let si = ast.stmts.len() as u32;
            ast.stmts.push(Stmt {
                kw,
                node: n,
                src: n,
                file,
                opt,
                cond,
                branch,
                scope,
                parent,
            });
            let bad = |why: &str| {
                Fail::bad(vec![
                    format!("{why}"),
                    format!("Bad {} declaration at {}", kw.text(), here()),
                    "Failed to build AST".into(),
                ])
            };
            let name_at = |i: usize| -> Result<Sym, Fail> {
                let s = kids
                    .get(i)
                    .and_then(|&k| (!tree.is_list(k)).then(|| tree.sym(k)).flatten())
                    .ok_or_else(|| bad("Invalid syntax"))?;
                if !verify_name(int, s, opts.qualified_names) {
                    return Err(bad(&format!("Invalid name: {}", int.str(s))));
                }
                Ok(s)
            };
            let declare = |ast: &mut Ast, kind: DeclKind, name: Sym| -> Result<u32, Fail> {
                if reserved_name(kind, name) {
                    return Err(Fail::bad(vec![
                        format!("Name {} is a reserved word", int.str(name)),
                        "Invalid name".into(),
                        format!("Bad {} declaration at {}", kw.text(), here()),
                        "Failed to build AST".into(),
                        "Failed to compile cildb: -1".into(),
                    ]));
                }
                let id = ast.decls.len() as u32;
                let table = match scope {
                    NONE => NONE,
                    sc if ast.scopes[sc as usize].prefix.is_empty() => NONE,
                    sc => ast.scopes[sc as usize].table,
                };
                let prev = if table == NONE {
                    ast.find(kind.ns(), name)
                } else {
                    ast.find_scoped(table, kind.ns(), name)
                };
                match prev {
                    Some(prev) => {
                        let p = ast.decls[prev as usize];
                        let same_ok = opts.multiple_decls
                            && p.kind == kind
                            && matches!(kind, DeclKind::Type | DeclKind::TypeAttribute);
                        if same_ok {
                            return Ok(prev);
                        }
                        Err(Fail::bad(vec![
                            format!("Re-declaration of {} {}", kind.word(), int.str(name)),
                            format!("Previous declaration of {} at {}", p.kind.word(), here()),
                            format!("Bad {} declaration at {}", kw.text(), here()),
                            "Failed to build AST".into(),
                        ]))
                    }
                    None if table != NONE => {
                        let slot = ast.scoped.entry((table, name)).or_insert(NONE);
                        ast.decls.push(Decl {
                            kind,
                            name,
                            stmt: si,
                            next: *slot,
                        });
                        *slot = id;
                        ast.pending.push((id, table));
                        Ok(id)
                    }
                    None => {
                        let slot = &mut ast.by_sym[name as usize];
                        ast.decls.push(Decl {
                            kind,
                            name,
                            stmt: si,
                            next: *slot,
                        });
                        *slot = id;
                        Ok(id)
                    }
                }
            };
            let expect_len = |min: usize, max: usize| -> Result<(), Fail> {
                if kids.len() < min || kids.len() > max {
                    Err(bad("Invalid syntax"))
                } else {
                    Ok(())
                }
            };
            if cond != NONE
                && !matches!(
                    kw,
                    Kw::Allow
                        | Kw::AuditAllow
                        | Kw::DontAudit
                        | Kw::TypeTransition
                        | Kw::TypeChange
                        | Kw::TypeMember
                        | Kw::Call
                )
            {
                // With -P a tunableif is a booleanif, and secilc says so.
                let what = if ast.stmts[cond as usize].kw == Kw::TunableIf {
                    "tunableif being treated as a booleanif"
                } else {
                    "booleanif"
                };
                return Err(Fail::bad(vec![
                    format!("{} is not allowed in {what} at {}", kw.text(), here()),
                    "Failed to build AST".into(),
                    "Failed to compile cildb: -1".into(),
                ]));
            }
            use DeclKind as D;
            let simple = match kw {
                Kw::Type => Some(D::Type),
                Kw::TypeAttribute => Some(D::TypeAttribute),
                Kw::TypeAlias => Some(D::TypeAlias),
                Kw::Role => Some(D::Role),
                Kw::RoleAttribute => Some(D::RoleAttribute),
                Kw::User => Some(D::User),
                Kw::UserAttribute => Some(D::UserAttribute),
                Kw::Sensitivity => Some(D::Sens),
                Kw::SensitivityAlias => Some(D::SensAlias),
                Kw::Category => Some(D::Cat),
                Kw::CategoryAlias => Some(D::CatAlias),
                Kw::Sid => Some(D::Sid),
                Kw::PolicyCap => Some(D::PolicyCap),
                Kw::ClassPermission => Some(D::ClassPermission),
                _ => None,
            };
            if let Some(kind) = simple {
                expect_len(2, 2)?;
                let name = name_at(1)?;
                if kind == D::Role && name == Kw::ObjectR.sym() {
                    // object_r is libsepol's built-in role 1; declaring it is allowed.
                }
                declare(&mut ast, kind, name)?;
                continue;
            }
            match kw {
                Kw::Boolean | Kw::Tunable => {
                    expect_len(3, 3)?;
                    let name = name_at(1)?;
                    let v = tree.sym(kids[2]);
                    if v != Some(Kw::True.sym()) && v != Some(Kw::False.sym()) {
                        return Err(bad("Value must be either 'true' or 'false'"));
                    }
                    let kind = if kw == Kw::Tunable && !opts.preserve_tunables {
                        D::Tunable
                    } else {
                        D::Bool
                    };
                    if kw == Kw::Tunable && opts.preserve_tunables {
                        // `-P`: tunables are booleans.
                    }
                    declare(&mut ast, kind, name)?;
                }
                Kw::Common | Kw::Class | Kw::ClassMap => {
                    expect_len(3, 3)?;
                    let name = name_at(1)?;
                    if !tree.is_list(kids[2]) {
                        return Err(bad("Invalid syntax"));
                    }
                    let kind = match kw {
                        Kw::Common => D::Common,
                        Kw::Class => D::Class,
                        _ => D::ClassMap,
                    };
                    let id = declare(&mut ast, kind, name)?;
                    let mut list = Vec::new();
                    for &p in tree.kids(kids[2]) {
                        let ps = match tree.sym(p) {
                            Some(s) if verify_name(int, s, false) => s,
                            _ => return Err(bad("Invalid permission name")),
                        };
                        if list.contains(&ps) {
                            return Err(bad(&format!(
                                "Re-declaration of permission {}",
                                int.str(ps)
                            )));
                        }
                        list.push(ps);
                    }
                    if list.len() > 32 && kw != Kw::ClassMap {
                        return Err(bad("Too many permissions in class"));
                    }
                    ast.perm_lists.insert(id, list);
                }
                Kw::ClassCommon => {
                    expect_len(3, 3)?;
                    let c = name_at(1)?;
                    let m = name_at(2)?;
                    ast.class_common.entry(c).or_insert((si, m));
                }
                Kw::CategorySet => {
                    expect_len(3, 3)?;
                    let name = name_at(1)?;
                    declare(&mut ast, D::CatSet, name)?;
                }
                Kw::Level | Kw::LevelRange | Kw::Context | Kw::IpAddr | Kw::PermissionX => {
                    expect_len(3, 3)?;
                    let name = name_at(1)?;
                    let kind = match kw {
                        Kw::Level => D::Level,
                        Kw::LevelRange => D::LevelRange,
                        Kw::Context => D::Context,
                        Kw::IpAddr => D::IpAddr,
                        _ => D::PermissionX,
                    };
                    declare(&mut ast, kind, name)?;
                }
                Kw::Optional => {
                    if kids.len() < 2 {
                        return Err(bad("Invalid syntax"));
                    }
                    name_at(1)?;
                    let oi = ast.optionals.len() as u32;
                    ast.optionals.push(Optional { parent: opt });
                    let c = conts.len() as u32;
                    conts.push(Cont {
                        file,
                        opt: oi,
                        scope,
                        block: NONE,
                        original: true,
                        ins_done: true,
                        macro_id: NONE,
                        up: cont,
                        stmt: si,
                    });
                    let base = Item {
                        n: MARK,
                        opt: oi,
                        cont: c,
                        parent: si,
                        ..it
                    };
                    stack.push(base);
                    for &k in kids[2..].iter().rev() {
                        if !tree.is_list(k) {
                            return Err(bad("Invalid syntax"));
                        }
                        stack.push(Item { n: k, ..base });
                    }
                }
                Kw::TunableIf if !opts.preserve_tunables => {
                    if kids.len() < 3 || cond != NONE {
                        return Err(bad("Invalid syntax"));
                    }
                    // A tunable's name is looked up from the tunableif's place.
                    let written_in = blocks.tif_block.get(&n).copied();
                    let lookup = |sym: Sym| -> Option<bool> {
                        if scope == NONE && written_in.is_none() {
                            return tunables.get(&sym).copied();
                        }
                        if written_in.is_some() {
                            return tunable_as_written(int, &blocks, &tunables, written_in, sym);
                        }
                        let b = int.bytes(sym);
                        let mut q = Vec::new();
                        {
                            for sc in ast.table_chain(scope) {
                                q.clear();
                                q.extend_from_slice(&ast.scopes[sc as usize].prefix);
                                q.push(b'.');
                                q.extend_from_slice(b);
                                if let Some(&v) = blocks.tunables.get(&q) {
                                    return Some(v);
                                }
                            }
                        }
                        let b = b.strip_prefix(b".").unwrap_or(b);
                        blocks
                            .tunables
                            .get(b)
                            .copied()
                            .or_else(|| tunables.get(&int.get(b)?).copied())
                    };
                    let value = eval_tunable(tree, &lookup, kids[1]).ok_or_else(|| Fail {
                        messages: vec![
                            format!("Failed to resolve tunableif statement at {}", here()),
                            "Failed to resolve AST".into(),
                            "Failed to compile cildb: -2".into(),
                        ],
                        status: 254,
                    })?;
                    // libsepol keeps the last branch of each kind.
                    let want = if value { Kw::True } else { Kw::False };
                    let mut chosen = None;
                    for &b in &kids[2..] {
                        let which = tree.kids(b).first().and_then(|&k| tree.sym(k));
                        if which == Some(want.sym()) {
                            chosen = Some(b);
                        } else if which != Some(Kw::True.sym()) && which != Some(Kw::False.sym()) {
                            return Err(bad("Invalid syntax"));
                        }
                    }
                    if let Some(b) = chosen {
                        let body = &tree.kids(b)[1..];
                        if body.iter().any(|&r| !tree.is_list(r)) {
                            return Err(bad("Invalid syntax"));
                        }
                        deferred.entry(cont).or_default().extend_from_slice(body);
                    }
                }
                Kw::BooleanIf | Kw::TunableIf => {
                    if kids.len() < 3 || cond != NONE {
                        return Err(bad("Invalid syntax"));
                    }
                    // Branches: (true ...) / (false ...), each a list of rules.
                    let mut pushes = Vec::new();
                    for &b in &kids[2..] {
                        let bk = tree.kids(b);
                        let which = bk.first().and_then(|&k| tree.sym(k));
                        let br = if which == Some(Kw::True.sym()) {
                            true
                        } else if which == Some(Kw::False.sym()) {
                            false
                        } else {
                            return Err(bad("Invalid syntax"));
                        };
                        for &r in &bk[1..] {
                            if !tree.is_list(r) {
                                return Err(bad("Invalid syntax"));
                            }
                            let _ = br;
                            pushes.push((r, file, opt, si, b));
                        }
                    }
                    for (r, file, opt, cond, branch) in pushes.into_iter().rev() {
                        stack.push(Item {
                            n: r,
                            file,
                            opt,
                            cond,
                            branch,
                            scope,
                            cont,
                            parent: si,
                        });
                    }
                }
                Kw::Block => {
                    let ob = *blocks
                        .of_node
                        .get(&n)
                        .ok_or_else(|| bad("block is not allowed here"))?;
                    let o = &blocks.list[ob as usize];
                    let copy = scope != NONE && ast.scopes[scope as usize].copy;
                    if !copy && o.abs {
                        // Abstract: only its copies count (cil.md §1.1).
                        continue;
                    }
                    let sc = if copy {
                        let mut prefix = ast.scopes[scope as usize].prefix.clone();
                        if !prefix.is_empty() {
                            prefix.push(b'.');
                        }
                        prefix.extend_from_slice(int.bytes(o.name));
                        new_scope(&mut ast, &mut tables, prefix, false, scope, NONE, true)
                    } else {
                        original_scope(&mut ast, &mut tables, &blocks, &mut oscope, ob)
                    };
                    if copy {
                        register_macros(&ast, &blocks, tree, int, n, sc, &mut copy_macros);
                    }
                    if !instances.insert(ast.scopes[sc as usize].prefix.clone()) {
                        return Err(Fail::bad(vec![
                            format!("Re-declaration of block {}", int.str(o.name)),
                            format!("Bad block declaration at {}", here()),
                            "Failed to build AST".into(),
                        ]));
                    }
                    let c = conts.len() as u32;
                    conts.push(Cont {
                        file,
                        opt,
                        scope: sc,
                        block: ob,
                        original: !copy,
                        ins_done: false,
                        macro_id: NONE,
                        up: cont,
                        stmt: si,
                    });
                    let base = Item {
                        n: MARK,
                        scope: sc,
                        cont: c,
                        parent: si,
                        ..it
                    };
                    stack.push(base);
                    for &k in kids[2..].iter().rev() {
                        if !tree.is_list(k) {
                            return Err(bad("Invalid syntax"));
                        }
                        stack.push(Item { n: k, ..base });
                    }
                }
                Kw::BlockInherit if blocks.unresolved_inherits.contains(&n) => {
                    ast.unresolved_stmts.push(si);
                }
                Kw::BlockInherit => {
                    let target = *blocks
                        .inherit_of
                        .get(&n)
                        .ok_or_else(|| bad("blockinherit is not allowed here"))?;
                    let prefix = match scope {
                        NONE => Vec::new(),
                        s => ast.scopes[s as usize].prefix.clone(),
                    };
                    let orig = original_scope(&mut ast, &mut tables, &blocks, &mut oscope, target);
                    let sc = new_scope(&mut ast, &mut tables, prefix, false, scope, orig, true);
                    let t = &blocks.list[target as usize];
                    register_macros(&ast, &blocks, tree, int, t.node, sc, &mut copy_macros);
                    let c = conts.len() as u32;
                    conts.push(Cont {
                        file: t.file,
                        opt,
                        scope: sc,
                        block: target,
                        original: false,
                        ins_done: false,
                        macro_id: NONE,
                        up: cont,
                        stmt: si,
                    });
                    let base = Item {
                        n: MARK,
                        file: t.file,
                        scope: sc,
                        cont: c,
                        parent: si,
                        ..it
                    };
                    stack.push(base);
                    for &k in tree.kids(t.node)[2..].iter().rev() {
                        if !tree.is_list(k) {
                            return Err(bad("Invalid syntax"));
                        }
                        stack.push(Item { n: k, ..base });
                    }
                }
                // Copies hold no blockabstract: libsepol leaves them out when it copies an
                // inherited block (`cil_copy_ast.c` `__cil_copy_node_helper`), so only the
                // statement as written marks its block (`blocks` did that).
                Kw::BlockAbstract if !blocks.abstract_of.contains_key(&n) => {
                    return Err(bad("blockabstract is not allowed here"));
                }
                Kw::In if !blocks.in_nodes.contains_key(&n) => {
                    return Err(bad("in is not allowed here"));
                }
                // Walked only where it is called.
                Kw::Macro if !blocks.macro_nodes.contains_key(&n) => {
                    return Err(bad("macro is not allowed here"));
                }
                Kw::Call => {
                    let unresolved = || Fail {
                        messages: vec![
                            format!("Failed to resolve call statement at {}", here()),
                            "Failed to resolve AST".into(),
                            "Failed to compile cildb: -2".into(),
                        ],
                        status: 254,
                    };
                    let mname = kids
                        .get(1)
                        .and_then(|&k| tree.sym(k))
                        .ok_or_else(|| bad("Invalid syntax"))?;
                    let Some((mid, copied_scope)) =
                        find_macro(&ast, &blocks, &copy_macros, int, scope, mname)
                    else {
                        if opt == NONE {
                            return Err(unresolved());
                        }
                        // Inside an optional: the resolver disables it.
                        ast.unresolved_stmts.push(si);
                        continue;
                    };
                    let m = &blocks.macros[mid as usize];
                    let args: Vec<u32> = match kids.get(2) {
                        Some(&l) if tree.is_list(l) && kids.len() == 3 => tree.kids(l).to_vec(),
                        None => Vec::new(),
                        _ => return Err(bad("Invalid syntax")),
                    };
                    if args.len() != m.params.len() {
                        let what = if args.len() < m.params.len() {
                            "Missing arguments"
                        } else {
                            "Unexpected arguments"
                        };
                        return Err(Fail::bad(vec![
                            format!("{what} at {}", here()),
                            "Failed to resolve AST".into(),
                            "Failed to compile cildb: -1".into(),
                        ]));
                    }
                    // A macro already being expanded on the way up is a recursion.
                    let mut c = cont;
                    while c != NONE {
                        if conts[c as usize].macro_id == mid {
                            return Err(Fail::bad(vec![
                                "Recursive macro call found:".into(),
                                format!(
                                    "macro {} at {}",
                                    int.str(m.name),
                                    loc(tree, names, m.file, m.node)
                                ),
                                format!("call {} at {}", int.str(m.name), here()),
                                "Failed to resolve AST".into(),
                            ]));
                        }
                        c = conts[c as usize].up;
                    }
                    let macro_scope = match (copied_scope, m.parent) {
                        (Some(sc), _) => sc,
                        (None, NONE) => NONE,
                        (None, p) => original_scope(&mut ast, &mut tables, &blocks, &mut oscope, p),
                    };
                    let ci = ast.calls.len() as u32;
                    ast.calls.push(Call {
                        stmt: si,
                        caller: scope,
                        macro_scope,
                        params: m.params.clone(),
                        args,
                        declared: m.declared.clone(),
                        resolved: Vec::new(),
                    });
                    ast.call_of_stmt.insert(si, ci);
                    let prefix = match scope {
                        NONE => Vec::new(),
                        s => ast.scopes[s as usize].prefix.clone(),
                    };
                    let copy = scope != NONE && ast.scopes[scope as usize].copy;
                    let sc = new_scope(&mut ast, &mut tables, prefix, false, scope, NONE, copy);
                    ast.scopes[sc as usize].call = ci;
                    let c = conts.len() as u32;
                    conts.push(Cont {
                        file: m.file,
                        opt,
                        scope: sc,
                        block: NONE,
                        original: true,
                        ins_done: true,
                        macro_id: mid,
                        up: cont,
                        stmt: si,
                    });
                    let base = Item {
                        n: MARK,
                        file: m.file,
                        scope: sc,
                        cont: c,
                        parent: si,
                        ..it
                    };
                    stack.push(base);
                    for &k in tree.kids(m.node)[3..].iter().rev() {
                        if !tree.is_list(k) {
                            return Err(bad("Invalid syntax"));
                        }
                        stack.push(Item { n: k, ..base });
                    }
                }
                _ => {}
            }
        }
    }
    // Declarations in blocks join the global table under their qualified names.
    finish_pending(tree, names, &mut ast, intm, &tables)?;
    ast.stmts.shrink_to_fit();
    Ok(ast)
}

/// Interns the qualified names of the declarations made in blocks and enters them in the
/// global table (after the walk: the walk holds the interner shared).
pub(super) fn finish_pending(
    tree: &Tree,
    names: &[String],
    ast: &mut Ast,
    int: &mut Interner,
    tables: &FxHashMap<Vec<u8>, u32>,
) -> Result<(), Fail> {
    let mut prefixes: Vec<&[u8]> = vec![&[]; tables.len()];
    for (p, &t) in tables {
        prefixes[t as usize] = p;
    }
    let pending = std::mem::take(&mut ast.pending);
    let mut buf = Vec::new();
    for &(d, table) in &pending {
        buf.clear();
        buf.extend_from_slice(prefixes[table as usize]);
        buf.push(b'.');
        buf.extend_from_slice(int.bytes(ast.decls[d as usize].name));
        if buf.len() >= 2048 {
            // libsepol's CIL_MAX_NAME_LENGTH, checked when it qualifies names (`cil_fqn.c`).
            let st = ast.stmts[ast.decls[d as usize].stmt as usize];
            return Err(Fail::bad(vec![
                format!(
                    "Problem qualifying names in block at {}",
                    loc(tree, names, st.file, st.node)
                ),
                "Failed to qualify names".into(),
                "Failed to compile cildb: -1".into(),
            ]));
        }
        let q = int.intern(&buf);
        ast.decls[d as usize].name = q;
    }
    if ast.by_sym.len() < int.len() {
        ast.by_sym.resize(int.len(), NONE);
    }
    for &(d, _) in &pending {
        let decl = ast.decls[d as usize];
        if let Some(prev) = ast.find(decl.kind.ns(), decl.name) {
            let _ = prev;
            return Err(Fail::bad(vec![format!(
                "Re-declaration of {} {}",
                decl.kind.word(),
                int.str(decl.name)
            )]));
        }
        let slot = &mut ast.by_sym[decl.name as usize];
        ast.decls[d as usize].next = *slot;
        *slot = d;
    }
    ast.scoped.clear();
    Ok(())
}
