//! Lexer and parser: CIL text to a flat tree of atoms and lists (one per file).
//!
//! Follows libsepol's `cil_lexer.l` token classes and `cil_parser.c` checks and messages.
//! Nesting is tracked with a counter and an explicit stack, never recursion, and stops at
//! libsepol's limit of 4096 open parentheses.

use crate::intern::{Interner, Sym};

/// libsepol's `CIL_PARSER_MAX_EXPR_DEPTH`.
pub const MAX_DEPTH: usize = 4096;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Atom,
    /// A quoted string (quotes stripped).
    Quoted,
    List,
}

/// One node: an atom (`a` = symbol) or a list (`a..b` = range in [`Tree::kids`]).
/// Twelve bytes: the kind lives in the top two bits of the line word (files of more than
/// 2^30 lines are refused), since Debian's store alone makes about five million nodes.
#[derive(Copy, Clone, Debug)]
pub struct Node {
    line_kind: u32,
    pub a: u32,
    pub b: u32,
}

const LINE_MASK: u32 = (1 << 30) - 1;

impl Node {
    fn new(kind: NodeKind, line: u32, a: u32) -> Node {
        let k = match kind {
            NodeKind::Atom => 0,
            NodeKind::Quoted => 1,
            NodeKind::List => 2,
        };
        Node {
            line_kind: (k << 30) | (line & LINE_MASK),
            a,
            b: 0,
        }
    }
    #[inline]
    pub fn line(&self) -> u32 {
        self.line_kind & LINE_MASK
    }
    #[inline]
    pub fn kind(&self) -> NodeKind {
        match self.line_kind >> 30 {
            0 => NodeKind::Atom,
            1 => NodeKind::Quoted,
            _ => NodeKind::List,
        }
    }
}

/// The parse of all files: nodes and child lists of every file in one arena.
#[derive(Default)]
pub struct Tree {
    pub nodes: Vec<Node>,
    pub kids: Vec<u32>,
    /// Per file: the top-level statements (range in `kids`).
    pub files: Vec<(u32, u32)>,
}

impl Tree {
    #[inline]
    pub fn kids(&self, n: u32) -> &[u32] {
        let nd = &self.nodes[n as usize];
        if nd.kind() == NodeKind::List {
            &self.kids[nd.a as usize..nd.b as usize]
        } else {
            &[]
        }
    }
    #[inline]
    pub fn node(&self, n: u32) -> &Node {
        &self.nodes[n as usize]
    }
    #[inline]
    pub fn is_list(&self, n: u32) -> bool {
        self.nodes[n as usize].kind() == NodeKind::List
    }
    /// The symbol of an atom (quoted or not), None for a list.
    #[inline]
    pub fn sym(&self, n: u32) -> Option<Sym> {
        let nd = &self.nodes[n as usize];
        (nd.kind() != NodeKind::List).then_some(nd.a)
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
                line += 1;
                if line > LINE_MASK {
                    return Err(format!("{path} has more than {LINE_MASK} lines"));
                }
                i += 1;
            }
            b' ' | b'\t' => i += 1,
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
                nodes.push(Node::new(NodeKind::List, line, 0));
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
                kids.extend(pending.drain(start..));
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
                let id = nodes.len() as u32;
                nodes.push(Node::new(NodeKind::Quoted, line, sym));
                pending.push(id);
                i = j + 1;
            }
            c if is_symbol_byte(c) => {
                let mut j = i + 1;
                while j < n && is_symbol_byte(text[j]) {
                    j += 1;
                }
                if open.is_empty() {
                    return Err(format!(
                        "Symbol not inside parenthesis at line {line} of {path}"
                    ));
                }
                let sym = interner.intern(&text[i..j]);
                let id = nodes.len() as u32;
                nodes.push(Node::new(NodeKind::Atom, line, sym));
                pending.push(id);
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
