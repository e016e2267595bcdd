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
use crate::source::{
    CreateDecision, Decision, DecisionSource, SourceError, XpermBase, XpermBitmaps, XpermDecision,
    XpermRule, XPERMS_ALLOWED,
};
use crate::stats::{CacheStats, Count, Counter, HashStats, Registry};
use crate::sync::{lock, AtomicBool, AtomicU64, CachePadded, Mutex};
#[cfg(all(test, not(loom)))]
use crate::table::Inserted;
use crate::table::Table;

/// A failed check: what was decided and which requested permissions are missing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("permission denied: requested {requested:#x}, denied {denied:#x}")]
pub struct Denied {
    /// The decision the check used (for a source error, [`Decision::deny_all`]).
    pub decision: Decision,
    pub requested: u32,
    /// `requested & !decision.allowed` (all of `requested` on a source error; 0 when
    /// nothing was requested, which the kernel refuses too).
    pub denied: u32,
    /// Set when the source could not decide: the check failed closed.
    pub error: Option<SourceError>,
}

/// Which table [`Avc::table_stats`] describes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TableKind {
    AccessVectors,
    ExtendedPerms,
    CreateLabels,
}

const AV_KEY: u32 = 0xffff;
const XP_KEY: u32 = 0xffff_ffff;

/// The access vector cache in front of a [`DecisionSource`].
///
/// All methods take `&self`; share it between threads with `Arc` or scoped threads.
pub struct Avc<S: DecisionSource> {
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
    fn probe_av(&self, ssid: u32, tsid: u32, tclass: u16) -> Option<Decision> {
        let (seqno, gen) = self.current()?;
        let (hi, w) = self.av.lookup(gen, ssid, tsid, tclass as u32)?;
        Some(Decision {
            allowed: (w[1] >> 32) as u32,
            auditallow: w[2] as u32,
            auditdeny: (w[2] >> 32) as u32,
            seqno,
            flags: hi >> 16,
        })
    }

    /// The cached decision, if any — the hit path: only loads on shared memory, plus one
    /// counter in this thread's own statistics block. Counts a lookup, and a miss if
    /// absent.
    #[inline(always)]
    pub fn lookup(&self, ssid: u32, tsid: u32, tclass: u16) -> Option<Decision> {
        let d = self.probe_av(ssid, tsid, tclass);
        self.stats.inc(Counter::Lookups);
        if d.is_none() {
            self.stats.inc(Counter::Misses);
        }
        d
    }

    /// The full decision for the triple: cached, or computed by the source and cached.
    #[inline(always)]
    pub fn decision(&self, ssid: u32, tsid: u32, tclass: u16) -> Result<Decision, SourceError> {
        match self.lookup(ssid, tsid, tclass) {
            Some(d) => Ok(d),
            None => self.miss_path(ssid, tsid, tclass),
        }
    }

    /// The miss path: ask the source, insert if the decision is for the current policy.
    #[cold]
    #[inline(never)]
    pub(crate) fn miss_path(
        &self,
        ssid: u32,
        tsid: u32,
        tclass: u16,
    ) -> Result<Decision, SourceError> {
        let d = self.source.compute_av(ssid, tsid, tclass)?;
        if tclass != 0 {
            if let Some(gen) = self.gen_for(d.seqno) {
                let hi = tclass as u32 | (d.flags & 0xffff) << 16;
                let words = [
                    0,
                    (d.allowed as u64) << 32,
                    d.auditallow as u64 | (d.auditdeny as u64) << 32,
                ];
                self.av.insert(gen, ssid, tsid, hi, words, &self.stats);
            }
        }
        Ok(d)
    }

    /// The kernel's `avc_has_perm_noaudit`: `Ok` if every requested permission is granted
    /// — or denied but not enforced (permissive mode or permissive domain; then
    /// `requested & !decision.allowed != 0`) — with the full decision either way.
    #[inline(always)]
    pub fn has_perm_noaudit(
        &self,
        ssid: u32,
        tsid: u32,
        tclass: u16,
        requested: u32,
    ) -> Result<Decision, Denied> {
        let d = match self.decision(ssid, tsid, tclass) {
            Ok(d) => d,
            Err(e) => return Err(self.source_failed(requested, e)),
        };
        if requested & !d.allowed == 0 && requested != 0 {
            return Ok(d);
        }
        self.denied(ssid, tsid, tclass, requested, d, None)
    }

    /// The kernel's `avc_has_perm`: [`has_perm_noaudit`](Self::has_perm_noaudit), then an
    /// audit record for an audited denial or an `auditallow`'ed grant. `fields` are the
    /// caller's `key=value` fields (pid, comm, name, path…).
    #[inline]
    pub fn has_perm(
        &self,
        ssid: u32,
        tsid: u32,
        tclass: u16,
        requested: u32,
        fields: &[AuditField<'_>],
    ) -> Result<Decision, Denied> {
        let r = self.has_perm_noaudit(ssid, tsid, tclass, requested);
        match &r {
            Ok(d) => self.audit(ssid, tsid, tclass, requested, d, false, fields),
            Err(e) => self.audit(ssid, tsid, tclass, requested, &e.decision, true, fields),
        }
        r
    }

    /// The kernel's `avc_audit`, for callers of the `_noaudit` checks: emits the record
    /// `avc_audit_required` calls for, if any. `failed` is whether the check failed.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn audit(
        &self,
        ssid: u32,
        tsid: u32,
        tclass: u16,
        requested: u32,
        decision: &Decision,
        failed: bool,
        fields: &[AuditField<'_>],
    ) {
        let (audited, denied) = audit_required(requested, decision, failed);
        if audited != 0 {
            self.emit(
                ssid, tsid, tclass, requested, audited, denied, failed, fields,
            );
        }
    }

    #[cold]
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &self,
        ssid: u32,
        tsid: u32,
        tclass: u16,
        requested: u32,
        audited: u32,
        denied: u32,
        failed: bool,
        fields: &[AuditField<'_>],
    ) {
        let Some(hook) = self.hook.get() else { return };
        let is_denial = denied != 0;
        let permissive = is_denial && !failed;
        let text = format_record(
            &self.source,
            (ssid, tsid, tclass),
            audited,
            is_denial,
            permissive,
            fields,
        );
        hook(&AuditRecord {
            ssid,
            tsid,
            tclass,
            requested,
            audited,
            denied: is_denial,
            permissive,
            text,
        });
    }

    #[cold]
    fn source_failed(&self, requested: u32, e: SourceError) -> Denied {
        let seqno = self.source.seqno();
        Denied {
            decision: Decision::deny_all(seqno),
            requested,
            denied: requested,
            error: Some(e),
        }
    }

    /// The kernel's `avc_denied`: fail, or pass permissively and record the grant.
    #[cold]
    #[inline(never)]
    fn denied(
        &self,
        ssid: u32,
        tsid: u32,
        tclass: u16,
        requested: u32,
        d: Decision,
        xperm: Option<(XpermBase, u16)>,
    ) -> Result<Decision, Denied> {
        let denied = requested & !d.allowed;
        if requested == 0 {
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
            self.av.update(gen, ssid, tsid, tclass as u32, |hi, mut w| {
                w[1] |= (requested as u64) << 32;
                (hi, w)
            });
            if let Some((base, xperm)) = xperm {
                let k = xp_key(tclass, base, (xperm >> 8) as u8);
                let func = xperm as u8;
                self.xp.update(gen, ssid, tsid, k, |hi, mut w| {
                    let kind = (w[1] >> 32) as u8;
                    let used = (w[1] >> 40) as u8;
                    if kind == 2 && used & XPERMS_ALLOWED != 0 {
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
        ssid: u32,
        tsid: u32,
        tclass: u16,
        base: XpermBase,
        driver: u8,
    ) -> Result<XpermDecision, SourceError> {
        let k = xp_key(tclass, base, driver);
        self.stats.inc(Counter::XpermLookups);
        let hit = self
            .current()
            .and_then(|(seqno, gen)| self.xp.lookup(gen, ssid, tsid, k).map(|x| (seqno, x)));
        if hit.is_none() {
            self.stats.inc(Counter::XpermMisses);
        }
        if let Some((seqno, (_, w))) = hit {
            let rule = match (w[1] >> 32) as u8 {
                0 => XpermRule::Unrestricted,
                1 => XpermRule::DriverNotListed,
                _ => XpermRule::Driver(XpermBitmaps {
                    used: (w[1] >> 40) as u8,
                    allowed: unpack_bitmap(&w[2..6]),
                    auditallow: unpack_bitmap(&w[6..10]),
                    dontaudit: unpack_bitmap(&w[10..14]),
                }),
            };
            return Ok(XpermDecision { rule, seqno });
        }
        let x = self
            .source
            .compute_xperms(ssid, tsid, tclass, base, driver)?;
        if tclass != 0 {
            if let Some(gen) = self.gen_for(x.seqno) {
                let mut words = [0u64; 15];
                let (kind, used) = match &x.rule {
                    XpermRule::Unrestricted => (0u64, 0u64),
                    XpermRule::DriverNotListed => (1, 0),
                    XpermRule::Driver(b) => {
                        pack_bitmap(&mut words[2..6], &b.allowed);
                        pack_bitmap(&mut words[6..10], &b.auditallow);
                        pack_bitmap(&mut words[10..14], &b.dontaudit);
                        (2, b.used as u64)
                    }
                };
                words[1] = kind << 32 | used << 40;
                self.xp.insert(gen, ssid, tsid, k, words, &self.stats);
            }
        }
        Ok(x)
    }

    /// The kernel's `avc_has_extended_perms` (ioctl or netlink command `xperm`, whose high
    /// byte is the driver), with auditing: the base permission `requested` must be granted
    /// and, if the policy has extended-permission rules for the triple, the command too.
    #[allow(clippy::too_many_arguments)] // the kernel's avc_has_extended_perms, argument for argument
    pub fn has_extended_perm(
        &self,
        ssid: u32,
        tsid: u32,
        tclass: u16,
        requested: u32,
        base: XpermBase,
        xperm: u16,
        fields: &[AuditField<'_>],
    ) -> Result<Decision, Denied> {
        let driver = (xperm >> 8) as u8;
        let func = xperm as u8;
        let mut d = match self.decision(ssid, tsid, tclass) {
            Ok(d) => d,
            Err(e) => return self.fail_audited(ssid, tsid, tclass, requested, e, fields),
        };
        let x = match self.xperm_decision(ssid, tsid, tclass, base, driver) {
            Ok(x) => x,
            Err(e) => return self.fail_audited(ssid, tsid, tclass, requested, e, fields),
        };
        let xpd = match x.rule {
            XpermRule::Unrestricted => None,
            XpermRule::DriverNotListed => {
                d.allowed &= !requested;
                None
            }
            XpermRule::Driver(b) => {
                if !b.allows(func) {
                    d.allowed &= !requested;
                }
                Some(b)
            }
        };
        let r = if requested & !d.allowed == 0 && requested != 0 {
            Ok(d)
        } else {
            self.denied(ssid, tsid, tclass, requested, d, Some((base, xperm)))
        };
        let (audited, denied) = xperm_audit_required(requested, &d, xpd.as_ref(), func, r.is_err());
        if audited != 0 {
            self.emit(
                ssid,
                tsid,
                tclass,
                requested,
                audited,
                denied,
                r.is_err(),
                fields,
            );
        }
        r
    }

    #[cold]
    fn fail_audited(
        &self,
        ssid: u32,
        tsid: u32,
        tclass: u16,
        requested: u32,
        e: SourceError,
        fields: &[AuditField<'_>],
    ) -> Result<Decision, Denied> {
        let den = self.source_failed(requested, e);
        self.audit(ssid, tsid, tclass, requested, &den.decision, true, fields);
        Err(den)
    }

    /// The SID of a new object of class `tclass` created by `ssid` under `tsid`: cached,
    /// or computed by the source and cached.
    pub fn compute_create(&self, ssid: u32, tsid: u32, tclass: u16) -> Result<u32, SourceError> {
        self.stats.inc(Counter::CreateLookups);
        let hit = self
            .current()
            .and_then(|(_, gen)| self.cr.lookup(gen, ssid, tsid, tclass as u32));
        if hit.is_none() {
            self.stats.inc(Counter::CreateMisses);
        }
        if let Some((_, w)) = hit {
            return Ok((w[1] >> 32) as u32);
        }
        let CreateDecision { sid, seqno } = self.source.compute_create(ssid, tsid, tclass)?;
        if tclass != 0 {
            if let Some(gen) = self.gen_for(seqno) {
                let words = [0, (sid as u64) << 32, 0];
                self.cr
                    .insert(gen, ssid, tsid, tclass as u32, words, &self.stats);
            }
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
        d: &Decision,
    ) -> Option<Inserted> {
        let gen = self.gen_for(d.seqno)?;
        let hi = tclass as u32 | (d.flags & 0xffff) << 16;
        let words = [
            0,
            (d.allowed as u64) << 32,
            d.auditallow as u64 | (d.auditdeny as u64) << 32,
        ];
        Some(self.av.insert(gen, ssid, tsid, hi, words, &self.stats))
    }
}

#[inline(always)]
fn xp_key(tclass: u16, base: XpermBase, driver: u8) -> u32 {
    tclass as u32 | (driver as u32) << 16 | base.code() << 24
}
