//! Object contexts: initial SIDs, filesystems, ports, interfaces, nodes, fs_use,
//! InfiniBand, and genfscon.

use crate::mls::Context;

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
    /// Mount options (`SECURITY_FS_USE_MNTPOINT`).
    Mntpoint,
    /// Any other value, kept so nothing read is lost.
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OContexts {
    pub initial_sids: Vec<InitialSid>,
    pub fs: Vec<FsCon>,
    pub ports: Vec<PortCon>,
    pub netifs: Vec<NetifCon>,
    pub nodes: Vec<NodeCon>,
    pub fs_use: Vec<FsUse>,
    pub nodes6: Vec<Node6Con>,
    pub ibpkeys: Vec<IbPkeyCon>,
    pub ibendports: Vec<IbEndportCon>,
}

/// `genfscon FSTYPE PATH [-c] CONTEXT`: one entry per (fstype, path).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenfsCon {
    pub fstype: Box<str>,
    pub path: Box<str>,
    /// The security class value the entry is limited to (`-d`, `--`, ...); 0 for any.
    /// Kept raw: the kernel does not check it against the class table.
    pub class: u32,
    pub context: Context,
}

use crate::cursor::Cursor;
use crate::error::{PolicyError, Result};
use crate::read::Counts;

pub(crate) fn read(c: &mut Cursor<'_>, counts: &Counts, ocon_num: u32) -> Result<OContexts> {
    let _ = (c, counts, ocon_num);
    Err(PolicyError::Inconsistent {
        what: "ocontexts".into(),
        detail: "reader not written yet".into(),
    })
}
pub(crate) fn read_genfs(c: &mut Cursor<'_>, counts: &Counts) -> Result<Vec<GenfsCon>> {
    let _ = (c, counts);
    Err(PolicyError::Inconsistent {
        what: "genfs".into(),
        detail: "reader not written yet".into(),
    })
}
