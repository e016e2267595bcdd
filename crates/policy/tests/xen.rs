//! Xen ("XenFlask") policies against libsepol 3.4: `policies/cil/xen.cil` compiled by the
//! real `secilc -t xen` at test time, read, and written back.
//!
//! * Version 30 (and 24, from the same policy without its 64-bit I/O memory range) read
//!   and written back in libsepol's layout: the same bytes; in value order, read again and
//!   written in libsepol's layout: the same bytes (the same model).
//! * Version 24 written from the version 30 model: secilc's version 24 bytes (device-tree
//!   contexts left out, as libsepol leaves them).
//! * Truncated and corrupted Xen sections: errors, never panics; what neither format can
//!   hold is refused by the writer with a typed error.
//!
//! `ARBITER_NO_SECILC=1` skips (secilc must otherwise be installed).

#[path = "common/secilc.rs"]
mod secilc;

use arbiter_policy::ocontext::Platform;
use arbiter_policy::ocontext::PortCon;
use arbiter_policy::write::{write_policy_with, Layout, Unsupported, WriteError, WriteOptions};
use arbiter_policy::{Policy, PolicyError};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

fn sepol() -> WriteOptions {
    WriteOptions {
        layout: Layout::Libsepol34 {
            avtab_slots: 1 << 20,
        },
        ..Default::default()
    }
}

fn xen_cil() -> PathBuf {
    [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "..",
        "policies",
        "cil",
        "xen.cil",
    ]
    .iter()
    .collect()
}

/// secilc's build of xen.cil at `version`; at 24, of xen.cil without the rule version 24
/// cannot hold (an I/O memory range above 4 GiB pages).
fn build(version: u32) -> Vec<u8> {
    let mut file = xen_cil();
    if version < 30 {
        let text = std::fs::read_to_string(&file).unwrap();
        let kept: String = text
            .lines()
            .filter(|l| !l.contains("0x100000000"))
            .map(|l| format!("{l}\n"))
            .collect();
        let dir = secilc::scratch("xen24");
        file = dir.join("xen24.cil");
        std::fs::write(&file, kept).unwrap();
    }
    secilc::compile(&["-t", "xen", "-c", &version.to_string()], &[file])
}

#[test]
fn secilc_xen_policies_read_and_write_back_identical() {
    if !secilc::available() {
        return;
    }
    for version in [30, 24] {
        let bytes = build(version);
        let p = Policy::from_bytes(&bytes).unwrap_or_else(|e| panic!("v{version}: {e}"));
        let o = &p.ocontexts;
        assert_eq!(o.platform, Platform::Xen);
        assert_eq!(o.initial_sids.len(), 10);
        assert!(o.fs.is_empty() && o.ports.is_empty());
        // Duplicates dropped: 3 PIRQs of 4 rules; the device-tree table only in 30.
        assert_eq!(o.xen.pirqs.len(), 3);
        assert_eq!(o.xen.pci_devices.len(), 3);
        assert_eq!(o.xen.device_trees.len(), if version == 30 { 3 } else { 0 });
        let w = write_policy_with(&p, version, &sepol()).unwrap();
        assert!(w.dropped.is_empty());
        assert!(w.bytes == bytes, "v{version}: libsepol layout differs");
        let plain = write_policy_with(&p, version, &WriteOptions::default()).unwrap();
        let back = Policy::from_bytes(&plain.bytes).unwrap();
        let again = write_policy_with(&back, version, &sepol()).unwrap();
        assert!(
            again.bytes == bytes,
            "v{version}: value order changed the model"
        );
    }
}

#[test]
fn version_24_drops_device_trees_and_refuses_wide_iomem() {
    if !secilc::available() {
        return;
    }
    let v30 = Policy::from_bytes(&build(30)).unwrap();
    // The 64-bit range cannot be written at 24, as secilc refuses it.
    match write_policy_with(&v30, 24, &sepol()) {
        Err(WriteError::Invalid(m)) => assert!(m.contains("I/O memory"), "{m}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    let mut narrow = v30.clone();
    narrow
        .ocontexts
        .xen
        .iomems
        .retain(|m| m.high <= u64::from(u32::MAX));
    let w = write_policy_with(&narrow, 24, &sepol()).unwrap();
    assert_eq!(w.dropped, vec![Unsupported::DeviceTreeContexts(3)]);
    assert!(
        w.bytes == build(24),
        "v24 from the v30 model differs from secilc's"
    );
    // Value order refuses to lose them unless asked.
    assert!(matches!(
        write_policy_with(&narrow, 24, &WriteOptions::default()),
        Err(WriteError::Unsupported { .. })
    ));
}

#[test]
fn truncated_and_corrupted_xen_policies_are_errors_not_panics() {
    if !secilc::available() {
        return;
    }
    let bytes = build(30);
    for len in 0..bytes.len() {
        match catch_unwind(AssertUnwindSafe(|| Policy::from_bytes(&bytes[..len]))) {
            Err(_) => panic!("prefix of {len} bytes panicked"),
            Ok(Ok(_)) => panic!("prefix of {len} bytes read as a policy"),
            Ok(Err(e)) => assert!(
                matches!(
                    e,
                    PolicyError::Truncated { .. } | PolicyError::CountTooLarge { .. }
                ),
                "prefix of {len}: {e}"
            ),
        }
    }
    // Every byte flipped: an error or a policy, never a panic.
    for at in 0..bytes.len() {
        let mut b = bytes.clone();
        b[at] ^= 0xff;
        if catch_unwind(AssertUnwindSafe(|| Policy::from_bytes(&b))).is_err() {
            panic!("flipping byte {at} panicked");
        }
    }
    // A version libsepol has no Xen layout for.
    let mut b = bytes.clone();
    b[16..20].copy_from_slice(&31u32.to_le_bytes());
    let e = Policy::from_bytes(&b).unwrap_err();
    assert!(e.to_string().contains("Xen policy of version 31"), "{e}");
}

/// The offset of `needle` in `hay`, which must hold it once.
fn find_once(hay: &[u8], needle: &[u8]) -> usize {
    let hits: Vec<usize> = hay
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(hits.len(), 1, "{needle:x?} found {} times", hits.len());
    hits[0]
}

#[test]
fn hostile_xen_records_name_their_table() {
    if !secilc::available() {
        return;
    }
    let p = Policy::from_bytes(&build(30)).unwrap();
    // A PIRQ wider than libsepol's 16 bits: refused, not truncated.
    let mut marked = p.clone();
    marked.ocontexts.xen.pirqs[0].pirq = 0xbeef;
    let mut b = write_policy_with(&marked, 30, &sepol()).unwrap().bytes;
    let at = find_once(&b, &0xbeefu32.to_le_bytes());
    b[at..at + 4].copy_from_slice(&0x1_beefu32.to_le_bytes());
    let e = Policy::from_bytes(&b).unwrap_err();
    assert!(
        e.to_string()
            .contains("PIRQ 114415 does not fit in 16 bits"),
        "{e}"
    );
    // A device-tree path of length 0, and one longer than the file.
    let b = write_policy_with(&p, 30, &sepol()).unwrap().bytes;
    let at = find_once(&b, b"/cpus") - 4;
    for len in [0u32, u32::MAX] {
        let mut bad = b.clone();
        bad[at..at + 4].copy_from_slice(&len.to_le_bytes());
        let e = Policy::from_bytes(&bad).unwrap_err();
        assert!(
            e.to_string().contains("device-tree") || matches!(e, PolicyError::Truncated { .. }),
            "{len}: {e}"
        );
    }
    // A context naming a type the policy lacks.
    let mut bad_ctx = p.clone();
    bad_ctx.ocontexts.xen.ioports[0].context.ty = arbiter_policy::TypeId::new(999).unwrap();
    let b = write_policy_with(&bad_ctx, 30, &sepol()).unwrap().bytes;
    let e = Policy::from_bytes(&b).unwrap_err();
    assert!(e.to_string().contains("I/O port"), "{e}");
}

#[test]
fn writer_refuses_what_a_platform_cannot_hold() {
    if !secilc::available() {
        return;
    }
    let p = Policy::from_bytes(&build(30)).unwrap();
    // No Xen layout at 33.
    assert!(matches!(
        write_policy_with(&p, 33, &sepol()),
        Err(WriteError::UnsupportedXenVersion { version: 33 })
    ));
    // Linux contexts in a Xen policy.
    let mut with_port = p.clone();
    with_port.ocontexts.ports.push(PortCon {
        protocol: 6,
        low: 22,
        high: 22,
        context: p.ocontexts.initial_sids[0].context.clone(),
    });
    assert!(matches!(
        write_policy_with(&with_port, 30, &sepol()),
        Err(WriteError::PlatformMismatch {
            platform: Platform::Xen,
            ..
        })
    ));
    // Xen contexts in a SELinux policy.
    let mut selinux = p.clone();
    selinux.ocontexts.platform = Platform::Selinux;
    assert!(matches!(
        write_policy_with(&selinux, 30, &WriteOptions::default()),
        Err(WriteError::PlatformMismatch {
            platform: Platform::Selinux,
            ..
        })
    ));
}
