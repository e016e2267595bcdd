//! The header: magic, target string, version, configuration, table counts, policy
//! capabilities, permissive and neveraudit maps.
//!
//! Everything that decides how the rest of the file is laid out is checked here, before a
//! single symbol is read: the version selects optional fields, and `sym_num`/`ocon_num` must
//! match the kernel's `policydb_compat` table for that version exactly.

use crate::cursor::Cursor;
use crate::ebitmap::Ebitmap;
use crate::error::{PolicyError, Result};
use crate::policy::{version, HandleUnknown, MAX_VERSION, MIN_VERSION};
use crate::xen::{xen_ocon_num, Platform, TARGET_XEN, XEN_VERSIONS};

use crate::format::{
    CONFIG_ALLOW_UNKNOWN, CONFIG_MLS, CONFIG_REJECT_UNKNOWN, MAGIC, MOD_MAGIC, TARGET_MAX_LEN,
    TARGET_SELINUX,
};

/// Symbol tables in a kernel policy: commons, classes, roles, types, users, booleans,
/// sensitivities, categories (`SYM_NUM`).
pub(crate) const SYM_NUM: u32 = 8;
/// Object-context tables: initial SIDs, fs, ports, netifs, nodes, fs_use, nodes6, ibpkeys,
/// ibendports (`OCON_NUM`).
pub(crate) const OCON_NUM: u32 = 9;

/// The header fields the rest of the reader needs.
#[derive(Debug)]
pub(crate) struct Header {
    pub platform: Platform,
    pub version: u32,
    pub mls: bool,
    pub handle_unknown: HandleUnknown,
    pub sym_num: u32,
    pub ocon_num: u32,
    pub policycaps: Ebitmap,
    pub permissive: Ebitmap,
    pub neveraudit: Ebitmap,
}

/// The kernel's `policydb_compat` table: how many symbol and object-context tables a policy
/// of `version` must declare. Booleans arrived in 16, IPv6 nodes in 17, sensitivities and
/// categories in 19 (MLS), InfiniBand contexts in 31.
pub(crate) fn compat_table_sizes(version: u32) -> (u32, u32) {
    let sym_num = match version {
        v if v < version::BOOL => SYM_NUM - 3,
        v if v < version::MLS => SYM_NUM - 2,
        _ => SYM_NUM,
    };
    let ocon_num = match version {
        v if v < version::IPV6 => OCON_NUM - 3,
        v if v < version::INFINIBAND => OCON_NUM - 2,
        _ => OCON_NUM,
    };
    (sym_num, ocon_num)
}

/// [`compat_table_sizes`] for either platform: Xen's tables are libsepol's (all eight
/// symbol tables; five or six object-context tables), `None` for a version without a Xen
/// layout.
pub(crate) fn platform_table_sizes(platform: Platform, version: u32) -> Option<(u32, u32)> {
    match platform {
        Platform::Selinux => Some(compat_table_sizes(version)),
        Platform::Xen => xen_ocon_num(version).map(|o| (SYM_NUM, o)),
    }
}

/// Reads the header as the kernel's `policydb_read` does up to the symbol tables.
pub(crate) fn read(c: &mut Cursor<'_>) -> Result<Header> {
    let magic = c.u32("policy magic")?;
    match magic {
        MAGIC => {}
        MOD_MAGIC => {
            return Err(PolicyError::UnsupportedTarget {
                target: "policy module (magic 0xf97cff8d); link and expand it first".into(),
            })
        }
        found => return Err(PolicyError::BadMagic { found }),
    }

    let at = c.offset();
    let len = c.u32("policy target string length")?;
    if len == 0 || len > TARGET_MAX_LEN {
        return Err(c.invalid_at(
            at,
            "policy target string length",
            format!(
                "{len} bytes (expected {} for \"SE Linux\")",
                TARGET_SELINUX.len()
            ),
        ));
    }
    let target = c.bytes(len as usize, "policy target string")?;
    // "XenFlask" policies share the magic but describe Xen objects (PIRQs, I/O memory)
    // in their object-context tables; anything else is not a policy we know.
    let platform = if target == TARGET_SELINUX {
        Platform::Selinux
    } else if target == TARGET_XEN {
        Platform::Xen
    } else {
        return Err(PolicyError::UnsupportedTarget {
            target: String::from_utf8_lossy(target).into_owned(),
        });
    };

    let at = c.offset();
    let [version, config, sym_num, ocon_num] = c.u32s::<4>("policy version and table sizes")?;
    if !(MIN_VERSION..=MAX_VERSION).contains(&version) {
        return Err(PolicyError::UnsupportedVersion {
            version,
            min: MIN_VERSION,
            max: MAX_VERSION,
        });
    }
    let mls = config & CONFIG_MLS != 0;
    if mls && version < version::MLS {
        return Err(c.invalid_at(
            at + 4,
            "policy configuration",
            format!(
                "MLS flag set in a version {version} policy (MLS needs version {} or later)",
                version::MLS
            ),
        ));
    }
    // The kernel keeps both flags. REJECT refuses to load a policy lacking a class or
    // permission the kernel knows; once loaded, nothing is unknown and ALLOW has no effect,
    // so REJECT describes a policy with both set.
    let handle_unknown = if config & CONFIG_REJECT_UNKNOWN != 0 {
        HandleUnknown::Reject
    } else if config & CONFIG_ALLOW_UNKNOWN != 0 {
        HandleUnknown::Allow
    } else {
        HandleUnknown::Deny
    };
    // The kernel compares these after the bitmaps below; checking first gives the more
    // useful error when a file's layout is wrong from here on.
    let Some((want_sym, want_ocon)) = platform_table_sizes(platform, version) else {
        return Err(c.invalid_at(
            at,
            "policy version",
            format!(
                "a Xen policy of version {version} (libsepol defines Xen versions {} and {} only)",
                XEN_VERSIONS[0], XEN_VERSIONS[1]
            ),
        ));
    };
    if sym_num != want_sym || ocon_num != want_ocon {
        return Err(c.invalid_at(
            at + 8,
            "policy table sizes",
            format!(
                "version {version} needs {want_sym} symbol tables and {want_ocon} object \
                 context tables, found {sym_num} and {ocon_num}"
            ),
        ));
    }

    let policycaps = if version >= version::POLCAP {
        Ebitmap::read(c, "policy capabilities")?
    } else {
        Ebitmap::default()
    };
    let permissive = if version >= version::PERMISSIVE {
        Ebitmap::read(c, "permissive types")?
    } else {
        Ebitmap::default()
    };
    // Linux 6.16 reads the neveraudit map right after the permissive map (before the
    // compat-table check and the symbol tables).
    let neveraudit = if version >= version::NEVERAUDIT {
        Ebitmap::read(c, "neveraudit types")?
    } else {
        Ebitmap::default()
    };

    Ok(Header {
        platform,
        version,
        mls,
        handle_unknown,
        sym_num,
        ocon_num,
        policycaps,
        permissive,
        neveraudit,
    })
}

/// Test images of headers, for this module's tests and the symbol-table tests.
#[cfg(test)]
pub(crate) mod test_image {
    use crate::testbytes::W;

    /// Appends a header for `version` with the right table sizes and empty bitmaps.
    pub(crate) fn header(w: &mut W, version: u32, config: u32) {
        let (sym, ocon) = super::compat_table_sizes(version);
        w.u32(super::MAGIC).name("SE Linux");
        w.u32s(&[version, config, sym, ocon]);
        for since in [22, 23, 35] {
            if version >= since {
                w.ebitmap(&[]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_image::header;
    use super::*;
    use crate::testbytes::W;

    fn read_bytes(b: &[u8]) -> Result<Header> {
        read(&mut Cursor::new(b))
    }

    #[test]
    fn reads_a_version_33_header() {
        let mut w = W::default();
        header(&mut w, 33, CONFIG_MLS | CONFIG_ALLOW_UNKNOWN);
        let h = read_bytes(&w.0).unwrap();
        assert_eq!((h.version, h.mls, h.sym_num, h.ocon_num), (33, true, 8, 9));
        assert_eq!(h.handle_unknown, HandleUnknown::Allow);
    }

    #[test]
    fn wrong_magic_is_bad_magic() {
        let mut w = W::default();
        header(&mut w, 33, 0);
        w.0[0] = 0;
        assert!(
            matches!(read_bytes(&w.0), Err(PolicyError::BadMagic { found }) if found == 0xf97cff00)
        );
    }

    #[test]
    fn module_magic_is_an_unsupported_target() {
        let mut w = W::default();
        header(&mut w, 33, 0);
        w.0[..4].copy_from_slice(&MOD_MAGIC.to_le_bytes());
        assert!(matches!(
            read_bytes(&w.0),
            Err(PolicyError::UnsupportedTarget { .. })
        ));
    }

    fn xen_header(version: u32, sym_num: u32, ocon_num: u32) -> Result<Header> {
        let mut w = W::default();
        w.u32(MAGIC).u32(8).bytes(b"XenFlask");
        w.u32s(&[version, 0, sym_num, ocon_num]);
        w.u32s(&[64, 0, 0]).u32s(&[64, 0, 0]);
        read_bytes(&w.0)
    }

    #[test]
    fn xen_target_selects_the_xen_tables() {
        let h = xen_header(30, 8, 6).expect("v30 Xen header");
        assert_eq!((h.platform, h.ocon_num), (Platform::Xen, 6));
        let h = xen_header(24, 8, 5).expect("v24 Xen header");
        assert_eq!((h.platform, h.ocon_num), (Platform::Xen, 5));
    }

    #[test]
    fn xen_versions_outside_libsepols_table_are_refused() {
        for v in [23, 25, 29, 31, 33] {
            let e = xen_header(v, 8, 6).expect_err("no Xen layout");
            assert!(e.to_string().contains("Xen policy of version"), "{v}: {e}");
        }
        // The SELinux table sizes are not Xen's.
        assert!(xen_header(30, 8, 9).is_err());
    }

    #[test]
    fn other_targets_are_unsupported() {
        let mut w = W::default();
        w.u32(MAGIC).u32(8).bytes(b"XenFlasK").u32s(&[30, 0, 8, 6]);
        match read_bytes(&w.0) {
            Err(PolicyError::UnsupportedTarget { target }) => assert_eq!(target, "XenFlasK"),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn huge_target_length_is_refused_before_reading() {
        let mut w = W::default();
        w.u32(MAGIC).u32(u32::MAX);
        assert!(matches!(
            read_bytes(&w.0),
            Err(PolicyError::Invalid { offset: 4, .. })
        ));
    }

    #[test]
    fn versions_outside_15_to_35_are_unsupported() {
        for v in [0, 14, 36, u32::MAX] {
            let mut w = W::default();
            w.u32(MAGIC).u32(8).bytes(b"SE Linux").u32s(&[v, 0, 8, 9]);
            assert!(
                matches!(read_bytes(&w.0), Err(PolicyError::UnsupportedVersion { version, min: 15, max: 35 }) if version == v),
                "version {v}"
            );
        }
    }

    #[test]
    fn mls_flag_needs_version_19() {
        let mut w = W::default();
        header(&mut w, 18, CONFIG_MLS);
        match read_bytes(&w.0) {
            Err(PolicyError::Invalid { detail, .. }) => assert!(detail.contains("MLS"), "{detail}"),
            other => panic!("unexpected {other:?}"),
        }
        let mut w = W::default();
        header(&mut w, 19, CONFIG_MLS);
        assert!(read_bytes(&w.0).unwrap().mls);
    }

    #[test]
    fn table_sizes_must_match_the_kernel_compat_table() {
        let expected = [
            (15, 5, 6),
            (16, 6, 6),
            (17, 6, 7),
            (18, 6, 7),
            (19, 8, 7),
            (30, 8, 7),
            (31, 8, 9),
            (35, 8, 9),
        ];
        for (v, sym, ocon) in expected {
            assert_eq!(compat_table_sizes(v), (sym, ocon), "version {v}");
        }
        let mut w = W::default();
        w.u32(MAGIC).u32(8).bytes(b"SE Linux").u32s(&[33, 0, 7, 9]);
        match read_bytes(&w.0) {
            Err(PolicyError::Invalid { detail, offset, .. }) => {
                assert_eq!(offset, 24, "offset of sym_num");
                assert!(detail.contains("needs 8 symbol tables"), "{detail}");
                assert!(detail.contains("found 7 and 9"), "{detail}");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn handle_unknown_prefers_reject() {
        for (config, want) in [
            (0, HandleUnknown::Deny),
            (CONFIG_ALLOW_UNKNOWN, HandleUnknown::Allow),
            (CONFIG_REJECT_UNKNOWN, HandleUnknown::Reject),
            (
                CONFIG_REJECT_UNKNOWN | CONFIG_ALLOW_UNKNOWN,
                HandleUnknown::Reject,
            ),
        ] {
            let mut w = W::default();
            header(&mut w, 33, config);
            assert_eq!(read_bytes(&w.0).unwrap().handle_unknown, want);
        }
    }

    #[test]
    fn bitmaps_follow_the_version() {
        // 21: no bitmaps at all; 23: capabilities and permissive; 35: plus neveraudit.
        let mut w = W::default();
        header(&mut w, 21, 0);
        let mut c = Cursor::new(&w.0);
        read(&mut c).unwrap();
        assert_eq!(c.remaining(), 0);

        let mut w = W::default();
        w.u32(MAGIC).u32(8).bytes(b"SE Linux").u32s(&[35, 0, 8, 9]);
        w.ebitmap(&[1, 5]).ebitmap(&[3]).ebitmap(&[4, 70]);
        let h = read_bytes(&w.0).unwrap();
        assert_eq!(h.policycaps.iter().collect::<Vec<_>>(), vec![1, 5]);
        assert_eq!(h.permissive.iter().collect::<Vec<_>>(), vec![3]);
        assert_eq!(h.neveraudit.iter().collect::<Vec<_>>(), vec![4, 70]);
    }

    #[test]
    fn truncated_header_is_truncated_not_panic() {
        let mut w = W::default();
        header(&mut w, 35, 0);
        for len in 0..w.0.len() {
            assert!(read_bytes(&w.0[..len]).is_err(), "prefix {len}");
        }
    }
}
