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

/// libsepol's report (`__cil_insert_type_rule`) of type rule statement `s` whose key
/// (source, target, class: type values and class position) already holds another
/// result in the unconditional table: the conflict in the policy's names, the rule as
/// written, then [`binary_failed`]'s lines.
pub(super) fn type_rule_conflict(
    l: &L<'_>,
    s: u32,
    (src, tgt, class): (u32, u32, u32),
    result: u32,
    existing: u32,
) -> Vec<String> {
    let type_name = |v: u32| {
        l.type_val
            .iter()
            .position(|&x| x == v)
            .map(|i| l.name(l.types[i]))
            .unwrap_or_default()
    };
    let a = l.args(s);
    let written = |n: u32| l.int.str(l.sym(n)).into_owned();
    let mut lines = vec![
        format!(
            "Conflicting type rules (scontext={} tcontext={} tclass={} result={}), existing={}",
            type_name(src),
            type_name(tgt),
            l.name(l.classes[class as usize]),
            type_name(result),
            type_name(existing)
        ),
        format!(
            "Expanded from type rule (scontext={} tcontext={} tclass={} result={})",
            written(a[1]),
            written(a[2]),
            written(a[3]),
            written(a[a.len() - 1])
        ),
    ];
    lines.extend(binary_failed(l, s));
    lines
}

/// libsepol's report (`__cil_cond_to_policydb`) of named type transition `rule` in
/// branch `branch` of booleanif `cond`, which a conditional cannot hold: the refusal,
/// the walk of the branch failing, then [`binary_failed`]'s lines for the booleanif.
pub(super) fn cond_named_transition(l: &L<'_>, rule: u32, cond: u32, branch: bool) -> Vec<String> {
    let mut lines = vec![
        "typetransition with file name not allowed within a booleanif block.".to_string(),
        format!("Invalid typetransition statement at {}", l.here(rule)),
        format!(
            "Failure while walking {} conditional block at {}",
            if branch { "true" } else { "false" },
            l.here(cond)
        ),
    ];
    lines.extend(binary_failed(l, cond));
    lines
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
