//! Decisions over the format 34 and 35 fixtures, `policies/bin/features.34` and `.35`.
//!
//! checkpolicy 3.4 can write neither version, so these files are `features.33` plus rules
//! added on the model and written by arbiter's own writer (see `policies/README.md` and
//! `crates/policy/tests/common/fixtures.rs`); libsepol 3.4 cannot read them either, so the
//! expectations below are derived by hand from what was added:
//!
//! * features.34: `allowxperm staff_t dev_t:chr_file ioctl 0x8a00-0x8a0f` moved into
//!   `if (staff_ioctl_net) { it } else { dontauditxperm <same> }`, boolean default false;
//! * features.35: class `netlink_route_socket inherits socket { nlmsg_read nlmsg_write
//!   nlmsg }`, `allow staff_t self:netlink_route_socket { create read write nlmsg_read
//!   nlmsg }`, `allowxperm ... nlmsg { 0x12 0x16 0x1a }`, `auditallowxperm ... nlmsg 0x1a`,
//!   and `neveraudit sysadm_t`.

use arbiter_decide::SecurityServer;
use arbiter_decide::{AvDecision, AvdFlags, XpermBase, XpermRule, XpermsDecision, XpermsUsed};
use arbiter_policy::ValidPolicy;
use std::path::Path;

const STAFF: &str = "staff_u:staff_r:staff_t:s0";
const SYSADM: &str = "staff_u:sysadm_r:sysadm_t:s0";
const SYSADM_HIGH: &str = "staff_u:sysadm_r:sysadm_t:s1-s2:c0.c7";
const GUEST: &str = "guest_u:guest_r:guest_t:s0";
const APP: &str = "system_u:system_r:app_t:s0";
const DEV: &str = "system_u:object_r:dev_t:s0";
const SECRET: &str = "system_u:object_r:secret_t:s0";
const TMP: &str = "system_u:object_r:tmp_t:s0";

fn server(name: &str) -> SecurityServer {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../policies/bin")
        .join(name);
    SecurityServer::new(ValidPolicy::open(&path).unwrap_or_else(|e| panic!("{name}: {e}")))
}

/// Bits of the given functions (low bytes) in a 256-bit set.
fn set(functions: &[u8]) -> [u32; 8] {
    let mut s = [0u32; 8];
    for &f in functions {
        s[f as usize / 32] |= 1 << (f % 32);
    }
    s
}

fn set_bool(s: &SecurityServer, name: &str, value: bool) {
    s.set_booleans(&[(name, value)]).unwrap();
}

/// The ioctl decision of staff_t on dev_t:chr_file for one driver.
/// Whether the driver is governed by per-function rules, and its decision.
fn driver_decision(
    s: &SecurityServer,
    ssid: arbiter_decide::Sid,
    tsid: arbiter_decide::Sid,
    class: arbiter_policy::ClassId,
    base: XpermBase,
    driver: u8,
) -> (bool, XpermsDecision) {
    match s
        .compute_xperms(ssid, tsid, class, base, driver)
        .unwrap()
        .rule
    {
        XpermRule::Driver(x) => (true, x),
        _ => (
            false,
            XpermsDecision {
                driver,
                ..Default::default()
            },
        ),
    }
}

fn staff_ioctl(s: &SecurityServer, driver: u8) -> XpermsDecision {
    let (staff, dev) = (
        s.context_to_sid(STAFF).unwrap(),
        s.context_to_sid(DEV).unwrap(),
    );
    let chr = s.known_class("chr_file").unwrap();
    let (has, d) = driver_decision(s, staff, dev, chr, XpermBase::Ioctl, driver);
    assert!(has, "driver {driver:#x} should be governed by xperm rules");
    d
}

#[test]
fn conditional_xperm_rule_follows_its_boolean() {
    for name in ["features.34", "features.35"] {
        let s = server(name);
        let functions: Vec<u8> = (0x00..=0x0f).collect();

        // staff_ioctl_net is false: the else branch applies. Its dontauditxperm keeps
        // driver 0x8a under xperm control, and nothing of it is allowed.
        let d = staff_ioctl(&s, 0x8a);
        assert_eq!(d.used, XpermsUsed::DONTAUDIT, "{name}");
        assert_eq!(d.allowed, [0; 8], "{name}");
        assert_eq!(d.dontaudit, set(&functions), "{name}");
        assert!(!d.allows(0x05), "{name}: 0x8a05 with the boolean off");

        set_bool(&s, "staff_ioctl_net", true);
        let d = staff_ioctl(&s, 0x8a);
        assert_eq!(d.used, XpermsUsed::ALLOWED, "{name}");
        assert_eq!(d.allowed, set(&functions), "{name}");
        assert_eq!(d.dontaudit, [0; 8], "{name}");
        assert!(
            d.allows(0x05) && d.allows(0x0f),
            "{name}: 0x8a05 with the boolean on"
        );
        assert!(!d.allows(0x10), "{name}: 0x8a10 is outside the rule");

        set_bool(&s, "staff_ioctl_net", false);
        assert!(!staff_ioctl(&s, 0x8a).allows(0x05), "{name}: back off");

        // The neighbouring driver 0x89 (same source rule in features.33) is untouched.
        let d = staff_ioctl(&s, 0x89);
        assert_eq!(d.allowed, set(&(0xf0..=0xff).collect::<Vec<_>>()), "{name}");
    }
}

#[test]
fn the_moved_rule_with_its_boolean_on_decides_as_features_33() {
    // features.33 has the rule unconditionally: 0x8a05 allowed (policies/expect/features.txt).
    let s33 = server("features.33");
    let s34 = server("features.34");
    set_bool(&s34, "staff_ioctl_net", true);
    assert_eq!(staff_ioctl(&s33, 0x8a), staff_ioctl(&s34, 0x8a));
}

/// The nlmsg decisions of a source on itself for `netlink_route_socket`.
fn nlmsg(s: &SecurityServer, ctx: &str, base: XpermBase, driver: u8) -> (bool, XpermsDecision) {
    let sid = s.context_to_sid(ctx).unwrap();
    let class = s.known_class("netlink_route_socket").unwrap();
    driver_decision(s, sid, sid, class, base, driver)
}

#[test]
fn nlmsg_xperms_decide_by_message_type() {
    let s = server("features.35");
    let (has, d) = nlmsg(&s, STAFF, XpermBase::Nlmsg, 0x00);
    assert!(has, "driver 0x00 is governed by nlmsg rules");
    assert_eq!(d.used, XpermsUsed::ALLOWED | XpermsUsed::AUDITALLOW);
    assert_eq!(d.allowed, set(&[0x12, 0x16, 0x1a]));
    assert_eq!(d.auditallow, set(&[0x1a]));
    assert_eq!(d.dontaudit, [0; 8]);
    for (msg, want) in [
        (0x12, true),  // RTM_GETLINK
        (0x16, true),  // RTM_GETADDR
        (0x1a, true),  // RTM_GETROUTE
        (0x10, false), // RTM_NEWLINK
        (0x13, false), // RTM_SETLINK
        (0x1e, false), // RTM_GETNEIGH
    ] {
        assert_eq!(d.allows(msg), want, "message type {msg:#x}");
    }
    // Other drivers have no nlmsg rule: the plain nlmsg permission alone decides.
    assert!(!nlmsg(&s, STAFF, XpermBase::Nlmsg, 0x01).0);
    // nlmsg rules are not ioctl rules.
    let (has, d) = nlmsg(&s, STAFF, XpermBase::Ioctl, 0x00);
    assert!(!has);
    assert_eq!(d.used, XpermsUsed::default());
    // Another source has none.
    let (has, d) = nlmsg(&s, SYSADM, XpermBase::Nlmsg, 0x00);
    assert!(!has);
    assert_eq!(d.used, XpermsUsed::default());
}

#[test]
fn the_netlink_class_grants_its_allow_rule() {
    let s = server("features.35");
    let staff = s.context_to_sid(STAFF).unwrap();
    let class = s.known_class("netlink_route_socket").unwrap();
    let want = s
        .perm_set(
            "netlink_route_socket",
            &["create", "read", "write", "nlmsg_read", "nlmsg"],
        )
        .unwrap();
    assert_eq!(want.unknown().count(), 0);
    let d = s.query().compute_av(staff, staff, class).unwrap();
    assert_eq!(d.allowed, want.bits());
    let not = s
        .perm_set("netlink_route_socket", &["nlmsg_write", "bind"])
        .unwrap();
    assert_eq!(d.allowed & not.bits(), 0);
    // features.34 has no such class: handle_unknown (allow) decides there.
    assert!(server("features.34")
        .known_class("netlink_route_socket")
        .is_err());
}

/// (flags, decision) of `compute_av` for contexts and a class given by name.
fn av(s: &SecurityServer, src: &str, tgt: &str, class: &str) -> AvDecision {
    let (a, b) = (
        s.context_to_sid(src).unwrap(),
        s.context_to_sid(tgt).unwrap(),
    );
    let c = s.known_class(class).unwrap();
    s.query().compute_av(a, b, c).unwrap()
}

#[test]
fn neveraudit_flag_is_set_for_its_source_type_only() {
    let s = server("features.35");
    for (src, tgt, class) in [
        (SYSADM, SECRET, "file"),
        (SYSADM_HIGH, SECRET, "file"),
        (SYSADM, DEV, "chr_file"),
        (SYSADM, SYSADM, "process"),
        (SYSADM, STAFF, "netlink_route_socket"),
    ] {
        let d = av(&s, src, tgt, class);
        assert!(
            d.flags.contains(AvdFlags::NEVERAUDIT),
            "{src} -> {tgt}:{class}"
        );
        assert!(
            !d.flags.contains(AvdFlags::PERMISSIVE),
            "{src} -> {tgt}:{class}"
        );
    }
    // Not for other sources, whatever the target (sysadm_t as target included).
    for (src, tgt, class) in [
        (STAFF, SYSADM, "process"),
        (STAFF, SECRET, "file"),
        (GUEST, DEV, "chr_file"),
    ] {
        assert_eq!(
            av(&s, src, tgt, class).flags,
            AvdFlags::NONE,
            "{src} -> {tgt}:{class}"
        );
    }
    // The permissive type keeps just its own flag.
    assert_eq!(av(&s, APP, TMP, "file").flags, AvdFlags::PERMISSIVE);
    // Before version 35 there is no neveraudit: sysadm_t gets no flag in features.34.
    assert_eq!(
        av(&server("features.34"), SYSADM, SECRET, "file").flags,
        AvdFlags::NONE
    );
}

/// Linux 6.16's `security_compute_av` also clears `auditallow` and `auditdeny` when it sets
/// `AVD_FLAGS_NEVERAUDIT` ("if (avd->flags & AVD_FLAGS_NEVERAUDIT) avd->auditallow =
/// avd->auditdeny = 0;"), so nothing is audited for such a source whatever the AVC
/// consumer does with the flag. arbiter's `compute_av` sets only the flag: this pins the
/// kernel's answer for sysadm_t -> secret_t:file, whose `auditallow sysadm_t secret_t:file
/// { read write }` would otherwise be reported.
#[test]
fn neveraudit_decisions_carry_no_audit_bits_as_in_the_kernel() {
    let s = server("features.35");
    let d = av(&s, SYSADM_HIGH, SECRET, "file");
    let rw = s.perm_set("file", &["read", "write"]).unwrap().bits();
    assert_eq!(d.allowed & rw, rw);
    assert_eq!((d.auditallow.0, d.auditdeny.0), (0, 0));
}

#[test]
fn features_33_decisions_are_unchanged_where_nothing_was_added() {
    // The expectations of policies/expect/features.txt that the additions do not touch.
    for name in ["features.33", "features.34", "features.35"] {
        let s = server(name);
        let d = av(&s, SYSADM_HIGH, SECRET, "file");
        let bits = |p: &[&str]| s.perm_set("file", p).unwrap().bits();
        assert_eq!(
            d.allowed,
            bits(&["getattr", "open", "read", "write"]),
            "{name}"
        );
        let d = av(&s, STAFF, SECRET, "file");
        assert_eq!(d.allowed, bits(&["getattr"]), "{name}");
        assert_eq!(
            !d.auditdeny & bits(&["open", "read"]),
            bits(&["open", "read"]),
            "{name}"
        );
        for (cmd, want) in [(0x5401u16, true), (0x5402, false), (0x42ab, true)] {
            let d = staff_ioctl(&s, (cmd >> 8) as u8);
            assert_eq!(d.allows(cmd as u8), want, "{name}: {cmd:#x}");
        }
    }
}
