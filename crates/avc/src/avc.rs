//! The access vector cache proper: kernel semantics on top of the lock-free tables.
//!
//! # Policy changes without notification
//!
//! The cache publishes one word, `state = seqno:32 | gen:32`: the policy sequence number
//! its entries belong to and the generation that tags them. A lookup loads the source's
//! current sequence number, then `state` (Acquire); it uses the cache only if the two
//! sequence numbers agree, and then only entries tagged with that generation. So:
//!
//! * after the source bumps its sequence number, no lookup returns an old entry, even
//!   before anyone tells the cache (the first miss notices and moves `state` to a new
//!   generation, which is the reset — one store, nothing walked, no reader waits);
//! * every generation is paired with exactly one sequence number, and an entry is
//!   inserted only under the generation paired with the sequence number its decision was
//!   computed under, so an answer always belongs to the policy the reader observed at the
//!   start of its lookup — never older than one it saw before (the source's number only
//!   grows);
//! * [`Avc::reset`] (and switching to enforcing mode, as the kernel's `avc_ss_reset` on
//!   `setenforce 1`) bumps the generation under the same sequence number.
//!
//! Generation bumps are serialised by a mutex; inserts serialise per table (see
//! [`crate::table`] for the slot protocol and its orderings).
//!
//! # Permissive mode
//!
//! As in the kernel's `avc_denied`: a denial passes if the cache is permissive or the
//! decision carries [`AVD_FLAGS_PERMISSIVE`](crate::AVD_FLAGS_PERMISSIVE); the denied
//! permissions are then added to the cached entry (`AVC_CALLBACK_GRANT`), so the denial is
//! audited once, not on every check. Those grants must not outlive permissive mode, which
//! is why switching to enforcing resets the cache. The denial path loads `state` before
//! the enforcing flag and [`Avc::set_enforcing`] stores the flag before bumping the
//! generation: a thread that still sees the old flag writes its grant under the old
//! generation, which readers no longer use.

use std::sync::atomic::Ordering::{Acquire, Release, SeqCst};
use std::sync::OnceLock;

use crate::audit::{
    audit_required, format_record, xperm_audit_required, AuditField, AuditHook, AuditRecord,
};
use crate::config::{AvcConfig, ConfigError};
use crate::stats::{CacheStats, Count, Counter, HashStats, Registry};
use crate::sync::{lock, AtomicBool, AtomicU64, CachePadded, Mutex};
#[cfg(all(test, not(loom)))]
use crate::table::Inserted;
use crate::table::Table;
use arbiter_decide::{
    AccessVector, AvDecision, AvdFlags, ClassRef, CreateDecision, DecideError, DecisionSource,
    PermSet, Sid, Verdict, XpermBase, XpermDecision, XpermRule, XpermsDecision, XpermsUsed,
};
use arbiter_policy::ClassId;

/// A failed check: what was decided and which requested permissions are missing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("permission denied: requested {:#x}, denied {:#x}", requested.0, denied.0)]
pub struct Denied {
    /// The decision the check used (for a source error, [`AvDecision::deny_all`]).
    pub decision: AvDecision,
    /// The permissions checked.
    pub requested: AccessVector,
    /// `requested & !decision.allowed` (all of `requested` on a source error; none when
    /// nothing was requested, which the kernel refuses too).
    pub denied: AccessVector,
    /// Set when the source could not decide: the check failed closed. Boxed so that a
    /// check's `Result` stays small: a hit returns it by value on every call.
    pub error: Option<Box<DecideError>>,
}

/// Which table [`Avc::table_stats`] describes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TableKind {
    /// Access vector decisions.
    AccessVectors,
    /// Extended-permission (ioctl, netlink) decisions.
    ExtendedPerms,
    /// Labels of new objects.
    CreateLabels,
}

const AV_KEY: u32 = 0xffff;
const XP_KEY: u32 = 0xffff_ffff;

/// The access vector cache in front of a [`DecisionSource`] — normally an
/// `Arc<SecurityServer>`, so the cache is `'static` and can live in a long-lived struct.
///
/// All methods take `&self`; share it between threads with `Arc` or scoped threads.
pub struct Avc<S: DecisionSource = std::sync::Arc<arbiter_decide::SecurityServer>> {
    /// `seqno:32 | gen:32` (see the module header).
    state: CachePadded<AtomicU64>,
    av: Table<3>,
    xp: Table<15>,
    cr: Table<3>,
    enforcing: AtomicBool,
    source: S,
    config: AvcConfig,
    stats: Registry,
    /// Serialises generation bumps.
    sync_lock: CachePadded<Mutex<()>>,
    hook: OnceLock<AuditHook>,
}

#[inline(always)]
fn state_of(seqno: u64, gen: u32) -> u64 {
    (seqno as u32 as u64) << 32 | gen as u64
}

#[inline(always)]
fn state_seq(st: u64) -> u32 {
    (st >> 32) as u32
}

#[inline(always)]
fn state_gen(st: u64) -> u32 {
    st as u32
}

fn pack_bitmap(words: &mut [u64], map: &[u32; 8]) {
    for (i, w) in words.iter_mut().enumerate() {
        *w = map[2 * i] as u64 | (map[2 * i + 1] as u64) << 32;
    }
}

fn unpack_bitmap(words: &[u64]) -> [u32; 8] {
    std::array::from_fn(|i| (words[i / 2] >> (32 * (i % 2))) as u32)
}

impl<S: DecisionSource> Avc<S> {
    /// A cache with `config` (validated) in front of `source`.
    pub fn new(source: S, config: AvcConfig) -> Result<Avc<S>, ConfigError> {
        config.validate()?;
        let h = config.hash;
        let avc = Avc {
            state: CachePadded(AtomicU64::new(state_of(source.seqno(), 1))),
            av: Table::new(config.slots, config.threshold, h, AV_KEY),
            xp: Table::new(config.xperm_slots, config.xperm_threshold, h, XP_KEY),
            cr: Table::new(config.create_slots, config.create_threshold, h, AV_KEY),
            enforcing: AtomicBool::new(config.enforcing),
            source,
            config,
            stats: Registry::new(),
            sync_lock: CachePadded(Mutex::new(())),
            hook: OnceLock::new(),
        };
        Ok(avc)
    }

    /// The decision source.
    pub fn source(&self) -> &S {
        &self.source
    }

    /// The configuration the cache was built with.
    pub fn config(&self) -> &AvcConfig {
        &self.config
    }

    /// Registers the audit hook. Returns false (and drops `hook`) if one is already set: the
    /// hook is write-once so that reading it on an audited hit needs no lock.
    pub fn set_audit_hook(&self, hook: impl Fn(&AuditRecord) + Send + Sync + 'static) -> bool {
        self.hook.set(Box::new(hook)).is_ok()
    }

    /// Whether denials are enforced (outside permissive domains).
    pub fn enforcing(&self) -> bool {
        self.enforcing.load(Acquire)
    }

    /// Switches enforcing mode. Switching *to* enforcing resets the cache, dropping the
    /// grants recorded while permissive (the kernel's `setenforce 1` does the same).
    pub fn set_enforcing(&self, enforcing: bool) {
        let was = self.enforcing.swap(enforcing, SeqCst);
        if enforcing && !was {
            self.reset();
        }
    }

    /// Invalidates every cached entry at once and syncs to the source's current sequence
    /// number. Readers never wait: they simply stop seeing the old entries.
    pub fn reset(&self) {
        let _g = lock(&self.sync_lock);
        let st = self.state.load(Acquire);
        self.bump_locked(self.source.seqno(), st);
    }

    /// Publishes a new generation for `seqno` (caller holds `sync_lock`).
    fn bump_locked(&self, seqno: u64, old: u64) -> u32 {
        let old_gen = state_gen(old);
        let dropped = self.av.live(old_gen) + self.xp.live(old_gen) + self.cr.live(old_gen);
        let gen = if old_gen == u32::MAX {
            // Generation counter wraps: clear physically so no cell tagged with a reused
            // generation survives. Generation 0 is never used (cleared cells carry it).
            self.av.clear();
            self.xp.clear();
            self.cr.clear();
            1
        } else {
            old_gen + 1
        };
        self.state.store(state_of(seqno, gen), Release);
        self.stats.add(Counter::Frees, dropped as u64);
        gen
    }

    /// The generation to tag an entry computed under `seqno` with, if that is still the
    /// current policy (moving the cache to it if needed).
    fn gen_for(&self, seqno: u64) -> Option<u32> {
        let st = self.state.load(Acquire);
        if state_seq(st) == seqno as u32 {
            return Some(state_gen(st));
        }
        self.sync_to(seqno)
    }

    #[cold]
    fn sync_to(&self, seqno: u64) -> Option<u32> {
        let _g = lock(&self.sync_lock);
        if self.source.seqno() as u32 != seqno as u32 {
            // Computed under a policy that is no longer current: answer, don't cache.
            return None;
        }
        let st = self.state.load(Acquire);
        if state_seq(st) == seqno as u32 {
            return Some(state_gen(st));
        }
        Some(self.bump_locked(seqno, st))
    }

    /// `(seqno, gen)` a lookup may use, or None if the cache lags the source.
    #[inline(always)]
    fn current(&self) -> Option<(u64, u32)> {
        let seq = self.source.seqno();
        let st = self.state.load(Acquire);
        if state_seq(st) == seq as u32 {
            Some((seq, state_gen(st)))
        } else {
            None
        }
    }

    #[inline(always)]
    fn probe_av(&self, ssid: u32, tsid: u32, tclass: u16) -> Option<AvDecision> {
        let (seqno, gen) = self.current()?;
        let (hi, w) = self.av.lookup(gen, ssid, tsid, tclass as u32)?;
        Some(AvDecision {
            allowed: AccessVector((w[1] >> 32) as u32),
            auditallow: AccessVector(w[2] as u32),
            auditdeny: AccessVector((w[2] >> 32) as u32),
            seqno,
            flags: AvdFlags(hi >> 16),
        })
    }

    /// The cached decision, if any — the hit path: only loads on shared memory, plus one
    /// counter in this thread's own statistics block. Counts a lookup, and a miss if
    /// absent.
    #[inline(always)]
    pub fn lookup(&self, ssid: Sid, tsid: Sid, class: impl Into<ClassRef>) -> Option<AvDecision> {
        self.lookup_raw(ssid.get(), tsid.get(), class_key(class.into()))
    }

    #[inline(always)]
    fn lookup_raw(&self, ssid: u32, tsid: u32, tclass: u16) -> Option<AvDecision> {
        let d = self.probe_av(ssid, tsid, tclass);
        self.stats.inc(Counter::Lookups);
        if d.is_none() {
            self.stats.inc(Counter::Misses);
        }
        d
    }

    /// The full decision for the triple (`avc_compute_av`): cached, or computed by the
    /// source and cached. Unknown classes are cached like known ones.
    #[inline(always)]
    pub fn compute_av(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: impl Into<ClassRef>,
    ) -> Result<AvDecision, DecideError> {
        let class = class.into();
        match self.lookup_raw(ssid.get(), tsid.get(), class_key(class)) {
            Some(d) => Ok(d),
            None => self.miss_path(ssid, tsid, class),
        }
    }

    /// The miss path: ask the source, insert if the decision is for the current policy.
    #[cold]
    #[inline(never)]
    fn miss_path(&self, ssid: Sid, tsid: Sid, class: ClassRef) -> Result<AvDecision, DecideError> {
        let d = self.source.compute_av(ssid, tsid, class)?;
        if let Some(gen) = self.gen_for(d.seqno) {
            let (hi, words) = av_words(class_key(class), &d);
            self.av
                .insert(gen, ssid.get(), tsid.get(), hi, words, &self.stats);
        }
        Ok(d)
    }

    /// The verdict on a permission request, from the cache (the same answer as
    /// [`SecurityServer::check`](arbiter_decide::SecurityServer::check)), auditing as
    /// [`Avc::has_perm`] does. A set resolved against another policy load than the
    /// decision's is answered by the source, uncached.
    #[inline]
    pub fn check(&self, ssid: Sid, tsid: Sid, perms: &PermSet) -> Result<Verdict, DecideError> {
        let d = self.compute_av(ssid, tsid, perms.class())?;
        let v = if self.source.perm_set_matches(perms, d.seqno) {
            perms.verdict(d)
        } else {
            self.source.check(ssid, tsid, perms)?
        };
        if !v.audited().is_empty() {
            let failed = !v.allowed() && self.enforcing() && !v.permissive();
            self.audit_verdict(ssid, tsid, perms, &v, failed);
        }
        Ok(v)
    }

    #[cold]
    fn audit_verdict(&self, ssid: Sid, tsid: Sid, perms: &PermSet, v: &Verdict, failed: bool) {
        let (audited, denied) = audit_required(v.requested, &v.decision, failed);
        if !audited.is_empty() {
            let class = perms.class();
            self.emit(
                ssid,
                tsid,
                class,
                v.requested,
                audited,
                !denied.is_empty(),
                failed,
                &[],
            );
        }
    }

    /// The kernel's `avc_has_perm_noaudit`: `Ok` if every requested permission is granted
    /// — or denied but not enforced (permissive mode or permissive domain; then
    /// `requested & !decision.allowed` is not empty) — with the full decision either way.
    #[inline(always)]
    pub fn has_perm_noaudit(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: impl Into<ClassRef>,
        requested: AccessVector,
    ) -> Result<AvDecision, Denied> {
        let class = class.into();
        let d = match self.compute_av(ssid, tsid, class) {
            Ok(d) => d,
            Err(e) => return Err(self.source_failed(requested, e)),
        };
        if d.allowed.contains(requested) && !requested.is_empty() {
            return Ok(d);
        }
        self.denied(ssid, tsid, class, requested, d, None)
    }

    /// The kernel's `avc_has_perm`: [`has_perm_noaudit`](Self::has_perm_noaudit), then an
    /// audit record for an audited denial or an `auditallow`'ed grant. `fields` are the
    /// caller's `key=value` fields (pid, comm, name, path…).
    #[inline]
    pub fn has_perm(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: impl Into<ClassRef>,
        requested: AccessVector,
        fields: &[AuditField<'_>],
    ) -> Result<AvDecision, Denied> {
        let class = class.into();
        let r = self.has_perm_noaudit(ssid, tsid, class, requested);
        match &r {
            Ok(d) => self.audit(ssid, tsid, class, requested, d, false, fields),
            Err(e) => self.audit(ssid, tsid, class, requested, &e.decision, true, fields),
        }
        r
    }

    /// The kernel's `avc_audit`, for callers of the `_noaudit` checks: emits the record
    /// `avc_audit_required` calls for, if any. `failed` is whether the check failed.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn audit(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: impl Into<ClassRef>,
        requested: AccessVector,
        decision: &AvDecision,
        failed: bool,
        fields: &[AuditField<'_>],
    ) {
        let (audited, denied) = audit_required(requested, decision, failed);
        if !audited.is_empty() {
            self.emit(
                ssid,
                tsid,
                class.into(),
                requested,
                audited,
                !denied.is_empty(),
                failed,
                fields,
            );
        }
    }

    #[cold]
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassRef,
        requested: AccessVector,
        audited: AccessVector,
        is_denial: bool,
        failed: bool,
        fields: &[AuditField<'_>],
    ) {
        let Some(hook) = self.hook.get() else { return };
        let permissive = is_denial && !failed;
        let text = format_record(
            &self.source,
            (ssid, tsid, class),
            audited,
            is_denial,
            permissive,
            fields,
        );
        hook(&AuditRecord {
            ssid,
            tsid,
            class,
            requested,
            audited,
            denied: is_denial,
            permissive,
            text,
        });
    }

    #[cold]
    fn source_failed(&self, requested: AccessVector, e: DecideError) -> Denied {
        let seqno = self.source.seqno();
        Denied {
            decision: AvDecision::deny_all(seqno),
            requested,
            denied: requested,
            error: Some(Box::new(e)),
        }
    }

    /// The kernel's `avc_denied`: fail, or pass permissively and record the grant.
    #[cold]
    #[inline(never)]
    fn denied(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassRef,
        requested: AccessVector,
        d: AvDecision,
        xperm: Option<(XpermBase, u16)>,
    ) -> Result<AvDecision, Denied> {
        let denied = requested.without(d.allowed);
        if requested.is_empty() {
            return Err(Denied {
                decision: d,
                requested,
                denied,
                error: None,
            });
        }
        // Order matters: state before the flag (see the module header).
        let st = self.state.load(Acquire);
        if self.enforcing.load(Acquire) && !d.is_permissive() {
            return Err(Denied {
                decision: d,
                requested,
                denied,
                error: None,
            });
        }
        if state_seq(st) == d.seqno as u32 {
            let gen = state_gen(st);
            let tclass = class_key(class);
            self.av
                .update(gen, ssid.get(), tsid.get(), tclass as u32, |hi, mut w| {
                    w[1] |= (requested.0 as u64) << 32;
                    (hi, w)
                });
            if let Some((base, xperm)) = xperm {
                let k = xp_key(tclass, base, (xperm >> 8) as u8);
                let func = xperm as u8;
                self.xp.update(gen, ssid.get(), tsid.get(), k, |hi, mut w| {
                    let kind = (w[1] >> 32) as u8;
                    let used = XpermsUsed((w[1] >> 40) as u8);
                    if kind == 2 && used.contains(XpermsUsed::ALLOWED) {
                        w[2 + func as usize / 64] |= 1 << (func % 64);
                    }
                    (hi, w)
                });
            }
        }
        Ok(d)
    }

    /// The extended-permission decision for one driver: cached, or computed and cached.
    pub fn xperm_decision(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        base: XpermBase,
        driver: u8,
    ) -> Result<XpermDecision, DecideError> {
        let k = xp_key(class.value(), base, driver);
        self.stats.inc(Counter::XpermLookups);
        let hit = self.current().and_then(|(seqno, gen)| {
            self.xp
                .lookup(gen, ssid.get(), tsid.get(), k)
                .map(|x| (seqno, x))
        });
        if hit.is_none() {
            self.stats.inc(Counter::XpermMisses);
        }
        if let Some((seqno, (_, w))) = hit {
            let rule = match (w[1] >> 32) as u8 {
                0 => XpermRule::Unrestricted,
                1 => XpermRule::DriverNotListed,
                _ => XpermRule::Driver(XpermsDecision {
                    driver,
                    used: XpermsUsed((w[1] >> 40) as u8),
                    allowed: unpack_bitmap(&w[2..6]),
                    auditallow: unpack_bitmap(&w[6..10]),
                    dontaudit: unpack_bitmap(&w[10..14]),
                }),
            };
            return Ok(XpermDecision { rule, seqno });
        }
        let x = self
            .source
            .compute_xperms(ssid, tsid, class, base, driver)?;
        if let Some(gen) = self.gen_for(x.seqno) {
            let mut words = [0u64; 15];
            let (kind, used) = match &x.rule {
                XpermRule::Unrestricted => (0u64, 0u64),
                XpermRule::DriverNotListed => (1, 0),
                XpermRule::Driver(b) => {
                    pack_bitmap(&mut words[2..6], &b.allowed);
                    pack_bitmap(&mut words[6..10], &b.auditallow);
                    pack_bitmap(&mut words[10..14], &b.dontaudit);
                    (2, b.used.0 as u64)
                }
            };
            words[1] = kind << 32 | used << 40;
            self.xp
                .insert(gen, ssid.get(), tsid.get(), k, words, &self.stats);
        }
        Ok(x)
    }

    /// The kernel's `avc_has_extended_perms` (ioctl or netlink command `xperm`, whose high
    /// byte is the driver), with auditing: the base permission `requested` must be granted
    /// and, if the policy has extended-permission rules for the triple, the command too.
    #[allow(clippy::too_many_arguments)] // the kernel's avc_has_extended_perms, argument for argument
    pub fn has_extended_perm(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        requested: AccessVector,
        base: XpermBase,
        xperm: u16,
        fields: &[AuditField<'_>],
    ) -> Result<AvDecision, Denied> {
        let driver = (xperm >> 8) as u8;
        let func = xperm as u8;
        let cref = ClassRef::Known(class);
        let mut d = match self.compute_av(ssid, tsid, class) {
            Ok(d) => d,
            Err(e) => return self.fail_audited(ssid, tsid, cref, requested, e, fields),
        };
        let x = match self.xperm_decision(ssid, tsid, class, base, driver) {
            Ok(x) => x,
            Err(e) => return self.fail_audited(ssid, tsid, cref, requested, e, fields),
        };
        let xpd = match x.rule {
            XpermRule::Unrestricted => None,
            XpermRule::DriverNotListed => {
                d.allowed = d.allowed.without(requested);
                None
            }
            XpermRule::Driver(b) => {
                if !b.allows(func) {
                    d.allowed = d.allowed.without(requested);
                }
                Some(b)
            }
        };
        let r = if d.allowed.contains(requested) && !requested.is_empty() {
            Ok(d)
        } else {
            self.denied(ssid, tsid, cref, requested, d, Some((base, xperm)))
        };
        let (audited, denied) = xperm_audit_required(requested, &d, xpd.as_ref(), func, r.is_err());
        if !audited.is_empty() {
            self.emit(
                ssid,
                tsid,
                cref,
                requested,
                audited,
                !denied.is_empty(),
                r.is_err(),
                fields,
            );
        }
        r
    }

    #[cold]
    fn fail_audited(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassRef,
        requested: AccessVector,
        e: DecideError,
        fields: &[AuditField<'_>],
    ) -> Result<AvDecision, Denied> {
        let den = self.source_failed(requested, e);
        self.audit(ssid, tsid, class, requested, &den.decision, true, fields);
        Err(den)
    }

    /// The SID of a new object of `class` created by `ssid` under `tsid`: cached, or
    /// computed by the source and cached.
    pub fn compute_create(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<Sid, DecideError> {
        self.stats.inc(Counter::CreateLookups);
        let key = class.value() as u32;
        let hit = self
            .current()
            .and_then(|(_, gen)| self.cr.lookup(gen, ssid.get(), tsid.get(), key));
        if hit.is_none() {
            self.stats.inc(Counter::CreateMisses);
        }
        if let Some(sid) = hit.and_then(|(_, w)| Sid::new((w[1] >> 32) as u32)) {
            return Ok(sid);
        }
        let CreateDecision { sid, seqno } = self.source.compute_create(ssid, tsid, class)?;
        if let Some(gen) = self.gen_for(seqno) {
            let words = [0, (sid.get() as u64) << 32, 0];
            self.cr
                .insert(gen, ssid.get(), tsid.get(), key, words, &self.stats);
        }
        Ok(sid)
    }

    /// Counters summed over all threads.
    pub fn stats(&self) -> CacheStats {
        self.stats.snapshot()
    }

    /// The access-vector table's occupancy (the kernel's `hash_stats`).
    pub fn hash_stats(&self) -> HashStats {
        self.table_stats(TableKind::AccessVectors)
    }

    /// Occupancy of one table in the current generation.
    pub fn table_stats(&self, which: TableKind) -> HashStats {
        let gen = state_gen(self.state.load(Acquire));
        match which {
            TableKind::AccessVectors => self.av.stats(gen),
            TableKind::ExtendedPerms => self.xp.stats(gen),
            TableKind::CreateLabels => self.cr.stats(gen),
        }
    }

    /// Live access-vector entries.
    pub fn len(&self) -> usize {
        self.av.live(state_gen(self.state.load(Acquire)))
    }

    /// No live access-vector entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Test hook: inserts a decision as the miss path would.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn insert_for_test(
        &self,
        ssid: u32,
        tsid: u32,
        tclass: u16,
        d: &AvDecision,
    ) -> Option<Inserted> {
        let gen = self.gen_for(d.seqno)?;
        let (hi, words) = av_words(tclass, d);
        Some(self.av.insert(gen, ssid, tsid, hi, words, &self.stats))
    }
}

/// The cache key of a class: its policy value, 0 for a class the policy lacks.
#[inline(always)]
fn class_key(class: ClassRef) -> u16 {
    match class {
        ClassRef::Known(c) => c.value(),
        ClassRef::Unknown => 0,
    }
}

/// A decision as the table's key word and payload words.
#[inline(always)]
fn av_words(tclass: u16, d: &AvDecision) -> (u32, [u64; 3]) {
    let hi = tclass as u32 | (d.flags.0 & 0xffff) << 16;
    let words = [
        0,
        (d.allowed.0 as u64) << 32,
        d.auditallow.0 as u64 | (d.auditdeny.0 as u64) << 32,
    ];
    (hi, words)
}

#[inline(always)]
fn xp_key(tclass: u16, base: XpermBase, driver: u8) -> u32 {
    let code = match base {
        XpermBase::Ioctl => 1,
        XpermBase::Nlmsg => 2,
    };
    tclass as u32 | (driver as u32) << 16 | code << 24
}
