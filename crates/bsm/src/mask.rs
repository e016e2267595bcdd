//! Audit masks and their text form (`lo,+fr,-fw,^ex,all,no`), as libbsm's
//! `getauditflagsbin` and `getauditflagschar` read and write them.

use crate::config::ClassDb;
use crate::error::MaskError;

/// A preselection mask: classes selected on success and on failure (`au_mask_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Mask {
    /// Classes selected for successful events.
    pub success: u32,
    /// Classes selected for failed events.
    pub failure: u32,
}

impl Mask {
    /// The mask selecting `classes` both ways.
    pub fn both(classes: u32) -> Mask {
        Mask {
            success: classes,
            failure: classes,
        }
    }

    /// Parses a mask string with `getauditflagsbin`'s rules: comma-separated items (empty
    /// ones collapse), each an optional `^` (remove), then `+` (success only) or `-`
    /// (failure only), then an exact class name from `classes`; applied left to right.
    pub fn parse(text: &str, classes: &ClassDb) -> Result<Mask, MaskError> {
        Mask::parse_bytes(text.as_bytes(), classes)
    }

    /// [`Mask::parse`] over raw bytes (configuration files need not be UTF-8).
    pub fn parse_bytes(text: &[u8], classes: &ClassDb) -> Result<Mask, MaskError> {
        let mut m = Mask::default();
        for item in text.split(|&b| b == b',').filter(|i| !i.is_empty()) {
            let (sub, rest) = match item.split_first() {
                Some((b'^', r)) => (true, r),
                _ => (false, item),
            };
            let (succ, fail, name) = match rest.split_first() {
                Some((b'+', r)) => (true, false, r),
                Some((b'-', r)) => (false, true, r),
                _ => (true, true, rest),
            };
            let class = classes.by_name(name).ok_or_else(|| {
                MaskError::UnknownClass(String::from_utf8_lossy(item).into_owned())
            })?;
            if sub {
                if succ {
                    m.success &= !class;
                }
                if fail {
                    m.failure &= !class;
                }
            } else {
                if succ {
                    m.success |= class;
                }
                if fail {
                    m.failure |= class;
                }
            }
        }
        Ok(m)
    }

    /// `getauditflagschar`: the classes (in `audit_class` order, skipping zero masks) wholly
    /// contained in either half, comma-separated. Like libbsm, it never writes the `+`/`-`
    /// prefixes (its prefix test can never be true), so a one-sided mask loses its side.
    pub fn to_text(&self, classes: &ClassDb, verbose: bool) -> String {
        let mut out = Vec::new();
        for c in classes.entries() {
            if c.mask == 0 {
                continue;
            }
            let sel = (c.mask & self.success) == c.mask || (c.mask & self.failure) == c.mask;
            if sel {
                out.push(
                    String::from_utf8_lossy(if verbose { &c.desc } else { &c.name }).into_owned(),
                );
            }
        }
        out.join(",")
    }

    /// Like [`Mask::to_text`] but with the `+`/`-` prefixes libbsm meant to write, so the
    /// text parses back to a mask selecting the same classes on each side.
    pub fn to_text_exact(&self, classes: &ClassDb) -> String {
        let mut out = Vec::new();
        for c in classes.entries() {
            if c.mask == 0 {
                continue;
            }
            let s = (c.mask & self.success) == c.mask;
            let f = (c.mask & self.failure) == c.mask;
            let name = String::from_utf8_lossy(&c.name);
            match (s, f) {
                (true, true) => out.push(name.into_owned()),
                (true, false) => out.push(format!("+{name}")),
                (false, true) => out.push(format!("-{name}")),
                (false, false) => {}
            }
        }
        out.join(",")
    }
}
