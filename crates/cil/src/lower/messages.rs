//! Error-message text: statements as CIL text and the lines secilc adds when the
//! binary policy fails to build.

use super::*;

/// The lines secilc adds when a statement fails while the binary policy is built.
pub(super) fn binary_failed(l: &L<'_>, s: u32) -> [String; 3] {
    [
        format!("Binary policy creation failed at {}", l.here(s)),
        "Failed to generate binary".into(),
        "Failed to build policydb".into(),
    ]
}

/// A statement as CIL text (atoms and lists), for messages.
pub(super) fn node_text(l: &L<'_>, n: u32) -> String {
    let mut out = String::new();
    let mut stack: Vec<(u32, usize)> = vec![(n, 0)];
    while let Some((node, i)) = stack.pop() {
        if !l.t.is_list(node) {
            out.push_str(&l.int.str(l.sym(node)));
            continue;
        }
        let k = l.t.kids(node);
        if i == 0 {
            out.push('(');
        }
        if i < k.len() {
            if i > 0 {
                out.push(' ');
            }
            stack.push((node, i + 1));
            stack.push((k[i], 0));
        } else {
            out.push(')');
        }
    }
    out
}

pub(super) fn ast_name(l: &L<'_>, d: u32) -> String {
    l.name(d)
}
