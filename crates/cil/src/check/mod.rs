//! The checks secilc runs on the finished policy unless `-N` is given: `neverallow` and
//! `neverallowx` assertions (`neverallow.rs`), then user, role and type bounds
//! (`bounds.rs`), in that order, every violation reported before the build fails
//! (`cil_binary.c` `cil_binary_create_allocated_pdb`).
//!
//! The checks read the lowered [`Policy`] as libsepol reads its policydb; reports name the
//! CIL rules that grant what is forbidden, found in the statement list as libsepol's
//! `cil_find_matching_avrule_in_ast` finds them, with their enclosing statements.

mod bounds;
pub(crate) mod hierarchy;
mod neverallow;

use crate::ast::{loc, Ast, NONE};
use crate::bits::Bits;
use crate::kw::Kw;
use crate::parse::Tree;
use crate::Fail;
use arbiter_policy::{Ebitmap, Policy};

/// A type operand of a rule as libsepol's matcher sees it: a type (CIL type index) or an
/// attribute (its declaration, for identity, and its member type indices).
#[derive(Clone, Debug)]
pub(crate) enum TypeRef {
    Type(u32),
    Attr(u32, Bits),
}

/// An access-vector rule of the statement list: `allow`/`allowx` rules that reports
/// may name, and the `neverallow`/`neverallowx` rules being checked.
#[derive(Clone, Debug)]
pub(crate) struct AstRule {
    pub stmt: u32,
    pub src: TypeRef,
    /// `None`: `self`.
    pub tgt: Option<TypeRef>,
    /// (class value - 1, permission bits), class maps and permission sets expanded; for
    /// the x-forms, the `ioctl` permission of the permissionx's class.
    pub perms: Vec<(u32, u32)>,
    /// The x-forms: the permissionx's class (value - 1) and its ioctl numbers.
    pub ioctls: Option<(u32, Bits)>,
    /// The rule as `__cil_print_rule` prints it.
    pub text: String,
}

/// What the checks read besides the policy.
pub(crate) struct Input<'a> {
    pub policy: &'a Policy,
    pub tree: &'a Tree,
    pub ast: &'a Ast,
    pub names: &'a [String],
    /// Per CIL type index: the type's value.
    pub type_val: &'a [u32],
    /// `object_r`'s types (the policy leaves them out: libsepol writes the role empty, but
    /// its bounds check sees them).
    pub object_r_types: Ebitmap,
    /// Reports are cut short (first 4 or 2 entries) at secilc's default verbosity.
    pub verbose: bool,
}

/// The `allow` (`extended` false) or `allowx` rules of the statement list, in walk order,
/// computed only when a report needs them.
pub(crate) type RuleSource<'r> = dyn FnMut(bool) -> Result<Vec<AstRule>, Fail> + 'r;

/// Runs secilc's checks: `nevers` are the neverallow and neverallowx rules in the order
/// libsepol checks them (latest first). Every violation is reported, then the build fails
/// as secilc's does.
pub(crate) fn run(
    input: &Input<'_>,
    nevers: &[AstRule],
    rules: &mut RuleSource<'_>,
) -> Result<(), Fail> {
    let mut messages = Vec::new();
    let mut cache = RuleCache::default();
    let mut violation = neverallow::check(input, nevers, rules, &mut cache, &mut messages)?;
    violation |= bounds::check_users(input, &mut messages);
    violation |= bounds::check_roles(input, &mut messages);
    violation |= bounds::check_types(input, rules, &mut cache, &mut messages)?;
    if violation {
        messages.push("Failed to generate binary".into());
        messages.push("Failed to build policydb".into());
        return Err(Fail::bad(messages));
    }
    Ok(())
}

/// The statement list's rules, fetched once per kind.
#[derive(Default)]
pub(crate) struct RuleCache {
    allow: Option<Vec<AstRule>>,
    allowx: Option<Vec<AstRule>>,
}

impl RuleCache {
    fn get<'c>(
        &'c mut self,
        extended: bool,
        rules: &mut RuleSource<'_>,
    ) -> Result<&'c [AstRule], Fail> {
        let slot = if extended {
            &mut self.allowx
        } else {
            &mut self.allow
        };
        if slot.is_none() {
            *slot = Some(rules(extended)?);
        }
        Ok(slot.as_deref().unwrap_or(&[]))
    }
}

/// `cil_type_match_any`: two operands share a type (an attribute always matches itself).
fn type_match_any(a: &TypeRef, b: &TypeRef) -> bool {
    match (a, b) {
        (TypeRef::Type(x), TypeRef::Type(y)) => x == y,
        (TypeRef::Attr(_, m), TypeRef::Type(t)) | (TypeRef::Type(t), TypeRef::Attr(_, m)) => {
            m.get(*t as usize)
        }
        (TypeRef::Attr(da, ma), TypeRef::Attr(db, mb)) => da == db || overlaps(ma, mb),
    }
}

fn overlaps(a: &Bits, b: &Bits) -> bool {
    a.0.iter().zip(&b.0).any(|(x, y)| x & y != 0)
}

/// The types of an operand.
fn members(r: &TypeRef, n: usize) -> Bits {
    match r {
        TypeRef::Type(t) => {
            let mut b = Bits::new(n.max(*t as usize + 1));
            b.set(*t as usize);
            b
        }
        TypeRef::Attr(_, m) => m.clone(),
    }
}

/// `cil_self_match_any`: a `self` rule with source `s1` against a rule from `s2` to `t2`.
fn self_match_any(s1: &TypeRef, s2: &TypeRef, t2: &TypeRef) -> bool {
    match s1 {
        TypeRef::Type(_) => type_match_any(s1, t2),
        TypeRef::Attr(_, m) => {
            let n = m.0.len() * 64;
            let mut both = members(s2, n);
            both.and(&members(t2, n));
            overlaps(&both, m)
        }
    }
}

/// `cil_find_matching_avrule`: whether statement rule `r` matches `target` (same kind is
/// the caller's business).
fn rule_matches(r: &AstRule, target: &AstRule) -> bool {
    if !type_match_any(&r.src, &target.src) {
        return false;
    }
    let types_ok = match (&r.tgt, &target.tgt) {
        (Some(t1), Some(t2)) => type_match_any(t1, t2),
        (None, None) => true,
        (None, Some(t2)) => self_match_any(&r.src, &target.src, t2),
        (Some(t1), None) => self_match_any(&target.src, &r.src, t1),
    };
    if !types_ok {
        return false;
    }
    match (&r.ioctls, &target.ioctls) {
        (Some((c1, n1)), Some((c2, n2))) => c1 == c2 && overlaps(n1, n2),
        (None, None) => r
            .perms
            .iter()
            .any(|&(c, b)| target.perms.iter().any(|&(tc, tb)| tc == c && tb & b != 0)),
        _ => false,
    }
}

/// `__cil_print_parents` then `__cil_print_rule`: the lines naming statement rule `r`
/// (its enclosing statements from the root, then the rule itself).
fn rule_lines(input: &Input<'_>, r: &AstRule, out: &mut Vec<String>) {
    let ast = input.ast;
    let here = |s: u32| {
        let st = ast.stmts[s as usize];
        loc(input.tree, input.names, st.file, st.node)
    };
    let mut chain = vec![r.stmt];
    let mut p = ast.stmts[r.stmt as usize].parent;
    while p != NONE {
        chain.push(p);
        p = ast.stmts[p as usize].parent;
    }
    out.push("    <root>".into());
    for (i, &s) in chain.iter().enumerate().rev() {
        let st = ast.stmts[s as usize];
        // A booleanif's child sits in its true or false branch, which libsepol prints too.
        if st.parent != NONE && st.branch != NONE && st.parent == st.cond {
            let b = st.branch;
            let which = if input.tree.sym(input.tree.kids(b)[0]) == Some(Kw::True.sym()) {
                "true"
            } else {
                "false"
            };
            out.push(format!(
                "    {which} at {}",
                loc(input.tree, input.names, st.file, b)
            ));
        }
        let word = match st.kw {
            // With -P a tunableif is a booleanif (`cil_resolve_tunif`).
            Kw::TunableIf => Kw::BooleanIf.text(),
            k => k.text(),
        };
        out.push(format!("    {word} at {}", here(s)));
        if i == 0 {
            out.push(format!("      {}", r.text));
        }
    }
}
