//! What lowering builds, phase by phase, before it is assembled into a
//! [`arbiter_policy::Policy`]: the datums in value order, the rule tables and their
//! indexes, and the statements kept for the checks and the text outputs.

use super::*;

/// The policy's pieces as the phases of [`super::lower`] fill them. Each phase reads
/// what earlier ones left here and in [`L`] (the name tables and values).
#[derive(Default)]
pub(super) struct Parts<'a> {
    /// (statement, declaration) of every live declaring statement, in walk order (so by
    /// statement): the later walks over declarations read this instead of probing a map
    /// for each of the 300,000 statements of a distribution policy.
    pub(super) live_decls: Vec<(u32, u32)>,
    /// `(mls ...)` and `(handleunknown ...)` as written (options override them).
    pub(super) mls_stmt: Option<bool>,
    pub(super) handle_unknown: Option<HandleUnknown>,
    /// SID declarations in sidorder.
    pub(super) sids: Vec<u32>,
    /// Per type attribute: kept as a policy type (`cil_typeattribute_used`).
    pub(super) keep: Vec<bool>,
    pub(super) tdatums: Vec<TypeDatum>,
    pub(super) rdatums: Vec<Role>,
    pub(super) type_aliases: Vec<TypeAlias>,
    pub(super) commons: Vec<Common>,
    pub(super) classes: Vec<Class>,
    pub(super) udatums: Vec<User>,
    /// Per user: role values, per role: its types, per sensitivity: its categories
    /// (bitmaps once every statement is lowered).
    pub(super) user_roles: Vec<Vec<u32>>,
    pub(super) role_types: Vec<Bits>,
    pub(super) bdatums: Vec<Bool>,
    pub(super) sdatums: Vec<Sensitivity>,
    pub(super) sens_cats: Vec<Bits>,
    pub(super) cdatums: Vec<Category>,
    pub(super) sens_aliases: Vec<MlsAlias>,
    pub(super) cat_aliases: Vec<MlsAlias>,
    pub(super) policycaps: Vec<u32>,
    pub(super) permissive: Vec<u32>,
    /// The unconditional avtab in insertion order, and its index (rule key -> entry).
    pub(super) avtab: Vec<AvtabEntry>,
    pub(super) avindex: AvIndex,
    /// Filename transitions and their index by (target, class, name).
    pub(super) ftrans: Vec<FilenameTrans>,
    pub(super) ftindex: FxHashMap<(u32, u32, Sym), usize>,
    /// Role transitions, and the new role entered per (role, type, class).
    pub(super) role_trans: Vec<RoleTrans>,
    pub(super) rtseen: FxHashMap<(u32, u32, u32), u32>,
    pub(super) role_allow: Vec<RoleAllow>,
    /// Range transitions and their index by (source, target, class).
    pub(super) range_trans: Vec<RangeTrans>,
    pub(super) rtrindex: FxHashMap<(u32, u32, u32), usize>,
    /// Per class: constraints and validatetrans, newest first.
    pub(super) constraints: Vec<Vec<Constraint>>,
    pub(super) validatetrans: Vec<Vec<Constraint>>,
    /// Conditional nodes in creation order.
    pub(super) conds: Vec<CondBuild>,
    pub(super) cr: contexts::ContextRules<'a>,
    pub(super) xencons: Vec<crate::xencon::XenCon<Ctx>>,
    /// Per SID declaration: its context.
    pub(super) sidctx: FxHashMap<u32, Ctx>,
    pub(super) selinuxusers: Vec<text::SeUser>,
    pub(super) seuser_default: Option<(u32, (Lvl, Lvl))>,
    pub(super) userprefixes: Vec<(u32, Sym)>,
    /// (child, parent) of `typebounds`, `rolebounds` (role indexes), `userbounds`.
    pub(super) type_bounds: Vec<(TRef, TRef)>,
    pub(super) role_bounds: Vec<(u32, u32)>,
    pub(super) user_bounds: Vec<(u32, u32)>,
    /// Live `context` statements, in walk order, for verification
    /// ([`super::verify::users_and_contexts`]).
    pub(super) named_contexts: Vec<u32>,
    /// Neverallow statements, for the checks after the policy is assembled.
    pub(super) neverallows: Vec<u32>,
    /// Extended av rules: per key, the permission bits; and the index by key.
    pub(super) xside: Vec<(AvtabKey, Bits)>,
    pub(super) xindex: FxHashMap<AvtabKey, usize>,
    pub(super) hierarchy: crate::check::hierarchy::Hierarchy,
    /// Per user: `userlevel` and `userrange` as written.
    pub(super) user_level: Vec<Option<Lvl>>,
    pub(super) user_range: Vec<Option<(Lvl, Lvl)>>,
}

impl Parts<'_> {
    /// The declaration of live statement `s`, if it declares one.
    pub(super) fn decl_of(&self, s: u32) -> Option<u32> {
        let i = self
            .live_decls
            .binary_search_by_key(&s, |&(st, _)| st)
            .ok()?;
        Some(self.live_decls[i].1)
    }

    /// Sizes the unconditional avtab and its index up front (see the comment inside).
    pub(super) fn reserve_rule_tables(&mut self, rule_stmts: usize) {
        // `avtab` and its index (rule key -> entry, u32 to keep the index small: it is the
        // largest table while rules are entered) are sized up front from the count of
        // unconditional rule statements ([`super::L::uncond_rules`]), an estimate (the Debian
        // store has 174,000 such statements for 102,000 entries): growing by doubling
        // copied them through the heap, and the freed copies stayed resident. Reserved
        // pages never written cost nothing.
        self.avtab.reserve(rule_stmts);
        self.avindex = AvIndex::with_capacity(rule_stmts);
    }
}
