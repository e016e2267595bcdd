//! Unit tests of the cache's behaviour (the table and its protocol have their own tests in
//! `table.rs`; concurrency is covered by `tests/stress.rs` and the loom models).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

use crate::fake::{cls, sid, FakeSource, RawAvc};
use crate::*;
use arbiter_decide::{
    AccessVector, AvDecision, AvdFlags, ClassRef, DecideError, DecisionSource, Sid, XpermBase,
    XpermDecision, XpermRule,
};
use arbiter_policy::ClassId;

/// A source with hand-written decisions (names from [`FakeSource`]).
struct Fixed {
    seq: AtomicU64,
    map: Mutex<HashMap<(u32, u32, u16), AvDecision>>,
    names: FakeSource,
    computes: AtomicU64,
}

impl Fixed {
    fn new() -> Fixed {
        Fixed {
            seq: AtomicU64::new(1),
            map: Mutex::new(HashMap::new()),
            names: FakeSource::new(),
            computes: AtomicU64::new(0),
        }
    }
    fn set(&self, k: (u32, u32, u16), allowed: u32, auditallow: u32, auditdeny: u32, flags: u32) {
        self.map.lock().unwrap().insert(
            k,
            AvDecision {
                allowed: AccessVector(allowed),
                auditallow: AccessVector(auditallow),
                auditdeny: AccessVector(auditdeny),
                seqno: 0,
                flags: AvdFlags(flags),
            },
        );
    }
}

impl DecisionSource for Fixed {
    fn compute_av(&self, ssid: Sid, tsid: Sid, class: ClassRef) -> Result<AvDecision, DecideError> {
        self.computes.fetch_add(1, Relaxed);
        let seqno = self.seqno();
        let c = class.known().map_or(0, |c| c.value());
        self.map
            .lock()
            .unwrap()
            .get(&(ssid.get(), tsid.get(), c))
            .map(|d| AvDecision { seqno, ..*d })
            .ok_or(DecideError::UnknownSid(ssid.get()))
    }
    fn seqno(&self) -> u64 {
        self.seq.load(SeqCst)
    }
    fn compute_xperms(
        &self,
        s: Sid,
        t: Sid,
        c: ClassId,
        b: XpermBase,
        d: u8,
    ) -> Result<XpermDecision, DecideError> {
        self.names
            .compute_xperms(s, t, c, b, d)
            .map(|x| XpermDecision {
                seqno: self.seqno(),
                ..x
            })
    }
    fn sid_to_context(&self, sid: Sid) -> Option<String> {
        self.names.sid_to_context(sid)
    }
    fn class_name(&self, c: ClassId) -> Option<String> {
        self.names.class_name(c)
    }
    fn perm_name(&self, c: ClassId, bit: u32) -> Option<String> {
        self.names.perm_name(c, bit)
    }
}

const READ: u32 = 1 << 1;
const WRITE: u32 = 1 << 2;
const GETATTR: u32 = 1 << 4;
const IOCTL: u32 = 1 << 0;
const FILE: u16 = 1;

type Log = Arc<Mutex<Vec<AuditRecord>>>;

fn with_log<S: DecisionSource>(avc: &Avc<S>) -> Log {
    let log: Log = Arc::default();
    let sink = log.clone();
    assert!(avc.set_audit_hook(move |r| sink.lock().unwrap().push(r.clone())));
    log
}

fn texts(log: &Log) -> Vec<String> {
    log.lock().unwrap().iter().map(|r| r.text.clone()).collect()
}

fn fixed_avc() -> (Avc<Arc<Fixed>>, Arc<Fixed>, Log) {
    let src = Arc::new(Fixed::new());
    let avc = Avc::new(src.clone(), AvcConfig::default()).unwrap();
    let log = with_log(&avc);
    (avc, src, log)
}

const S7: &str = "scontext=system_u:system_r:type7_t:s0";
const T9: &str = "tcontext=system_u:system_r:type9_t:s0";

#[test]
fn construction_rejects_bad_config() {
    let bad = AvcConfig {
        slots: 100,
        ..AvcConfig::default()
    };
    assert!(matches!(
        Avc::new(FakeSource::new(), bad),
        Err(ConfigError::SlotsNotPowerOfTwo {
            table: "av",
            slots: 100
        })
    ));
    let bad = AvcConfig {
        threshold: 0,
        ..AvcConfig::default()
    };
    assert!(matches!(
        Avc::new(FakeSource::new(), bad),
        Err(ConfigError::ZeroThreshold { table: "av" })
    ));
}

#[test]
fn denial_record_text() {
    let (avc, src, log) = fixed_avc();
    src.set((7, 9, FILE), GETATTR, 0, u32::MAX, 0);
    let fields = [AuditField::pid(123), AuditField::comm("cat")];
    let e = avc
        .has_perm_r(7, 9, FILE, READ | WRITE, &fields)
        .unwrap_err();
    assert_eq!(
        (e.requested, e.denied, e.error.clone()),
        (AccessVector(READ | WRITE), AccessVector(READ | WRITE), None)
    );
    assert_eq!(
        texts(&log),
        [format!("avc:  denied  {{ read write }} for  pid=123 comm=\"cat\" {S7} {T9} tclass=file permissive=0")]
    );
    let r = &log.lock().unwrap()[0];
    assert!(r.denied && !r.permissive && r.audited == READ | WRITE);
}

#[test]
fn grant_record_text_and_silence() {
    let (avc, src, log) = fixed_avc();
    src.set((7, 9, FILE), GETATTR | READ, GETATTR, u32::MAX, 0);
    // auditallow'ed bit: a "granted" record, no permissive= field.
    avc.has_perm_r(
        7,
        9,
        FILE,
        GETATTR | READ,
        &[AuditField::pid(1), AuditField::name("f")],
    )
    .unwrap();
    // Not auditallow'ed: silent.
    avc.has_perm_r(7, 9, FILE, READ, &[AuditField::pid(1)])
        .unwrap();
    assert_eq!(
        texts(&log),
        [format!(
            "avc:  granted  {{ getattr }} for  pid=1 name=\"f\" {S7} {T9} tclass=file"
        )]
    );
}

#[test]
fn dontaudit_unknown_context_unnamed_bits_no_fields() {
    let (avc, src, log) = fixed_avc();
    // WRITE is dontaudit'ed (cleared in auditdeny).
    src.set((7, 9, FILE), 0, 0, !WRITE, 0);
    assert!(avc.has_perm_r(7, 9, FILE, WRITE, &[]).is_err());
    assert!(log.lock().unwrap().is_empty());
    // Unnamed bit 31 prints as hex after the names; no fields: "for " + " scontext".
    avc.has_perm_r(7, 9, FILE, READ | 1 << 31 | WRITE, &[])
        .unwrap_err();
    // Unknown contexts print the SIDs.
    let unknown = FakeSource::UNKNOWN_SID + 1;
    src.set((unknown, 9, FILE), 0, 0, u32::MAX, 0);
    avc.has_perm_r(
        unknown,
        9,
        FILE,
        READ,
        &[AuditField::raw("dev", "sda1"), AuditField::int("ino", 42)],
    )
    .unwrap_err();
    assert_eq!(
        texts(&log),
        [
            format!("avc:  denied  {{ read 0x80000000 }} for  {S7} {T9} tclass=file permissive=0"),
            format!("avc:  denied  {{ read }} for  dev=sda1 ino=42 ssid=2147483649 {T9} tclass=file permissive=0"),
        ]
    );
}

#[test]
fn untrusted_comm_is_hex_encoded() {
    let (avc, src, log) = fixed_avc();
    src.set((7, 9, FILE), 0, 0, u32::MAX, 0);
    avc.has_perm_r(7, 9, FILE, READ, &[AuditField::comm("my app")])
        .unwrap_err();
    assert_eq!(
        texts(&log),
        [format!(
            "avc:  denied  {{ read }} for  comm=6D7920617070 {S7} {T9} tclass=file permissive=0"
        )]
    );
}

#[test]
fn enforcing_vs_permissive_mode() {
    let (avc, src, log) = fixed_avc();
    src.set((7, 9, FILE), GETATTR, 0, u32::MAX, 0);
    assert!(avc.enforcing());
    assert!(avc.has_perm_r(7, 9, FILE, READ, &[]).is_err());
    avc.set_enforcing(false);
    // Passes, audited as a permissive denial, and the grant is remembered: audited once.
    let d = avc.has_perm_r(7, 9, FILE, READ, &[]).unwrap();
    assert_eq!(
        d.allowed.0 & READ,
        0,
        "the returned decision is the policy's"
    );
    let d2 = avc.has_perm_r(7, 9, FILE, READ, &[]).unwrap();
    assert_ne!(d2.allowed.0 & READ, 0, "the cached entry now grants it");
    assert_eq!(
        texts(&log),
        [
            format!("avc:  denied  {{ read }} for  {S7} {T9} tclass=file permissive=0"),
            format!("avc:  denied  {{ read }} for  {S7} {T9} tclass=file permissive=1"),
        ]
    );
    // Back to enforcing: the permissive grant is dropped with the reset.
    let computes = src.computes.load(Relaxed);
    avc.set_enforcing(true);
    assert!(avc.has_perm_r(7, 9, FILE, READ, &[]).is_err());
    assert_eq!(src.computes.load(Relaxed), computes + 1);
    assert_eq!(log.lock().unwrap().len(), 3);
}

#[test]
fn permissive_domain_passes_in_enforcing_mode() {
    let (avc, src, log) = fixed_avc();
    src.set((7, 9, FILE), 0, 0, u32::MAX, AvdFlags::PERMISSIVE.0);
    src.set((8, 9, FILE), 0, 0, u32::MAX, 0);
    assert!(avc.has_perm_noaudit_r(7, 9, FILE, WRITE).is_ok());
    assert!(avc.has_perm_noaudit_r(8, 9, FILE, WRITE).is_err());
    assert!(log.lock().unwrap().is_empty(), "noaudit");
    assert!(avc.has_perm_r(7, 9, FILE, READ, &[]).is_ok());
    assert_eq!(
        texts(&log),
        [format!(
            "avc:  denied  {{ read }} for  {S7} {T9} tclass=file permissive=1"
        )]
    );
    // The flag survives caching.
    assert!(avc.lookup_r(7, 9, FILE).unwrap().is_permissive());
}

#[test]
fn neveraudit_silences_everything() {
    let (avc, src, log) = fixed_avc();
    src.set(
        (7, 9, FILE),
        GETATTR,
        GETATTR,
        u32::MAX,
        AvdFlags::NEVERAUDIT.0,
    );
    avc.has_perm_r(7, 9, FILE, GETATTR, &[]).unwrap();
    avc.has_perm_r(7, 9, FILE, READ, &[]).unwrap_err();
    assert!(log.lock().unwrap().is_empty());
}

#[test]
fn source_error_fails_closed_even_when_permissive() {
    let (avc, src, log) = fixed_avc();
    avc.set_enforcing(false);
    let e = avc
        .has_perm_r(70, 9, FILE, READ, &[AuditField::pid(5)])
        .unwrap_err();
    assert_eq!(e.error.as_deref(), Some(&DecideError::UnknownSid(70)));
    assert_eq!(e.denied, READ);
    assert_eq!(texts(&log), ["avc:  denied  { read } for  pid=5 scontext=system_u:system_r:type70_t:s0 tcontext=system_u:system_r:type9_t:s0 tclass=file permissive=0"]);
    // Nothing cached: each check asks again.
    avc.has_perm_noaudit_r(70, 9, FILE, READ).unwrap_err();
    assert_eq!(src.computes.load(Relaxed), 2);
    // Requesting nothing is refused, as the kernel does.
    src.set((7, 9, FILE), u32::MAX, 0, 0, 0);
    assert!(avc.has_perm_noaudit_r(7, 9, FILE, 0).is_err());
}

#[test]
fn hits_come_from_the_cache_and_stats_count() {
    let src = FakeSource::new();
    let avc = Avc::new(&src, AvcConfig::default()).unwrap();
    for _ in 0..3 {
        for k in 1..=10u32 {
            let d = avc.decision_r(k, k + 100, 3).unwrap();
            assert_eq!(d, src.expected(k, k + 100, 3, 1));
        }
    }
    assert_eq!(src.av_computes(), 10);
    let st = avc.stats();
    assert_eq!(
        (
            st.lookups,
            st.hits,
            st.misses,
            st.allocations,
            st.reclaims,
            st.frees
        ),
        (30, 20, 10, 10, 0, 0)
    );
    assert_eq!(avc.len(), 10);
    let h = avc.hash_stats();
    assert_eq!(h.entries, 10);
    assert!(h.buckets_used >= 1 && h.buckets_used <= 10 && h.longest_chain >= 1);
    assert!(h.to_string().starts_with("entries: 10\nbuckets used: "));
    assert!(st
        .to_string()
        .starts_with("lookups hits misses allocations reclaims frees\n30 20 10 10 0 0"));
    // A reset frees the entries.
    avc.reset();
    assert_eq!(avc.len(), 0);
    assert_eq!(avc.stats().frees, 10);
    avc.decision_r(1, 101, 3).unwrap();
    assert_eq!(src.av_computes(), 11);
}

#[test]
fn reclaim_keeps_entries_at_or_below_threshold() {
    let src = FakeSource::new();
    let cfg = AvcConfig::for_threshold(64).with_layout(64, 32, HashKind::Arbiter);
    let avc = Avc::new(&src, cfg).unwrap();
    for i in 0..1000u32 {
        avc.decision_r(i + 1, i / 3 + 1, (i % 7) as u16 + 1)
            .unwrap();
        assert!(avc.len() <= 64);
        assert!(avc.hash_stats().entries <= 64);
    }
    let st = avc.stats();
    assert_eq!(st.allocations, 1000);
    assert_eq!(avc.len() as u64, st.allocations - st.reclaims);
    assert!(st.reclaims >= 1000 - 64);
    assert_eq!(st.frees, st.reclaims);
    // The newest entry survives (FIFO evicts the oldest).
    assert!(avc.lookup_r(1000, 334, 999 % 7 + 1).is_some());
}

#[test]
fn policy_change_is_noticed_without_notification() {
    let src = FakeSource::new();
    let avc = Avc::new(&src, AvcConfig::default()).unwrap();
    let before = avc.decision_r(5, 6, 7).unwrap();
    assert_eq!(before.seqno, 1);
    let s2 = src.bump();
    assert!(
        avc.lookup_r(5, 6, 7).is_none(),
        "stale entry must not be returned"
    );
    let after = avc.decision_r(5, 6, 7).unwrap();
    assert_eq!(after, src.expected(5, 6, 7, s2));
    assert_eq!(avc.lookup_r(5, 6, 7), Some(after));
    assert_eq!(src.av_computes(), 2);
}

#[test]
fn stale_decision_is_answered_but_not_cached() {
    // A source whose decisions lag its sequence number (computed under the old policy).
    struct Lagging(FakeSource);
    impl DecisionSource for Lagging {
        fn compute_av(&self, s: Sid, t: Sid, c: ClassRef) -> Result<AvDecision, DecideError> {
            let c = c.known().map_or(0, |c| c.value());
            Ok(self.0.expected(s.get(), t.get(), c, self.0.seqno() - 1))
        }
        fn seqno(&self) -> u64 {
            self.0.seqno()
        }
    }
    let src = Lagging(FakeSource::new());
    src.0.bump();
    let avc = Avc::new(&src, AvcConfig::default()).unwrap();
    let d = avc.decision_r(1, 2, 3).unwrap();
    assert_eq!(d.seqno, 1);
    assert!(avc.lookup_r(1, 2, 3).is_none());
    assert_eq!(avc.len(), 0);
}

#[test]
fn unknown_classes_are_cached_like_known_ones() {
    let src = FakeSource::new();
    let avc = Avc::new(&src, AvcConfig::default()).unwrap();
    let a = avc.compute_av(sid(1), sid(2), ClassRef::Unknown).unwrap();
    let b = avc.compute_av(sid(1), sid(2), ClassRef::Unknown).unwrap();
    assert_eq!(a, b);
    assert_eq!(a, src.expected(1, 2, 0, 1));
    assert_eq!(src.av_computes(), 1);
    // Distinct from every known class's entry.
    avc.compute_av(sid(1), sid(2), cls(1)).unwrap();
    assert_eq!(src.av_computes(), 2);
}

#[test]
fn xperm_decisions_are_cached_per_driver() {
    let src = FakeSource::new();
    let avc = Avc::new(&src, AvcConfig::default()).unwrap();
    for _ in 0..3 {
        for driver in [0x54u8, 0x89, 0x12] {
            let x = avc
                .xperm_decision_r(7, 9, FILE, XpermBase::Ioctl, driver)
                .unwrap();
            assert_eq!(
                x,
                src.expected_xperms(7, 9, FILE, XpermBase::Ioctl, driver, 1)
            );
        }
        // Other base and class: unrestricted, cached too.
        let x = avc
            .xperm_decision_r(7, 9, FILE, XpermBase::Nlmsg, 0x54)
            .unwrap();
        assert_eq!(x.rule, XpermRule::Unrestricted);
    }
    assert_eq!(src.xperm_computes(), 4);
    let st = avc.stats();
    assert_eq!((st.xperm_lookups, st.xperm_misses), (12, 4));
    assert_eq!(avc.table_stats(TableKind::ExtendedPerms).entries, 4);
    // A policy change invalidates them.
    src.bump();
    avc.xperm_decision_r(7, 9, FILE, XpermBase::Ioctl, 0x54)
        .unwrap();
    assert_eq!(src.xperm_computes(), 5);
}

#[test]
fn extended_perm_checks_and_audit() {
    let (avc, src, log) = fixed_avc();
    src.set((7, 9, FILE), IOCTL | READ, IOCTL, u32::MAX, 0);
    let x = src
        .names
        .expected_xperms(7, 9, FILE, XpermBase::Ioctl, 0x54, 1);
    let XpermRule::Driver(b) = x.rule else {
        panic!("driver 0x54 has rules")
    };
    let ioctl = |cmd: u16| {
        avc.has_extended_perm_r(
            7,
            9,
            FILE,
            IOCTL,
            XpermBase::Ioctl,
            cmd,
            &[AuditField::pid(3), AuditField::ioctlcmd(cmd)],
        )
    };
    // Driver with every function allowed, no auditallowxperm: the base auditallow is
    // silenced by the per-function rules.
    ioctl(0x8901).unwrap();
    // Unlisted driver: denied, audited.
    assert_eq!(ioctl(0x1234).unwrap_err().denied, IOCTL);
    // Driver 0x54: follow the bitmaps; function 0x02 is dontaudit'ed, 0x01 auditallow'ed.
    for func in 0u8..8 {
        let r = ioctl(0x5400 | func as u16);
        assert_eq!(r.is_ok(), b.allows(func), "function {func}");
    }
    let mut want = vec![format!(
        "avc:  denied  {{ ioctl }} for  pid=3 ioctlcmd=0x1234 {S7} {T9} tclass=file permissive=0"
    )];
    for func in 0u8..8 {
        let audited = if b.allows(func) { func == 1 } else { func != 2 };
        if audited {
            let (what, tail) = if b.allows(func) {
                ("granted", "")
            } else {
                ("denied", " permissive=0")
            };
            want.push(format!("avc:  {what}  {{ ioctl }} for  pid=3 ioctlcmd=0x540{func} {S7} {T9} tclass=file{tail}"));
        }
    }
    assert_eq!(texts(&log), want);
    // Base permission missing: denied whatever the function.
    src.set((8, 9, FILE), READ, 0, u32::MAX, 0);
    assert!(avc
        .has_extended_perm_r(8, 9, FILE, IOCTL, XpermBase::Ioctl, 0x8901, &[])
        .is_err());
}

#[test]
fn permissive_extended_perm_denial_is_audited_once() {
    let (avc, src, log) = fixed_avc();
    src.set((7, 9, FILE), IOCTL, 0, u32::MAX, 0);
    let x = src
        .names
        .expected_xperms(7, 9, FILE, XpermBase::Ioctl, 0x54, 1);
    let XpermRule::Driver(b) = x.rule else {
        panic!()
    };
    let func = (3u8..=255)
        .find(|&f| !b.allows(f))
        .expect("some function denied");
    avc.set_enforcing(false);
    for _ in 0..3 {
        avc.has_extended_perm_r(
            7,
            9,
            FILE,
            IOCTL,
            XpermBase::Ioctl,
            0x5400 | func as u16,
            &[],
        )
        .unwrap();
    }
    assert_eq!(log.lock().unwrap().len(), 1);
    assert!(log.lock().unwrap()[0].text.ends_with("permissive=1"));
}

#[test]
fn create_labels_are_cached() {
    let src = FakeSource::new();
    let avc = Avc::new(&src, AvcConfig::default()).unwrap();
    for _ in 0..3 {
        assert_eq!(
            avc.compute_create_r(4, 5, 6).unwrap(),
            src.expected_create(4, 5, 6, 1)
        );
    }
    assert_eq!(src.create_computes(), 1);
    assert_eq!(
        avc.compute_create_r(FakeSource::UNKNOWN_SID, 5, 6),
        Err(DecideError::UnknownSid(FakeSource::UNKNOWN_SID))
    );
    src.bump();
    assert_eq!(
        avc.compute_create_r(4, 5, 6).unwrap(),
        src.expected_create(4, 5, 6, 2)
    );
    let st = avc.stats();
    assert_eq!((st.create_lookups, st.create_misses), (5, 3));
}

#[test]
fn audit_hook_is_write_once() {
    let avc = Avc::new(FakeSource::new(), AvcConfig::default()).unwrap();
    assert!(avc.set_audit_hook(|_| {}));
    assert!(!avc.set_audit_hook(|_| {}));
}

#[test]
fn insert_refused_for_old_policy() {
    let src = FakeSource::new();
    let avc = Avc::new(&src, AvcConfig::default()).unwrap();
    let old = src.expected(1, 1, 1, 1);
    src.bump();
    // The cache has not synced yet: the entry goes in under the generation paired with
    // seqno 1, which no lookup uses any more.
    assert!(avc.insert_for_test(1, 1, 1, &old).is_some());
    assert_eq!(avc.lookup_r(1, 1, 1), None);
    let new = src.expected(1, 1, 1, 2);
    assert!(avc.insert_for_test(1, 1, 1, &new).is_some());
    assert_eq!(avc.lookup_r(1, 1, 1), Some(new));
    // Once synced to seqno 2, a seqno-1 decision is refused outright.
    assert_eq!(avc.insert_for_test(1, 1, 1, &old), None);
    assert_eq!(avc.lookup_r(1, 1, 1), Some(new));
}
