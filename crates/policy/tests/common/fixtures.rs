//! Builds the format 34 and 35 test fixtures, `policies/bin/features.34` and `.35`, from
//! `policies/bin/features.33`: checkpolicy 3.4 cannot write those versions nor nlmsg
//! extended permissions, so the additions are made on the model and written with
//! `arbiter_policy::write`.
//!
//! Shared by `examples/mkfixtures.rs` (which `policies/regen.sh` runs) and
//! `tests/v34_v35.rs` (which checks that the checked-in files are what this builds).
//!
//! features.34 = features.33 plus:
//! * boolean `staff_ioctl_net`, default false;
//! * the rule `allowxperm staff_t dev_t:chr_file ioctl 0x8a00-0x8a0f` (one entry: driver
//!   0x8a, functions 0x00..0x0f) moved out of the unconditional rules into
//!   `if (staff_ioctl_net) { <it> } else { dontauditxperm <same commands> }`, which only
//!   version 34 can hold.
//!
//! features.35 = features.34 plus:
//! * class `netlink_route_socket inherits socket { nlmsg_read nlmsg_write nlmsg }`
//!   (features.conf has no netlink class);
//! * `allow staff_t self:netlink_route_socket { create read write nlmsg_read nlmsg };`
//! * `allowxperm staff_t self:netlink_route_socket nlmsg { 0x12 0x16 0x1a };` (RTM_GETLINK,
//!   RTM_GETADDR, RTM_GETROUTE: driver 0x00, kind nlmsg) and
//!   `auditallowxperm staff_t self:netlink_route_socket nlmsg 0x1a;`
//! * policy capability 9 (`netlink_xperm`, under which the kernel checks nlmsg xperms);
//! * `neveraudit sysadm_t;`.

#![allow(dead_code)] // each user takes what it needs

use arbiter_policy::avtab::{
    Avtab, AvtabDatum, AvtabEntry, AvtabKey, AvtabKind, Xperms, XpermsKind,
};
use arbiter_policy::cond::{CondExpr, CondNode};
use arbiter_policy::symbols::{Bool, Class, DefaultRange, DefaultSide, Perm};
use arbiter_policy::write::write_policy;
use arbiter_policy::{BoolId, ClassId, Ebitmap, Policy, TypeId};

pub const COND_BOOL: &str = "staff_ioctl_net";
/// The ioctl driver whose rule moves into the conditional.
pub const MOVED_DRIVER: u8 = 0x8a;
/// Its functions: 0x00..=0x0f.
pub const MOVED_FUNCTIONS: std::ops::RangeInclusive<u8> = 0x00..=0x0f;
pub const NETLINK_CLASS: &str = "netlink_route_socket";
pub const NETLINK_PERMS: [&str; 3] = ["nlmsg_read", "nlmsg_write", "nlmsg"];
pub const NETLINK_ALLOWED: [&str; 5] = ["create", "read", "write", "nlmsg_read", "nlmsg"];
/// Netlink message types allowed (driver 0x00): RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE.
pub const NLMSG_ALLOWED: [u8; 3] = [0x12, 0x16, 0x1a];
pub const NLMSG_AUDITALLOW: u8 = 0x1a;
pub const NLMSG_DRIVER: u8 = 0x00;
/// `POLICYDB_CAP_NETLINK_XPERM`.
pub const POLICYCAP_NETLINK_XPERM: u32 = 9;
pub const NEVERAUDIT_TYPE: &str = "sysadm_t";

fn type_id(p: &Policy, name: &str) -> TypeId {
    p.types
        .iter()
        .position(|t| &*t.name == name)
        .and_then(TypeId::from_index)
        .unwrap_or_else(|| panic!("features.33 has no type {name}"))
}

fn class_id(p: &Policy, name: &str) -> ClassId {
    p.classes
        .iter()
        .position(|c| &*c.name == name)
        .and_then(ClassId::from_index)
        .unwrap_or_else(|| panic!("features.33 has no class {name}"))
}

fn bits(functions: impl IntoIterator<Item = u8>) -> [u32; 8] {
    let mut perms = [0u32; 8];
    for f in functions {
        perms[f as usize / 32] |= 1 << (f % 32);
    }
    perms
}

/// Appends an entry to a table, its extended permissions out of line.
fn push(t: &mut Avtab, key: AvtabKey, xperms: Option<Xperms>, perms: u32) {
    let datum = match xperms {
        Some(x) => {
            t.xperms.push(x);
            AvtabDatum::Xperms(t.xperms.len() as u32 - 1)
        }
        None => AvtabDatum::Perms(perms),
    };
    t.entries.push(AvtabEntry::new(key, datum).unwrap());
}

/// The features.34 model.
pub fn v34(features33: &Policy) -> Policy {
    let mut p = features33.clone();
    p.version = 34;
    let (staff, dev, chr) = (
        type_id(&p, "staff_t"),
        type_id(&p, "dev_t"),
        class_id(&p, "chr_file"),
    );
    let key = AvtabKey {
        source: staff,
        target: dev,
        class: chr,
        kind: AvtabKind::XpermsAllowed,
    };
    let moved = Xperms {
        kind: XpermsKind::IoctlFunction,
        driver: MOVED_DRIVER,
        perms: bits(MOVED_FUNCTIONS),
    };
    // Take the entry out of the unconditional table (rebuilt, so that no extended
    // permission set is left without its entry).
    let old = std::mem::take(&mut p.avtab);
    let mut found = 0;
    for e in &old.entries {
        let x = old.xperms_of(e.datum()).copied();
        if e.key == key && x == Some(moved) {
            found += 1;
            continue;
        }
        let perms = match e.datum() {
            AvtabDatum::Perms(v) => v,
            _ => 0,
        };
        match e.datum() {
            AvtabDatum::Type(_) => p.avtab.entries.push(*e),
            _ => push(&mut p.avtab, e.key, x, perms),
        }
    }
    assert_eq!(
        found, 1,
        "features.33 should hold allowxperm staff_t dev_t:chr_file ioctl 0x8a00-0x8a0f as one entry"
    );

    p.bools.push(Bool {
        name: COND_BOOL.into(),
        state: false,
    });
    let b = BoolId::new(p.bools.len() as u32).unwrap();
    let start = p.cond_avtab.entries.len() as u32;
    push(&mut p.cond_avtab, key, Some(moved), 0);
    push(
        &mut p.cond_avtab,
        AvtabKey {
            kind: AvtabKind::XpermsDontAudit,
            ..key
        },
        Some(moved),
        0,
    );
    p.cond_nodes.push(CondNode {
        cur_state: false,
        expr: Box::new([CondExpr::Bool(b)]),
        true_list: start..start + 1,
        false_list: start + 1..start + 2,
    });
    p
}

/// The features.35 model, from the features.34 one.
pub fn v35(v34: &Policy) -> Policy {
    let mut p = v34.clone();
    p.version = 35;
    let socket = p
        .commons
        .iter()
        .position(|c| &*c.name == "socket")
        .expect("features.33 has common socket");
    let base = p.commons[socket].nprim;
    p.classes.push(Class {
        name: NETLINK_CLASS.into(),
        common: arbiter_policy::CommonId::from_index(socket),
        nprim: base + NETLINK_PERMS.len() as u32,
        perms: NETLINK_PERMS
            .iter()
            .zip(base + 1..)
            .map(|(name, value)| Perm {
                name: (*name).into(),
                value,
            })
            .collect(),
        constraints: Box::new([]),
        validatetrans: Box::new([]),
        default_user: DefaultSide::None,
        default_role: DefaultSide::None,
        default_type: DefaultSide::None,
        default_range: DefaultRange::None,
    });
    let netlink = ClassId::new(p.classes.len() as u16).unwrap();
    let perm_value = |name: &str| {
        p.commons[socket]
            .perms
            .iter()
            .chain(p.classes[netlink.index()].perms.iter())
            .find(|perm| &*perm.name == name)
            .unwrap_or_else(|| panic!("no permission {name}"))
            .value
    };
    let allowed = NETLINK_ALLOWED
        .iter()
        .fold(0u32, |acc, name| acc | 1 << (perm_value(name) - 1));
    let staff = type_id(&p, "staff_t");
    let key = |kind| AvtabKey {
        source: staff,
        target: staff,
        class: netlink,
        kind,
    };
    push(&mut p.avtab, key(AvtabKind::Allowed), None, allowed);
    push(
        &mut p.avtab,
        key(AvtabKind::XpermsAllowed),
        Some(Xperms {
            kind: XpermsKind::Nlmsg,
            driver: NLMSG_DRIVER,
            perms: bits(NLMSG_ALLOWED),
        }),
        0,
    );
    push(
        &mut p.avtab,
        key(AvtabKind::XpermsAuditAllow),
        Some(Xperms {
            kind: XpermsKind::Nlmsg,
            driver: NLMSG_DRIVER,
            perms: bits([NLMSG_AUDITALLOW]),
        }),
        0,
    );
    p.policycaps = Ebitmap::from_bits(
        p.policycaps
            .iter()
            .chain(std::iter::once(POLICYCAP_NETLINK_XPERM)),
    );
    // Bit = type value, as in the permissive map.
    p.neveraudit = Ebitmap::from_bits([u32::from(type_id(&p, NEVERAUDIT_TYPE).value())]);
    p
}

/// The two fixtures' bytes, from the bytes of features.33.
pub fn build(features33: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let base = Policy::from_bytes(features33).expect("features.33 reads");
    assert_eq!(base.version, 33, "expected features.33");
    let m34 = v34(&base);
    let m35 = v35(&m34);
    let b34 = write_policy(&m34, 34).expect("features.34 writes");
    let b35 = write_policy(&m35, 35).expect("features.35 writes");
    (b34, b35)
}
