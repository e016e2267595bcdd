//! The access vector table: TE rules after attribute handling, one entry per
//! (source, target, class, kind) key, as the compiler wrote them.

use crate::ids::{ClassId, TypeId};

/// The kind of an access vector table entry (the file's `specified` word, one bit).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u16)]
pub enum AvtabKind {
    Allowed = 0x0001,
    AuditAllow = 0x0002,
    /// Stored as the bits to audit on denial: a `dontaudit` rule is the complement.
    AuditDeny = 0x0004,
    Transition = 0x0010,
    Member = 0x0020,
    Change = 0x0040,
    XpermsAllowed = 0x0100,
    XpermsAuditAllow = 0x0200,
    XpermsDontAudit = 0x0400,
}

impl AvtabKind {
    /// From the `specified` word with the enabled flag (0x8000) cleared; `None` unless exactly
    /// one known bit is set.
    pub fn from_bits(bits: u16) -> Option<Self> {
        use AvtabKind::*;
        Some(match bits {
            0x0001 => Allowed,
            0x0002 => AuditAllow,
            0x0004 => AuditDeny,
            0x0010 => Transition,
            0x0020 => Member,
            0x0040 => Change,
            0x0100 => XpermsAllowed,
            0x0200 => XpermsAuditAllow,
            0x0400 => XpermsDontAudit,
            _ => return None,
        })
    }

    pub fn bits(self) -> u16 {
        self as u16
    }

    /// type_transition / type_member / type_change: the datum is a type.
    pub fn is_type_rule(self) -> bool {
        matches!(
            self,
            AvtabKind::Transition | AvtabKind::Member | AvtabKind::Change
        )
    }

    /// The datum is an extended-permission set.
    pub fn is_xperms(self) -> bool {
        matches!(
            self,
            AvtabKind::XpermsAllowed | AvtabKind::XpermsAuditAllow | AvtabKind::XpermsDontAudit
        )
    }

    /// The policy-language keyword of the rule kind, for messages.
    pub fn name(self) -> &'static str {
        match self {
            AvtabKind::Allowed => "allow",
            AvtabKind::AuditAllow => "auditallow",
            AvtabKind::AuditDeny => "dontaudit",
            AvtabKind::Transition => "type_transition",
            AvtabKind::Member => "type_member",
            AvtabKind::Change => "type_change",
            AvtabKind::XpermsAllowed => "allowxperm",
            AvtabKind::XpermsAuditAllow => "auditallowxperm",
            AvtabKind::XpermsDontAudit => "dontauditxperm",
        }
    }
}

/// The key of an entry. Source and target may be types or attributes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AvtabKey {
    pub source: TypeId,
    pub target: TypeId,
    pub class: ClassId,
    pub kind: AvtabKind,
}

/// Which extended permissions an xperms entry carries (the datum's `specified` byte).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum XpermsKind {
    /// `perms` are the 256 function codes of one ioctl driver (`driver`); byte 1.
    IoctlFunction,
    /// `perms` are 256 whole ioctl drivers; byte 2.
    IoctlDriver,
    /// `perms` are netlink message types within the high byte `driver` (format >= 34 era);
    /// byte 3.
    Nlmsg,
    /// Any other byte. The kernel loads such entries (with a warning) so that policies
    /// written for a newer kernel still load, and its decision code matches none of its
    /// cases for them; they are kept here so nothing read is lost.
    Other(u8),
}

impl XpermsKind {
    /// From the datum's `specified` byte.
    pub fn from_u8(v: u8) -> Self {
        match v {
            1 => XpermsKind::IoctlFunction,
            2 => XpermsKind::IoctlDriver,
            3 => XpermsKind::Nlmsg,
            v => XpermsKind::Other(v),
        }
    }

    /// The `specified` byte as stored.
    pub fn value(self) -> u8 {
        match self {
            XpermsKind::IoctlFunction => 1,
            XpermsKind::IoctlDriver => 2,
            XpermsKind::Nlmsg => 3,
            XpermsKind::Other(v) => v,
        }
    }
}

/// An extended-permission set: 256 bits under one driver byte.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Xperms {
    pub kind: XpermsKind,
    pub driver: u8,
    pub perms: [u32; 8],
}

/// An entry's value: permission bits, a new type, or extended permissions.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AvtabDatum {
    /// allowed / auditallow: granted bits; auditdeny: bits still audited on denial.
    Perms(u32),
    /// The new type of a type_transition / type_member / type_change rule.
    Type(TypeId),
    /// Index into [`Avtab::xperms`].
    Xperms(u32),
}

/// One entry.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct AvtabEntry {
    pub key: AvtabKey,
    pub datum: AvtabDatum,
}

/// A table of entries in file order, extended permissions stored out of line so that the
/// common entry stays small.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Avtab {
    pub entries: Vec<AvtabEntry>,
    pub xperms: Vec<Xperms>,
}

impl Avtab {
    /// The extended permissions of an entry whose datum is [`AvtabDatum::Xperms`].
    pub fn xperms_of(&self, d: AvtabDatum) -> Option<&Xperms> {
        match d {
            AvtabDatum::Xperms(i) => self.xperms.get(i as usize),
            _ => None,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl Avtab {
    /// Appends an entry, storing extended permissions out of line.
    pub(crate) fn push(&mut self, key: AvtabKey, value: ItemValue) {
        let datum = match value {
            ItemValue::Perms(p) => AvtabDatum::Perms(p),
            ItemValue::Type(t) => AvtabDatum::Type(t),
            ItemValue::Xperms(x) => {
                // Entries are bounded by the input size (12 bytes each at least), so the
                // index always fits.
                let i = self.xperms.len() as u32;
                self.xperms.push(x);
                AvtabDatum::Xperms(i)
            }
        };
        self.entries.push(AvtabEntry { key, datum });
    }
}

use std::collections::HashSet;

use crate::cursor::Cursor;
use crate::error::{PolicyError, Result};
use crate::policy::version;
use crate::read::Counts;

/// Kind bits of the `specified` word (the kernel's `AVTAB_AV`, `AVTAB_TYPE`, `AVTAB_XPERMS`).
const AVTAB_AV: u16 = 0x0007;
const AVTAB_TYPE: u16 = 0x0070;
const AVTAB_XPERMS: u16 = 0x0700;
/// The "rule is active" flag the compiler sets on conditional entries (format >= 20).
const AVTAB_ENABLED: u16 = 0x8000;
/// The same flag in the 32-bit kind word of the format before version 20.
const AVTAB_ENABLED_OLD: u32 = 0x8000_0000;
/// Every bit a `specified` word may carry; the kernel refuses any other.
const SPECIFIER_MASK: u16 = AVTAB_AV | AVTAB_TYPE | AVTAB_XPERMS | AVTAB_ENABLED;

/// The order in which the format before version 20 stores one datum per kind bit (the
/// kernel's `spec_order`). Its datum order is not the bit order, so it must be followed.
const SPEC_ORDER: [AvtabKind; 9] = [
    AvtabKind::Allowed,
    AvtabKind::AuditDeny,
    AvtabKind::AuditAllow,
    AvtabKind::Transition,
    AvtabKind::Change,
    AvtabKind::Member,
    AvtabKind::XpermsAllowed,
    AvtabKind::XpermsAuditAllow,
    AvtabKind::XpermsDontAudit,
];

/// What `read_item` calls an entry in errors, for the unconditional table.
const ENTRY: &str = "access vector table entry";

/// An entry's value as read, before a table stores it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ItemValue {
    Perms(u32),
    Type(TypeId),
    Xperms(Xperms),
}

/// One entry as read. The table it goes into decides whether it may be kept: the
/// unconditional table and the conditional lists have different duplicate rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Item {
    pub key: AvtabKey,
    pub value: ItemValue,
    /// The stored enabled flag (`0x8000`, or `0x80000000` before version 20).
    pub enabled: bool,
    /// Where the entry starts, for error messages.
    pub offset: usize,
}

/// Packs a key into one word (the kind as its single bit), for duplicate detection.
pub(crate) fn key_word(k: &AvtabKey) -> u64 {
    (u64::from(k.source.value()) << 48)
        | (u64::from(k.target.value()) << 32)
        | (u64::from(k.class.value()) << 16)
        | u64::from(k.kind.bits())
}

/// Names a key in messages. Only values are known while the rules are read (the names are
/// in the symbol tables), so the key is given by value.
pub(crate) fn describe(k: &AvtabKey) -> String {
    format!(
        "{} rule (source type {}, target type {}, class {})",
        k.kind.name(),
        k.source,
        k.target,
        k.class
    )
}

/// The smallest encoding of one entry: from version 20 four u16 and one datum word (12
/// bytes); before, a word count, three key words, the kind word and one datum (24 bytes).
pub(crate) fn min_item_size(format_version: u32) -> usize {
    if format_version >= version::AVTAB {
        12
    } else {
        24
    }
}

/// Prefixes the detail of a [`PolicyError::Invalid`] with the record it concerns ("entry
/// 1234 of 120000", "filename transition `foo`"): the error's `what` is a fixed name, and
/// the offset alone does not say which of many records is at fault. Other errors already
/// carry the offset, which is as precise.
pub(crate) fn annotate(e: PolicyError, subject: impl FnOnce() -> String) -> PolicyError {
    match e {
        PolicyError::Invalid {
            what,
            offset,
            detail,
        } => PolicyError::Invalid {
            what,
            offset,
            detail: format!("{}: {detail}", subject()),
        },
        e => e,
    }
}

/// [`annotate`] with an entry's position in its table.
pub(crate) fn in_entry(e: PolicyError, index: usize, count: usize) -> PolicyError {
    annotate(e, || format!("entry {index} of {count}"))
}

/// Reads one stored entry as the kernel's `avtab_read_item` does, with its checks, and
/// hands each resulting entry to `insert` (one, or before version 20 one per kind bit).
///
/// `conditional` says the entry belongs to a conditional list, where extended permissions
/// need format version 34. Beyond the kernel, the datum of a type rule is checked to be a
/// type in the old format too (the kernel checks it only from version 20), since the model
/// stores it as a [`TypeId`].
pub(crate) fn read_item(
    c: &mut Cursor<'_>,
    counts: &Counts,
    conditional: bool,
    what: &'static str,
    mut insert: impl FnMut(&Cursor<'_>, Item) -> Result<()>,
) -> Result<()> {
    if counts.version < version::AVTAB {
        return read_item_old(c, counts, what, insert);
    }
    let at = c.offset();
    let source = c.u16(what)?;
    let target = c.u16(what)?;
    let class = c.u16(what)?;
    let specified = c.u16(what)?;
    let source = counts.type_id(c, at, source.into(), what)?;
    let target = counts.type_id(c, at + 2, target.into(), what)?;
    let class = counts.class_id(c, at + 4, class.into(), what)?;

    let bits = specified & !AVTAB_ENABLED;
    if bits.count_ones() != 1 {
        return Err(c.invalid_at(
            at + 6,
            what,
            format!("specifier {specified:#06x} does not name exactly one rule kind"),
        ));
    }
    let kind = match AvtabKind::from_bits(bits) {
        Some(kind) if specified & !SPECIFIER_MASK == 0 => kind,
        _ => {
            return Err(c.invalid_at(
                at + 6,
                what,
                format!("specifier {specified:#06x} names no known rule kind"),
            ))
        }
    };

    let value = if kind.is_xperms() {
        if counts.version < version::XPERMS_IOCTL {
            return Err(c.invalid_at(
                at + 6,
                what,
                format!(
                    "{} rule needs format version {} (policy is version {})",
                    kind.name(),
                    version::XPERMS_IOCTL,
                    counts.version
                ),
            ));
        }
        if conditional && counts.version < version::COND_XPERMS {
            return Err(c.invalid_at(
                at + 6,
                what,
                format!(
                    "{} rule inside a conditional needs format version {} (policy is version {})",
                    kind.name(),
                    version::COND_XPERMS,
                    counts.version
                ),
            ));
        }
        let specified = c.u8(what)?;
        let driver = c.u8(what)?;
        let perms = c.u32s::<8>(what)?;
        ItemValue::Xperms(Xperms {
            kind: XpermsKind::from_u8(specified),
            driver,
            perms,
        })
    } else {
        let datum_at = c.offset();
        let data = c.u32(what)?;
        if kind.is_type_rule() {
            ItemValue::Type(counts.type_id(c, datum_at, data, what)?)
        } else {
            ItemValue::Perms(data)
        }
    };
    insert(
        c,
        Item {
            key: AvtabKey {
                source,
                target,
                class,
                kind,
            },
            value,
            enabled: specified & AVTAB_ENABLED != 0,
            offset: at,
        },
    )
}

/// The format before version 20: a word count (5 to 8), source, target, class, a 32-bit
/// kind word, then one datum per kind bit in [`SPEC_ORDER`].
fn read_item_old(
    c: &mut Cursor<'_>,
    counts: &Counts,
    what: &'static str,
    mut insert: impl FnMut(&Cursor<'_>, Item) -> Result<()>,
) -> Result<()> {
    let at = c.offset();
    let nwords = c.u32(what)?;
    if !(5..=8).contains(&nwords) {
        return Err(c.invalid_at(
            at,
            what,
            format!("entry holds {nwords} words, expected 5 to 8"),
        ));
    }
    let words_at = c.offset();
    let raw = c.bytes(4 * nwords as usize, what)?;
    let word =
        |i: usize| u32::from_le_bytes([raw[4 * i], raw[4 * i + 1], raw[4 * i + 2], raw[4 * i + 3]]);
    for (i, field) in ["source type", "target type", "class"].iter().enumerate() {
        if word(i) > u32::from(u16::MAX) {
            return Err(c.invalid_at(
                words_at + 4 * i,
                what,
                format!("{field} value {} does not fit in 16 bits", word(i)),
            ));
        }
    }
    let source = counts.type_id(c, words_at, word(0), what)?;
    let target = counts.type_id(c, words_at + 4, word(1), what)?;
    let class = counts.class_id(c, words_at + 8, word(2), what)?;
    let val = word(3);
    let kind_at = words_at + 12;
    let (av, ty, xp) = (
        u32::from(AVTAB_AV),
        u32::from(AVTAB_TYPE),
        u32::from(AVTAB_XPERMS),
    );
    if val & (av | ty) == 0 {
        return Err(c.invalid_at(
            kind_at,
            what,
            format!("kind word {val:#010x} names no rule kind"),
        ));
    }
    if val & av != 0 && val & ty != 0 {
        return Err(c.invalid_at(
            kind_at,
            what,
            format!("kind word {val:#010x} mixes access vector and type rule kinds"),
        ));
    }
    if val & xp != 0 {
        return Err(c.invalid_at(
            kind_at,
            what,
            format!(
                "kind word {val:#010x} names extended permissions, which need format version 30"
            ),
        ));
    }
    let enabled = val & AVTAB_ENABLED_OLD != 0;
    let mut used = 4usize;
    for kind in SPEC_ORDER {
        if val & u32::from(kind.bits()) == 0 {
            continue;
        }
        if used >= nwords as usize {
            return Err(c.invalid_at(
                at,
                what,
                format!("kind word {val:#010x} needs more than the entry's {nwords} words"),
            ));
        }
        let data = word(used);
        let data_at = words_at + 4 * used;
        used += 1;
        let value = if kind.is_type_rule() {
            ItemValue::Type(counts.type_id(c, data_at, data, what)?)
        } else {
            ItemValue::Perms(data)
        };
        let key = AvtabKey {
            source,
            target,
            class,
            kind,
        };
        insert(
            c,
            Item {
                key,
                value,
                enabled,
                offset: at,
            },
        )?;
    }
    if used != nwords as usize {
        return Err(c.invalid_at(
            at,
            what,
            format!("entry holds {nwords} words but its kind word {val:#010x} uses {used}"),
        ));
    }
    Ok(())
}

/// Reads the unconditional access vector table, as the kernel's `avtab_read` with
/// `avtab_insert`.
///
/// An empty table is refused, as both the kernel and libsepol refuse it: a policy without
/// a single unconditional rule cannot be a compiled kernel policy. A key may occur once per
/// kind, except extended-permission rules, which the compiler splits into one entry per
/// driver under the same key. Entries keep file order; the table is sized from the checked
/// count, so it is allocated once.
///
/// Beyond the kernel, an `allow`, `auditallow` or `dontaudit` entry carrying the
/// conditional "enabled" flag is refused: the kernel loads it but, comparing the whole
/// specifier word, never applies it, and the model keeps no flag to say so. No compiler
/// writes such an entry.
pub(crate) fn read(c: &mut Cursor<'_>, counts: &Counts) -> Result<Avtab> {
    const WHAT: &str = "access vector table";
    let count_at = c.offset();
    let nel = c.u32(WHAT)?;
    if nel == 0 {
        return Err(c.invalid_at(
            count_at,
            WHAT,
            "the unconditional rule table is empty".into(),
        ));
    }
    let n = c.check_count(nel, min_item_size(counts.version), WHAT)?;
    let mut table = Avtab {
        entries: Vec::with_capacity(n),
        xperms: Vec::new(),
    };
    let mut seen: HashSet<u64> = HashSet::with_capacity(n);
    for i in 0..n {
        read_item(c, counts, false, ENTRY, |c, item| {
            let kind = item.key.kind;
            if item.enabled && !kind.is_xperms() && !kind.is_type_rule() {
                return Err(c.invalid_at(
                    item.offset,
                    ENTRY,
                    format!(
                        "unconditional {} carries the conditional enabled flag",
                        describe(&item.key)
                    ),
                ));
            }
            if !kind.is_xperms() && !seen.insert(key_word(&item.key)) {
                return Err(c.invalid_at(
                    item.offset,
                    ENTRY,
                    format!("duplicate {}", describe(&item.key)),
                ));
            }
            table.push(item.key, item.value);
            Ok(())
        })
        .map_err(|e| in_entry(e, i, n))?;
    }
    table.entries.shrink_to_fit();
    table.xperms.shrink_to_fit();
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testbytes::{counts, W};

    fn tid(v: u16) -> TypeId {
        TypeId::new(v).unwrap()
    }

    fn cid(v: u16) -> ClassId {
        ClassId::new(v).unwrap()
    }

    fn key(s: u16, t: u16, c: u16, kind: AvtabKind) -> AvtabKey {
        AvtabKey {
            source: tid(s),
            target: tid(t),
            class: cid(c),
            kind,
        }
    }

    /// A format >= 20 entry with a one-word datum.
    fn entry(w: &mut W, s: u16, t: u16, c: u16, spec: u16, datum: u32) {
        w.u16(s).u16(t).u16(c).u16(spec).u32(datum);
    }

    /// A format >= 30 extended-permission entry.
    fn xentry(w: &mut W, s: u16, t: u16, spec: u16, kind: u8, driver: u8) {
        w.u16(s).u16(t).u16(1).u16(spec).u8(kind).u8(driver);
        w.u32s(&[1, 0, 0, 0, 0, 0, 0, 0x8000_0000]);
    }

    fn read_at(version: u32, bytes: &[u8]) -> Result<Avtab> {
        let mut c = Cursor::new(bytes);
        let t = read(&mut c, &counts(version))?;
        assert_eq!(c.remaining(), 0, "table not read to its end");
        Ok(t)
    }

    fn table(version: u32, n: u32, body: impl FnOnce(&mut W)) -> Result<Avtab> {
        let mut w = W::new();
        w.u32(n);
        body(&mut w);
        read_at(version, &w.0)
    }

    fn invalid_detail(r: Result<Avtab>) -> String {
        match r {
            Err(PolicyError::Invalid { detail, .. }) => detail,
            other => panic!("expected an Invalid error, got {other:?}"),
        }
    }

    #[test]
    fn reads_entries_in_file_order_with_their_data() {
        let t = table(33, 3, |w| {
            entry(w, 1, 2, 3, 0x0001, 0x5);
            entry(w, 1, 2, 3, 0x0010, 7);
            entry(w, 4, 5, 6, 0x0004, 0xffff_fffe);
        })
        .unwrap();
        assert_eq!(
            t.entries,
            vec![
                AvtabEntry {
                    key: key(1, 2, 3, AvtabKind::Allowed),
                    datum: AvtabDatum::Perms(5)
                },
                AvtabEntry {
                    key: key(1, 2, 3, AvtabKind::Transition),
                    datum: AvtabDatum::Type(tid(7))
                },
                AvtabEntry {
                    key: key(4, 5, 6, AvtabKind::AuditDeny),
                    datum: AvtabDatum::Perms(0xffff_fffe)
                },
            ]
        );
        assert!(t.xperms.is_empty());
    }

    #[test]
    fn old_format_entry_with_two_spec_bits_yields_two_entries() {
        // allow + dontaudit: the data follow the kernel's order (allowed, then auditdeny).
        let t = table(19, 1, |w| {
            w.u32s(&[6, 1, 2, 3, 0x0005, 0x11, 0x22]);
        })
        .unwrap();
        assert_eq!(
            t.entries,
            vec![
                AvtabEntry {
                    key: key(1, 2, 3, AvtabKind::Allowed),
                    datum: AvtabDatum::Perms(0x11)
                },
                AvtabEntry {
                    key: key(1, 2, 3, AvtabKind::AuditDeny),
                    datum: AvtabDatum::Perms(0x22)
                },
            ]
        );
    }

    #[test]
    fn old_format_data_follow_spec_order_not_bit_order() {
        // allowed (0x1), auditallow (0x2), auditdeny (0x4) are stored allowed, auditdeny,
        // auditallow.
        let t = table(15, 1, |w| {
            w.u32s(&[7, 1, 2, 3, 0x0007, 0xa, 0xd, 0xaa]);
        })
        .unwrap();
        let got: Vec<_> = t.entries.iter().map(|e| (e.key.kind, e.datum)).collect();
        assert_eq!(
            got,
            vec![
                (AvtabKind::Allowed, AvtabDatum::Perms(0xa)),
                (AvtabKind::AuditDeny, AvtabDatum::Perms(0xd)),
                (AvtabKind::AuditAllow, AvtabDatum::Perms(0xaa)),
            ]
        );
    }

    #[test]
    fn old_format_word_count_must_match_its_kind_bits() {
        let too_many_words = table(19, 1, |w| {
            w.u32s(&[6, 1, 2, 3, 0x0001, 0x11, 0x22]);
        });
        assert!(invalid_detail(too_many_words).contains("uses 5"));
        let too_few_words = table(19, 1, |w| {
            w.u32s(&[5, 1, 2, 3, 0x0003, 0x11]);
        });
        assert!(invalid_detail(too_few_words).contains("needs more"));
        let out_of_range = table(19, 1, |w| {
            w.u32s(&[9, 1, 2, 3, 0x0001, 0, 0, 0, 0]);
        });
        assert!(invalid_detail(out_of_range).contains("expected 5 to 8"));
    }

    #[test]
    fn old_format_refuses_mixed_empty_and_xperms_kinds() {
        for val in [0x0011, 0x0008, 0x0100] {
            let r = table(19, 1, |w| {
                w.u32s(&[6, 1, 2, 3, val, 1, 1]);
            });
            assert!(matches!(r, Err(PolicyError::Invalid { .. })), "{val:#x}");
        }
    }

    #[test]
    fn old_format_key_words_must_fit_sixteen_bits() {
        let r = table(19, 1, |w| {
            w.u32s(&[5, 0x1_0001, 2, 3, 0x0001, 1]);
        });
        assert!(invalid_detail(r).contains("does not fit in 16 bits"));
    }

    #[test]
    fn old_format_enabled_flag_marks_every_entry() {
        // A conditional-style flag on a type rule is accepted in the unconditional table.
        let t = table(19, 1, |w| {
            w.u32s(&[5, 1, 2, 3, 0x8000_0010, 9]);
        })
        .unwrap();
        assert_eq!(t.entries[0].datum, AvtabDatum::Type(tid(9)));
    }

    #[test]
    fn entry_with_two_kind_bits_is_rejected() {
        let r = table(33, 1, |w| entry(w, 1, 2, 3, 0x0003, 1));
        assert!(invalid_detail(r).contains("exactly one rule kind"));
    }

    #[test]
    fn unknown_specifier_bit_is_rejected() {
        for spec in [0x0008, 0x0080, 0x0800, 0x1000] {
            let r = table(33, 1, |w| entry(w, 1, 2, 3, spec, 1));
            assert!(
                invalid_detail(r).contains("no known rule kind"),
                "{spec:#x}"
            );
        }
    }

    #[test]
    fn enabled_flag_is_not_part_of_the_kind() {
        let t = table(33, 1, |w| entry(w, 1, 2, 3, 0x8040, 4)).unwrap();
        assert_eq!(t.entries[0].key.kind, AvtabKind::Change);
    }

    #[test]
    fn enabled_flag_on_unconditional_allow_is_rejected() {
        let r = table(33, 1, |w| entry(w, 1, 2, 3, 0x8001, 4));
        assert!(invalid_detail(r).contains("enabled flag"));
    }

    #[test]
    fn xperms_need_version_30() {
        let r = table(29, 1, |w| xentry(w, 1, 2, 0x0100, 1, 0x89));
        assert!(invalid_detail(r).contains("needs format version 30"));
        assert!(table(30, 1, |w| xentry(w, 1, 2, 0x0100, 1, 0x89)).is_ok());
    }

    #[test]
    fn xperms_datum_keeps_kind_driver_and_perms() {
        let t = table(33, 3, |w| {
            xentry(w, 1, 2, 0x0100, 1, 0x89);
            xentry(w, 1, 2, 0x0200, 3, 0x12);
            // A kind this reader does not know loads, as in the kernel.
            xentry(w, 1, 2, 0x0400, 9, 0);
        })
        .unwrap();
        let kinds: Vec<_> = t
            .entries
            .iter()
            .map(|e| (e.key.kind, t.xperms_of(e.datum).unwrap().kind))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (AvtabKind::XpermsAllowed, XpermsKind::IoctlFunction),
                (AvtabKind::XpermsAuditAllow, XpermsKind::Nlmsg),
                (AvtabKind::XpermsDontAudit, XpermsKind::Other(9)),
            ]
        );
        let x = t.xperms_of(t.entries[0].datum).unwrap();
        assert_eq!(x.driver, 0x89);
        assert_eq!(x.perms, [1, 0, 0, 0, 0, 0, 0, 0x8000_0000]);
        assert_eq!(XpermsKind::Other(9).value(), 9);
        assert_eq!(XpermsKind::from_u8(2), XpermsKind::IoctlDriver);
    }

    #[test]
    fn type_rule_datum_must_be_a_valid_type() {
        for datum in [0, 21] {
            let r = table(33, 1, |w| entry(w, 1, 2, 3, 0x0010, datum));
            assert!(invalid_detail(r).contains("type value"), "{datum}");
        }
        // An old-format type rule is checked too.
        let r = table(19, 1, |w| {
            w.u32s(&[5, 1, 2, 3, 0x0020, 0]);
        });
        assert!(invalid_detail(r).contains("type value 0"));
    }

    #[test]
    fn key_types_and_class_are_range_checked() {
        for (s, t, c, what) in [(0, 1, 1, "type"), (1, 21, 1, "type"), (1, 1, 7, "class")] {
            let r = table(33, 1, |w| entry(w, s, t, c, 0x0001, 1));
            let detail = invalid_detail(r);
            assert!(detail.contains(what), "{detail}");
            assert!(detail.starts_with("entry 0 of 1"), "{detail}");
        }
    }

    #[test]
    fn duplicate_unconditional_key_is_rejected() {
        let r = table(33, 2, |w| {
            entry(w, 1, 2, 3, 0x0001, 1);
            entry(w, 1, 2, 3, 0x0001, 2);
        });
        match r {
            Err(PolicyError::Invalid { offset, detail, .. }) => {
                assert_eq!(offset, 16);
                assert_eq!(
                    detail,
                    "entry 1 of 2: duplicate allow rule (source type 1, target type 2, class 3)"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn same_key_with_another_kind_is_not_a_duplicate() {
        let t = table(33, 2, |w| {
            entry(w, 1, 2, 3, 0x0001, 1);
            entry(w, 1, 2, 3, 0x0002, 1);
        });
        assert_eq!(t.unwrap().len(), 2);
    }

    #[test]
    fn repeated_xperms_keys_are_kept() {
        // One entry per ioctl driver under the same key, as the compiler writes them.
        let t = table(33, 2, |w| {
            xentry(w, 1, 2, 0x0100, 1, 0x89);
            xentry(w, 1, 2, 0x0100, 1, 0x8a);
        })
        .unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t.xperms.len(), 2);
    }

    #[test]
    fn empty_unconditional_table_is_rejected() {
        let r = table(33, 0, |_| {});
        assert!(invalid_detail(r).contains("empty"));
    }

    #[test]
    fn hostile_rule_count_is_refused() {
        let r = table(33, u32::MAX, |w| entry(w, 1, 2, 3, 0x0001, 1));
        assert!(matches!(
            r,
            Err(PolicyError::CountTooLarge {
                count: 0xffff_ffff,
                min_size: 12,
                ..
            })
        ));
    }

    #[test]
    fn truncated_entry_reports_its_offset() {
        let mut w = W::new();
        w.u32(2);
        entry(&mut w, 1, 2, 3, 0x0001, 1);
        // An extended-permission entry cut inside its permission words.
        w.u16(1).u16(2).u16(3).u16(0x0100).u8(1).u8(0).u32(0);
        match read_at(33, &w.0) {
            Err(PolicyError::Truncated {
                offset,
                needed,
                available,
                ..
            }) => assert_eq!((offset, needed, available), (26, 32, 4)),
            other => panic!("{other:?}"),
        }
    }
}
