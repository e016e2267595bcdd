//! Lexer and parser: CIL text to a flat tree of atoms and lists (one per file).
//!
//! Follows libsepol's `cil_lexer.l` token classes and `cil_parser.c` checks and messages.
//! Nesting is tracked with a counter and an explicit stack, never recursion, and stops at
//! libsepol's limit of 4096 open parentheses.

use crate::intern::{Interner, Sym};

/// libsepol's `CIL_PARSER_MAX_EXPR_DEPTH`.
pub const MAX_DEPTH: usize = 4096;

/// A reference to a tree element, as stored in [`Tree::kids`]: a list (index into
/// [`Tree::nodes`]) or, with [`ATOM`] set, an atom's symbol. Atoms take no node: they are
/// three quarters of CIL's elements, so the arena holds lists only.
pub const ATOM: u32 = 1 << 31;

/// One list: its line and its elements (`a..b` in [`Tree::kids`]).
#[derive(Copy, Clone, Debug)]
pub struct Node {
    line: u32,
    pub a: u32,
    pub b: u32,
}

impl Node {
    #[inline]
    pub fn line(&self) -> u32 {
        self.line
    }
}

/// The parse of all files: lists and their elements of every file in one arena.
#[derive(Default)]
pub struct Tree {
    pub nodes: Vec<Node>,
    pub kids: Vec<u32>,
    /// Per file: the top-level statements (range in `kids`).
    pub files: Vec<(u32, u32)>,
}

impl Tree {
    /// The elements of a list (nothing for an atom).
    #[inline]
    pub fn kids(&self, n: u32) -> &[u32] {
        if n & ATOM != 0 {
            return &[];
        }
        let nd = &self.nodes[n as usize];
        &self.kids[nd.a as usize..nd.b as usize]
    }
    /// A list's node (statements and branches are lists).
    #[inline]
    pub fn node(&self, n: u32) -> &Node {
        &self.nodes[(n & !ATOM) as usize]
    }
    #[inline]
    pub fn is_list(&self, n: u32) -> bool {
        n & ATOM == 0
    }
    /// Appends a list (a rewritten copy of a statement) with `line` for messages.
    pub fn push_list(&mut self, line: u32, kids: &[u32]) -> u32 {
        let a = self.kids.len() as u32;
        self.kids.extend_from_slice(kids);
        let id = self.nodes.len() as u32;
        self.nodes.push(Node {
            line,
            a,
            b: self.kids.len() as u32,
        });
        id
    }
    /// Appends a copy of list `n` (same line, same elements), copied within the arena.
    pub fn copy_list(&mut self, n: u32) -> u32 {
        let nd = self.nodes[n as usize];
        let a = self.kids.len() as u32;
        self.kids.extend_from_within(nd.a as usize..nd.b as usize);
        let id = self.nodes.len() as u32;
        self.nodes.push(Node {
            line: nd.line,
            a,
            b: self.kids.len() as u32,
        });
        id
    }
    /// The symbol of an atom (quoted or not), None for a list.
    #[inline]
    pub fn sym(&self, n: u32) -> Option<Sym> {
        (n & ATOM != 0).then_some(n & !ATOM)
    }
}

/// Bytes that make up symbols (`cil_lexer.l`: letters, digits and the special characters).
const SYMBOL_BYTES: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric();
        c += 1;
    }
    let specials = b"[].@=/*-_$%+!|&^:~`#{}'<>?,";
    let mut i = 0;
    while i < specials.len() {
        t[specials[i] as usize] = true;
        i += 1;
    }
    t
};

#[inline]
fn is_symbol_byte(c: u8) -> bool {
    SYMBOL_BYTES[c as usize]
}

/// The length of the run of symbol bytes that starts `s`: eight bytes per step while
/// all eight are symbol bytes (most identifiers are longer than eight), then one by one.
#[inline]
fn symbol_len(s: &[u8]) -> usize {
    let mut j = 0;
    for c in s.chunks_exact(8) {
        let all = c.iter().fold(true, |a, &b| a & is_symbol_byte(b));
        if !all {
            break;
        }
        j += 8;
    }
    j + s[j..]
        .iter()
        .position(|&b| !is_symbol_byte(b))
        .unwrap_or(s.len() - j)
}

/// Parses one file into the shared arena and symbol table (files are parsed one after the
/// other: the work is dominated by the lexer, and one arena avoids copying and re-interning
/// per-file results, which costs more CPU than a second core saves in wall time).
/// `Err` is libsepol's message.
pub fn parse_file(
    tree: &mut Tree,
    interner: &mut Interner,
    path: &str,
    text: &[u8],
) -> Result<(), String> {
    let nodes = &mut tree.nodes;
    let kids = &mut tree.kids;
    // Children of the open lists, flattened; `open` holds (list node, start in pending).
    let mut pending: Vec<u32> = Vec::new();
    let mut open: Vec<(u32, usize)> = Vec::new();
    let mut top: Vec<u32> = Vec::new();
    let mut line: u32 = 1;
    let mut i = 0usize;
    let n = text.len();
    while i < n {
        let c = text[i];
        match c {
            b'\n' | b'\r' => {
                line = line.saturating_add(1);
                i += 1;
            }
            b' ' | b'\t' => {
                i += 1;
                while i < n && matches!(text[i], b' ' | b'\t') {
                    i += 1;
                }
            }
            b';' => {
                while i < n && text[i] != b'\n' && text[i] != b'\r' {
                    i += 1;
                }
            }
            b'(' => {
                if open.len() >= MAX_DEPTH {
                    return Err(format!(
                        "Number of open parenthesis exceeds limit of {MAX_DEPTH} at line {line} of {path}"
                    ));
                }
                let id = nodes.len() as u32;
                if id >= ATOM {
                    return Err(format!("Too many lists at line {line} of {path}"));
                }
                nodes.push(Node { line, a: 0, b: 0 });
                match open.last() {
                    Some(_) => pending.push(id),
                    None => top.push(id),
                }
                open.push((id, pending.len()));
                i += 1;
            }
            b')' => {
                let Some((id, start)) = open.pop() else {
                    return Err(format!(
                        "Close parenthesis without matching open at line {line} of {path}"
                    ));
                };
                let a = kids.len() as u32;
                kids.extend_from_slice(&pending[start..]);
                pending.truncate(start);
                let nd = &mut nodes[id as usize];
                nd.a = a;
                nd.b = kids.len() as u32;
                i += 1;
            }
            b'"' => {
                let mut j = i + 1;
                while j < n && text[j] != b'"' && text[j] != b'\n' && text[j] != 0 {
                    j += 1;
                }
                if j >= n || text[j] != b'"' {
                    return Err(format!("Invalid token '\"' at line {line} of {path}"));
                }
                if open.is_empty() {
                    return Err(format!(
                        "Symbol not inside parenthesis at line {line} of {path}"
                    ));
                }
                let sym = interner.intern(&text[i + 1..j]);
                if sym >= ATOM {
                    return Err(format!("Too many distinct names at line {line} of {path}"));
                }
                pending.push(ATOM | sym);
                i = j + 1;
            }
            c if is_symbol_byte(c) => {
                let j = i + symbol_len(&text[i..]);
                if open.is_empty() {
                    return Err(format!(
                        "Symbol not inside parenthesis at line {line} of {path}"
                    ));
                }
                let sym = interner.intern(&text[i..j]);
                if sym >= ATOM {
                    return Err(format!("Too many distinct names at line {line} of {path}"));
                }
                pending.push(ATOM | sym);
                i = j;
            }
            other => {
                let shown = if other.is_ascii() {
                    (other as char).to_string()
                } else {
                    format!("\\x{other:02x}")
                };
                return Err(format!("Invalid token '{shown}' at line {line} of {path}"));
            }
        }
    }
    if !open.is_empty() {
        return Err(format!(
            "Open parenthesis without matching close at line {line} of {path}"
        ));
    }
    let a = kids.len() as u32;
    kids.extend_from_slice(&top);
    tree.files.push((a, kids.len() as u32));
    Ok(())
}
