//! Object contexts: initial SIDs, filesystems, ports, interfaces, nodes, fs_use,
//! InfiniBand, and genfscon.

use crate::mls::Context;
pub use crate::xen::{
    DeviceTreeCon, IomemCon, IoportCon, PciDeviceCon, PirqCon, Platform, XenContexts,
};

/// `sid NAME CONTEXT`: the value is the kernel's initial SID number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InitialSid {
    pub sid: u32,
    pub context: Context,
}

/// `fscon`: a filesystem's context and default file context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FsCon {
    pub name: Box<str>,
    pub context: Context,
    pub file_context: Context,
}

/// `portcon PROTOCOL LOW-HIGH CONTEXT` (protocol is the IP protocol number).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortCon {
    pub protocol: u32,
    pub low: u32,
    pub high: u32,
    pub context: Context,
}

/// `netifcon NAME IFCONTEXT MSGCONTEXT`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetifCon {
    pub name: Box<str>,
    pub if_context: Context,
    pub msg_context: Context,
}

/// `nodecon ADDR MASK CONTEXT` for IPv4; addresses in network byte order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeCon {
    pub addr: [u8; 4],
    pub mask: [u8; 4],
    pub context: Context,
}

/// `nodecon` for IPv6; addresses in network byte order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node6Con {
    pub addr: [u8; 16],
    pub mask: [u8; 16],
    pub context: Context,
}

/// How a filesystem type is labeled by `fs_use_*`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FsUseBehavior {
    Xattr,
    Trans,
    Task,
    /// genfs-style (`SECURITY_FS_USE_GENFS`, not written by current compilers).
    Genfs,
    /// Mount options (`SECURITY_FS_USE_MNTPOINT`). Never read from a policy: the kernel
    /// refuses it there, as it is decided at mount time.
    Mntpoint,
    /// Any other value the kernel accepts (0, `SECURITY_FS_USE_NONE` 5,
    /// `SECURITY_FS_USE_NATIVE` 7), kept so nothing read is lost.
    Other(u32),
}

/// `fs_use_xattr/trans/task FSTYPE CONTEXT`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FsUse {
    pub behavior: FsUseBehavior,
    pub fstype: Box<str>,
    pub context: Context,
}

/// `ibpkeycon SUBNET_PREFIX LOW-HIGH CONTEXT` (subnet prefix in network byte order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IbPkeyCon {
    pub subnet_prefix: [u8; 8],
    pub low: u16,
    pub high: u16,
    pub context: Context,
}

/// `ibendportcon DEVICE PORT CONTEXT`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IbEndportCon {
    pub device: Box<str>,
    pub port: u8,
    pub context: Context,
}

/// All object-context tables, in file order.
///
/// `platform` says which tables the file holds: a SELinux policy fills the Linux tables
/// (`fs` to `ibendports`) and leaves `xen` empty; a Xen policy holds `initial_sids` and
/// `xen` only (the writer refuses any other mix, which neither format can express).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OContexts {
    /// Which platform's tables these are (the header's target string).
    pub platform: Platform,
    pub initial_sids: Vec<InitialSid>,
    pub fs: Vec<FsCon>,
    pub ports: Vec<PortCon>,
    pub netifs: Vec<NetifCon>,
    pub nodes: Vec<NodeCon>,
    pub fs_use: Vec<FsUse>,
    pub nodes6: Vec<Node6Con>,
    pub ibpkeys: Vec<IbPkeyCon>,
    pub ibendports: Vec<IbEndportCon>,
    /// Xen's tables (PIRQs, I/O ports and memory, PCI devices, device-tree nodes).
    pub xen: XenContexts,
}

/// `genfscon FSTYPE PATH [-c] CONTEXT`: one entry per (fstype, path, class).
///
/// `Policy::genfs` is in the kernel's lookup order: filesystems by name (bytewise), the
/// entries of each by decreasing path length, equal lengths in file order. The kernel takes
/// the first entry of the filesystem whose path is a prefix of the looked-up path and whose
/// class is 0 or the object's class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenfsCon {
    pub fstype: Box<str>,
    pub path: Box<str>,
    /// The security class value the entry is limited to (`-d`, `--`, ...); 0 for any.
    /// Otherwise a valid class value (checked when read, as the kernel does).
    pub class: u32,
    pub context: Context,
}

use std::collections::{HashMap, HashSet};

use crate::avtab::annotate;
use crate::cursor::Cursor;
use crate::error::{PolicyError, Result};
use crate::policy::version;
use crate::read::Counts;
use crate::transitions::read_name;

/// Object context tables, in file order (the kernel's `OCON_*`).
const OCON_ISID: u32 = 0;
const OCON_FS: u32 = 1;
const OCON_PORT: u32 = 2;
const OCON_NETIF: u32 = 3;
const OCON_NODE: u32 = 4;
const OCON_FSUSE: u32 = 5;
const OCON_NODE6: u32 = 6;
const OCON_IBPKEY: u32 = 7;
const OCON_IBENDPORT: u32 = 8;
const OCON_NUM: u32 = 9;

/// `fs_use` behaviours (the kernel's `SECURITY_FS_USE_*`).
const FS_USE_MNTPOINT: u32 = 6;
const FS_USE_MAX: u32 = 7;

/// The smallest stored context: user, role, type and, from version 19, a one-level range
/// with an empty category bitmap.
pub(crate) fn min_context_size(counts: &Counts) -> usize {
    12 + if counts.version >= version::MLS {
        4 + 4 + 12
    } else {
        0
    }
}

/// Reads a table: a count and that many records. `min_size` is the smallest record the
/// format can encode (names counted as empty, which is refused once read, with its own
/// message), so the count is bounded by the input before anything is allocated.
pub(crate) fn table<T>(
    c: &mut Cursor<'_>,
    min_size: usize,
    what: &'static str,
    mut record: impl FnMut(&mut Cursor<'_>) -> Result<T>,
) -> Result<Vec<T>> {
    let n = c.count(min_size, what)?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(record(c).map_err(|e| annotate(e, || format!("entry {i} of {n}")))?);
    }
    Ok(out)
}

/// Reads the `ocon_num` object context tables (the kernel's `ocontext_read`), with the
/// kernel's checks: ports within their 8/16-bit fields and `low` in 1..=`high`; `fs_use`
/// behaviours up to 7 but not mount-point labeling; InfiniBand partition keys within 16
/// bits and end ports in 1..=255; names non-empty. Contexts are checked against the symbol
/// counts here and fully with the whole policy.
///
/// Beyond the kernel's reader: initial SID 0 is refused (the kernel refuses it when it loads
/// the SIDs, so such a policy never loads), and, as libsepol's validation requires, a
/// partition key range must not be reversed. InfiniBand device names are not limited in
/// length (libsepol limits them to 63 bytes, the kernel does not).
pub(crate) fn read(
    c: &mut Cursor<'_>,
    counts: &Counts,
    platform: Platform,
    ocon_num: u32,
) -> Result<OContexts> {
    if platform == Platform::Xen {
        let (initial_sids, xen) = crate::xen::read(c, counts, ocon_num)?;
        return Ok(OContexts {
            platform,
            initial_sids,
            xen,
            ..OContexts::default()
        });
    }
    if ocon_num > OCON_NUM {
        return Err(c.invalid(
            "object context tables",
            format!("{ocon_num} tables, at most {OCON_NUM} are defined"),
        ));
    }
    let ctx = min_context_size(counts);
    let mut o = OContexts::default();
    for kind in 0..ocon_num {
        match kind {
            OCON_ISID => {
                o.initial_sids = table(c, 4 + ctx, "initial SID", |c| read_isid(c, counts))?
            }
            OCON_FS => {
                o.fs = table(c, 4 + 2 * ctx, "filesystem context", |c| {
                    let name = read_name(c, "filesystem context")?;
                    let (context, file_context) =
                        two_contexts(c, counts, "filesystem context", &name)?;
                    Ok(FsCon {
                        name,
                        context,
                        file_context,
                    })
                })?
            }
            OCON_PORT => o.ports = table(c, 12 + ctx, "port context", |c| read_port(c, counts))?,
            OCON_NETIF => {
                o.netifs = table(c, 4 + 2 * ctx, "network interface context", |c| {
                    let name = read_name(c, "network interface context")?;
                    let (if_context, msg_context) =
                        two_contexts(c, counts, "network interface context", &name)?;
                    Ok(NetifCon {
                        name,
                        if_context,
                        msg_context,
                    })
                })?
            }
            OCON_NODE => {
                o.nodes = table(c, 8 + ctx, "node context", |c| {
                    const WHAT: &str = "node context";
                    let mut addr = [0u8; 4];
                    let mut mask = [0u8; 4];
                    addr.copy_from_slice(c.bytes(4, WHAT)?);
                    mask.copy_from_slice(c.bytes(4, WHAT)?);
                    Ok(NodeCon {
                        addr,
                        mask,
                        context: Context::read(c, counts, WHAT)?,
                    })
                })?
            }
            OCON_FSUSE => {
                o.fs_use = table(c, 8 + ctx, "fs_use context", |c| read_fs_use(c, counts))?
            }
            OCON_NODE6 => {
                o.nodes6 = table(c, 32 + ctx, "IPv6 node context", |c| {
                    const WHAT: &str = "IPv6 node context";
                    let mut addr = [0u8; 16];
                    let mut mask = [0u8; 16];
                    addr.copy_from_slice(c.bytes(16, WHAT)?);
                    mask.copy_from_slice(c.bytes(16, WHAT)?);
                    Ok(Node6Con {
                        addr,
                        mask,
                        context: Context::read(c, counts, WHAT)?,
                    })
                })?
            }
            OCON_IBPKEY => {
                o.ibpkeys = table(c, 16 + ctx, "InfiniBand partition key context", |c| {
                    read_ibpkey(c, counts)
                })?
            }
            OCON_IBENDPORT => {
                o.ibendports = table(c, 8 + ctx, "InfiniBand end port context", |c| {
                    read_ibendport(c, counts)
                })?
            }
            _ => unreachable!("table kinds are bounded by OCON_NUM"),
        }
    }
    Ok(o)
}

/// Two contexts of a named record, errors naming the record.
fn two_contexts(
    c: &mut Cursor<'_>,
    counts: &Counts,
    what: &'static str,
    name: &str,
) -> Result<(Context, Context)> {
    let named = |e| annotate(e, || format!("`{name}`"));
    let first = Context::read(c, counts, what).map_err(named)?;
    let second = Context::read(c, counts, what).map_err(named)?;
    Ok((first, second))
}

pub(crate) fn read_isid(c: &mut Cursor<'_>, counts: &Counts) -> Result<InitialSid> {
    const WHAT: &str = "initial SID";
    let at = c.offset();
    let sid = c.u32(WHAT)?;
    if sid == 0 {
        return Err(c.invalid_at(
            at,
            WHAT,
            "SID 0 is the null SID and cannot be given a context".into(),
        ));
    }
    let context =
        Context::read(c, counts, WHAT).map_err(|e| annotate(e, || format!("SID {sid}")))?;
    Ok(InitialSid { sid, context })
}

fn read_port(c: &mut Cursor<'_>, counts: &Counts) -> Result<PortCon> {
    const WHAT: &str = "port context";
    let at = c.offset();
    let [protocol, low, high] = c.u32s::<3>(WHAT)?;
    if protocol > u32::from(u8::MAX) {
        return Err(c.invalid_at(
            at,
            WHAT,
            format!("protocol {protocol} does not fit in 8 bits"),
        ));
    }
    for (v, off) in [(low, 4), (high, 8)] {
        if v > u32::from(u16::MAX) {
            return Err(c.invalid_at(at + off, WHAT, format!("port {v} does not fit in 16 bits")));
        }
    }
    if low == 0 || low > high {
        return Err(c.invalid_at(
            at + 4,
            WHAT,
            format!("port range {low}-{high} is empty or starts at 0"),
        ));
    }
    let context = Context::read(c, counts, WHAT)
        .map_err(|e| annotate(e, || format!("protocol {protocol} ports {low}-{high}")))?;
    Ok(PortCon {
        protocol,
        low,
        high,
        context,
    })
}

fn read_fs_use(c: &mut Cursor<'_>, counts: &Counts) -> Result<FsUse> {
    const WHAT: &str = "fs_use context";
    let at = c.offset();
    let [behavior, len] = c.u32s::<2>(WHAT)?;
    let behavior = match behavior {
        1 => FsUseBehavior::Xattr,
        2 => FsUseBehavior::Trans,
        3 => FsUseBehavior::Task,
        4 => FsUseBehavior::Genfs,
        FS_USE_MNTPOINT => {
            return Err(c.invalid_at(
                at,
                WHAT,
                "behavior 6 (mount point labeling) is decided at mount time, not by policy".into(),
            ))
        }
        b if b > FS_USE_MAX => {
            return Err(c.invalid_at(at, WHAT, format!("unknown behavior {b}")));
        }
        b => FsUseBehavior::Other(b),
    };
    if len == 0 {
        return Err(c.invalid_at(at + 4, WHAT, "empty name".into()));
    }
    let fstype = c.string(len, WHAT)?;
    let context =
        Context::read(c, counts, WHAT).map_err(|e| annotate(e, || format!("`{fstype}`")))?;
    Ok(FsUse {
        behavior,
        fstype,
        context,
    })
}

fn read_ibpkey(c: &mut Cursor<'_>, counts: &Counts) -> Result<IbPkeyCon> {
    const WHAT: &str = "InfiniBand partition key context";
    let mut subnet_prefix = [0u8; 8];
    subnet_prefix.copy_from_slice(c.bytes(8, WHAT)?);
    let at = c.offset();
    let [low, high] = c.u32s::<2>(WHAT)?;
    let (Ok(low), Ok(high)) = (u16::try_from(low), u16::try_from(high)) else {
        return Err(c.invalid_at(
            at,
            WHAT,
            format!("partition key range {low:#x}-{high:#x} does not fit in 16 bits"),
        ));
    };
    if low > high {
        return Err(c.invalid_at(
            at,
            WHAT,
            format!("partition key range {low:#x}-{high:#x} is reversed"),
        ));
    }
    let context = Context::read(c, counts, WHAT)
        .map_err(|e| annotate(e, || format!("partition keys {low:#x}-{high:#x}")))?;
    Ok(IbPkeyCon {
        subnet_prefix,
        low,
        high,
        context,
    })
}

fn read_ibendport(c: &mut Cursor<'_>, counts: &Counts) -> Result<IbEndportCon> {
    const WHAT: &str = "InfiniBand end port context";
    let at = c.offset();
    let [len, port] = c.u32s::<2>(WHAT)?;
    if len == 0 {
        return Err(c.invalid_at(at, WHAT, "empty device name".into()));
    }
    let device = c.string(len, WHAT)?;
    let port = match u8::try_from(port) {
        Ok(p) if p != 0 => p,
        _ => {
            return Err(c.invalid_at(
                at + 4,
                WHAT,
                format!("`{device}` port {port} is outside 1..=255"),
            ))
        }
    };
    let context = Context::read(c, counts, WHAT)
        .map_err(|e| annotate(e, || format!("`{device}` port {port}")))?;
    Ok(IbEndportCon {
        device,
        port,
        context,
    })
}

/// Reads genfs contexts (the kernel's `genfs_read`): for each filesystem type its entries of
/// path, class and context. A filesystem type may occur once; within one, two entries for
/// the same path clash when either applies to all classes or both to the same class, as in
/// the kernel. The result is flattened in the kernel's lookup order (see [`GenfsCon`]).
pub(crate) fn read_genfs(c: &mut Cursor<'_>, counts: &Counts) -> Result<Vec<GenfsCon>> {
    const FS: &str = "genfs filesystem";
    const ENTRY: &str = "genfs entry";
    let ctx = min_context_size(counts);
    // Name length and entry count.
    let n = c.count(4 + 4, FS)?;
    let mut filesystems: Vec<(Box<str>, Vec<GenfsCon>)> = Vec::with_capacity(n);
    let mut seen: HashSet<Box<str>> = HashSet::with_capacity(n);
    for _ in 0..n {
        let at = c.offset();
        let fstype = read_name(c, FS)?;
        if !seen.insert(fstype.clone()) {
            return Err(c.invalid_at(at, FS, format!("duplicate filesystem `{fstype}`")));
        }
        let in_fs = |e: PolicyError| annotate(e, || format!("filesystem `{fstype}`"));
        // Path length, class, context.
        let m = c.count(4 + 4 + ctx, ENTRY).map_err(in_fs)?;
        let mut entries = Vec::with_capacity(m);
        let mut classes: HashMap<Box<str>, Vec<u32>> = HashMap::with_capacity(m);
        for _ in 0..m {
            let entry_at = c.offset();
            let path = read_name(c, ENTRY).map_err(in_fs)?;
            let in_entry = |e: PolicyError| annotate(e, || format!("`{fstype}` path `{path}`"));
            let class_at = c.offset();
            let class = c.u32(ENTRY)?;
            if class != 0 {
                counts
                    .class_id(c, class_at, class, ENTRY)
                    .map_err(in_entry)?;
            }
            let context = Context::read(c, counts, ENTRY).map_err(in_entry)?;
            let prior = classes.entry(path.clone()).or_default();
            if prior.iter().any(|&p| p == 0 || class == 0 || p == class) {
                return Err(c.invalid_at(
                    entry_at,
                    ENTRY,
                    format!("duplicate entry for `{fstype}` path `{path}` (class {class})"),
                ));
            }
            prior.push(class);
            entries.push(GenfsCon {
                fstype: fstype.clone(),
                path,
                class,
                context,
            });
        }
        // The kernel keeps each list longest path first, a new entry after those as long.
        entries.sort_by_key(|e| std::cmp::Reverse(e.path.len()));
        filesystems.push((fstype, entries));
    }
    filesystems.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(filesystems.into_iter().flat_map(|(_, e)| e).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testbytes::{counts, detail, run, W};

    /// Object context tables for `version`: each closure writes its table's records and
    /// returns their number; missing tables are empty.
    fn tables(n: u32, mut fill: impl FnMut(u32, &mut W) -> u32) -> Vec<u8> {
        let mut w = W::new();
        for kind in 0..n {
            let mut body = W::new();
            let count = fill(kind, &mut body);
            w.u32(count).bytes(&body.0);
        }
        w.into_bytes()
    }

    fn read_tables(
        version: u32,
        n: u32,
        fill: impl FnMut(u32, &mut W) -> u32,
    ) -> Result<OContexts> {
        let bytes = tables(n, fill);
        run(&bytes, |c| read(c, &counts(version), Platform::Selinux, n))
    }

    /// Only table `kind` has records.
    fn only(version: u32, kind: u32, records: impl Fn(&mut W) -> u32) -> Result<OContexts> {
        read_tables(
            version,
            OCON_NUM,
            |k, w| if k == kind { records(w) } else { 0 },
        )
    }

    #[test]
    fn reads_every_table_in_order() {
        let o = read_tables(33, 9, |kind, w| match kind {
            OCON_ISID => {
                w.u32(1).context(1, 1, 1, true);
                w.u32(3).context(2, 2, 2, true);
                2
            }
            OCON_FS => {
                w.name("proc").context(1, 1, 3, true).context(1, 1, 4, true);
                1
            }
            OCON_PORT => {
                w.u32s(&[6, 22, 22]).context(1, 1, 5, true);
                w.u32s(&[17, 1, 511]).context(1, 1, 6, true);
                2
            }
            OCON_NETIF => {
                w.name("eth0").context(1, 1, 7, true).context(1, 1, 8, true);
                1
            }
            OCON_NODE => {
                w.bytes(&[127, 0, 0, 1])
                    .bytes(&[255, 0, 0, 0])
                    .context(1, 1, 9, true);
                1
            }
            OCON_FSUSE => {
                w.u32s(&[1, 4]).bytes(b"ext4").context(1, 1, 10, true);
                1
            }
            OCON_NODE6 => {
                let mut addr = [0u8; 16];
                addr[15] = 1;
                w.bytes(&addr).bytes(&[0xff; 16]).context(1, 1, 11, true);
                1
            }
            OCON_IBPKEY => {
                w.bytes(&[0xfe, 0x80, 0, 0, 0, 0, 0, 0])
                    .u32s(&[1, 0x7fff])
                    .context(1, 1, 12, true);
                1
            }
            OCON_IBENDPORT => {
                w.u32s(&[5, 1]).bytes(b"mlx_0").context(1, 1, 13, true);
                1
            }
            _ => unreachable!(),
        })
        .unwrap();
        assert_eq!(
            o.initial_sids.iter().map(|s| s.sid).collect::<Vec<_>>(),
            [1, 3]
        );
        assert_eq!(o.initial_sids[1].context.ty.value(), 2);
        assert_eq!(
            (&*o.fs[0].name, o.fs[0].file_context.ty.value()),
            ("proc", 4)
        );
        assert_eq!(
            (o.ports[1].protocol, o.ports[1].low, o.ports[1].high),
            (17, 1, 511)
        );
        assert_eq!(
            (&*o.netifs[0].name, o.netifs[0].msg_context.ty.value()),
            ("eth0", 8)
        );
        assert_eq!(
            (o.nodes[0].addr, o.nodes[0].mask),
            ([127, 0, 0, 1], [255, 0, 0, 0])
        );
        assert_eq!(
            (o.fs_use[0].behavior, &*o.fs_use[0].fstype),
            (FsUseBehavior::Xattr, "ext4")
        );
        assert_eq!(o.nodes6[0].addr[15], 1);
        assert_eq!(o.ibpkeys[0].subnet_prefix, [0xfe, 0x80, 0, 0, 0, 0, 0, 0]);
        assert_eq!((o.ibpkeys[0].low, o.ibpkeys[0].high), (1, 0x7fff));
        assert_eq!(
            (&*o.ibendports[0].device, o.ibendports[0].port),
            ("mlx_0", 1)
        );
        assert_eq!(o.ibendports[0].context.ty.value(), 13);
    }

    #[test]
    fn old_versions_have_fewer_tables_and_no_ranges() {
        // Version 16: six tables, contexts without an MLS range.
        let o = read_tables(16, 6, |kind, w| match kind {
            OCON_ISID => {
                w.u32(1).context(1, 1, 1, false);
                1
            }
            _ => 0,
        })
        .unwrap();
        assert_eq!(o.initial_sids.len(), 1);
        assert!(o.nodes6.is_empty());
        assert!(matches!(
            run(&[0; 40], |c| read(c, &counts(33), Platform::Selinux, 10)),
            Err(PolicyError::Invalid { .. })
        ));
    }

    #[test]
    fn initial_sid_zero_is_rejected() {
        let r = only(33, OCON_ISID, |w| {
            w.u32(0).context(1, 1, 1, true);
            1
        });
        assert!(detail(r).contains("SID 0"));
    }

    #[test]
    fn port_ranges_are_checked_as_by_the_kernel() {
        for (rule, what) in [
            ([256, 1, 1], "protocol 256"),
            ([6, 0x1_0000, 0x1_0000], "port 65536"),
            ([6, 1, 0x1_0000], "port 65536"),
            ([6, 0, 10], "0-10"),
            ([6, 11, 10], "11-10"),
        ] {
            let r = only(33, OCON_PORT, |w| {
                w.u32s(&rule).context(1, 1, 1, true);
                1
            });
            let d = detail(r);
            assert!(d.contains(what), "{d}");
            assert!(d.starts_with("entry 0 of 1: "), "{d}");
        }
        let ok = only(33, OCON_PORT, |w| {
            w.u32s(&[255, 65535, 65535]).context(1, 1, 1, true);
            1
        });
        assert_eq!(ok.unwrap().ports[0].low, 65535);
    }

    #[test]
    fn fs_use_behaviors_follow_the_kernel() {
        let behavior = |b: u32| {
            only(33, OCON_FSUSE, |w| {
                w.u32s(&[b, 3]).bytes(b"xfs").context(1, 1, 1, true);
                1
            })
            .map(|o| o.fs_use[0].behavior)
        };
        assert_eq!(behavior(2).unwrap(), FsUseBehavior::Trans);
        assert_eq!(behavior(3).unwrap(), FsUseBehavior::Task);
        assert_eq!(behavior(4).unwrap(), FsUseBehavior::Genfs);
        for other in [0, 5, 7] {
            assert_eq!(behavior(other).unwrap(), FsUseBehavior::Other(other));
        }
        assert!(detail(behavior(6)).contains("mount time"));
        assert!(detail(behavior(8)).contains("unknown behavior 8"));
    }

    #[test]
    fn names_must_not_be_empty() {
        let r = only(33, OCON_NETIF, |w| {
            w.name("").context(1, 1, 1, true).context(1, 1, 1, true);
            1
        });
        assert!(detail(r).contains("empty name"));
        let r = only(33, OCON_FSUSE, |w| {
            w.u32s(&[1, 0]).context(1, 1, 1, true);
            1
        });
        assert!(detail(r).contains("empty name"));
    }

    #[test]
    fn infiniband_keys_and_ports_are_checked() {
        for (keys, what) in [([0, 0x1_0000], "does not fit"), ([5, 4], "reversed")] {
            let r = only(33, OCON_IBPKEY, |w| {
                w.bytes(&[0; 8]).u32s(&keys).context(1, 1, 1, true);
                1
            });
            assert!(detail(r).contains(what));
        }
        for port in [0, 256] {
            let r = only(33, OCON_IBENDPORT, |w| {
                w.u32s(&[3, port]).bytes(b"mlx").context(1, 1, 1, true);
                1
            });
            assert!(detail(r).contains("outside 1..=255"));
        }
        // No device name limit in the kernel (libsepol stops at 63 bytes).
        let long = "d".repeat(100);
        let o = only(33, OCON_IBENDPORT, |w| {
            w.u32s(&[100, 255])
                .bytes(long.as_bytes())
                .context(1, 1, 1, true);
            1
        })
        .unwrap();
        assert_eq!(o.ibendports[0].device.len(), 100);
    }

    #[test]
    fn context_errors_name_the_record() {
        let r = only(33, OCON_PORT, |w| {
            w.u32s(&[6, 80, 80]).context(1, 1, 99, true);
            1
        });
        let d = detail(r);
        assert!(
            d.contains("protocol 6 ports 80-80") && d.contains("type value 99"),
            "{d}"
        );
    }

    #[test]
    fn hostile_object_context_count_is_refused() {
        let mut bytes = tables(9, |_, _| 0);
        bytes[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            run(&bytes, |c| read(c, &counts(33), Platform::Selinux, 9)),
            Err(PolicyError::CountTooLarge {
                what: "port context",
                ..
            })
        ));
    }

    /// A genfs entry: (path, class, context type).
    type Entry<'a> = (&'a str, u32, u32);

    /// genfs: (fstype, entries).
    fn genfs(entries: &[(&str, &[Entry<'_>])]) -> Vec<u8> {
        let mut w = W::new();
        w.u32(entries.len() as u32);
        for &(fs, list) in entries {
            w.name(fs).u32(list.len() as u32);
            for &(path, class, ty) in list {
                w.name(path).u32(class).context(1, 1, ty, true);
            }
        }
        w.into_bytes()
    }

    #[test]
    fn genfs_is_in_the_kernel_lookup_order() {
        let b = genfs(&[
            ("sysfs", &[("/", 0, 1)]),
            (
                "proc",
                &[
                    ("/", 0, 2),
                    ("/sys", 0, 3),
                    ("/kmsg", 2, 4),
                    ("/sys/net", 0, 5),
                    ("/kmsg", 3, 6),
                ],
            ),
        ]);
        let g = run(&b, |c| read_genfs(c, &counts(33))).unwrap();
        let got: Vec<_> = g
            .iter()
            .map(|e| (&*e.fstype, &*e.path, e.class, e.context.ty.value()))
            .collect();
        assert_eq!(
            got,
            [
                ("proc", "/sys/net", 0, 5),
                ("proc", "/kmsg", 2, 4),
                ("proc", "/kmsg", 3, 6),
                ("proc", "/sys", 0, 3),
                ("proc", "/", 0, 2),
                ("sysfs", "/", 0, 1),
            ]
        );
    }

    #[test]
    fn duplicate_genfs_entries_are_rejected() {
        let d = detail(run(&genfs(&[("proc", &[]), ("proc", &[])]), |c| {
            read_genfs(c, &counts(33))
        }));
        assert!(d.contains("duplicate filesystem `proc`"), "{d}");
        for (a, b) in [(0, 0), (0, 2), (2, 0), (2, 2)] {
            let bytes = genfs(&[("proc", &[("/x", a, 1), ("/x", b, 1)])]);
            let d = detail(run(&bytes, |c| read_genfs(c, &counts(33))));
            assert!(d.contains("duplicate entry for `proc` path `/x`"), "{d}");
        }
        // The same path in another filesystem is no duplicate.
        let bytes = genfs(&[("proc", &[("/x", 0, 1)]), ("sysfs", &[("/x", 0, 1)])]);
        assert_eq!(
            run(&bytes, |c| read_genfs(c, &counts(33))).unwrap().len(),
            2
        );
    }

    #[test]
    fn genfs_class_must_be_zero_or_a_class() {
        for class in [7, 0x1_0001] {
            let bytes = genfs(&[("proc", &[("/x", class, 1)])]);
            let d = detail(run(&bytes, |c| read_genfs(c, &counts(33))));
            assert!(d.contains("class value"), "{d}");
        }
    }

    #[test]
    fn hostile_genfs_counts_are_refused() {
        let mut b = genfs(&[("proc", &[("/", 0, 1)])]);
        b[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            run(&b, |c| read_genfs(c, &counts(33))),
            Err(PolicyError::CountTooLarge { .. })
        ));
        let mut b = genfs(&[("proc", &[("/", 0, 1)])]);
        b[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            run(&b, |c| read_genfs(c, &counts(33))),
            Err(PolicyError::CountTooLarge { .. })
        ));
    }
}
