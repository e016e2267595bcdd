//! In-policy labeling for `arbiter.setools`: the initial SIDs and every `*con` table in
//! the policy's order (setools walks libsepol's ocontext lists, which keep the file's
//! order), Xen's included. A table crosses as flat columns, not a tuple per statement: the
//! Python half (`_labeling.py`) builds setools' objects over them, and a tuple per
//! statement, dead once the objects were built, stayed in CPython's tuple free lists to
//! the end of a script.

use super::mls::{range_row, RangeRow};
use super::PolicyDb;
use arbiter_policy::mls::Context;
use arbiter_policy::ocontext::FsUseBehavior;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use std::collections::HashMap;

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

/// One table being flattened: its numbers (a fixed count per statement), strings and
/// byte strings in the statements' order, and the distinct ranges its contexts name.
struct Table<'py> {
    py: Python<'py>,
    mls: bool,
    ints: Vec<u64>,
    strs: Vec<Bound<'py, PyString>>,
    blobs: Vec<Bound<'py, PyBytes>>,
    ranges: Vec<RangeRow>,
    range_index: HashMap<RangeRow, u64>,
}

impl<'py> Table<'py> {
    fn new(py: Python<'py>, mls: bool) -> Self {
        Table {
            py,
            mls,
            ints: Vec::new(),
            strs: Vec::new(),
            blobs: Vec::new(),
            ranges: Vec::new(),
            range_index: HashMap::new(),
        }
    }

    fn int(&mut self, v: impl Into<u64>) -> &mut Self {
        self.ints.push(v.into());
        self
    }

    fn str(&mut self, s: &str) -> &mut Self {
        self.strs.push(PyString::new(self.py, s));
        self
    }

    fn blob(&mut self, b: &[u8]) -> &mut Self {
        self.blobs.push(PyBytes::new(self.py, b));
        self
    }

    /// A context: user, role and type values, and its range's position in `ranges` plus
    /// one (0 without MLS).
    fn ctx(&mut self, c: &Context) -> &mut Self {
        let range = if self.mls {
            let row = range_row(&c.range);
            match self.range_index.get(&row) {
                Some(&n) => n,
                None => {
                    self.ranges.push(row.clone());
                    let n = self.ranges.len() as u64;
                    self.range_index.insert(row, n);
                    n
                }
            }
        } else {
            0
        };
        self.ints.extend([
            c.user.index() as u64 + 1,
            c.role.index() as u64 + 1,
            c.ty.index() as u64 + 1,
            range,
        ]);
        self
    }

    /// `(numbers, strings, byte strings, ranges)`: the numbers as native-endian `u64`
    /// bytes (`memoryview(numbers).cast("Q")`).
    fn finish(self) -> PyResult<Bound<'py, PyTuple>> {
        let bytes: Vec<u8> = self.ints.iter().flat_map(|v| v.to_ne_bytes()).collect();
        PyTuple::new(
            self.py,
            [
                PyBytes::new(self.py, &bytes).into_any(),
                PyList::new(self.py, self.strs)?.into_any(),
                PyList::new(self.py, self.blobs)?.into_any(),
                PyList::new(self.py, self.ranges)?.into_any(),
            ],
        )
    }
}

/// Every labeling table, by setools' iterator name, as `(numbers, strings, byte strings,
/// ranges)` (`Table::finish`): per statement, the numbers listed below, a context being
/// four (user, role and type values, and its range's position in `ranges` plus one, 0
/// without MLS); the strings and byte strings likewise in order; `ranges` the distinct
/// `(low, high)` level rows the contexts name.
///
/// `initialsids` sid, context; `fs_uses` behavior, context (string fs); `genfscons` class
/// value or 0, context (strings fs, path); `portcons` protocol, low, high, context;
/// `netifcons` context, packet context (string name); `nodecons` 4 or 6, context (byte
/// strings address, mask; IPv4 then IPv6, as setools chains them); `ibpkeycons` low,
/// high, context (byte string subnet prefix); `ibendportcons` port, context (string
/// device).
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
    let out = Tables {
        d: PyDict::new(py),
        kind,
        mls: p.mls,
    };
    out.put("initialsids", |t| {
        for s in &o.initial_sids {
            t.int(s.sid).ctx(&s.context);
        }
    })?;
    out.put("fs_uses", |t| {
        for f in &o.fs_use {
            t.int(fs_use_number(f.behavior))
                .ctx(&f.context)
                .str(&f.fstype);
        }
    })?;
    out.put("genfscons", |t| {
        for g in &p.genfs {
            t.int(g.class).ctx(&g.context).str(&g.fstype).str(&g.path);
        }
    })?;
    out.put("portcons", |t| {
        for c in &o.ports {
            t.int(c.protocol).int(c.low).int(c.high).ctx(&c.context);
        }
    })?;
    out.put("netifcons", |t| {
        for n in &o.netifs {
            t.ctx(&n.if_context).ctx(&n.msg_context).str(&n.name);
        }
    })?;
    out.put("nodecons", |t| {
        for n in &o.nodes {
            t.int(4u8).ctx(&n.context).blob(&n.addr).blob(&n.mask);
        }
        for n in &o.nodes6 {
            t.int(6u8).ctx(&n.context).blob(&n.addr).blob(&n.mask);
        }
    })?;
    out.put("ibpkeycons", |t| {
        for k in &o.ibpkeys {
            t.int(k.low)
                .int(k.high)
                .ctx(&k.context)
                .blob(&k.subnet_prefix);
        }
    })?;
    out.put("ibendportcons", |t| {
        for e in &o.ibendports {
            t.int(e.port).ctx(&e.context).str(&e.device);
        }
    })?;
    xen_tables(&out, p)?;
    Ok(out.d)
}

/// The dictionary `labeling_tables` fills: the tables asked for (`kind`, or all), each
/// built by [`Tables::put`].
struct Tables<'py, 'k> {
    d: Bound<'py, PyDict>,
    kind: Option<&'k str>,
    mls: bool,
}

impl<'py> Tables<'py, '_> {
    fn wants(&self, name: &str) -> bool {
        self.kind.map_or(true, |k| k == name)
    }

    /// Adds table `name`, its statements written by `fill`, when it is asked for.
    fn put(&self, name: &str, fill: impl FnOnce(&mut Table<'py>)) -> PyResult<()> {
        if self.wants(name) {
            let mut t = Table::new(self.d.py(), self.mls);
            fill(&mut t);
            self.d.set_item(name, t.finish()?)?;
        }
        Ok(())
    }
}

/// Xen's tables, by setools' iterator name (empty in a SELinux policy), as
/// `labeling_tables`' (numbers per statement): `pirqcons` irq, context; `ioportcons` and
/// `iomemcons` low, high, context; `pcidevicecons` device, context; `devicetreecons`
/// context (string path); and `target`, libsepol's `target_platform` number (0 SELinux,
/// 1 Xen); those asked for.
fn xen_tables(out: &Tables<'_, '_>, p: &arbiter_policy::Policy) -> PyResult<()> {
    let x = &p.ocontexts.xen;
    let target = match p.ocontexts.platform {
        arbiter_policy::ocontext::Platform::Selinux => 0u8,
        arbiter_policy::ocontext::Platform::Xen => 1,
    };
    if out.wants("target") {
        out.d.set_item("target", target)?;
    }
    out.put("pirqcons", |t| {
        for c in &x.pirqs {
            t.int(c.pirq).ctx(&c.context);
        }
    })?;
    out.put("ioportcons", |t| {
        for c in &x.ioports {
            t.int(c.low).int(c.high).ctx(&c.context);
        }
    })?;
    out.put("iomemcons", |t| {
        for c in &x.iomems {
            t.int(c.low).int(c.high).ctx(&c.context);
        }
    })?;
    out.put("pcidevicecons", |t| {
        for c in &x.pci_devices {
            t.int(c.device).ctx(&c.context);
        }
    })?;
    out.put("devicetreecons", |t| {
        for c in &x.device_trees {
            t.ctx(&c.context).str(&c.path);
        }
    })?;
    Ok(())
}
