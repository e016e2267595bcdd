//! The security server (documented on [`SecurityServer`]).

use crate::convert::{
    append_converted, convert_sids, unlabeled_context, ConvertStats, IdMaps, Side,
};
use crate::decision::{
    AccessVector, AvDecision, AvdFlags, CreateDecision, XpermBase, XpermDecision, XpermRule,
};
use crate::explain::{self, Explanation};
use crate::index::PolicyIndex;
use crate::labeling::{self, LabelKind, Semantics};
use crate::names::Names;
use crate::perms::{ClassRef, NamedPerm, PermSet, Verdict};
use crate::publish::{Cell, Guard, Handle};
use crate::sidtab::{Sid, SidEntry};
use crate::source::DecisionSource;
use crate::state::{Loaded, Snapshot};
use crate::sync::{lock, Arc, AtomicU64, Mutex, Ordering};
use crate::{av, context};
use crate::{DecideError, Result};
use arbiter_policy::mls::Context;
use arbiter_policy::{ClassId, HandleUnknown, Policy, ValidPolicy};
use std::time::Instant;

/// What a policy reload did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Reload {
    /// The sequence number of the new policy state.
    pub seqno: u64,
    /// SIDs carried over and SIDs whose context the new policy does not define.
    pub sids: ConvertStats,
    /// Time spent building the new state (index, names, SID conversion), in microseconds.
    pub build_us: u64,
}

/// The security server: one long-lived, reloadable object answering every question.
///
/// [`SecurityServer`] is `Send + Sync`; share it as `Arc<SecurityServer>` and call it from
/// any thread — every query takes `&self`. It owns the policy state behind one publication
/// point (an `arc-swap` cell, `src/publish.rs`): a [`Snapshot`] of the policy, its index, names, SID table and
/// booleans, numbered by a sequence number. [`SecurityServer::load_policy`] and boolean
/// commits each publish a new snapshot with `seqno + 1`; the number never decreases for the
/// life of the server, so a cache in front of it (which compares numbers) can never serve a
/// decision from an older state, and two servers never share anything a cache could mix up.
///
/// # Publication protocol
///
/// Writers (reloads and commits) serialise on `reload_lock`. A writer builds the whole new
/// snapshot first, then: (1) for a reload, stores the new load identity in `current_load`
/// (Release); (2) stores the snapshot in the cell; (3) raises `seqno` to its number
/// (`fetch_max`, AcqRel). A reader that reads a snapshot from the cell before step 3 raises
/// `seqno` itself, so no decision is ever handed out ahead of the published number. A reader that loads `seqno` (Acquire) and sees `n` therefore finds a
/// snapshot numbered `n` or newer in the cell, and a `current_load` at least as new as the
/// load of snapshot `n` — which is what lets a cache check a [`PermSet`] against a cached
/// decision with two loads (see [`DecisionSource::perm_set_matches`]).
///
/// # SIDs across reloads
///
/// A reload converts the SID table in two passes (see [`SecurityServer::load_policy`]): first every SID
/// issued so far, without blocking anyone; then, holding `sid_lock` (which new SIDs are
/// issued under), the few issued meanwhile, and publishes. Checks never wait; only the
/// issuing of a *new* SID can wait, for the second pass. A SID issued from a snapshot that
/// a reload has replaced is re-issued from the new one (the insert sees the state changed
/// and retries).
///
/// Checks in flight finish on the snapshot they started with.
pub struct SecurityServer {
    cell: Cell<Snapshot>,
    /// The published sequence number (see the publication protocol).
    seqno: AtomicU64,
    /// `load_id` of the newest load whose publication has begun.
    current_load: AtomicU64,
    /// Serialises reloads and commits; holds the pending boolean values.
    reload_lock: Mutex<Vec<bool>>,
    /// Serialises issuing new SIDs against a reload's final conversion pass.
    sid_lock: Mutex<()>,
    semantics: Semantics,
}

/// What the security server decides with: a [`ValidPolicy`] as it is, or a plain
/// [`Policy`], whose tables anyone may have changed since it was read, validated again
/// first. (Read a policy with [`ValidPolicy::open`] or [`ValidPolicy::from_bytes`] to
/// validate it once.)
pub trait CheckedPolicy {
    /// The policy, validated.
    fn checked(self) -> std::result::Result<ValidPolicy, arbiter_policy::PolicyError>;
}

impl CheckedPolicy for ValidPolicy {
    fn checked(self) -> std::result::Result<ValidPolicy, arbiter_policy::PolicyError> {
        Ok(self)
    }
}

impl CheckedPolicy for Policy {
    fn checked(self) -> std::result::Result<ValidPolicy, arbiter_policy::PolicyError> {
        ValidPolicy::check(self)
    }
}

impl SecurityServer {
    /// Builds the server (index, name tables, initial SIDs) for a validated policy. Its
    /// first state has sequence number 1. Only a [`ValidPolicy`] is accepted: a plain
    /// [`Policy`] goes through [`ValidPolicy::check`] first, which reports a fault as an
    /// error, so the server never decides with unchecked tables and never panics on them.
    pub fn new(policy: ValidPolicy) -> SecurityServer {
        SecurityServer::with_semantics(policy, Semantics::Kernel)
    }

    /// Like [`SecurityServer::new`], reproducing libsepol's labeling where it differs from
    /// the kernel (for differential tests against libsepol).
    pub fn with_semantics(policy: ValidPolicy, semantics: Semantics) -> SecurityServer {
        let policy = std::sync::Arc::new(policy.into_policy());
        let index = PolicyIndex::build(&policy);
        let sids = crate::sidtab::SidTable::new(&policy);
        let loaded = Arc::new(Loaded::new(policy.clone(), index, sids, 1));
        let bools: Vec<bool> = policy.bools.iter().map(|b| b.state).collect();
        let load_id = loaded.load_id;
        let snap = Snapshot::new(loaded, bools.clone().into_boxed_slice(), 1);
        SecurityServer {
            cell: Cell::new(Arc::new(snap)),
            seqno: AtomicU64::new(1),
            current_load: AtomicU64::new(load_id),
            reload_lock: Mutex::new(bools),
            sid_lock: Mutex::new(()),
            semantics,
        }
    }

    /// Which labeling semantics the server follows.
    pub fn semantics(&self) -> Semantics {
        self.semantics
    }

    /// The published sequence number: one atomic load (Acquire), never decreasing.
    #[inline]
    pub fn seqno(&self) -> u64 {
        self.seqno.load(Ordering::Acquire)
    }

    /// The current policy state (an owned reference: it stays valid across reloads).
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.cell.load_full()
    }

    #[inline]
    fn state(&self) -> Guard<Snapshot> {
        let st = self.cell.load();
        self.published(st.seqno);
        st
    }

    /// Makes sure the published sequence number is at least `seqno`, the number of a
    /// snapshot just read from the cell. The writer stores the cell before the number, so
    /// in between a reader can compute on the new snapshot while the number still names
    /// the old one; a cache would then answer that reader's next check from the old state
    /// — an answer older than one it already got. The reader closes the window itself
    /// (one load, and an RMW only inside the window): whoever then sees the number also
    /// sees the snapshot, because the cell store happens-before this reader's load of it.
    #[inline]
    fn published(&self, seqno: u64) {
        if self.seqno.load(Ordering::Acquire) < seqno {
            self.seqno.fetch_max(seqno, Ordering::AcqRel);
        }
    }

    /// The current policy.
    pub fn policy(&self) -> std::sync::Arc<Policy> {
        self.state().policy.clone()
    }

    /// A per-thread query handle: follows reloads and commits with one atomic load per
    /// query and never touches a shared reference count.
    pub fn query(&self) -> Query<'_> {
        Query {
            server: self,
            handle: self.cell.handle(),
        }
    }

    // ---- policy reload -----------------------------------------------------------------

    /// Replaces the policy, as the kernel's `security_load_policy`: builds the new state
    /// (index, names, every SID converted), keeps the values of booleans that exist in both
    /// policies (`security_preserve_bools`), and publishes it with the next sequence
    /// number. Readers never wait; checks in flight finish on the old state.
    ///
    /// Fails, leaving the current policy in force, only when the new policy numbers an
    /// initial SID where this server already issued a dynamic one.
    ///
    /// # SID conversion
    ///
    /// Carrying SIDs across a policy reload: the kernel's `sidtab_convert` / `convert_context`.
    ///
    /// Every SID keeps its number and, when the new policy can express it, its context: users,
    /// roles, types, sensitivities and categories are mapped by name (an old type's name may
    /// be an alias in the new policy; it maps to the alias's type, as the kernel's name lookup
    /// does), then the result is validated against the new policy. A context the new policy
    /// cannot express or forbids stays attached to its SID as text, and decisions on that SID
    /// use the new policy's `unlabeled` initial SID instead (the kernel's `sidtab_search` of an
    /// invalid entry); the next reload tries the text again, so a context a later policy defines
    /// again becomes valid again under the same SID. Initial SIDs take the new policy's
    /// contexts.
    ///
    /// Name lookups are done once per reload into dense id maps, so converting a context is a
    /// few array reads plus the validity check.
    ///
    /// A plain [`Policy`] is validated again first; one that fails is refused
    /// ([`DecideError::InvalidPolicy`]) and the running policy stays.
    pub fn load_policy(&self, policy: impl CheckedPolicy) -> Result<Reload> {
        let policy = policy
            .checked()
            .map_err(|e| DecideError::InvalidPolicy(e.to_string()))?
            .into_policy();
        let started = Instant::now();
        let mut pending = lock(&self.reload_lock);
        let old = self.cell.load_full();
        let policy = std::sync::Arc::new(policy);
        let index = PolicyIndex::build(&policy);
        let names = Names::new(&policy);
        let maps = IdMaps::new(old.names(), &old.policy, &names, &policy);
        let side = Side {
            names: old.names(),
            sids: old.sids(),
        };
        // Pass 1: every SID issued so far, while others keep issuing.
        let (sids, mut stats) = convert_sids(&side, &policy, &names, &maps)?;
        let unlabeled = unlabeled_context(&policy);
        let done = stats.converted + stats.invalidated;
        // Pass 2: the SIDs issued during pass 1, with issuing stopped.
        let _sid_guard = lock(&self.sid_lock);
        append_converted(
            &side,
            done,
            &sids,
            &policy,
            &names,
            &maps,
            unlabeled.as_ref(),
            &mut stats,
        )?;
        let seqno = old.seqno + 1;
        let loaded = Loaded::from_parts(policy.clone(), index, names, sids, seqno);
        let bools = preserve_bools(&old, &policy);
        let loaded = Arc::new(loaded);
        let load_id = loaded.load_id;
        let snap = Arc::new(Snapshot::new(
            loaded,
            bools.clone().into_boxed_slice(),
            seqno,
        ));
        let build_us = started.elapsed().as_micros() as u64;
        // Publication: load identity, snapshot, sequence number (module docs).
        self.current_load.store(load_id, Ordering::Release);
        self.cell.store(snap);
        self.seqno.fetch_max(seqno, Ordering::AcqRel);
        *pending = bools;
        // The old state (when no reader holds it) is freed after the locks are released,
        // so a boolean commit or a SID insertion does not wait for that.
        drop(_sid_guard);
        drop(pending);
        drop(old);
        Ok(Reload {
            seqno,
            sids: stats,
            build_us,
        })
    }

    // ---- booleans ----------------------------------------------------------------------

    /// The booleans and their current (committed) values, in policy order.
    pub fn booleans(&self) -> Vec<(String, bool)> {
        let st = self.state();
        named_bools(&st.policy, st.bools())
    }

    /// The pending values (what the next [`SecurityServer::commit_booleans`] publishes).
    pub fn pending_booleans(&self) -> Vec<(String, bool)> {
        let pending = lock(&self.reload_lock);
        named_bools(&self.state().policy, &pending)
    }

    /// Sets a pending boolean value; nothing changes for readers until
    /// [`SecurityServer::commit_booleans`].
    pub fn set_boolean(&self, name: &str, value: bool) -> Result<()> {
        let mut pending = lock(&self.reload_lock);
        let st = self.state();
        let id = st
            .names()
            .boolean(name)
            .ok_or_else(|| DecideError::UnknownBoolean(name.to_string()))?;
        if let Some(v) = pending.get_mut(id.index()) {
            *v = value;
        }
        Ok(())
    }

    /// Publishes the pending boolean values as a new state; returns its sequence number.
    pub fn commit_booleans(&self) -> u64 {
        let pending = lock(&self.reload_lock);
        self.commit_locked(&pending)
    }

    /// Sets several booleans and commits them at once (all or nothing: an unknown name
    /// changes nothing). Returns the new sequence number.
    pub fn set_booleans(&self, values: &[(&str, bool)]) -> Result<u64> {
        let mut pending = lock(&self.reload_lock);
        let st = self.state();
        let mut ids = Vec::with_capacity(values.len());
        for (name, v) in values {
            let id = st
                .names()
                .boolean(name)
                .ok_or_else(|| DecideError::UnknownBoolean(name.to_string()))?;
            ids.push((id, *v));
        }
        for (id, v) in ids {
            if let Some(slot) = pending.get_mut(id.index()) {
                *slot = v;
            }
        }
        Ok(self.commit_locked(&pending))
    }

    fn commit_locked(&self, pending: &[bool]) -> u64 {
        let old = self.cell.load_full();
        let seqno = old.seqno + 1;
        let snap = Snapshot::new(old.loaded.clone(), pending.into(), seqno);
        self.cell.store(Arc::new(snap));
        self.seqno.fetch_max(seqno, Ordering::AcqRel);
        seqno
    }

    // ---- SIDs and names ----------------------------------------------------------------

    /// The SID of a context string: a string seen before costs one hash probe; a new one is
    /// parsed, validated against the policy, and given a SID.
    pub fn context_to_sid(&self, s: &str) -> Result<Sid> {
        loop {
            let st = self.state();
            if let Some(sid) = st.sids().sid_for_str(s) {
                return Ok(sid);
            }
            let ctx = context::parse_context(&st.policy, st.names(), s)?;
            if let Some(sid) = self.intern(&st, ctx)? {
                // Strings are a cache: a full cache just means parsing next time.
                st.sids().insert_str(s.to_string(), sid)?;
                return Ok(sid);
            }
        }
    }

    /// The SID of a context computed under snapshot `st`, issuing one if needed; `None`
    /// when a reload replaced `st` first (the caller recomputes under the new state).
    fn intern(&self, st: &Snapshot, ctx: Context) -> Result<Option<Sid>> {
        if let Some(sid) = st.sids().lookup(&ctx) {
            return Ok(Some(sid));
        }
        let _g = lock(&self.sid_lock);
        if !Arc::ptr_eq(&self.state().loaded, &st.loaded) {
            return Ok(None);
        }
        st.sids().insert(ctx).map(Some)
    }

    /// The SID of a context given as a structure in the current policy's values
    /// (`server.policy()`), after validating it as [`SecurityServer::context_to_sid`]
    /// validates a string: an invalid context is an error, never a SID.
    pub fn context_struct_to_sid(&self, ctx: Context) -> Result<Sid> {
        loop {
            let st = self.state();
            context::validate_context(&st.policy, st.names(), &ctx)?;
            if let Some(sid) = self.intern(&st, ctx.clone())? {
                return Ok(sid);
            }
        }
    }

    /// The context of a SID as text: canonical as the kernel prints it; for a SID whose
    /// context the current policy does not define, the text it had when issued (the
    /// kernel's `security_sid_to_context_force`).
    pub fn sid_to_context(&self, sid: Sid) -> Result<String> {
        let st = self.state();
        match st.sids().entry(sid) {
            Some(SidEntry::Valid(c)) => Ok(context::format_context(st.names(), c)),
            Some(SidEntry::Invalid { text, .. }) => Ok(text.to_string()),
            None => Err(DecideError::UnknownSid(sid.get())),
        }
    }

    /// Whether the current policy defines `sid`'s context (false for a SID a reload
    /// invalidated: decisions on it are made as for `unlabeled`).
    pub fn sid_is_valid(&self, sid: Sid) -> bool {
        matches!(self.state().sids().entry(sid), Some(SidEntry::Valid(_)))
    }

    /// Number of SIDs issued, initial ones included.
    pub fn sid_count(&self) -> usize {
        self.state().sids().len()
    }

    /// Resolves a class name, applying `handle_unknown` to names the policy lacks.
    pub fn class(&self, name: &str) -> Result<ClassRef> {
        resolve_class(&self.state(), name)
    }

    /// Resolves a class name that must exist (no `handle_unknown`).
    pub fn known_class(&self, name: &str) -> Result<ClassId> {
        self.state()
            .names()
            .class(name)
            .ok_or_else(|| DecideError::UnknownClass(name.to_string()))
    }

    /// Resolves a class and permission names into a [`PermSet`] under the current policy,
    /// with `handle_unknown` applied (see [`PermSet`]).
    pub fn perm_set(&self, class: &str, perms: &[&str]) -> Result<PermSet> {
        resolve_perm_set(&self.state(), class, perms.iter().copied())
    }

    /// The name of a class of the current policy.
    pub fn class_name(&self, class: ClassId) -> Option<String> {
        self.state().names().class_name(class).map(String::from)
    }

    /// The names of the permission bits in `av` for `class`, ascending by bit.
    pub fn perm_names(&self, class: ClassId, av: AccessVector) -> Vec<String> {
        self.state()
            .names()
            .perms_to_names(class, av.0)
            .into_iter()
            .map(String::from)
            .collect()
    }

    // ---- decisions -----------------------------------------------------------------------

    /// `security_compute_av` for SIDs and a class (unknown classes per `handle_unknown`).
    #[inline]
    pub fn compute_av(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: impl Into<ClassRef>,
    ) -> Result<AvDecision> {
        av_in(&self.state(), ssid, tsid, class.into())
    }

    /// The verdict on a permission request: the library's answer (see [`Verdict`]).
    pub fn check(&self, ssid: Sid, tsid: Sid, perms: &PermSet) -> Result<Verdict> {
        check_in(&self.state(), ssid, tsid, perms)
    }

    /// The extended-permission decision for one driver (`security_compute_xperms_decision`
    /// with the driver lookup of `avc_has_extended_perms`).
    pub fn compute_xperms(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        base: XpermBase,
        driver: u8,
    ) -> Result<XpermDecision> {
        xperms_in(&self.state(), ssid, tsid, class, base, driver)
    }

    /// The label of a new (`Create`), relabeled (`Relabel`) or member (`Member`) object as a
    /// SID. `name` applies filename transitions (create only). A result that is not a
    /// valid context is an error, as the kernel refuses the operation in enforcing mode.
    pub fn compute_label(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        kind: LabelKind,
        name: Option<&str>,
    ) -> Result<CreateDecision> {
        loop {
            let st = self.state();
            let ctx = label_in(&st, self.semantics, ssid, tsid, class, kind, name)?;
            if let Some(sid) = self.intern(&st, ctx)? {
                return Ok(CreateDecision {
                    sid,
                    seqno: st.seqno,
                });
            }
        }
    }

    /// Like [`SecurityServer::compute_label`] but returns the context as text without
    /// issuing a SID.
    pub fn compute_label_context(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        kind: LabelKind,
        name: Option<&str>,
    ) -> Result<String> {
        let st = self.state();
        let ctx = label_in(&st, self.semantics, ssid, tsid, class, kind, name)?;
        Ok(context::format_context(st.names(), &ctx))
    }

    /// `security_validate_transition`: may an object of `class` go from `old` to `new`
    /// when `task` relabels it?
    pub fn validate_transition(
        &self,
        old: Sid,
        new: Sid,
        task: Sid,
        class: ClassId,
    ) -> Result<bool> {
        let st = self.state();
        let (o, n) = contexts(&st, old, new)?;
        let t = context_of(&st, task)?;
        Ok(labeling::validate_transition(&st, o, n, t, class))
    }

    /// Explains the decision for (`ssid`, `tsid`, `class`) and the `requested` permissions:
    /// the rules, booleans, constraints, role transitions and bounds behind each answer.
    pub fn explain(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        requested: AccessVector,
    ) -> Result<Explanation> {
        let st = self.state();
        let (s, t) = contexts(&st, ssid, tsid)?;
        check_class(&st, class)?;
        Ok(explain::explain(&st, s, t, class, requested.0))
    }
}

/// Boolean names paired with values, in policy order.
fn named_bools(policy: &Policy, values: &[bool]) -> Vec<(String, bool)> {
    policy
        .bools
        .iter()
        .zip(values)
        .map(|(b, v)| (b.name.to_string(), *v))
        .collect()
}

/// The values a new policy's booleans start with: the current value of a boolean of the
/// same name, else the new policy's default (the kernel's `security_preserve_bools`).
fn preserve_bools(old: &Snapshot, new: &Policy) -> Vec<bool> {
    let current: std::collections::HashMap<&str, bool> = old
        .policy
        .bools
        .iter()
        .zip(old.bools())
        .map(|(b, v)| (&*b.name, *v))
        .collect();
    new.bools
        .iter()
        .map(|b| current.get(&*b.name).copied().unwrap_or(b.state))
        .collect()
}

// ---- the operations, on one snapshot ---------------------------------------------------

#[inline]
fn context_of(st: &Snapshot, sid: Sid) -> Result<&Context> {
    match st.sids().context(sid) {
        Some(c) => Ok(c),
        None => Err(match st.sids().entry(sid) {
            Some(_) => DecideError::InvalidSid(sid.get()),
            None => DecideError::UnknownSid(sid.get()),
        }),
    }
}

#[inline]
fn contexts(st: &Snapshot, a: Sid, b: Sid) -> Result<(&Context, &Context)> {
    Ok((context_of(st, a)?, context_of(st, b)?))
}

fn check_class(st: &Snapshot, class: ClassId) -> Result<()> {
    if class.index() >= st.policy.classes.len() {
        return Err(DecideError::UnknownClass(format!(
            "class value {}",
            class.value()
        )));
    }
    Ok(())
}

fn resolve_class(st: &Snapshot, name: &str) -> Result<ClassRef> {
    if let Some(c) = st.names().class(name) {
        return Ok(ClassRef::Known(c));
    }
    match st.policy.handle_unknown {
        HandleUnknown::Allow | HandleUnknown::Deny => Ok(ClassRef::Unknown),
        HandleUnknown::Reject => Err(DecideError::RejectedUnknown(format!("class {name:?}"))),
    }
}

fn resolve_perm_set<'p>(
    st: &Snapshot,
    class: &str,
    perms: impl Iterator<Item = &'p str>,
) -> Result<PermSet> {
    let cref = resolve_class(st, class)?;
    let hu = st.policy.handle_unknown;
    let mut bits = AccessVector::NONE;
    let mut named = Vec::new();
    for p in perms {
        let bit = match cref {
            ClassRef::Known(c) => st.names().perm(c, p).map(|b| b.trailing_zeros()),
            ClassRef::Unknown => None,
        };
        match bit {
            Some(b) => bits |= AccessVector(1 << b),
            None if hu == HandleUnknown::Reject => {
                return Err(DecideError::RejectedUnknown(format!(
                    "permission {p:?} of class {class:?}"
                )))
            }
            None => {}
        }
        named.push(NamedPerm {
            name: p.into(),
            bit,
        });
    }
    Ok(PermSet {
        class_name: class.into(),
        perms: named.into_boxed_slice(),
        load: st.loaded.load_id,
        load_seqno: st.loaded.load_seqno,
        class: cref,
        bits,
        unknown_allowed: hu == HandleUnknown::Allow,
    })
}

#[inline]
fn av_in(st: &Snapshot, ssid: Sid, tsid: Sid, class: ClassRef) -> Result<AvDecision> {
    let (s, t) = contexts(st, ssid, tsid)?;
    match class {
        ClassRef::Known(c) => {
            check_class(st, c)?;
            Ok(av::compute_av(st, s, t, c))
        }
        ClassRef::Unknown => {
            let mut d = AvDecision::deny_all(st.seqno);
            match st.policy.handle_unknown {
                HandleUnknown::Allow => d.allowed = AccessVector::ALL,
                HandleUnknown::Deny => {}
                HandleUnknown::Reject => {
                    return Err(DecideError::RejectedUnknown("an unknown class".into()))
                }
            }
            if st.policy.permissive.contains(s.ty.value() as u32) {
                d.flags |= AvdFlags::PERMISSIVE;
            }
            if st.policy.neveraudit.contains(s.ty.value() as u32) {
                d.flags |= AvdFlags::NEVERAUDIT;
                d.auditdeny = AccessVector::NONE;
            }
            Ok(d)
        }
    }
}

fn check_in(st: &Snapshot, ssid: Sid, tsid: Sid, perms: &PermSet) -> Result<Verdict> {
    if perms.load == st.loaded.load_id {
        return Ok(perms.verdict(av_in(st, ssid, tsid, perms.class)?));
    }
    // Resolved against another policy load: resolve again from the names.
    let again = resolve_perm_set(st, &perms.class_name, perms.names())?;
    Ok(again.verdict(av_in(st, ssid, tsid, again.class)?))
}

fn xperms_in(
    st: &Snapshot,
    ssid: Sid,
    tsid: Sid,
    class: ClassId,
    base: XpermBase,
    driver: u8,
) -> Result<XpermDecision> {
    let (s, t) = contexts(st, ssid, tsid)?;
    check_class(st, class)?;
    let drivers = av::xperm_drivers(st, s, t, class);
    let set = match base {
        XpermBase::Ioctl => drivers.ioctl,
        XpermBase::Nlmsg => drivers.nlmsg,
    };
    let rule = if set.iter().all(|w| *w == 0) {
        XpermRule::Unrestricted
    } else if !drivers.has(base, driver) {
        XpermRule::DriverNotListed
    } else {
        XpermRule::Driver(av::compute_xperms(st, s, t, class, base, driver))
    };
    Ok(XpermDecision {
        rule,
        seqno: st.seqno,
    })
}

fn label_in(
    st: &Snapshot,
    semantics: Semantics,
    ssid: Sid,
    tsid: Sid,
    class: ClassId,
    kind: LabelKind,
    name: Option<&str>,
) -> Result<Context> {
    let (s, t) = contexts(st, ssid, tsid)?;
    check_class(st, class)?;
    let name = if kind == LabelKind::Create {
        name
    } else {
        None
    };
    let ctx = labeling::compute_label(st, s, t, class, kind, name, semantics).ok_or_else(|| {
        DecideError::InvalidComputedContext {
            context: "(no common sensitivity for glblub)".into(),
            reason: arbiter_policy::Invalid::DisjointGlblub,
        }
    })?;
    if let Err(reason) = st.policy.context_is_valid(&ctx) {
        return Err(DecideError::InvalidComputedContext {
            context: context::format_context(st.names(), &ctx),
            reason,
        });
    }
    Ok(ctx)
}

// ---- the server as the cache's decision source ----------------------------------------

impl DecisionSource for SecurityServer {
    #[inline]
    fn seqno(&self) -> u64 {
        SecurityServer::seqno(self)
    }

    #[inline]
    fn compute_av(&self, ssid: Sid, tsid: Sid, class: ClassRef) -> Result<AvDecision> {
        av_in(&self.state(), ssid, tsid, class)
    }

    fn compute_xperms(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        base: XpermBase,
        driver: u8,
    ) -> Result<XpermDecision> {
        SecurityServer::compute_xperms(self, ssid, tsid, class, base, driver)
    }

    fn compute_create(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<CreateDecision> {
        self.compute_label(ssid, tsid, class, LabelKind::Create, None)
    }

    fn check(&self, ssid: Sid, tsid: Sid, perms: &PermSet) -> Result<Verdict> {
        SecurityServer::check(self, ssid, tsid, perms)
    }

    #[inline]
    fn perm_set_matches(&self, perms: &PermSet, seqno: u64) -> bool {
        // The caller loaded `seqno()` (Acquire) and saw at least `seqno`, so every load
        // published up to it is visible in `current_load`; equal means none came between
        // the set's load and `seqno`. A newer, unpublished load also shows as unequal
        // (then the caller takes the uncached path, which is always right).
        perms.load_seqno <= seqno && self.current_load.load(Ordering::Acquire) == perms.load
    }

    fn sid_to_context(&self, sid: Sid) -> Option<String> {
        SecurityServer::sid_to_context(self, sid).ok()
    }

    fn class_name(&self, class: ClassId) -> Option<String> {
        SecurityServer::class_name(self, class)
    }

    fn perm_name(&self, class: ClassId, bit: u32) -> Option<String> {
        self.state().names().perm_name(class, bit).map(String::from)
    }
}

/// A thread's query handle (see [`SecurityServer::query`]): the same questions as the
/// server, answered from the handle's own reference to the current snapshot.
pub struct Query<'a> {
    server: &'a SecurityServer,
    handle: Handle<'a, Snapshot>,
}

impl Query<'_> {
    /// The handle's snapshot, with the server's published number brought up to it (see
    /// `SecurityServer::published`).
    #[inline]
    fn current(&mut self) -> &Arc<Snapshot> {
        let st = self.handle.load();
        self.server.published(st.seqno);
        st
    }

    /// The snapshot this query answers from (refreshed if a reload or commit happened).
    #[inline]
    pub fn snapshot(&mut self) -> &Arc<Snapshot> {
        self.current()
    }

    /// [`SecurityServer::compute_av`].
    #[inline]
    pub fn compute_av(
        &mut self,
        ssid: Sid,
        tsid: Sid,
        class: impl Into<ClassRef>,
    ) -> Result<AvDecision> {
        av_in(self.current(), ssid, tsid, class.into())
    }

    /// [`SecurityServer::check`].
    #[inline]
    pub fn check(&mut self, ssid: Sid, tsid: Sid, perms: &PermSet) -> Result<Verdict> {
        check_in(self.current(), ssid, tsid, perms)
    }

    /// [`SecurityServer::compute_xperms`].
    pub fn compute_xperms(
        &mut self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        base: XpermBase,
        driver: u8,
    ) -> Result<XpermDecision> {
        xperms_in(self.current(), ssid, tsid, class, base, driver)
    }

    /// The label as a context, without issuing a SID ([`SecurityServer::compute_label`]
    /// issues one).
    pub fn compute_label_context(
        &mut self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        kind: LabelKind,
        name: Option<&str>,
    ) -> Result<Context> {
        let semantics = self.server.semantics;
        label_in(self.current(), semantics, ssid, tsid, class, kind, name)
    }

    /// [`SecurityServer::compute_label`].
    pub fn compute_label(
        &mut self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        kind: LabelKind,
        name: Option<&str>,
    ) -> Result<Sid> {
        self.server
            .compute_label(ssid, tsid, class, kind, name)
            .map(|d| d.sid)
    }

    /// [`SecurityServer::validate_transition`].
    pub fn validate_transition(
        &mut self,
        old: Sid,
        new: Sid,
        task: Sid,
        class: ClassId,
    ) -> Result<bool> {
        let st = self.current();
        let (o, n) = contexts(st, old, new)?;
        let t = context_of(st, task)?;
        Ok(labeling::validate_transition(st, o, n, t, class))
    }
}

#[allow(dead_code)]
fn assert_send_sync() {
    fn is<T: Send + Sync>() {}
    is::<SecurityServer>();
}

/// Model checks of the publication protocol (run with `RUSTFLAGS="--cfg loom"`).
#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use arbiter_policy::BUILTIN_POLICY;
    use loom::thread;

    fn policy() -> ValidPolicy {
        ValidPolicy::from_bytes(BUILTIN_POLICY).unwrap()
    }

    /// A reader that has seen sequence number `n` finds a snapshot numbered `n` or newer,
    /// through the server and through a handle, whatever the interleaving with a commit.
    #[test]
    fn loom_seqno_is_published_after_its_snapshot() {
        let p = policy();
        loom::model(move || {
            let server = Arc::new(SecurityServer::new(p.clone()));
            let w = {
                let s = server.clone();
                thread::spawn(move || {
                    s.commit_booleans();
                })
            };
            let mut q = server.query();
            let seen = server.seqno();
            assert!(q.snapshot().seqno >= seen);
            assert!(server.snapshot().seqno >= seen);
            w.join().unwrap();
            assert_eq!(server.seqno(), 2);
            assert_eq!(q.snapshot().seqno, 2);
        });
    }

    /// A reader that got a decision computed on snapshot `n` then sees a published number of
    /// at least `n`, so a cache cannot answer it from an older state afterwards (fails
    /// without `SecurityServer::published`).
    #[test]
    fn loom_decisions_never_run_ahead_of_the_published_number() {
        let p = policy();
        loom::model(move || {
            let server = Arc::new(SecurityServer::new(p.clone()));
            let kernel = Sid::new(1).unwrap();
            let class = server.known_class("process").unwrap();
            let w = {
                let s = server.clone();
                thread::spawn(move || {
                    s.commit_booleans();
                })
            };
            let d = server.compute_av(kernel, kernel, class).unwrap();
            assert!(server.seqno() >= d.seqno);
            w.join().unwrap();
        });
    }

    /// A SID issued while a reload converts the table is never lost: after both finish it
    /// names its context under the new policy.
    #[test]
    fn loom_sid_issued_during_a_reload_survives_it() {
        let p = policy();
        loom::model(move || {
            let server = Arc::new(SecurityServer::new(p.clone()));
            let w = {
                let (s, p) = (server.clone(), p.clone());
                thread::spawn(move || {
                    s.load_policy(p).unwrap();
                })
            };
            let ctx = "system_u:object_r:etc_t:s0";
            let sid = server.context_to_sid(ctx).unwrap();
            w.join().unwrap();
            assert!(server.sid_is_valid(sid));
            assert_eq!(server.sid_to_context(sid).unwrap(), ctx);
            assert_eq!(server.context_to_sid(ctx).unwrap(), sid);
        });
    }

    /// A permission set resolved before a reload is never matched to a decision made
    /// after it (the cache's two-load check).
    #[test]
    fn loom_perm_set_check_sees_the_reload() {
        let p = policy();
        loom::model(move || {
            let server = Arc::new(SecurityServer::new(p.clone()));
            let ps = server.perm_set("file", &["read"]).unwrap();
            let w = {
                let (s, p) = (server.clone(), p.clone());
                thread::spawn(move || {
                    s.load_policy(p).unwrap();
                })
            };
            let seq = server.seqno();
            if seq >= 2 {
                assert!(!server.perm_set_matches(&ps, seq));
            }
            w.join().unwrap();
            assert!(!server.perm_set_matches(&ps, server.seqno()));
        });
    }
}
