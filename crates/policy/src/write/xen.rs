//! Writing a Xen policy's object contexts (libsepol's `ocontext_write_xen`) and refusing
//! what a Xen policy cannot hold: Linux object contexts, extended permissions (libsepol
//! refuses them for any target but SELinux), versions without a Xen layout.
//!
//! Both layouts write these tables in the model's order, which a compiler builds as
//! libsepol does (sorted as `cil_post` sorts them).

use super::{len32, Unsupported, WriteError, Writer};
use crate::xen::{Platform, XEN_DEVICETREE_VERSION};

impl Writer<'_> {
    /// Checks, before anything is written, that the policy's content fits its platform.
    pub(super) fn check_platform(&mut self) -> Result<(), WriteError> {
        let p = self.p;
        let o = &p.ocontexts;
        let mismatch = |what: String| WriteError::PlatformMismatch {
            platform: o.platform,
            what,
        };
        match o.platform {
            Platform::Selinux => {
                if !o.xen.is_empty() {
                    return Err(mismatch("Xen object contexts".into()));
                }
            }
            Platform::Xen => {
                let linux = [
                    (o.fs.len(), "filesystem"),
                    (o.ports.len(), "port"),
                    (o.netifs.len(), "network interface"),
                    (o.nodes.len(), "node"),
                    (o.fs_use.len(), "fs_use"),
                    (o.nodes6.len(), "IPv6 node"),
                    (o.ibpkeys.len(), "InfiniBand partition key"),
                    (o.ibendports.len(), "InfiniBand end port"),
                ];
                if let Some((n, what)) = linux.iter().find(|(n, _)| *n > 0) {
                    return Err(mismatch(format!(
                        "{n} {what} contexts (Linux object contexts)"
                    )));
                }
                let xperms = p.avtab.xperms.len() + p.cond_avtab.xperms.len();
                if xperms > 0 {
                    return Err(mismatch(format!(
                        "{xperms} extended-permission rules (libsepol writes them for SELinux only)"
                    )));
                }
                if crate::xen::xen_ocon_num(self.v).is_none() {
                    return Err(WriteError::UnsupportedXenVersion { version: self.v });
                }
            }
        }
        Ok(())
    }

    /// The Xen tables after the initial SIDs. Below version 30 I/O memory addresses are
    /// 32-bit (an address above is refused, as libsepol does) and device-tree contexts
    /// have no table (libsepol leaves them out silently; listed as dropped).
    pub(super) fn xen_ocontexts(&mut self) -> Result<(), WriteError> {
        let x = &self.p.ocontexts.xen;
        let wide = self.v >= XEN_DEVICETREE_VERSION;
        self.out.u32(len32(x.pirqs.len(), "PIRQ context")?);
        for c in &x.pirqs {
            self.out.u32(u32::from(c.pirq));
            self.context(&c.context);
        }
        self.out.u32(len32(x.ioports.len(), "I/O port context")?);
        for c in &x.ioports {
            self.out.u32s(&[c.low, c.high]);
            self.context(&c.context);
        }
        self.out.u32(len32(x.iomems.len(), "I/O memory context")?);
        for c in &x.iomems {
            if wide {
                self.out.u64(c.low);
                self.out.u64(c.high);
            } else {
                let (Ok(low), Ok(high)) = (u32::try_from(c.low), u32::try_from(c.high)) else {
                    return Err(WriteError::Invalid(format!(
                        "policy version {} cannot represent I/O memory {:#x}-{:#x} \
                         (32-bit addresses; version {XEN_DEVICETREE_VERSION} has 64)",
                        self.v, c.low, c.high
                    )));
                };
                self.out.u32s(&[low, high]);
            }
            self.context(&c.context);
        }
        self.out
            .u32(len32(x.pci_devices.len(), "PCI device context")?);
        for c in &x.pci_devices {
            self.out.u32(c.device);
            self.context(&c.context);
        }
        if wide {
            self.out
                .u32(len32(x.device_trees.len(), "device-tree context")?);
            for c in &x.device_trees {
                self.out.name(&c.path)?;
                self.context(&c.context);
            }
        } else if !x.device_trees.is_empty() {
            if self.sepol() {
                self.dropped
                    .push(Unsupported::DeviceTreeContexts(x.device_trees.len()));
            } else {
                self.unsupported(Unsupported::DeviceTreeContexts(x.device_trees.len()))?;
            }
        }
        Ok(())
    }
}
