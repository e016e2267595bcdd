//! Scopes of blocks, their copies and macro calls, and macro lookup from a scope.

use super::*;

/// The macros among the children of block node `block`, copied into scope `sc`.
pub(super) fn register_macros(
    ast: &Ast,
    blocks: &crate::blocks::Blocks,
    tree: &Tree,
    int: &Interner,
    block: u32,
    sc: u32,
    out: &mut FxHashMap<Vec<u8>, (u32, u32)>,
) {
    if blocks.macro_nodes.is_empty() {
        return;
    }
    let prefix = &ast.scopes[sc as usize].prefix;
    // The block's own statements, then the bodies of the `in`s copied into it before
    // inheritance (macros declared there belong to the block too).
    let own = tree.kids(block).get(2..).unwrap_or(&[]);
    let ins: &[(u32, u32, bool)] = match blocks.of_node.get(&block) {
        Some(&b) => &blocks.list[b as usize].ins,
        None => &[],
    };
    let in_bodies = ins.iter().filter(|x| !x.2).map(|&(inode, _, _)| {
        let at = blocks.in_nodes.get(&inode).copied().unwrap_or(0) as usize;
        tree.kids(inode).get(at..).unwrap_or(&[])
    });
    let mut register = |k: u32| {
        if let Some(&mid) = blocks.macro_nodes.get(&k) {
            let name = int.bytes(blocks.macros[mid as usize].name);
            let mut q = Vec::with_capacity(prefix.len() + 1 + name.len());
            q.extend_from_slice(prefix);
            if !q.is_empty() {
                q.push(b'.');
            }
            q.extend_from_slice(name);
            out.insert(q, (mid, sc));
        }
    };
    // Chosen tunableif branches count as the block's own statements, in their place
    // (the stack is only needed, and allocated, when there is one).
    let mut todo: Vec<u32> = Vec::new();
    for &k in std::iter::once(own).chain(in_bodies).flatten() {
        match blocks.tif_choice.get(&k) {
            None => register(k),
            Some(&b) => {
                todo.extend(tree.kids(b)[1..].iter().rev());
                while let Some(k) = todo.pop() {
                    match blocks.tif_choice.get(&k) {
                        Some(&b) => todo.extend(tree.kids(b)[1..].iter().rev()),
                        None => register(k),
                    }
                }
            }
        }
    }
}

/// The macro `name` names from `scope`: the scope's tables in lookup order, then the top;
/// a macro copied by a blockinherit comes with the scope its body's lookups continue from.
pub(super) fn find_macro(
    ast: &Ast,
    blocks: &crate::blocks::Blocks,
    copies: &FxHashMap<Vec<u8>, (u32, u32)>,
    int: &Interner,
    scope: u32,
    name: Sym,
) -> Option<(u32, Option<u32>)> {
    let get = |q: &[u8]| {
        if let Some(&(m, sc)) = copies.get(q) {
            return Some((m, Some(sc)));
        }
        blocks.macro_by_qual.get(q).map(|&m| (m, None))
    };
    let b = int.bytes(name);
    if let Some(rest) = b.strip_prefix(b".") {
        return get(rest);
    }
    if scope == NONE {
        return get(b);
    }
    let mut q = Vec::new();
    for s in ast.table_chain(scope) {
        q.clear();
        q.extend_from_slice(&ast.scopes[s as usize].prefix);
        q.push(b'.');
        q.extend_from_slice(b);
        if let Some(x) = get(&q) {
            return Some(x);
        }
    }
    get(b)
}

/// A new scope; its table is shared with every scope of the same prefix.
pub(super) fn new_scope(
    ast: &mut Ast,
    tables: &mut FxHashMap<Vec<u8>, u32>,
    prefix: Vec<u8>,
    abs: bool,
    parent: u32,
    orig: u32,
    copy: bool,
) -> u32 {
    let table = match tables.get(&prefix) {
        Some(&t) => t,
        None => {
            let n = tables.len() as u32;
            tables.insert(prefix.clone(), n);
            n
        }
    };
    ast.scopes.push(Scope {
        prefix,
        table,
        abs,
        parent,
        orig,
        copy,
        call: NONE,
    });
    ast.scopes.len() as u32 - 1
}

/// The scope of block `b` as written (and of its enclosing blocks), made once.
pub(super) fn original_scope(
    ast: &mut Ast,
    tables: &mut FxHashMap<Vec<u8>, u32>,
    blocks: &crate::blocks::Blocks,
    memo: &mut [u32],
    b: u32,
) -> u32 {
    // The chain of blocks without a scope yet, innermost first.
    let mut chain = Vec::new();
    let mut x = b;
    while x != NONE && memo[x as usize] == NONE {
        chain.push(x);
        x = blocks.list[x as usize].parent;
    }
    for &y in chain.iter().rev() {
        let o = &blocks.list[y as usize];
        let parent = match o.parent {
            NONE => NONE,
            p => memo[p as usize],
        };
        memo[y as usize] = new_scope(ast, tables, o.qual.clone(), o.abs, parent, NONE, false);
    }
    memo[b as usize]
}
