//! Xen's object contexts: what a "XenFlask" policy labels instead of files and sockets.
//!
//! Xen's FLASK policies share the kernel policy's format (magic, symbols, rules) and differ
//! in the header's target string and in the object-context tables, which hold physical IRQs,
//! I/O ports, I/O memory, PCI devices and device-tree nodes after the initial SIDs. libsepol
//! knows two Xen layouts only: version 24 (five tables, 32-bit I/O memory addresses) and
//! version 30 (a sixth table of device-tree nodes, 64-bit I/O memory addresses); any other
//! version is refused by its compat lookup, and so here.

use crate::avtab::annotate;
use crate::cursor::Cursor;
use crate::error::Result;
use crate::mls::Context;
use crate::ocontext::{min_context_size, read_isid, table, InitialSid};
use crate::read::Counts;
use crate::transitions::read_name;

/// Which platform a policy is for: the header's target string and the meaning of its
/// object-context tables (libsepol's `target_platform`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Platform {
    /// "SE Linux": the Linux kernel's object contexts.
    #[default]
    Selinux,
    /// "XenFlask": Xen's object contexts ([`XenContexts`]).
    Xen,
}

impl Platform {
    /// The target string the header stores.
    pub fn target(self) -> &'static [u8] {
        match self {
            Platform::Selinux => crate::format::TARGET_SELINUX,
            Platform::Xen => TARGET_XEN,
        }
    }
}

/// `POLICYDB_XEN_STRING`.
pub(crate) const TARGET_XEN: &[u8] = b"XenFlask";

/// The first Xen version with device-tree contexts and 64-bit I/O memory addresses
/// (`POLICYDB_VERSION_XEN_DEVICETREE`).
pub const XEN_DEVICETREE_VERSION: u32 = 30;

/// The versions libsepol's compat table defines for Xen.
pub const XEN_VERSIONS: [u32; 2] = [24, XEN_DEVICETREE_VERSION];

/// The object-context table count of a Xen policy of `version` (initial SIDs, PIRQs, I/O
/// ports, I/O memory, PCI devices, and from 30 device-tree nodes), `None` for a version
/// libsepol has no Xen layout for.
pub(crate) fn xen_ocon_num(version: u32) -> Option<u32> {
    match version {
        24 => Some(5),
        XEN_DEVICETREE_VERSION => Some(6),
        _ => None,
    }
}

/// `pirqcon IRQ CONTEXT`: a physical interrupt line. The file stores 32 bits, but libsepol
/// (and Xen) keep 16: a compiler truncates, and the reader refuses a wider value rather
/// than truncate it silently as libsepol does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PirqCon {
    pub pirq: u16,
    pub context: Context,
}

/// `ioportcon LOW-HIGH CONTEXT`: x86 I/O ports (stored as libsepol stores them: no order
/// between `low` and `high` is enforced by the format).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoportCon {
    pub low: u32,
    pub high: u32,
    pub context: Context,
}

/// `iomemcon LOW-HIGH CONTEXT`: I/O memory page frames; 32-bit in version 24 files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IomemCon {
    pub low: u64,
    pub high: u64,
    pub context: Context,
}

/// `pcidevicecon DEVICE CONTEXT`: a PCI device by its bus/device/function number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PciDeviceCon {
    pub device: u32,
    pub context: Context,
}

/// `devicetreecon PATH CONTEXT`: a device-tree node (version 30).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceTreeCon {
    pub path: Box<str>,
    pub context: Context,
}

/// Xen's object-context tables after the initial SIDs, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct XenContexts {
    pub pirqs: Vec<PirqCon>,
    pub ioports: Vec<IoportCon>,
    pub iomems: Vec<IomemCon>,
    pub pci_devices: Vec<PciDeviceCon>,
    pub device_trees: Vec<DeviceTreeCon>,
}

impl XenContexts {
    /// Whether no Xen context is present.
    pub fn is_empty(&self) -> bool {
        self.pirqs.is_empty()
            && self.ioports.is_empty()
            && self.iomems.is_empty()
            && self.pci_devices.is_empty()
            && self.device_trees.is_empty()
    }

    /// Every context with a label naming its rule, for validation and comparison.
    pub fn labeled_contexts(&self) -> impl Iterator<Item = (String, &Context)> + '_ {
        let p = self
            .pirqs
            .iter()
            .map(|x| (format!("pirqcon {}", x.pirq), &x.context));
        let io = self
            .ioports
            .iter()
            .map(|x| (format!("ioportcon {:#x}-{:#x}", x.low, x.high), &x.context));
        let mem = self
            .iomems
            .iter()
            .map(|x| (format!("iomemcon {:#x}-{:#x}", x.low, x.high), &x.context));
        let pci = self
            .pci_devices
            .iter()
            .map(|x| (format!("pcidevicecon {:#x}", x.device), &x.context));
        let dt = self
            .device_trees
            .iter()
            .map(|x| (format!("devicetreecon {}", x.path), &x.context));
        p.chain(io).chain(mem).chain(pci).chain(dt)
    }
}

/// Reads Xen's `ocon_num` tables (libsepol's `ocontext_read_xen`): initial SIDs as in a
/// kernel policy, then PIRQs, I/O ports, I/O memory (two 64-bit words from version 30, two
/// 32-bit words before), PCI devices and device-tree paths (non-empty). Contexts are
/// checked against the symbol counts here and fully with the whole policy.
pub(crate) fn read(
    c: &mut Cursor<'_>,
    counts: &Counts,
    ocon_num: u32,
) -> Result<(Vec<InitialSid>, XenContexts)> {
    let ctx = min_context_size(counts);
    let wide = counts.version >= XEN_DEVICETREE_VERSION;
    let mut sids = Vec::new();
    let mut x = XenContexts::default();
    for kind in 0..ocon_num {
        match kind {
            0 => sids = table(c, 4 + ctx, "initial SID", |c| read_isid(c, counts))?,
            1 => {
                x.pirqs = table(c, 4 + ctx, "Xen PIRQ context", |c| {
                    const WHAT: &str = "Xen PIRQ context";
                    let at = c.offset();
                    let raw = c.u32(WHAT)?;
                    let pirq = u16::try_from(raw).map_err(|_| {
                        c.invalid_at(at, WHAT, format!("PIRQ {raw} does not fit in 16 bits"))
                    })?;
                    let context = Context::read(c, counts, WHAT)
                        .map_err(|e| annotate(e, || format!("PIRQ {pirq}")))?;
                    Ok(PirqCon { pirq, context })
                })?
            }
            2 => {
                x.ioports = table(c, 8 + ctx, "Xen I/O port context", |c| {
                    const WHAT: &str = "Xen I/O port context";
                    let [low, high] = c.u32s::<2>(WHAT)?;
                    let context = Context::read(c, counts, WHAT)
                        .map_err(|e| annotate(e, || format!("I/O ports {low:#x}-{high:#x}")))?;
                    Ok(IoportCon { low, high, context })
                })?
            }
            3 => {
                let size = if wide { 16 } else { 8 };
                x.iomems = table(c, size + ctx, "Xen I/O memory context", |c| {
                    const WHAT: &str = "Xen I/O memory context";
                    let (low, high) = if wide {
                        (c.u64(WHAT)?, c.u64(WHAT)?)
                    } else {
                        let [l, h] = c.u32s::<2>(WHAT)?;
                        (u64::from(l), u64::from(h))
                    };
                    let context = Context::read(c, counts, WHAT)
                        .map_err(|e| annotate(e, || format!("I/O memory {low:#x}-{high:#x}")))?;
                    Ok(IomemCon { low, high, context })
                })?
            }
            4 => {
                x.pci_devices = table(c, 4 + ctx, "Xen PCI device context", |c| {
                    const WHAT: &str = "Xen PCI device context";
                    let device = c.u32(WHAT)?;
                    let context = Context::read(c, counts, WHAT)
                        .map_err(|e| annotate(e, || format!("PCI device {device:#x}")))?;
                    Ok(PciDeviceCon { device, context })
                })?
            }
            _ => {
                x.device_trees = table(c, 4 + ctx, "Xen device-tree context", |c| {
                    const WHAT: &str = "Xen device-tree context";
                    let path = read_name(c, WHAT)?;
                    let context = Context::read(c, counts, WHAT)
                        .map_err(|e| annotate(e, || format!("`{path}`")))?;
                    Ok(DeviceTreeCon { path, context })
                })?
            }
        }
    }
    Ok((sids, x))
}
