//! The block structure of the input, found before the statement walk: every `block` as
//! written (its parent block and qualified name), the target of every `in`,
//! `blockinherit` and `blockabstract`, and the inheritance-loop check. These are
//! libsepol's passes IN_BEFORE, BLKIN_LINK and BLKABS (cil.md §5.3): they look names up in
//! the blocks as written, before any copy exists, so one pass over the tree decides them.
//! Blocks and macros declared in chosen `tunableif` branches (decided here, as libsepol's
//! first pass decides them) belong to the tunableif's container, those in `in` bodies to
//! the `in`'s target. The statement walk (`ast`) then makes the copies.

use crate::ast::{loc, Ns, NONE};
use crate::intern::{FxHashMap, Interner, Sym};
use crate::kw::{named_declaration_kws, Kw};
use crate::parse::Tree;
use crate::Fail;
use std::rc::Rc;

/// A block as written.
pub struct OBlock {
    pub name: Sym,
    /// The enclosing block, or [`NONE`].
    pub parent: u32,
    pub node: u32,
    pub file: u32,
    /// Named by a `blockabstract`.
    pub abs: bool,
    /// `(in NAME ...)` statements targeting the block, (node, file), in reverse document
    /// order (libsepol gathers them by prepending and applies them in that order); the
    /// flag is the `after` form, applied after inheritance (so not part of copies).
    pub ins: Vec<(u32, u32, bool)>,
    /// The qualified name (`a.b`).
    pub qual: Vec<u8>,
}

/// A macro as written.
pub struct OMacro {
    pub name: Sym,
    /// The enclosing block, or [`NONE`].
    pub parent: u32,
    pub node: u32,
    pub file: u32,
    /// Parameters: the namespace the argument is looked up in ([`None`]: `string`/`name`,
    /// taken as written), and the parameter's name.
    /// Shared with every [`crate::ast::Call`] of the macro (a call copies no list).
    pub params: Rc<[(Option<Ns>, Sym)]>,
    /// Names the body declares (they are looked up on the caller's side).
    pub declared: Rc<[Sym]>,
}

#[derive(Default)]
pub struct Blocks {
    pub macros: Vec<OMacro>,
    /// Qualified macro name -> macro.
    pub macro_by_qual: FxHashMap<Vec<u8>, u32>,
    /// Macro statement node -> macro.
    pub macro_nodes: FxHashMap<u32, u32>,
    pub list: Vec<OBlock>,
    by_name: FxHashMap<(u32, Sym), u32>,
    /// Block statement node -> block.
    pub of_node: FxHashMap<u32, u32>,
    /// `tunableif` node -> the block it is written in (libsepol decides tunableifs first,
    /// before `in` moves bodies and before copies: names are looked up from there).
    pub tif_block: FxHashMap<u32, u32>,
    /// `tunableif` node -> the branch libsepol keeps (its last `true` or `false` list,
    /// whose statements join the enclosing container), for tunableifs outside macros.
    pub tif_choice: FxHashMap<u32, u32>,
    /// Tunables declared in blocks: qualified name -> value.
    pub tunables: FxHashMap<Vec<u8>, bool>,
    /// `blockinherit` node -> the inherited block.
    pub inherit_of: FxHashMap<u32, u32>,
    /// `blockinherit` nodes inside optionals whose block does not exist.
    pub unresolved_inherits: std::collections::HashSet<u32>,
    /// `blockabstract` node -> the block it names.
    pub abstract_of: FxHashMap<u32, u32>,
    /// `in` nodes that were applied.
    pub in_nodes: FxHashMap<u32, u32>,
}

impl Blocks {
    /// Resolves a block name from inside block `from` ([`NONE`]: the top): the first
    /// part is looked up walking up the enclosing blocks, the rest descends; a leading
    /// dot starts at the top (cil.md §5.4).
    pub fn find(&self, int: &Interner, from: u32, name: Sym) -> Option<u32> {
        let bytes = int.bytes(name);
        let (root, rest) = match bytes.strip_prefix(b".") {
            Some(r) => (true, r),
            None => (false, bytes),
        };
        let mut parts = rest.split(|&c| c == b'.');
        let first = int.get(parts.next()?)?;
        let mut b = if root {
            *self.by_name.get(&(NONE, first))?
        } else {
            let mut p = from;
            loop {
                if let Some(&x) = self.by_name.get(&(p, first)) {
                    break x;
                }
                if p == NONE {
                    return None;
                }
                p = self.list[p as usize].parent;
            }
        };
        for part in parts {
            let s = int.get(part)?;
            b = *self.by_name.get(&(b, s))?;
        }
        Some(b)
    }
}

fn unresolved(kw: Kw, at: String) -> Fail {
    Fail {
        messages: vec![
            format!("Failed to resolve {} statement at {at}", kw.text()),
            "Failed to resolve AST".into(),
            "Failed to compile cildb: -2".into(),
        ],
        status: 254,
    }
}

/// `(macro NAME ((KIND NAME) ...) BODY...)`.
fn parse_macro(
    tree: &Tree,
    int: &Interner,
    n: u32,
    file: u32,
    parent: u32,
    names: &[String],
) -> Result<OMacro, Fail> {
    let bad = |why: String| {
        Fail::bad(vec![
            why,
            format!("Bad macro declaration at {}", loc(tree, names, file, n)),
            "Failed to build AST".into(),
        ])
    };
    let kids = tree.kids(n);
    let name = kids
        .get(1)
        .and_then(|&k| tree.sym(k))
        .filter(|&s| crate::ast::verify_name(int, s, false))
        .ok_or_else(|| bad("Invalid syntax".into()))?;
    let plist = *kids
        .get(2)
        .filter(|&&k| tree.is_list(k))
        .ok_or_else(|| bad("Invalid syntax".into()))?;
    let mut params = Vec::new();
    for &p in tree.kids(plist) {
        let pk = tree.kids(p);
        let (Some(kind), Some(pname)) = (
            pk.first().and_then(|&k| tree.sym(k)),
            pk.get(1).and_then(|&k| tree.sym(k)),
        ) else {
            return Err(bad("Invalid syntax".into()));
        };
        if pk.len() != 2 || !crate::ast::verify_name(int, pname, false) {
            return Err(bad("Invalid syntax".into()));
        }
        let ns = match int.bytes(kind) {
            b"type" => Some(Ns::Types),
            b"role" => Some(Ns::Roles),
            b"user" => Some(Ns::Users),
            b"sensitivity" => Some(Ns::Sens),
            b"category" | b"categoryset" => Some(Ns::Cats),
            b"level" => Some(Ns::Levels),
            b"levelrange" => Some(Ns::LevelRanges),
            b"class" | b"classmap" => Some(Ns::Classes),
            b"classpermission" => Some(Ns::ClassPermissions),
            b"ipaddr" => Some(Ns::IpAddrs),
            b"boolean" => Some(Ns::Bools),
            b"string" | b"name" => None,
            other => {
                return Err(bad(format!(
                    "The kind {} is not allowed as a parameter",
                    String::from_utf8_lossy(other)
                )))
            }
        };
        if params.iter().any(|&(_, q)| q == pname) {
            return Err(bad(format!("Duplicate parameter {}", int.str(pname))));
        }
        params.push((ns, pname));
    }
    // Names the body declares, through its optionals.
    let mut declared = Vec::new();
    let mut st: Vec<u32> = kids[3..].to_vec();
    while let Some(k) = st.pop() {
        match kw_of(tree, k) {
            Some(Kw::Optional) => {
                st.extend(tree.kids(k).iter().skip(2).filter(|&&x| tree.is_list(x)))
            }
            Some(named_declaration_kws!()) => {
                if let Some(s) = tree.kids(k).get(1).and_then(|&x| tree.sym(x)) {
                    declared.push(s);
                }
            }
            _ => {}
        }
    }
    Ok(OMacro {
        name,
        parent,
        node: n,
        file,
        params: params.into(),
        declared: declared.into(),
    })
}

/// `check_for_illegal_statement` for statements inside an `in` (`in_ctx` 1) or an `in
/// after` (2), at any depth: what the statement is not allowed in, if it is not.
fn illegal_in_in(kw: Option<Kw>, in_ctx: u8) -> Option<&'static str> {
    match (kw?, in_ctx) {
        (Kw::Tunable | Kw::In, 1 | 2) => Some("in-statement"),
        (Kw::BlockInherit | Kw::BlockAbstract, 2) => Some("an after in-statement"),
        _ => None,
    }
}

/// Whether a statement of keyword `kw` sits anywhere below list `n`.
fn holds(tree: &Tree, n: u32, kw: Kw) -> bool {
    let mut todo = vec![n];
    while let Some(k) = todo.pop() {
        for &x in tree.kids(k) {
            if tree.is_list(x) {
                if kw_of(tree, x) == Some(kw) {
                    return true;
                }
                todo.push(x);
            }
        }
    }
    false
}

fn kw_of(tree: &Tree, n: u32) -> Option<Kw> {
    tree.kids(n)
        .first()
        .and_then(|&k| tree.sym(k))
        .and_then(Kw::of)
}

/// The keywords [`collect`] acts on, as bits of [`Tree::heads`].
const STRUCTURE: u64 = 1 << Kw::Block as u8
    | 1 << Kw::BlockAbstract as u8
    | 1 << Kw::BlockInherit as u8
    | 1 << Kw::In as u8
    | 1 << Kw::Macro as u8
    | 1 << Kw::TunableIf as u8;

/// Finds the blocks and resolves `in`, `blockinherit` and `blockabstract` targets.
pub fn collect(
    tree: &Tree,
    int: &Interner,
    names: &[String],
    top_tunables: &FxHashMap<Sym, bool>,
    preserve_tunables: bool,
) -> Result<Blocks, Fail> {
    let mut bl = Blocks::default();
    // Without these statements the walk below finds nothing and refuses nothing (what
    // may not sit in an optional or an `in` is among them): most module stores hold
    // none, and walking their 300,000 statements cost 19 M instructions.
    if tree.heads & STRUCTURE == 0 {
        return Ok(bl);
    }
    let here = |file: u32, n: u32| loc(tree, names, file, n);
    // (node, file, block, in optional, inside an `in`: 0 no, 1 before, 2 after)
    let mut stack: Vec<(u32, u32, u32, bool, u8)> = Vec::new();
    let mut ins = Vec::new();
    let mut inherits = Vec::new();
    let mut abstracts = Vec::new();
    // Every file's statements in order, each with what it holds before the next one
    // (they are taken one at a time when the stack is empty), then, once they are all
    // seen, the blocks and macros of each `in` body, declared in the `in`'s target.
    // At the top (no block, optional or `in` around it) a statement matters only when it
    // is one of these: the others are passed over without entering the stack.
    const AT_TOP: u64 = STRUCTURE | 1 << Kw::Optional as u8;
    let matters = |n: u32| {
        kw_of(tree, n).is_some_and(|k| 1u64.checked_shl(k as u32).unwrap_or(0) & AT_TOP != 0)
    };
    let mut top = tree.files.iter().enumerate().flat_map(|(f, &(a, b))| {
        tree.kids[a as usize..b as usize]
            .iter()
            .filter(move |&&n| matters(n))
            .map(move |&n| (n, f as u32, NONE, false, 0))
    });
    let mut next_in = 0;
    // tunableifs seen, decided once every file's tunables are known: the statements of
    // the chosen branch are declared in the tunableif's container (libsepol's first pass
    // copies them there).
    let mut tifs: Vec<(u32, u32, u32, bool, u8)> = Vec::new();
    let mut next_tif = 0;
    let mut in_order: Option<Vec<usize>> = None;
    loop {
        while let Some((n, file, parent, in_opt, in_ctx)) = stack.pop().or_else(|| top.next()) {
            let kw = kw_of(tree, n);
            if let Some(word) = illegal_in_in(kw, in_ctx) {
                return Err(Fail::bad(vec![
                    format!(
                        "{} is not allowed in {word} at {}",
                        kw.map_or("", Kw::text),
                        here(file, n)
                    ),
                    "Failed to build AST".into(),
                    "Failed to compile cildb: -1".into(),
                ]));
            }
            let kids = tree.kids(n);
            match kw {
                Some(Kw::Block) => {
                    if in_opt {
                        return Err(Fail::bad(vec![
                            format!("block is not allowed in optional at {}", here(file, n)),
                            "Failed to build AST".into(),
                        ]));
                    }
                    let name = kids
                        .get(1)
                        .and_then(|&k| tree.sym(k))
                        .filter(|&s| crate::ast::verify_name(int, s, false))
                        .ok_or_else(|| {
                            Fail::bad(vec![
                                "Invalid syntax".into(),
                                format!("Bad block declaration at {}", here(file, n)),
                                "Failed to build AST".into(),
                            ])
                        })?;
                    let mut qual = match parent {
                        NONE => Vec::new(),
                        p => {
                            let mut q = bl.list[p as usize].qual.clone();
                            q.push(b'.');
                            q
                        }
                    };
                    qual.extend_from_slice(int.bytes(name));
                    if bl.by_name.contains_key(&(parent, name))
                        || bl.macro_by_qual.contains_key(&qual)
                    {
                        return Err(Fail::bad(vec![
                            format!("Re-declaration of block {}", int.str(name)),
                            format!("Bad block declaration at {}", here(file, n)),
                            "Failed to build AST".into(),
                        ]));
                    }
                    let id = bl.list.len() as u32;
                    bl.list.push(OBlock {
                        name,
                        parent,
                        node: n,
                        file,
                        abs: false,
                        ins: Vec::new(),
                        qual,
                    });
                    bl.by_name.insert((parent, name), id);
                    bl.of_node.insert(n, id);
                    for &k in kids[2..].iter().rev() {
                        if tree.is_list(k) {
                            stack.push((k, file, id, false, in_ctx));
                        }
                    }
                }
                Some(Kw::Optional) if kids.len() >= 2 => {
                    for &k in kids[2..].iter().rev() {
                        if tree.is_list(k) {
                            stack.push((k, file, parent, true, in_ctx));
                        }
                    }
                }
                Some(Kw::Macro) => {
                    if in_opt {
                        return Err(Fail::bad(vec![
                            format!("macro is not allowed in optional at {}", here(file, n)),
                            "Failed to build AST".into(),
                        ]));
                    }
                    let m = parse_macro(tree, int, n, file, parent, names)?;
                    let mut qual = match parent {
                        NONE => Vec::new(),
                        p => {
                            let mut q = bl.list[p as usize].qual.clone();
                            q.push(b'.');
                            q
                        }
                    };
                    qual.extend_from_slice(int.bytes(m.name));
                    if bl.macro_by_qual.contains_key(&qual)
                        || bl.by_name.contains_key(&(parent, m.name))
                    {
                        return Err(Fail::bad(vec![
                            format!("Re-declaration of macro {}", int.str(m.name)),
                            format!("Bad macro declaration at {}", here(file, n)),
                            "Failed to build AST".into(),
                        ]));
                    }
                    if parent != NONE {
                        let mut st: Vec<u32> = kids[3..].to_vec();
                        while let Some(k) = st.pop() {
                            match kw_of(tree, k) {
                                Some(Kw::TunableIf) => {
                                    bl.tif_block.insert(k, parent);
                                }
                                Some(Kw::Optional) => st.extend(tree.kids(k).iter().skip(2)),
                                _ => {}
                            }
                        }
                    }
                    bl.macro_nodes.insert(n, bl.macros.len() as u32);
                    bl.macro_by_qual.insert(qual, bl.macros.len() as u32);
                    bl.macros.push(m);
                }
                Some(Kw::In) => {
                    if in_opt {
                        return Err(Fail::bad(vec![
                            format!("in is not allowed in optional at {}", here(file, n)),
                            "Failed to build AST".into(),
                        ]));
                    }
                    ins.push((n, file, parent));
                }
                Some(Kw::TunableIf) => {
                    if parent != NONE {
                        bl.tif_block.insert(n, parent);
                    }
                    if !preserve_tunables {
                        tifs.push((n, file, parent, in_opt, in_ctx));
                    }
                }
                Some(Kw::Tunable) if parent != NONE && kids.len() == 3 => {
                    if let Some(name) = tree.sym(kids[1]) {
                        let mut q = bl.list[parent as usize].qual.clone();
                        q.push(b'.');
                        q.extend_from_slice(int.bytes(name));
                        bl.tunables
                            .entry(q)
                            .or_insert(tree.sym(kids[2]) == Some(Kw::True.sym()));
                    }
                }
                Some(Kw::BlockInherit) => inherits.push((n, file, parent, in_opt)),
                Some(Kw::BlockAbstract) => {
                    if in_opt {
                        return Err(Fail::bad(vec![
                            format!(
                                "blockabstract is not allowed in optional at {}",
                                here(file, n)
                            ),
                            "Failed to build AST".into(),
                        ]));
                    }
                    abstracts.push((n, file, parent))
                }
                _ => {}
            }
        }
        // TIF: each tunableif (those of chosen branches too), once every file is walked.
        if let Some(&(n, file, parent, in_opt, in_ctx)) = tifs.get(next_tif) {
            next_tif += 1;
            let lookup = |sym: Sym| {
                if parent == NONE {
                    top_tunables.get(&sym).copied()
                } else {
                    crate::ast::tunable_as_written(int, &bl, top_tunables, Some(parent), sym)
                }
            };
            let kids = tree.kids(n);
            // Statements anywhere below the tunableif, either branch.
            let mut below: Vec<u32> = kids.iter().skip(2).copied().collect();
            while let Some(k) = below.pop() {
                if !tree.is_list(k) {
                    continue;
                }
                if kw_of(tree, k) == Some(Kw::Tunable) {
                    return Err(Fail::bad(vec![
                        format!("tunable is not allowed in tunableif at {}", here(file, k)),
                        "Failed to build AST".into(),
                        "Failed to compile cildb: -1".into(),
                    ]));
                }
                below.extend(tree.kids(k).iter().copied());
            }
            let Some(value) = kids
                .get(1)
                .and_then(|&e| crate::ast::eval_tunable(tree, &lookup, e))
            else {
                continue; // the statement walk reports it
            };
            let want = if value { Kw::True } else { Kw::False };
            let chosen = kids
                .iter()
                .skip(2)
                .rfind(|&&b| tree.kids(b).first().and_then(|&k| tree.sym(k)) == Some(want.sym()));
            if let Some(&b) = chosen {
                // libsepol cannot copy an `in`: a chosen branch holding one fails.
                if holds(tree, b, Kw::In) {
                    let to = match parent {
                        NONE => "<src_info>".to_string(),
                        p => {
                            let o = &bl.list[p as usize];
                            format!("block at {}", here(o.file, o.node))
                        }
                    };
                    return Err(Fail::bad(vec![
                        format!("Failed to copy {} to {to}", want.text()),
                        "Failed to resolve AST".into(),
                        "Failed to compile cildb: -1".into(),
                    ]));
                }
                bl.tif_choice.insert(n, b);
                for &k in tree.kids(b)[1..].iter().rev() {
                    if tree.is_list(k) {
                        stack.push((k, file, parent, in_opt, in_ctx));
                    }
                }
            }
            continue;
        }
        // IN_BEFORE/IN_AFTER: the target, then the body's own blocks, macros,
        // blockinherit and blockabstract statements, which now sit in the target.
        // libsepol gathers `in`s by prepending and applies the before ones, then the
        // after ones: each group latest first (this order decides which of two clashing
        // bodies is refused).
        let order = in_order.get_or_insert_with(|| {
            let is_after = |n: u32| {
                let k = tree.kids(n);
                k.len() >= 3
                    && tree.sym(k[2]).is_some()
                    && k.get(1).and_then(|&x| tree.sym(x)).map(|x| int.bytes(x)) == Some(b"after")
            };
            let mut o: Vec<usize> = (0..ins.len())
                .rev()
                .filter(|&i| !is_after(ins[i].0))
                .collect();
            o.extend((0..ins.len()).rev().filter(|&i| is_after(ins[i].0)));
            o
        });
        let Some(&(n, file, parent)) = order.get(next_in).map(|&i| &ins[i]) else {
            break;
        };
        next_in += 1;
        let kids = tree.kids(n);
        let bad = || {
            Fail::bad(vec![
                "Invalid syntax".into(),
                format!("Bad in declaration at {}", here(file, n)),
                "Failed to build AST".into(),
            ])
        };
        let mut at = 1;
        let mut after = false;
        let first = kids.get(1).and_then(|&k| tree.sym(k)).ok_or_else(bad)?;
        if kids.len() >= 3 && tree.sym(kids[2]).is_some() {
            match int.bytes(first) {
                b"before" => {}
                b"after" => after = true,
                _ => return Err(bad()),
            }
            at = 2;
        }
        let name = tree.sym(kids[at]).ok_or_else(bad)?;
        let target = bl
            .find(int, parent, name)
            .ok_or_else(|| unresolved(Kw::In, here(file, n)))?;
        bl.list[target as usize].ins.push((n, file, after));
        bl.in_nodes.insert(n, at as u32 + 1);
        let mut st: Vec<(u32, bool)> = kids[at + 1..].iter().map(|&k| (k, false)).collect();
        while let Some((k, k_opt)) = st.pop() {
            let kw = kw_of(tree, k);
            if let Some(word) = illegal_in_in(kw, if after { 2 } else { 1 }) {
                return Err(Fail::bad(vec![
                    format!(
                        "{} is not allowed in {word} at {}",
                        kw.map_or("", Kw::text),
                        here(file, k)
                    ),
                    "Failed to build AST".into(),
                    "Failed to compile cildb: -1".into(),
                ]));
            }
            match kw {
                // Declared in the target, as libsepol copies them there.
                Some(Kw::Block | Kw::Macro) => {
                    let clash = tree
                        .kids(k)
                        .get(1)
                        .and_then(|&x| tree.sym(x))
                        .is_some_and(|name| bl.by_name.contains_key(&(target, name)));
                    if clash && kw == Some(Kw::Block) && !k_opt {
                        let t = &bl.list[target as usize];
                        return Err(Fail::bad(vec![
                            "  Re-declaration of block is only allowed when inheriting a block"
                                .into(),
                            format!("Failed to copy in to block at {}", here(t.file, t.node)),
                            format!("Failed to copy in-statement at {}", here(file, n)),
                            "Failed to resolve AST".into(),
                            "Failed to compile cildb: -1".into(),
                        ]));
                    }
                    stack.push((k, file, target, k_opt, if after { 2 } else { 1 }))
                }
                Some(Kw::TunableIf) => {
                    bl.tif_block.insert(k, parent);
                }
                Some(Kw::BlockInherit) => inherits.push((k, file, target, k_opt)),
                Some(Kw::BlockAbstract) if k_opt => {
                    return Err(Fail::bad(vec![
                        format!(
                            "blockabstract is not allowed in optional at {}",
                            here(file, k)
                        ),
                        "Failed to build AST".into(),
                    ]))
                }
                Some(Kw::BlockAbstract) => abstracts.push((k, file, target)),
                Some(Kw::Optional) => st.extend(
                    tree.kids(k)
                        .iter()
                        .skip(2)
                        .filter(|&&x| tree.is_list(x))
                        .map(|&x| (x, true)),
                ),
                _ => {}
            }
        }
    }
    // Each block's `in`s in reverse document order (statement nodes are numbered in
    // document order), as libsepol applies them.
    for b in &mut bl.list {
        b.ins.sort_by_key(|x| std::cmp::Reverse(x.0));
    }
    // Blocks holding an `in` (at any depth) cannot be copied by libsepol: inheriting one
    // fails.
    let mut holds_in = vec![false; bl.list.len()];
    for &(_, _, p) in &ins {
        let mut x = p;
        while x != NONE && !holds_in[x as usize] {
            holds_in[x as usize] = true;
            x = bl.list[x as usize].parent;
        }
    }
    // BLKIN_LINK and BLKABS.
    let mut adj: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); bl.list.len()];
    for (i, b) in bl.list.iter().enumerate() {
        if b.parent != NONE {
            adj[b.parent as usize].push((i as u32, NONE, NONE));
        }
    }
    for &(n, file, parent, in_opt) in &inherits {
        let name = tree
            .kids(n)
            .get(1)
            .and_then(|&k| tree.sym(k))
            .filter(|_| tree.kids(n).len() == 2)
            .ok_or_else(|| {
                Fail::bad(vec![
                    "Invalid syntax".into(),
                    format!("Bad blockinherit declaration at {}", here(file, n)),
                    "Failed to build AST".into(),
                ])
            })?;
        let Some(t) = bl.find(int, parent, name) else {
            if in_opt {
                // The optional is disabled (by the resolver, as for any missing name).
                bl.unresolved_inherits.insert(n);
                continue;
            }
            return Err(unresolved(Kw::BlockInherit, here(file, n)));
        };
        if holds_in[t as usize] {
            return Err(Fail::bad(vec![
                format!("Failed to copy block to blockinherit at {}", here(file, n)),
                "Failed to copy block contents into blockinherit".into(),
                "Failed to resolve AST".into(),
                "Failed to compile cildb: -1".into(),
            ]));
        }
        bl.inherit_of.insert(n, t);
        if parent != NONE {
            adj[parent as usize].push((t, n, file));
        }
    }
    for &(n, file, parent) in &abstracts {
        let name = tree
            .kids(n)
            .get(1)
            .and_then(|&k| tree.sym(k))
            .filter(|_| tree.kids(n).len() == 2)
            .ok_or_else(|| {
                Fail::bad(vec![
                    "Invalid syntax".into(),
                    format!("Bad blockabstract declaration at {}", here(file, n)),
                    "Failed to build AST".into(),
                ])
            })?;
        let t = bl
            .find(int, parent, name)
            .ok_or_else(|| unresolved(Kw::BlockAbstract, here(file, n)))?;
        bl.list[t as usize].abs = true;
        bl.abstract_of.insert(n, t);
    }
    // A copy that contains (through nested blocks and further inheritance) its own
    // inheritor never ends: a cycle in the graph of "contains" and "inherits" edges.
    let mut color = vec![0u8; bl.list.len()];
    for start in 0..bl.list.len() {
        if color[start] != 0 {
            continue;
        }
        // (block, next edge index, the blockinherit that led here)
        let mut path: Vec<(u32, usize)> = vec![(start as u32, 0)];
        color[start] = 1;
        while let Some(top) = path.last_mut() {
            let (b, i) = *top;
            if i == adj[b as usize].len() {
                color[b as usize] = 2;
                path.pop();
                continue;
            }
            top.1 += 1;
            let (t, bi, bfile) = adj[b as usize][i];
            match color[t as usize] {
                0 => {
                    color[t as usize] = 1;
                    path.push((t, 0));
                }
                1 => {
                    // The loop's edges: from t's position on the path to here; name the
                    // first blockinherit among them.
                    let from = path.iter().position(|&(x, _)| x == t).unwrap_or(0);
                    let mut culprit = (bi, bfile);
                    for &(x, j) in &path[from..] {
                        let (_, n2, f2) = adj[x as usize][j - 1];
                        if n2 != NONE {
                            culprit = (n2, f2);
                            break;
                        }
                    }
                    let (n, f) = culprit;
                    let mut lines =
                        loop_report(&bl, &adj, inherits.len(), &here).unwrap_or_else(|| {
                            vec![format!("Block inheritance loop found at {}", here(f, n))]
                        });
                    lines.extend([
                        "Failed to resolve AST".into(),
                        "Failed to compile cildb: -1".into(),
                    ]);
                    return Err(Fail::bad(lines));
                }
                _ => {}
            }
        }
    }
    Ok(bl)
}

/// A block being walked by [`loop_report`]: the block, its next child, and the
/// blockinherit (node, file) whose expansion it is (`None` for a nested block).
type LoopFrame = (u32, usize, Option<(u32, u32)>);

/// libsepol 3.4's report of an inheritance loop, found as `cil_check_inheritances` finds
/// it: a walk of the blocks in tree order that expands each `blockinherit` (the blocks
/// being expanded on a stack) until one names a block on the stack: `Block inheritance
/// loop found at` that block, `  blockinherit at` the statement, then one such line for
/// each enclosing expansion as the walk unwinds; or, when more than libsepol's bound of
/// expansions (ten per `blockinherit`, at least 1,024) come first, its `Degenerate
/// inheritance detected`. `adj` holds each block's nested blocks (`NONE` statement) and
/// its `blockinherit` targets; `n_inherits` the number of `blockinherit` statements.
/// `None` when the walk meets no loop (the caller's own report then stands).
fn loop_report(
    bl: &Blocks,
    adj: &[Vec<(u32, u32, u32)>],
    n_inherits: usize,
    here: &impl Fn(u32, u32) -> String,
) -> Option<Vec<String>> {
    // Each block's nested blocks and blockinherits in tree order (nodes are numbered in
    // the order they are written).
    let mut kids = adj.to_vec();
    for k in &mut kids {
        k.sort_by_key(|&(t, n, _)| {
            if n == NONE {
                bl.list[t as usize].node
            } else {
                n
            }
        });
    }
    let max = (n_inherits * 10).max(1024);
    let mut count = 0usize;
    let mut expanding: Vec<u32> = Vec::new();
    let mut roots: Vec<u32> = (0..bl.list.len() as u32)
        .filter(|&b| bl.list[b as usize].parent == NONE)
        .collect();
    roots.sort_by_key(|&b| bl.list[b as usize].node);
    for root in roots {
        let mut frames: Vec<LoopFrame> = vec![(root, 0, None)];
        while let Some(top) = frames.last_mut() {
            let (b, i, via) = *top;
            let Some(&(t, n, f)) = kids[b as usize].get(i) else {
                frames.pop();
                if via.is_some() {
                    expanding.pop();
                }
                continue;
            };
            top.1 += 1;
            if n == NONE {
                frames.push((t, 0, None));
                continue;
            }
            count += 1;
            if count > max {
                return Some(vec![format!(
                    "Degenerate inheritance detected at {}",
                    here(f, n)
                )]);
            }
            if expanding.contains(&t) {
                let target = &bl.list[t as usize];
                let mut lines = vec![
                    format!(
                        "Block inheritance loop found at {}",
                        here(target.file, target.node)
                    ),
                    format!("  blockinherit at {}", here(f, n)),
                ];
                lines.extend(
                    frames
                        .iter()
                        .rev()
                        .filter_map(|&(_, _, via)| via)
                        .map(|(vn, vf)| format!("  blockinherit at {}", here(vf, vn))),
                );
                return Some(lines);
            }
            expanding.push(t);
            frames.push((t, 0, Some((n, f))));
        }
    }
    None
}
