//! Conditional policy: boolean expressions guarding lists of access vector table entries.

use crate::ids::BoolId;
use std::ops::Range;

/// A node of a postfix boolean expression.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CondExpr {
    Bool(BoolId),
    Not,
    Or,
    And,
    Xor,
    Eq,
    Neq,
}

/// One `if` statement: its expression and the ranges of [`crate::Policy::cond_avtab`]
/// entries that apply when it is true or false.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CondNode {
    /// The state the compiler computed from the booleans' defaults.
    pub cur_state: bool,
    pub expr: Box<[CondExpr]>,
    pub true_list: Range<u32>,
    pub false_list: Range<u32>,
}

use crate::avtab::{self, Avtab, AvtabKey, AvtabKeys, Item};
use crate::cursor::Cursor;
use crate::error::{PolicyError, Result};
use crate::keytab::KeyMap;
use crate::read::Counts;

/// Expression node types as stored (the kernel's `COND_BOOL` .. `COND_NEQ`).
const COND_BOOL: u32 = 1;
const COND_NOT: u32 = 2;
const COND_OR: u32 = 3;
const COND_AND: u32 = 4;
const COND_XOR: u32 = 5;
const COND_EQ: u32 = 6;
const COND_NEQ: u32 = 7;
/// The evaluation stack depth of the kernel's `cond_evaluate_expr` (and libsepol's check).
const COND_EXPR_MAXDEPTH: usize = 10;

const NODE: &str = "conditional node";
const EXPR: &str = "conditional expression";
const LIST: &str = "conditional rule list";
const RULE: &str = "conditional rule";

/// The smallest node: state, expression length and the two list lengths (the kernel's
/// bound too). An empty expression is refused once read, with a message that says so.
const MIN_NODE_SIZE: usize = 16;

/// What the kernel's `cond_insertf` needs to know about the rules read so far: type rules may
/// not repeat an unconditional one, nor one in another conditional list, except that a
/// node's false list may repeat (once) a rule of its own true list.
struct TypeRuleCheck<'a> {
    /// The unconditional table and the keys of its type rules.
    unconditional: (&'a Avtab, &'a AvtabKeys),
    /// For each conditional type-rule key: how many entries have it, and the last one's
    /// index in the shared table (a count of 0 means not seen yet).
    conditional: KeyMap<(u32, u32)>,
}

/// Reads the conditional policy (the kernel's `cond_read_list`): the `if` nodes, with the
/// rules of all their true and false lists appended, in file order, to one shared table
/// whose ranges each node records.
///
/// Checks follow the kernel's `cond_read_node`, `expr_node_isvalid` and `cond_insertf`. In
/// addition, as libsepol's policy validation does, the expression must be well-formed
/// postfix (never more than 10 deep, exactly one result) and the stored state must be 0
/// or 1: the kernel would load a malformed expression and evaluate it as "undefined",
/// disabling the node's rules on both branches, which no compiler produces and the model
/// does not represent.
///
/// Also beyond the kernel, each rule's stored enabled flag must agree with its node's
/// stored state (set in the true list exactly when the state is true, in the false list
/// exactly when it is false). The kernel applies the flags as stored until a boolean
/// changes; libsepol and the kernel always write them so, and the model keeps only the
/// node's state, which therefore says exactly which rules the loaded policy applies.
///
/// `unconditional` is the unconditional table and the keys of its type rules, as
/// [`avtab::read`] returns them.
pub(crate) fn read(
    c: &mut Cursor<'_>,
    counts: &Counts,
    unconditional: (&Avtab, &AvtabKeys),
) -> Result<(Vec<CondNode>, Avtab)> {
    let n = c.count(MIN_NODE_SIZE, NODE)?;
    let mut nodes = Vec::with_capacity(n);
    let mut table = Avtab::default();
    let mut check = TypeRuleCheck {
        unconditional,
        conditional: KeyMap::with_capacity(0),
    };
    for i in 0..n {
        let in_node = |e| avtab::annotate(e, || format!("node {i} of {n}"));
        let at = c.offset();
        let [state, len] = c.u32s::<2>(NODE)?;
        let cur_state = match state {
            0 => false,
            1 => true,
            s => {
                return Err(c.invalid_at(
                    at,
                    NODE,
                    format!("node {i} of {n}: stored state {s} is neither 0 nor 1"),
                ))
            }
        };
        let expr = read_expr(c, counts, at + 4, len).map_err(in_node)?;
        let true_list =
            read_list(c, counts, &mut table, &mut check, cur_state, None).map_err(in_node)?;
        let false_list = read_list(
            c,
            counts,
            &mut table,
            &mut check,
            !cur_state,
            Some(true_list.clone()),
        )
        .map_err(in_node)?;
        nodes.push(CondNode {
            cur_state,
            expr,
            true_list,
            false_list,
        });
    }
    table.entries.shrink_to_fit();
    table.xperms.shrink_to_fit();
    Ok((nodes, table))
}

/// Reads `len` expression nodes (type and boolean words) and checks that they form one
/// postfix expression.
fn read_expr(
    c: &mut Cursor<'_>,
    counts: &Counts,
    len_at: usize,
    len: u32,
) -> Result<Box<[CondExpr]>> {
    let len = c.check_count(len, 8, EXPR)?;
    let mut expr = Vec::with_capacity(len);
    let mut depth = 0usize;
    for _ in 0..len {
        let at = c.offset();
        let [ty, boolean] = c.u32s::<2>(EXPR)?;
        let (node, pops, pushes) = match ty {
            COND_BOOL => (
                CondExpr::Bool(counts.bool_id(c, at + 4, boolean, EXPR)?),
                0,
                1,
            ),
            // The kernel ignores the boolean word of an operator.
            COND_NOT => (CondExpr::Not, 1, 1),
            COND_OR => (CondExpr::Or, 2, 1),
            COND_AND => (CondExpr::And, 2, 1),
            COND_XOR => (CondExpr::Xor, 2, 1),
            COND_EQ => (CondExpr::Eq, 2, 1),
            COND_NEQ => (CondExpr::Neq, 2, 1),
            t => return Err(c.invalid_at(at, EXPR, format!("unknown expression node type {t}"))),
        };
        if depth < pops {
            return Err(c.invalid_at(
                at,
                EXPR,
                format!("operator {node:?} needs {pops} operands, the stack holds {depth}"),
            ));
        }
        depth = depth - pops + pushes;
        if depth > COND_EXPR_MAXDEPTH {
            return Err(c.invalid_at(
                at,
                EXPR,
                format!("expression is deeper than {COND_EXPR_MAXDEPTH}"),
            ));
        }
        expr.push(node);
    }
    if depth != 1 {
        return Err(c.invalid_at(
            len_at,
            EXPR,
            format!("expression of {len} nodes leaves {depth} results, expected 1"),
        ));
    }
    Ok(expr.into_boxed_slice())
}

/// Reads one rule list into the shared table and returns its range there. `active` is
/// whether the node's stored state enables the list; `true_list` is the node's true list
/// while its false list is read (the kernel's `other`).
fn read_list(
    c: &mut Cursor<'_>,
    counts: &Counts,
    table: &mut Avtab,
    check: &mut TypeRuleCheck<'_>,
    active: bool,
    true_list: Option<Range<u32>>,
) -> Result<Range<u32>> {
    let n = c.count(avtab::min_item_size(counts.version), LIST)?;
    // Never past u32: every entry takes at least 12 bytes of a slice.
    let start = table.entries.len() as u32;
    table.entries.reserve(n);
    for i in 0..n {
        let r = avtab::read_item(
            c,
            counts,
            true,
            RULE,
            #[inline(always)]
            |c, item| {
                if item.enabled != active {
                    return Err(flag_error(
                        c,
                        item.key,
                        item.offset,
                        item.enabled,
                        true_list.is_none(),
                    ));
                }
                insert(c, table, check, true_list.as_ref(), item)
            },
        );
        if let Err(e) = r {
            return Err(avtab::in_entry(e, i, n));
        }
    }
    Ok(start..table.entries.len() as u32)
}

/// The error for a rule whose stored enabled flag disagrees with its node's state. (Errors
/// take the rule's fields by value, never the rule's address, which would keep the
/// optimiser from holding rules in registers.)
#[cold]
#[inline(never)]
fn flag_error(
    c: &Cursor<'_>,
    key: AvtabKey,
    offset: usize,
    enabled: bool,
    in_true_list: bool,
) -> PolicyError {
    // The list is active exactly when the flag should have been set.
    let active = !enabled;
    c.invalid_at(
        offset,
        RULE,
        format!(
            "{} is stored {} in the {} list of a node whose state is {}",
            avtab::describe(&key),
            if enabled { "enabled" } else { "disabled" },
            if in_true_list { "true" } else { "false" },
            active == in_true_list,
        ),
    )
}

/// An error about a conditional rule: `{rule}{fault}`.
#[cold]
#[inline(never)]
fn rule_error(c: &Cursor<'_>, key: AvtabKey, offset: usize, fault: &str) -> PolicyError {
    c.invalid_at(offset, RULE, format!("{}{fault}", avtab::describe(&key)))
}

/// The kernel's `cond_insertf`: checks a conditional type rule against those already read,
/// then appends the entry. Other kinds may repeat freely.
#[inline(always)]
fn insert(
    c: &Cursor<'_>,
    table: &mut Avtab,
    check: &mut TypeRuleCheck<'_>,
    true_list: Option<&Range<u32>>,
    item: Item<'_>,
) -> Result<()> {
    if item.key.kind.is_type_rule() {
        check_type_rule(c, table, check, true_list, item.key, item.offset)?;
    }
    table.push(item.key, item.value);
    Ok(())
}

/// [`insert`]'s check of a type rule, about to be appended to `table`.
#[inline(never)]
fn check_type_rule(
    c: &Cursor<'_>,
    table: &Avtab,
    check: &mut TypeRuleCheck<'_>,
    true_list: Option<&Range<u32>>,
    key: AvtabKey,
    offset: usize,
) -> Result<()> {
    let index = table.entries.len() as u32;
    let word = avtab::key_word(&key);
    let (unconditional, keys) = check.unconditional;
    if keys.has_type_rule(unconditional, &key) {
        return Err(rule_error(c, key, offset, " is also an unconditional rule"));
    }
    let slot = check.conditional.entry(word);
    let (count, last) = *slot;
    let allowed = match true_list {
        // A true list may not repeat any conditional type rule.
        None => count == 0,
        // A false list may repeat one, if it is in this node's true list.
        Some(range) => count == 0 || (count == 1 && range.contains(&last)),
    };
    if !allowed {
        return Err(rule_error(
            c,
            key,
            offset,
            " conflicts with another conditional type rule",
        ));
    }
    *slot = (count + 1, index);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::avtab::{AvtabDatum, AvtabEntry, AvtabKey, AvtabKind};
    use crate::ids::{ClassId, TypeId};
    use crate::testbytes::{counts, detail, W};

    const ALLOW: u16 = 0x0001;
    const TRANS: u16 = 0x0010;
    const ENABLED: u16 = 0x8000;

    fn b(v: u32) -> CondExpr {
        CondExpr::Bool(BoolId::new(v).unwrap())
    }

    fn rule(w: &mut W, s: u16, spec: u16, datum: u32) {
        w.u16(s).u16(2).u16(3).u16(spec).u32(datum);
    }

    fn xrule(w: &mut W) {
        w.u16(1).u16(2).u16(3).u16(0x0100 | ENABLED).u8(1).u8(0x89);
        w.u32s(&[0xff; 8]);
    }

    /// A node: state, postfix expression as (type, bool) pairs, then the two lists.
    fn node(
        w: &mut W,
        state: u32,
        expr: &[(u32, u32)],
        t: impl FnOnce(&mut W, &mut u32),
        f: impl FnOnce(&mut W, &mut u32),
    ) {
        w.u32(state).u32(expr.len() as u32);
        for &(ty, bl) in expr {
            w.u32s(&[ty, bl]);
        }
        for list in [
            Box::new(t) as Box<dyn FnOnce(&mut W, &mut u32)>,
            Box::new(f),
        ] {
            let mut body = W::new();
            let mut n = 0;
            list(&mut body, &mut n);
            w.u32(n).bytes(&body.0);
        }
    }

    fn unconditional(rules: &[(u16, AvtabKind)]) -> Avtab {
        Avtab {
            entries: rules
                .iter()
                .map(|&(s, kind)| {
                    let key = AvtabKey {
                        source: TypeId::new(s).unwrap(),
                        target: TypeId::new(2).unwrap(),
                        class: ClassId::new(3).unwrap(),
                        kind,
                    };
                    let datum = if kind.is_type_rule() {
                        AvtabDatum::Type(TypeId::new(9).unwrap())
                    } else {
                        AvtabDatum::Perms(1)
                    };
                    AvtabEntry::new(key, datum).unwrap()
                })
                .collect(),
            xperms: Vec::new(),
        }
    }

    fn read_nodes(
        version: u32,
        uncond: &Avtab,
        n: u32,
        body: impl FnOnce(&mut W),
    ) -> Result<(Vec<CondNode>, Avtab)> {
        let mut w = W::new();
        w.u32(n);
        body(&mut w);
        let mut c = Cursor::new(&w.0);
        let keys = AvtabKeys::of(uncond);
        let r = read(&mut c, &counts(version), (uncond, &keys))?;
        assert_eq!(c.remaining(), 0, "conditionals not read to their end");
        Ok(r)
    }

    /// One node with the expression `bool 1` and the given lists.
    fn one_node(
        version: u32,
        uncond: &Avtab,
        t: impl FnOnce(&mut W, &mut u32),
        f: impl FnOnce(&mut W, &mut u32),
    ) -> Result<(Vec<CondNode>, Avtab)> {
        read_nodes(version, uncond, 1, |w| node(w, 1, &[(1, 1)], t, f))
    }

    #[test]
    fn lists_of_all_nodes_share_one_table_in_file_order() {
        let (nodes, table) = read_nodes(33, &Avtab::default(), 2, |w| {
            node(
                w,
                1,
                &[(1, 1), (1, 2), (4, 0)],
                |w, n| {
                    rule(w, 1, ALLOW | ENABLED, 0x1);
                    rule(w, 2, ALLOW | ENABLED, 0x2);
                    *n = 2;
                },
                |w, n| {
                    rule(w, 3, TRANS, 7);
                    *n = 1;
                },
            );
            node(
                w,
                0,
                &[(1, 3), (2, 0)],
                |_, _| {},
                |w, n| {
                    rule(w, 4, ALLOW | ENABLED, 0x4);
                    *n = 1;
                },
            );
        })
        .unwrap();
        assert_eq!(nodes.len(), 2);
        assert_eq!(nodes[0].expr[..], [b(1), b(2), CondExpr::And]);
        assert!(nodes[0].cur_state);
        assert_eq!(
            (nodes[0].true_list.clone(), nodes[0].false_list.clone()),
            (0..2, 2..3)
        );
        assert_eq!(nodes[1].expr[..], [b(3), CondExpr::Not]);
        assert!(!nodes[1].cur_state);
        assert_eq!(
            (nodes[1].true_list.clone(), nodes[1].false_list.clone()),
            (3..3, 3..4)
        );
        let sources: Vec<u16> = table.entries.iter().map(|e| e.key.source.value()).collect();
        assert_eq!(sources, [1, 2, 3, 4]);
        assert_eq!(
            table.entries[2].datum(),
            AvtabDatum::Type(TypeId::new(7).unwrap())
        );
    }

    #[test]
    fn every_operator_is_read() {
        let ops = [
            (3, CondExpr::Or),
            (4, CondExpr::And),
            (5, CondExpr::Xor),
            (6, CondExpr::Eq),
            (7, CondExpr::Neq),
        ];
        for (ty, op) in ops {
            let (nodes, _) = read_nodes(33, &Avtab::default(), 1, |w| {
                node(w, 0, &[(1, 1), (1, 5), (ty, 0)], |_, _| {}, |_, _| {})
            })
            .unwrap();
            assert_eq!(nodes[0].expr[..], [b(1), b(5), op]);
        }
    }

    #[test]
    fn expression_node_types_and_booleans_are_checked() {
        for (expr, what) in [
            (vec![(0, 1)], "unknown expression node type 0"),
            (vec![(8, 1)], "unknown expression node type 8"),
            (vec![(1, 0)], "boolean value 0"),
            (vec![(1, 6)], "boolean value 6"),
        ] {
            let r = read_nodes(33, &Avtab::default(), 1, |w| {
                node(w, 0, &expr, |_, _| {}, |_, _| {})
            });
            let d = detail(r);
            assert!(d.contains(what), "{d}");
        }
    }

    #[test]
    fn operator_boolean_word_is_ignored_as_by_the_kernel() {
        let r = read_nodes(33, &Avtab::default(), 1, |w| {
            node(w, 0, &[(1, 1), (2, 77)], |_, _| {}, |_, _| {})
        });
        assert_eq!(r.unwrap().0[0].expr[..], [b(1), CondExpr::Not]);
    }

    #[test]
    fn malformed_postfix_expressions_are_rejected() {
        let deep = [vec![(1, 1); 11], vec![(4, 0); 10]].concat();
        for (expr, what) in [
            (vec![], "leaves 0 results"),
            (vec![(2, 0)], "needs 1 operands"),
            (vec![(1, 1), (3, 0)], "needs 2 operands"),
            (vec![(1, 1), (1, 2)], "leaves 2 results"),
            (deep, "deeper than 10"),
        ] {
            let r = read_nodes(33, &Avtab::default(), 1, |w| {
                node(w, 0, &expr, |_, _| {}, |_, _| {})
            });
            let d = detail(r);
            assert!(d.contains(what), "{d}");
        }
    }

    #[test]
    fn expression_ten_deep_is_accepted() {
        let expr = [vec![(1, 1); 10], vec![(3, 0); 9]].concat();
        let r = read_nodes(33, &Avtab::default(), 1, |w| {
            node(w, 0, &expr, |_, _| {}, |_, _| {})
        });
        assert_eq!(r.unwrap().0[0].expr.len(), 19);
    }

    #[test]
    fn stored_state_must_be_0_or_1() {
        let r = read_nodes(33, &Avtab::default(), 1, |w| {
            node(w, 2, &[(1, 1)], |_, _| {}, |_, _| {})
        });
        assert!(detail(r).contains("state 2"));
    }

    #[test]
    fn xperms_in_conditional_list_needs_version_34() {
        let r = one_node(
            33,
            &Avtab::default(),
            |w, n| {
                xrule(w);
                *n = 1
            },
            |_, _| {},
        );
        let d = detail(r);
        assert!(
            d.contains("inside a conditional needs format version 34"),
            "{d}"
        );
        let (_, table) = one_node(
            34,
            &Avtab::default(),
            |w, n| {
                xrule(w);
                *n = 1
            },
            |_, _| {},
        )
        .unwrap();
        assert_eq!(table.xperms.len(), 1);
    }

    #[test]
    fn type_rule_repeating_an_unconditional_one_is_rejected() {
        let uncond = unconditional(&[(1, AvtabKind::Transition)]);
        let r = one_node(
            33,
            &uncond,
            |w, n| {
                rule(w, 1, TRANS | ENABLED, 5);
                *n = 1
            },
            |_, _| {},
        );
        let d = detail(r);
        assert!(d.contains("type_transition rule (source type 1, target type 2, class 3) is also an unconditional rule"), "{d}");
        assert!(d.starts_with("node 0 of 1: entry 0 of 1: "), "{d}");
        // Another kind under the same key is no conflict.
        assert!(one_node(
            33,
            &uncond,
            |w, n| {
                rule(w, 1, 0x0020 | ENABLED, 5);
                *n = 1
            },
            |_, _| {}
        )
        .is_ok());
    }

    #[test]
    fn type_rule_in_true_and_false_list_of_one_node_is_accepted() {
        let (nodes, table) = one_node(
            33,
            &Avtab::default(),
            |w, n| {
                rule(w, 1, TRANS | ENABLED, 5);
                *n = 1
            },
            |w, n| {
                rule(w, 1, TRANS, 6);
                *n = 1
            },
        )
        .unwrap();
        assert_eq!(table.len(), 2);
        assert_eq!(nodes[0].false_list, 1..2);
    }

    #[test]
    fn conflicting_conditional_type_rules_are_rejected() {
        let twice_in_true = one_node(
            33,
            &Avtab::default(),
            |w, n| {
                rule(w, 1, TRANS | ENABLED, 5);
                rule(w, 1, TRANS | ENABLED, 6);
                *n = 2
            },
            |_, _| {},
        );
        assert!(detail(twice_in_true).contains("conflicts"));
        let twice_in_false = one_node(
            33,
            &Avtab::default(),
            |w, n| {
                rule(w, 1, TRANS | ENABLED, 5);
                *n = 1
            },
            |w, n| {
                rule(w, 1, TRANS, 6);
                rule(w, 1, TRANS, 7);
                *n = 2
            },
        );
        assert!(detail(twice_in_false).contains("conflicts"));
        let false_only_twice = one_node(
            33,
            &Avtab::default(),
            |_, _| {},
            |w, n| {
                rule(w, 1, TRANS, 6);
                rule(w, 1, TRANS, 7);
                *n = 2
            },
        );
        assert!(detail(false_only_twice).contains("conflicts"));
        let in_two_nodes = read_nodes(33, &Avtab::default(), 2, |w| {
            node(
                w,
                1,
                &[(1, 1)],
                |w, n| {
                    rule(w, 1, TRANS | ENABLED, 5);
                    *n = 1
                },
                |_, _| {},
            );
            node(
                w,
                1,
                &[(1, 2)],
                |_, _| {},
                |w, n| {
                    rule(w, 1, TRANS, 5);
                    *n = 1
                },
            );
        });
        assert!(detail(in_two_nodes).contains("conflicts"));
    }

    #[test]
    fn enabled_flags_must_agree_with_the_node_state() {
        // State 0: the false list is the active one.
        let ok = read_nodes(33, &Avtab::default(), 1, |w| {
            node(
                w,
                0,
                &[(1, 1)],
                |w, n| {
                    rule(w, 1, ALLOW, 1);
                    *n = 1
                },
                |w, n| {
                    rule(w, 1, ALLOW | ENABLED, 2);
                    *n = 1
                },
            )
        });
        assert!(ok.is_ok());
        let on_in_inactive_list = one_node(
            33,
            &Avtab::default(),
            |_, _| {},
            |w, n| {
                rule(w, 1, ALLOW | ENABLED, 2);
                *n = 1
            },
        );
        let d = detail(on_in_inactive_list);
        assert!(
            d.contains("stored enabled in the false list of a node whose state is true"),
            "{d}"
        );
        let off_in_active_list = one_node(
            33,
            &Avtab::default(),
            |w, n| {
                rule(w, 1, ALLOW, 2);
                *n = 1
            },
            |_, _| {},
        );
        let d = detail(off_in_active_list);
        assert!(d.contains("stored disabled in the true list"), "{d}");
    }

    #[test]
    fn access_rules_may_repeat_anywhere() {
        let uncond = unconditional(&[(1, AvtabKind::Allowed)]);
        let (_, table) = read_nodes(33, &uncond, 2, |w| {
            node(
                w,
                1,
                &[(1, 1)],
                |w, n| {
                    rule(w, 1, ALLOW | ENABLED, 1);
                    rule(w, 1, ALLOW | ENABLED, 2);
                    *n = 2
                },
                |w, n| {
                    rule(w, 1, ALLOW, 4);
                    *n = 1
                },
            );
            node(
                w,
                1,
                &[(1, 2)],
                |w, n| {
                    rule(w, 1, ALLOW | ENABLED, 8);
                    *n = 1
                },
                |_, _| {},
            );
        })
        .unwrap();
        assert_eq!(table.len(), 4);
    }

    #[test]
    fn old_format_lists_are_read() {
        let (nodes, table) = read_nodes(19, &Avtab::default(), 1, |w| {
            node(
                w,
                1,
                &[(1, 1)],
                |w, n| {
                    w.u32s(&[6, 1, 2, 3, 0x8000_0005, 1, 2]);
                    *n = 1
                },
                |_, _| {},
            )
        })
        .unwrap();
        assert_eq!(nodes[0].true_list, 0..2);
        assert_eq!(table.entries[1].key.kind, AvtabKind::AuditDeny);
    }

    #[test]
    fn hostile_node_and_list_counts_are_refused() {
        let r = read_nodes(33, &Avtab::default(), 0x4000_0000, |w| {
            node(w, 1, &[(1, 1)], |_, _| {}, |_, _| {})
        });
        assert!(matches!(
            r,
            Err(PolicyError::CountTooLarge { what: NODE, .. })
        ));
        let r = read_nodes(33, &Avtab::default(), 1, |w| {
            w.u32s(&[1, 1, 1, 1, u32::MAX]);
        });
        assert!(matches!(
            r,
            Err(PolicyError::CountTooLarge { what: LIST, .. })
        ));
        let r = read_nodes(33, &Avtab::default(), 1, |w| {
            w.u32s(&[1, u32::MAX, 1, 1, 0, 0]);
        });
        assert!(matches!(
            r,
            Err(PolicyError::CountTooLarge { what: EXPR, .. })
        ));
    }
}
