//! In-policy labeling for `arbiter.setools`: the initial SIDs and every `*con` table as
//! plain rows in the policy's order (setools walks libsepol's ocontext lists, which keep
//! the file's order), Xen's included. A context crosses as `(user, role, type, range or None)` values;
//! the Python half (`_labeling.py`) builds setools' objects over them.

use super::mls::{range_row, RangeRow};
use super::PolicyDb;
use arbiter_policy::mls::Context;
use arbiter_policy::ocontext::FsUseBehavior;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// A context as it crosses into Python.
type ContextRow = (u32, u32, u32, Option<RangeRow>);

fn context_row(mls: bool, c: &Context) -> ContextRow {
    (
        c.user.index() as u32 + 1,
        c.role.index() as u32 + 1,
        c.ty.index() as u32 + 1,
        mls.then(|| range_row(&c.range)),
    )
}

/// libsepol's `SECURITY_FS_USE_*` number of an fs_use behaviour.
fn fs_use_number(b: FsUseBehavior) -> u32 {
    match b {
        FsUseBehavior::Xattr => 1,
        FsUseBehavior::Trans => 2,
        FsUseBehavior::Task => 3,
        FsUseBehavior::Genfs => 4,
        FsUseBehavior::Mntpoint => 6,
        FsUseBehavior::Other(n) => n,
    }
}

/// Every labeling table, by setools' iterator name: `initialsids` `(sid, context)`,
/// `fs_uses` `(behavior, fs, context)`, `genfscons` `(fs, path, class value or 0,
/// context)`, `portcons` `(protocol, low, high, context)`, `netifcons` `(name, context,
/// packet context)`, `nodecons` `(4 or 6, address bytes, mask bytes, context)` (IPv4 then
/// IPv6, as setools chains them), `ibpkeycons` `(subnet prefix bytes, low, high,
/// context)`, `ibendportcons` `(device, port, context)`.
///
/// With `kind`, only that table (or `target`) is read: the Python side reads each kind
/// when first asked for it, so that the rows of every kind are never alive at once (their
/// peak stayed as free blocks in Python's allocator to the end of a script).
#[pyfunction]
#[pyo3(signature = (db, kind=None))]
pub fn labeling_tables<'py>(
    py: Python<'py>,
    db: &PolicyDb,
    kind: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let p = &*db.model;
    let o = &p.ocontexts;
    let ctx = |c: &Context| context_row(p.mls, c);
    let want = |k: &str| kind.map_or(true, |w| w == k);
    let d = PyDict::new(py);
    if want("initialsids") {
        d.set_item(
            "initialsids",
            o.initial_sids
                .iter()
                .map(|s| (s.sid, ctx(&s.context)))
                .collect::<Vec<_>>(),
        )?;
    }
    if want("fs_uses") {
        d.set_item(
            "fs_uses",
            o.fs_use
                .iter()
                .map(|f| {
                    (
                        fs_use_number(f.behavior),
                        f.fstype.to_string(),
                        ctx(&f.context),
                    )
                })
                .collect::<Vec<_>>(),
        )?;
    }
    if want("genfscons") {
        d.set_item(
            "genfscons",
            p.genfs
                .iter()
                .map(|g| {
                    (
                        g.fstype.to_string(),
                        g.path.to_string(),
                        g.class,
                        ctx(&g.context),
                    )
                })
                .collect::<Vec<_>>(),
        )?;
    }
    if want("portcons") {
        d.set_item(
            "portcons",
            o.ports
                .iter()
                .map(|c| (c.protocol, c.low, c.high, ctx(&c.context)))
                .collect::<Vec<_>>(),
        )?;
    }
    if want("netifcons") {
        d.set_item(
            "netifcons",
            o.netifs
                .iter()
                .map(|n| (n.name.to_string(), ctx(&n.if_context), ctx(&n.msg_context)))
                .collect::<Vec<_>>(),
        )?;
    }
    if want("nodecons") {
        let mut nodes: Vec<(u8, Bound<'py, PyBytes>, Bound<'py, PyBytes>, ContextRow)> = o
            .nodes
            .iter()
            .map(|n| {
                (
                    4,
                    PyBytes::new(py, &n.addr),
                    PyBytes::new(py, &n.mask),
                    ctx(&n.context),
                )
            })
            .collect();
        nodes.extend(o.nodes6.iter().map(|n| {
            (
                6,
                PyBytes::new(py, &n.addr),
                PyBytes::new(py, &n.mask),
                ctx(&n.context),
            )
        }));
        d.set_item("nodecons", nodes)?;
    }
    if want("ibpkeycons") {
        d.set_item(
            "ibpkeycons",
            o.ibpkeys
                .iter()
                .map(|k| {
                    (
                        PyBytes::new(py, &k.subnet_prefix),
                        k.low,
                        k.high,
                        ctx(&k.context),
                    )
                })
                .collect::<Vec<_>>(),
        )?;
    }
    if want("ibendportcons") {
        d.set_item(
            "ibendportcons",
            o.ibendports
                .iter()
                .map(|e| (e.device.to_string(), e.port, ctx(&e.context)))
                .collect::<Vec<_>>(),
        )?;
    }
    xen_tables(&d, p, &want)?;
    Ok(d)
}

/// Xen's tables, by setools' iterator name (empty in a SELinux policy): `pirqcons` `(irq,
/// context)`, `ioportcons` and `iomemcons` `(low, high, context)`, `pcidevicecons`
/// `(device, context)`, `devicetreecons` `(path, context)`; and `target`, libsepol's
/// `target_platform` number (0 SELinux, 1 Xen); those `want` accepts.
fn xen_tables(
    d: &Bound<'_, PyDict>,
    p: &arbiter_policy::Policy,
    want: &dyn Fn(&str) -> bool,
) -> PyResult<()> {
    let x = &p.ocontexts.xen;
    let ctx = |c: &Context| context_row(p.mls, c);
    let target = match p.ocontexts.platform {
        arbiter_policy::ocontext::Platform::Selinux => 0u8,
        arbiter_policy::ocontext::Platform::Xen => 1,
    };
    if want("target") {
        d.set_item("target", target)?;
    }
    if want("pirqcons") {
        d.set_item(
            "pirqcons",
            x.pirqs
                .iter()
                .map(|c| (c.pirq, ctx(&c.context)))
                .collect::<Vec<_>>(),
        )?;
    }
    if want("ioportcons") {
        d.set_item(
            "ioportcons",
            x.ioports
                .iter()
                .map(|c| (c.low, c.high, ctx(&c.context)))
                .collect::<Vec<_>>(),
        )?;
    }
    if want("iomemcons") {
        d.set_item(
            "iomemcons",
            x.iomems
                .iter()
                .map(|c| (c.low, c.high, ctx(&c.context)))
                .collect::<Vec<_>>(),
        )?;
    }
    if want("pcidevicecons") {
        d.set_item(
            "pcidevicecons",
            x.pci_devices
                .iter()
                .map(|c| (c.device, ctx(&c.context)))
                .collect::<Vec<_>>(),
        )?;
    }
    if want("devicetreecons") {
        d.set_item(
            "devicetreecons",
            x.device_trees
                .iter()
                .map(|c| (c.path.to_string(), ctx(&c.context)))
                .collect::<Vec<_>>(),
        )?;
    }
    Ok(())
}
