//! TE statements as setools' `statement()` renders them, written into a caller's buffer:
//! one buffer serves every line of a result, and each conditional expression is rendered
//! once, however many rules its block holds.

use super::{MatchBody, TeMatch};
use crate::index::Index;
use crate::render;
use arbiter_policy::avtab::{AvtabKind, Xperms, XpermsKind};
use arbiter_policy::{ClassId, TypeId};

/// Writes the statements of one query's TE matches.
pub(super) struct TeWriter<'a, 'p> {
    index: &'a Index<'p>,
    /// The infix text of each conditional node, rendered on first use.
    conds: Vec<Option<Box<str>>>,
}

impl<'a, 'p> TeWriter<'a, 'p> {
    pub(super) fn new(index: &'a Index<'p>) -> Self {
        TeWriter {
            index,
            conds: vec![None; index.policy().cond_nodes.len()],
        }
    }

    /// Appends the statement of `m` to `buf` (no newline).
    pub(super) fn write(&mut self, buf: &mut String, m: &TeMatch<'p>) {
        let index = self.index;
        write_head(buf, index, m.kind, m.source, m.target, m.class);
        match m.body {
            MatchBody::Perms(bits) => write_perms(
                buf,
                index
                    .sorted_class_perms(m.class)
                    .iter()
                    .filter(|&&(_, bit)| bits & (1 << bit) != 0)
                    .map(|&(name, _)| name),
            ),
            // setools prints neither an extended-permission rule's nor a filename
            // transition's conditional block.
            MatchBody::Xperms(x) => return write_xperms(buf, "ioctl", bitmap_runs(x)),
            MatchBody::Default(t) => {
                buf.push_str(index.type_name(t));
                buf.push(';');
            }
            MatchBody::Filename(t, ft) => {
                buf.push_str(index.type_name(t));
                buf.push(' ');
                buf.push_str(&ft.name);
                buf.push(';');
                return;
            }
        }
        if let Some((n, branch)) = m.cond {
            let text = self.cond_text(n as usize);
            write_cond(buf, text, branch);
        }
    }

    fn cond_text(&mut self, n: usize) -> &str {
        let policy = self.index.policy();
        let Some(slot) = self.conds.get_mut(n) else {
            return "";
        };
        slot.get_or_insert_with(|| {
            let expr = policy.cond_nodes.get(n).map_or(&[][..], |c| &c.expr);
            render::cond_expr(policy, expr).into_boxed_str()
        })
    }
}

/// `KIND SOURCE TARGET:CLASS ` (with the trailing space).
pub(super) fn write_head(
    buf: &mut String,
    index: &Index<'_>,
    kind: AvtabKind,
    source: TypeId,
    target: TypeId,
    class: ClassId,
) {
    buf.push_str(kind.name());
    buf.push(' ');
    buf.push_str(index.type_name(source));
    buf.push(' ');
    buf.push_str(index.type_name(target));
    buf.push(':');
    buf.push_str(index.class_name(class));
    buf.push(' ');
}

/// `NAME;` for one permission, `{ A B };` for more (nothing for none: the scan refuses an
/// empty set, as setools fails on it).
pub(super) fn write_perms<'n>(buf: &mut String, mut names: impl Iterator<Item = &'n str>) {
    let Some(first) = names.next() else {
        return;
    };
    match names.next() {
        None => buf.push_str(first),
        Some(second) => {
            buf.push_str("{ ");
            buf.push_str(first);
            buf.push(' ');
            buf.push_str(second);
            for n in names {
                buf.push(' ');
                buf.push_str(n);
            }
            buf.push_str(" }");
        }
    }
    buf.push(';');
}

/// ` [ EXPR ]:True` or `:False`.
pub(super) fn write_cond(buf: &mut String, expr: &str, branch: bool) {
    buf.push_str(" [ ");
    buf.push_str(expr);
    buf.push_str(" ]:");
    buf.push_str(if branch { "True" } else { "False" });
}

/// `ioctl RUN;` or `ioctl { RUN RUN };`, runs as setools' `IoctlSet` prints them: `{:#06x}`
/// values, a run of consecutive values as `lo-hi`.
pub(super) fn write_xperms(
    buf: &mut String,
    kind: &str,
    runs: impl Iterator<Item = (u16, u16)> + Clone,
) {
    buf.push_str(kind);
    buf.push(' ');
    let many = runs.clone().nth(1).is_some();
    if many {
        buf.push_str("{ ");
    }
    for (i, (lo, hi)) in runs.enumerate() {
        if i > 0 {
            buf.push(' ');
        }
        push_hex4(buf, lo);
        if hi > lo {
            buf.push('-');
            push_hex4(buf, hi);
        }
    }
    buf.push_str(if many { " };" } else { ";" });
}

/// Python's `"{:#06x}".format(v)` for a 16-bit value.
fn push_hex4(buf: &mut String, v: u16) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    buf.push_str("0x");
    for shift in [12, 8, 4, 0] {
        buf.push(char::from(DIGITS[usize::from((v >> shift) & 0xf)]));
    }
}

/// The runs of consecutive values in an ascending list.
pub(super) fn value_runs(values: &[u16]) -> impl Iterator<Item = (u16, u16)> + Clone + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        let lo = *values.get(i)?;
        let mut j = i;
        while j + 1 < values.len() && u32::from(values[j + 1]) == u32::from(values[j]) + 1 {
            j += 1;
        }
        i = j + 1;
        Some((lo, values[j]))
    })
}

/// The runs of an ioctl set straight from its bitmap: consecutive function bits under the
/// driver, or consecutive drivers each standing for all 256 of its functions. Kinds setools
/// does not know yield nothing (the scan has already refused them).
pub(super) fn bitmap_runs(x: &Xperms) -> impl Iterator<Item = (u16, u16)> + Clone + '_ {
    let set = move |bit: u16| x.perms[usize::from(bit / 32)] & (1 << (bit % 32)) != 0;
    let known = matches!(x.kind, XpermsKind::IoctlFunction | XpermsKind::IoctlDriver);
    let mut bit: u16 = if known { 0 } else { 256 };
    std::iter::from_fn(move || {
        while bit < 256 && !set(bit) {
            bit += 1;
        }
        if bit >= 256 {
            return None;
        }
        let lo = bit;
        while bit + 1 < 256 && set(bit + 1) {
            bit += 1;
        }
        let hi = bit;
        bit += 1;
        Some(match x.kind {
            XpermsKind::IoctlDriver => (lo << 8, (hi << 8) | 0xff),
            _ => {
                let d = u16::from(x.driver) << 8;
                (d | lo, d | hi)
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(runs: impl Iterator<Item = (u16, u16)> + Clone) -> String {
        let mut s = String::new();
        write_xperms(&mut s, "ioctl", runs);
        s
    }

    #[test]
    fn xperm_runs_collapse_consecutive_values() {
        assert_eq!(
            text(value_runs(&[0x8900, 0x8901, 0x8902, 0x8910])),
            "ioctl { 0x8900-0x8902 0x8910 };"
        );
        assert_eq!(text(value_runs(&[0xff])), "ioctl 0x00ff;");
    }

    #[test]
    fn bitmap_runs_agree_with_the_expanded_values() {
        let mut perms = [0u32; 8];
        perms[0] = 0b1110_0101;
        perms[7] = 1 << 31;
        for kind in [XpermsKind::IoctlFunction, XpermsKind::IoctlDriver] {
            let x = Xperms {
                kind,
                driver: 0x89,
                perms,
            };
            let values = super::super::xperm_values(kind, 0x89, &perms).unwrap_or_default();
            let from_bits: Vec<_> = bitmap_runs(&x).collect();
            let from_values: Vec<_> = value_runs(&values).collect();
            assert_eq!(from_bits, from_values, "{kind:?}");
        }
    }

    #[test]
    fn one_permission_has_no_braces() {
        let mut s = String::new();
        write_perms(&mut s, ["read"].into_iter());
        s.push(' ');
        write_perms(&mut s, ["open", "read"].into_iter());
        assert_eq!(s, "read; { open read };");
    }
}
