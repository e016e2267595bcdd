//! The access vector table: TE rules after attribute handling, one entry per
//! (source, target, class, kind) key, as the compiler wrote them.

use crate::ids::{ClassId, TypeId};

/// The kind of an access vector table entry (the file's `specified` word, one bit).
///
/// Held in one byte (the variants in bit order, so that the derived order is the bits'),
/// so that a key takes 7 bytes; [`AvtabKind::bits`] gives the word's bit.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum AvtabKind {
    Allowed,
    AuditAllow,
    /// Stored as the bits to audit on denial: a `dontaudit` rule is the complement.
    AuditDeny,
    Transition,
    Member,
    Change,
    XpermsAllowed,
    XpermsAuditAllow,
    XpermsDontAudit,
}

/// Each kind's bit in the `specified` word, by variant.
const KIND_BITS: [u16; 9] = [
    0x0001, 0x0002, 0x0004, 0x0010, 0x0020, 0x0040, 0x0100, 0x0200, 0x0400,
];

impl AvtabKind {
    /// From the `specified` word with the enabled flag (0x8000) cleared; `None` unless exactly
    /// one known bit is set.
    #[inline]
    pub fn from_bits(bits: u16) -> Option<Self> {
        use AvtabKind::*;
        /// The kind of each single bit, by bit number.
        const BY_BIT: [Option<AvtabKind>; 16] = [
            Some(Allowed),
            Some(AuditAllow),
            Some(AuditDeny),
            None,
            Some(Transition),
            Some(Member),
            Some(Change),
            None,
            Some(XpermsAllowed),
            Some(XpermsAuditAllow),
            Some(XpermsDontAudit),
            None,
            None,
            None,
            None,
            None,
        ];
        // Exactly one bit (not `is_power_of_two`, a population count without POPCNT).
        if bits == 0 || bits & (bits - 1) != 0 {
            return None;
        }
        BY_BIT[bits.trailing_zeros() as usize]
    }

    /// The kind's bit in the `specified` word.
    #[inline]
    pub fn bits(self) -> u16 {
        KIND_BITS[self as usize]
    }

    /// type_transition / type_member / type_change: the datum is a type.
    #[inline]
    pub fn is_type_rule(self) -> bool {
        // Transition, Member and Change (the kinds within AVTAB_TYPE) are variants 3 to 5.
        (3..6).contains(&(self as u8))
    }

    /// The datum is permission bits (allowed, auditallow, dontaudit).
    #[inline]
    pub fn is_av(self) -> bool {
        // Allowed, AuditAllow and AuditDeny (the kinds within AVTAB_AV) are variants 0 to 2.
        (self as u8) < 3
    }

    /// The datum is an extended-permission set.
    #[inline]
    pub fn is_xperms(self) -> bool {
        // The three xperms kinds (the kinds within AVTAB_XPERMS) are variants 6 to 8.
        (self as u8) >= 6
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
///
/// 7 bytes, byte-aligned ([`TypeId`] and [`ClassId`] are; the kind is a byte), so that an
/// [`AvtabEntry`] takes 11 bytes: a policy's hundred thousand entries are most of a
/// model's memory.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AvtabKey {
    pub source: TypeId,
    pub target: TypeId,
    pub class: ClassId,
    pub kind: AvtabKind,
}

impl AvtabKey {
    /// libsepol's `avtab_hash` of the key (class, target and source values; the kind is not
    /// hashed): its bucket in a table of `slots` buckets is `hash & (slots - 1)`. The order
    /// libsepol writes an avtab in, and so the bytes secilc and checkpolicy produce, follow
    /// from it.
    pub fn libsepol_hash(&self) -> u32 {
        libsepol_murmur(&[
            u32::from(self.class.value()),
            u32::from(self.target.value()),
            u32::from(self.source.value()),
        ])
    }
}

/// The MurmurHash3-style mixing libsepol uses for its avtab (`avtab_hash`) and CIL's
/// extended-permission side table (`avrulex_hash`): each word mixed in turn, then
/// MurmurHash3's finaliser; no length is mixed in.
pub fn libsepol_murmur(words: &[u32]) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mut hash = 0u32;
    for &input in words {
        let v = input.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        hash ^= v;
        hash = hash
            .rotate_left(13)
            .wrapping_mul(5)
            .wrapping_add(0xe654_6b64);
    }
    hash ^= hash >> 16;
    hash = hash.wrapping_mul(0x85eb_ca6b);
    hash ^= hash >> 13;
    hash = hash.wrapping_mul(0xc2b2_ae35);
    hash ^= hash >> 16;
    hash
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

/// One entry: 11 bytes, byte-aligned (a packed 7-byte key and the datum's word), the
/// datum's variant given by the key's kind (see [`AvtabEntry::datum`]), so that a
/// policy's hundred thousand entries take 5 bytes less each than a key beside a tagged
/// datum would, and 1 less than an aligned key and word.
///
/// The word is private: an entry is built by [`AvtabEntry::new`], which refuses a datum
/// whose variant disagrees with the kind, and changed by [`AvtabEntry::set_datum`] or
/// [`AvtabEntry::perms_mut`]. The key stays a public field for reading; changing its kind
/// to one of another family (access vector, type rule, extended permissions) after
/// construction would change how the word is read, and nothing does.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct AvtabEntry {
    pub key: AvtabKey,
    /// The datum's word, in native byte order (bytes, so that the entry is byte-aligned).
    data: [u8; 4],
}

const _: () = assert!(std::mem::size_of::<AvtabKey>() == 7);
const _: () = assert!(std::mem::size_of::<AvtabEntry>() == 11);
const _: () = assert!(std::mem::align_of::<AvtabEntry>() == 1);

/// An entry's datum word lent for change ([`AvtabEntry::perms_mut`],
/// [`AvtabEntry::xperms_index_mut`]): the word of a byte-aligned entry may be unaligned,
/// so it is copied out, changed through this guard, and stored back when the guard is
/// dropped.
pub struct DatumWordMut<'a> {
    entry: &'a mut AvtabEntry,
    word: u32,
}

impl std::ops::Deref for DatumWordMut<'_> {
    type Target = u32;
    #[inline]
    fn deref(&self) -> &u32 {
        &self.word
    }
}

impl std::ops::DerefMut for DatumWordMut<'_> {
    #[inline]
    fn deref_mut(&mut self) -> &mut u32 {
        &mut self.word
    }
}

impl Drop for DatumWordMut<'_> {
    #[inline]
    fn drop(&mut self) {
        self.entry.data = self.word.to_ne_bytes();
    }
}

impl std::fmt::Debug for DatumWordMut<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("DatumWordMut").field(&self.word).finish()
    }
}

/// [`AvtabEntry::new`]'s refusal: the datum's variant is not the one the kind stores.
#[derive(Copy, Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a {} rule cannot hold the datum {datum:?}", kind.name())]
pub struct DatumKindMismatch {
    pub kind: AvtabKind,
    pub datum: AvtabDatum,
}

impl AvtabEntry {
    /// An entry of `key` holding `datum`: permission bits for the access vector kinds, a
    /// type for the type-rule kinds, an extended-permission index for the xperms kinds.
    #[inline]
    pub fn new(key: AvtabKey, datum: AvtabDatum) -> Result<Self, DatumKindMismatch> {
        let data = Self::word_for(key.kind, datum)?.to_ne_bytes();
        Ok(AvtabEntry { key, data })
    }

    #[inline]
    fn word_for(kind: AvtabKind, datum: AvtabDatum) -> Result<u32, DatumKindMismatch> {
        match datum {
            AvtabDatum::Perms(p) if kind.is_av() => Ok(p),
            AvtabDatum::Type(t) if kind.is_type_rule() => Ok(u32::from(t.value())),
            AvtabDatum::Xperms(i) if kind.is_xperms() => Ok(i),
            _ => Err(DatumKindMismatch { kind, datum }),
        }
    }

    /// The datum, its variant given by the key's kind.
    #[inline]
    pub fn datum(&self) -> AvtabDatum {
        // Every kind is in exactly one family (one bit of AVTAB_AV, AVTAB_TYPE or
        // AVTAB_XPERMS), the access vector kinds, by far the most common, tested first.
        if self.key.kind.is_av() {
            AvtabDatum::Perms(self.word())
        } else if self.key.kind.is_xperms() {
            AvtabDatum::Xperms(self.word())
        } else {
            // `new` and `set_datum` store a type rule's word from a `TypeId`: a non-zero
            // 16-bit value.
            match u16::try_from(self.word()).ok().and_then(TypeId::new) {
                Some(t) => AvtabDatum::Type(t),
                None => unreachable!("a type rule's word is a type value"),
            }
        }
    }

    /// Replaces the datum; refused, the entry unchanged, when its variant disagrees with
    /// the kind.
    #[inline]
    pub fn set_datum(&mut self, datum: AvtabDatum) -> Result<(), DatumKindMismatch> {
        self.data = Self::word_for(self.key.kind, datum)?.to_ne_bytes();
        Ok(())
    }

    /// The permission bits of an access vector entry, to change in place (stored back
    /// when the guard is dropped); `None` for the other kinds.
    #[inline]
    pub fn perms_mut(&mut self) -> Option<DatumWordMut<'_>> {
        let kind = self.key.kind;
        kind.is_av().then(|| self.word_mut())
    }

    /// The index into [`Avtab::xperms`] of an extended-permission entry, to change in
    /// place (stored back when the guard is dropped); `None` for the other kinds.
    #[inline]
    pub fn xperms_index_mut(&mut self) -> Option<DatumWordMut<'_>> {
        let kind = self.key.kind;
        kind.is_xperms().then(|| self.word_mut())
    }

    #[inline]
    fn word_mut(&mut self) -> DatumWordMut<'_> {
        let word = self.word();
        DatumWordMut { entry: self, word }
    }

    /// The datum's word.
    #[inline]
    fn word(&self) -> u32 {
        u32::from_ne_bytes(self.data)
    }
}

impl std::fmt::Debug for AvtabEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AvtabEntry")
            .field("key", &self.key)
            .field("datum", &self.datum())
            .finish()
    }
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
    #[inline(always)]
    pub(crate) fn push(&mut self, key: AvtabKey, value: ItemValue<'_>) {
        // `read_item` reads the value the key's kind stores, so the word is the kind's.
        let data = match value {
            ItemValue::Perms(p) => p,
            ItemValue::Type(t) => u32::from(t.value()),
            ItemValue::Xperms(raw) => {
                // Entries are bounded by the input size (12 bytes each at least), so the
                // index always fits.
                let i = self.xperms.len() as u32;
                self.xperms.push(Xperms::from_raw(raw));
                i
            }
        };
        self.entries.push(AvtabEntry {
            key,
            data: data.to_ne_bytes(),
        });
    }
}

use crate::cursor::Cursor;
use crate::error::{PolicyError, Result};
use crate::keytab::{Bloom, FewKeys, KeyMap};
use crate::policy::version;
use crate::read::Counts;
use std::cell::OnceCell;

use crate::format::{AVTAB_AV, AVTAB_ENABLED, AVTAB_ENABLED_OLD, AVTAB_TYPE, AVTAB_XPERMS};
/// Every bit a `specified` word may carry; the kernel refuses any other.
const SPECIFIER_MASK: u16 = AVTAB_AV | AVTAB_TYPE | AVTAB_XPERMS | AVTAB_ENABLED;

/// The order in which the format before version 20 stores one datum per kind bit (the
/// kernel's `spec_order`). Its datum order is not the bit order, so it must be followed.
pub(crate) const SPEC_ORDER: [AvtabKind; 9] = [
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
pub(crate) enum ItemValue<'a> {
    Perms(u32),
    Type(TypeId),
    /// The stored extended-permission datum (specified byte, driver byte, eight words),
    /// decoded when stored: small to pass around.
    Xperms(&'a [u8; XPERMS_DATUM_SIZE]),
}

/// Bytes of an extended-permission datum.
const XPERMS_DATUM_SIZE: usize = 2 + 32;

impl Xperms {
    #[inline(never)]
    fn from_raw(raw: &[u8; XPERMS_DATUM_SIZE]) -> Self {
        let mut perms = [0u32; 8];
        for (p, w) in perms.iter_mut().zip(raw[2..].chunks_exact(4)) {
            *p = u32::from_le_bytes(w.try_into().expect("4-byte chunk"));
        }
        Xperms {
            kind: XpermsKind::from_u8(raw[0]),
            driver: raw[1],
            perms,
        }
    }
}

/// One entry as read. The table it goes into decides whether it may be kept: the
/// unconditional table and the conditional lists have different duplicate rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Item<'a> {
    pub key: AvtabKey,
    pub value: ItemValue<'a>,
    /// The stored enabled flag (`0x8000`, or `0x80000000` before version 20).
    pub enabled: bool,
    /// Where the entry starts, for error messages.
    pub offset: usize,
}

/// Packs a key into one word (the kind as its single bit), for duplicate detection.
#[inline]
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
#[cold]
#[inline(never)]
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
#[inline(always)]
pub(crate) fn read_item<'a>(
    c: &mut Cursor<'a>,
    counts: &Counts,
    conditional: bool,
    what: &'static str,
    mut insert: impl FnMut(&Cursor<'a>, Item<'a>) -> Result<()>,
) -> Result<()> {
    if counts.version < version::AVTAB {
        return read_item_old(c, counts, what, insert);
    }
    let at = c.offset();
    let [source, target, class, specified] = if c.remaining() >= 8 {
        let b = c.array::<8>(what)?;
        [
            u16::from_le_bytes([b[0], b[1]]),
            u16::from_le_bytes([b[2], b[3]]),
            u16::from_le_bytes([b[4], b[5]]),
            u16::from_le_bytes([b[6], b[7]]),
        ]
    } else {
        // Cut short: read field by field so that the error names the first missing one.
        [c.u16(what)?, c.u16(what)?, c.u16(what)?, c.u16(what)?]
    };
    let source = counts.type_id(c, at, source.into(), what)?;
    let target = counts.type_id(c, at + 2, target.into(), what)?;
    let class = counts.class_id(c, at + 4, class.into(), what)?;

    let bits = specified & !AVTAB_ENABLED;
    if bits == 0 || bits & (bits - 1) != 0 {
        return Err(bad_specifier(
            c,
            at,
            what,
            specified,
            "does not name exactly one rule kind",
        ));
    }
    let kind = match AvtabKind::from_bits(bits) {
        Some(kind) if specified & !SPECIFIER_MASK == 0 => kind,
        _ => {
            return Err(bad_specifier(
                c,
                at,
                what,
                specified,
                "names no known rule kind",
            ))
        }
    };

    let value = if kind.is_xperms() {
        if counts.version < version::XPERMS_IOCTL {
            return Err(xperms_too_new(c, at, what, kind, counts.version, false));
        }
        if conditional && counts.version < version::COND_XPERMS {
            return Err(xperms_too_new(c, at, what, kind, counts.version, true));
        }
        if c.remaining() < XPERMS_DATUM_SIZE {
            // Cut short: read field by field so that the error names the first missing one.
            c.u8(what)?;
            c.u8(what)?;
            c.u32s::<8>(what)?;
        }
        ItemValue::Xperms(c.array(what)?)
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

/// A `specified` word (read at `at + 6`) that names no single known kind.
#[cold]
#[inline(never)]
fn bad_specifier(
    c: &Cursor<'_>,
    at: usize,
    what: &'static str,
    specified: u16,
    fault: &str,
) -> PolicyError {
    c.invalid_at(at + 6, what, format!("specifier {specified:#06x} {fault}"))
}

/// An extended-permission entry in a format version that cannot hold it.
#[cold]
#[inline(never)]
fn xperms_too_new(
    c: &Cursor<'_>,
    at: usize,
    what: &'static str,
    kind: AvtabKind,
    policy_version: u32,
    conditional: bool,
) -> PolicyError {
    let detail = if conditional {
        format!(
            "{} rule inside a conditional needs format version {} (policy is version {})",
            kind.name(),
            version::COND_XPERMS,
            policy_version
        )
    } else {
        format!(
            "{} rule needs format version {} (policy is version {})",
            kind.name(),
            version::XPERMS_IOCTL,
            policy_version
        )
    };
    c.invalid_at(at + 6, what, detail)
}

/// The format before version 20: a word count (5 to 8), source, target, class, a 32-bit
/// kind word, then one datum per kind bit in [`SPEC_ORDER`].
#[inline(never)]
fn read_item_old<'a>(
    c: &mut Cursor<'a>,
    counts: &Counts,
    what: &'static str,
    mut insert: impl FnMut(&Cursor<'a>, Item<'a>) -> Result<()>,
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
///
/// Returns with the table the keys of its type rules, which the conditional rules are
/// checked against.
pub(crate) fn read(c: &mut Cursor<'_>, counts: &Counts) -> Result<(Avtab, AvtabKeys)> {
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
    // Duplicates are found in two steps (see the keytab module): a filter says which keys
    // may repeat an earlier one, and those candidates are checked exactly at the end, or
    // before any other error is returned, so that the error is the one reading entry by
    // entry would give: the first entry that repeats a key, unless an earlier fault.
    let mut filter = Bloom::with_capacity(n);
    let mut candidates: Vec<Candidate> = Vec::new();
    // Type-rule keys, for the conditional rules' checks: a tenth of the entries or so, so
    // 8 bits of filter per entry of the table makes a "may be present" rare (about 1 in
    // 50,000 lookups; it is then settled exactly).
    let mut type_rules = Bloom::with_capacity(n / 2);
    for i in 0..n {
        let r = read_item(
            c,
            counts,
            false,
            ENTRY,
            #[inline(always)]
            |c, item| {
                let kind = item.key.kind;
                if item.enabled && !kind.is_xperms() && !kind.is_type_rule() {
                    return Err(entry_error(
                        c,
                        item.key,
                        item.offset,
                        "unconditional ",
                        " carries the conditional enabled flag",
                    ));
                }
                if !kind.is_xperms() && filter.insert(key_word(&item.key)) {
                    candidates.push(Candidate {
                        index: table.entries.len(),
                        offset: item.offset,
                        entry: i,
                    });
                }
                if kind.is_type_rule() {
                    type_rules.insert(key_word(&item.key));
                }
                table.push(item.key, item.value);
                Ok(())
            },
        );
        if let Err(e) = r {
            first_duplicate(&table, &candidates).map_err(|d| d.error(c, &table, n))?;
            return Err(in_entry(e, i, n));
        }
    }
    drop(filter);
    first_duplicate(&table, &candidates).map_err(|d| d.error(c, &table, n))?;
    table.entries.shrink_to_fit();
    table.xperms.shrink_to_fit();
    let keys = AvtabKeys {
        type_rules,
        exact: OnceCell::new(),
    };
    Ok((table, keys))
}

/// An entry whose key may repeat an earlier entry's.
#[derive(Copy, Clone)]
struct Candidate {
    /// Index in the table.
    index: usize,
    /// Offset in the file and entry number there, for the error.
    offset: usize,
    entry: usize,
}

impl Candidate {
    /// The error for this entry if it does repeat a key.
    #[cold]
    #[inline(never)]
    fn error(&self, c: &Cursor<'_>, table: &Avtab, count: usize) -> PolicyError {
        let key = &table.entries[self.index].key;
        in_entry(
            c.invalid_at(self.offset, ENTRY, format!("duplicate {}", describe(key))),
            self.entry,
            count,
        )
    }
}

/// The first candidate that repeats the key of an earlier entry of the table, found in
/// one pass over the table.
fn first_duplicate<'c>(
    table: &Avtab,
    candidates: &'c [Candidate],
) -> std::result::Result<(), &'c Candidate> {
    if candidates.is_empty() {
        return Ok(());
    }
    // Each candidate key with the index of its first entry + 1 (0 while not met).
    let mut first: FewKeys<u32> = FewKeys::new(
        candidates
            .iter()
            .map(|cand| key_word(&table.entries[cand.index].key)),
    );
    for (i, e) in table.entries.iter().enumerate() {
        if e.key.kind.is_xperms() {
            continue;
        }
        if let Some(f) = first.get_mut(key_word(&e.key)) {
            if *f == 0 {
                // Entries are bounded by the input size (12 bytes each at least).
                *f = i as u32 + 1;
            }
        }
    }
    for cand in candidates {
        let f = *first
            .get_mut(key_word(&table.entries[cand.index].key))
            .expect("every candidate key is in the set");
        if (f - 1) as usize != cand.index {
            return Err(cand);
        }
    }
    Ok(())
}

/// An [`PolicyError::Invalid`] about the unconditional entry with `key` at `offset`:
/// `{before}{rule}{after}`. (Errors take the entry's fields by value, never the entry's
/// address, which would keep the optimiser from holding entries in registers.)
#[cold]
#[inline(never)]
fn entry_error(
    c: &Cursor<'_>,
    key: AvtabKey,
    offset: usize,
    before: &str,
    after: &str,
) -> PolicyError {
    c.invalid_at(offset, ENTRY, format!("{before}{}{after}", describe(&key)))
}

/// What the conditional rules are checked against: the keys of the unconditional table's
/// type rules, as [`read`] collects them.
pub(crate) struct AvtabKeys {
    /// A filter of the keys.
    type_rules: Bloom,
    /// The keys exactly, collected from the table when the filter first cannot rule a key
    /// out.
    exact: OnceCell<KeyMap<()>>,
}

impl AvtabKeys {
    /// Collects the type-rule keys of `table`.
    #[cfg(test)]
    pub fn of(table: &Avtab) -> Self {
        let mut type_rules = Bloom::with_capacity(table.len());
        for e in table.entries.iter().filter(|e| e.key.kind.is_type_rule()) {
            type_rules.insert(key_word(&e.key));
        }
        AvtabKeys {
            type_rules,
            exact: OnceCell::new(),
        }
    }

    /// Whether `table`, the unconditional table these keys come from, has a type rule with
    /// `key` (a type rule's key).
    pub fn has_type_rule(&self, table: &Avtab, key: &AvtabKey) -> bool {
        let word = key_word(key);
        if !self.type_rules.may_contain(word) {
            return false;
        }
        self.exact
            .get_or_init(|| {
                let keys: Vec<u64> = table
                    .entries
                    .iter()
                    .filter(|e| e.key.kind.is_type_rule())
                    .map(|e| key_word(&e.key))
                    .collect();
                let mut exact = KeyMap::with_capacity(keys.len());
                for k in keys {
                    exact.entry(k);
                }
                exact
            })
            .contains(word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testbytes::{counts, detail, W};

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

    const ALL_KINDS: [AvtabKind; 9] = SPEC_ORDER;

    #[test]
    fn entry_keeps_each_kinds_datum_and_refuses_the_others() {
        let data = [
            AvtabDatum::Perms(0xffff_ffff),
            AvtabDatum::Type(tid(u16::MAX)),
            AvtabDatum::Xperms(u32::MAX),
        ];
        for kind in ALL_KINDS {
            let k = key(1, 2, 3, kind);
            for d in data {
                let fits = match d {
                    AvtabDatum::Perms(_) => kind.is_av(),
                    AvtabDatum::Type(_) => kind.is_type_rule(),
                    AvtabDatum::Xperms(_) => kind.is_xperms(),
                };
                match AvtabEntry::new(k, d) {
                    Ok(e) => {
                        assert!(fits, "{kind:?} accepted {d:?}");
                        assert_eq!((e.key, e.datum()), (k, d));
                    }
                    Err(err) => {
                        assert!(!fits, "{kind:?} refused {d:?}");
                        assert_eq!(err, DatumKindMismatch { kind, datum: d });
                    }
                }
            }
        }
    }

    #[test]
    fn entry_changes_refuse_another_kinds_datum() {
        let mut e = AvtabEntry::new(
            key(1, 2, 3, AvtabKind::Transition),
            AvtabDatum::Type(tid(4)),
        )
        .unwrap();
        assert!(e.set_datum(AvtabDatum::Perms(9)).is_err());
        assert!(e.perms_mut().is_none());
        assert!(e.xperms_index_mut().is_none());
        assert_eq!(e.datum(), AvtabDatum::Type(tid(4)));
        e.set_datum(AvtabDatum::Type(tid(5))).unwrap();
        assert_eq!(e.datum(), AvtabDatum::Type(tid(5)));

        let mut a =
            AvtabEntry::new(key(1, 2, 3, AvtabKind::AuditDeny), AvtabDatum::Perms(1)).unwrap();
        *a.perms_mut().unwrap() |= 6;
        assert_eq!(a.datum(), AvtabDatum::Perms(7));
        assert!(a.set_datum(AvtabDatum::Xperms(0)).is_err());
        assert!(a.xperms_index_mut().is_none());

        let mut x = AvtabEntry::new(
            key(1, 2, 3, AvtabKind::XpermsDontAudit),
            AvtabDatum::Xperms(2),
        )
        .unwrap();
        assert!(x.perms_mut().is_none());
        *x.xperms_index_mut().unwrap() = 3;
        assert_eq!(x.datum(), AvtabDatum::Xperms(3));
    }

    #[test]
    fn an_entry_takes_eleven_bytes_and_kinds_order_as_their_bits() {
        // Two types, a class, a one-byte kind and the word, byte-aligned: a table of a
        // hundred thousand entries is 1.1 MB, not 1.2.
        assert_eq!(std::mem::size_of::<AvtabEntry>(), 11);
        assert_eq!(std::mem::size_of::<[AvtabEntry; 3]>(), 33);
        assert_eq!(std::mem::size_of::<Option<AvtabKey>>(), 7);
        // The derived order of kinds (and so of keys) is the order of their bits.
        let mut kinds = ALL_KINDS.to_vec();
        kinds.sort();
        let bits: Vec<u16> = kinds.iter().map(|k| k.bits()).collect();
        assert!(bits.windows(2).all(|w| w[0] < w[1]), "{bits:x?}");
        for k in ALL_KINDS {
            assert_eq!(AvtabKind::from_bits(k.bits()), Some(k));
            let families = [k.is_av(), k.is_type_rule(), k.is_xperms()];
            assert_eq!(families.iter().filter(|&&f| f).count(), 1, "{k:?}");
            assert_eq!(k.is_av(), k.bits() & AVTAB_AV != 0, "{k:?}");
            assert_eq!(k.is_type_rule(), k.bits() & AVTAB_TYPE != 0, "{k:?}");
            assert_eq!(k.is_xperms(), k.bits() & AVTAB_XPERMS != 0, "{k:?}");
        }
        // A word changed through the guard is stored back, in a table too.
        let mut t =
            [AvtabEntry::new(key(1, 2, 3, AvtabKind::Allowed), AvtabDatum::Perms(1)).unwrap(); 3];
        if let Some(mut p) = t[1].perms_mut() {
            *p |= 0x8000_0000;
        }
        assert_eq!(t[1].datum(), AvtabDatum::Perms(0x8000_0001));
        assert_eq!(t[0].datum(), AvtabDatum::Perms(1));
        assert_eq!(t[2].datum(), AvtabDatum::Perms(1));
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
        let (t, _) = read(&mut c, &counts(version))?;
        assert_eq!(c.remaining(), 0, "table not read to its end");
        Ok(t)
    }

    fn table(version: u32, n: u32, body: impl FnOnce(&mut W)) -> Result<Avtab> {
        let mut w = W::new();
        w.u32(n);
        body(&mut w);
        read_at(version, &w.0)
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
                AvtabEntry::new(key(1, 2, 3, AvtabKind::Allowed), AvtabDatum::Perms(5)).unwrap(),
                AvtabEntry::new(
                    key(1, 2, 3, AvtabKind::Transition),
                    AvtabDatum::Type(tid(7))
                )
                .unwrap(),
                AvtabEntry::new(
                    key(4, 5, 6, AvtabKind::AuditDeny),
                    AvtabDatum::Perms(0xffff_fffe)
                )
                .unwrap(),
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
                AvtabEntry::new(key(1, 2, 3, AvtabKind::Allowed), AvtabDatum::Perms(0x11)).unwrap(),
                AvtabEntry::new(key(1, 2, 3, AvtabKind::AuditDeny), AvtabDatum::Perms(0x22))
                    .unwrap(),
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
        let got: Vec<_> = t.entries.iter().map(|e| (e.key.kind, e.datum())).collect();
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
        assert!(detail(too_many_words).contains("uses 5"));
        let too_few_words = table(19, 1, |w| {
            w.u32s(&[5, 1, 2, 3, 0x0003, 0x11]);
        });
        assert!(detail(too_few_words).contains("needs more"));
        let out_of_range = table(19, 1, |w| {
            w.u32s(&[9, 1, 2, 3, 0x0001, 0, 0, 0, 0]);
        });
        assert!(detail(out_of_range).contains("expected 5 to 8"));
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
        assert!(detail(r).contains("does not fit in 16 bits"));
    }

    #[test]
    fn old_format_enabled_flag_marks_every_entry() {
        // A conditional-style flag on a type rule is accepted in the unconditional table.
        let t = table(19, 1, |w| {
            w.u32s(&[5, 1, 2, 3, 0x8000_0010, 9]);
        })
        .unwrap();
        assert_eq!(t.entries[0].datum(), AvtabDatum::Type(tid(9)));
    }

    #[test]
    fn entry_with_two_kind_bits_is_rejected() {
        let r = table(33, 1, |w| entry(w, 1, 2, 3, 0x0003, 1));
        assert!(detail(r).contains("exactly one rule kind"));
    }

    #[test]
    fn unknown_specifier_bit_is_rejected() {
        for spec in [0x0008, 0x0080, 0x0800, 0x1000] {
            let r = table(33, 1, |w| entry(w, 1, 2, 3, spec, 1));
            assert!(detail(r).contains("no known rule kind"), "{spec:#x}");
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
        assert!(detail(r).contains("enabled flag"));
    }

    #[test]
    fn xperms_need_version_30() {
        let r = table(29, 1, |w| xentry(w, 1, 2, 0x0100, 1, 0x89));
        assert!(detail(r).contains("needs format version 30"));
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
            .map(|e| (e.key.kind, t.xperms_of(e.datum()).unwrap().kind))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (AvtabKind::XpermsAllowed, XpermsKind::IoctlFunction),
                (AvtabKind::XpermsAuditAllow, XpermsKind::Nlmsg),
                (AvtabKind::XpermsDontAudit, XpermsKind::Other(9)),
            ]
        );
        let x = t.xperms_of(t.entries[0].datum()).unwrap();
        assert_eq!(x.driver, 0x89);
        assert_eq!(x.perms, [1, 0, 0, 0, 0, 0, 0, 0x8000_0000]);
        assert_eq!(XpermsKind::Other(9).value(), 9);
        assert_eq!(XpermsKind::from_u8(2), XpermsKind::IoctlDriver);
    }

    #[test]
    fn type_rule_datum_must_be_a_valid_type() {
        for datum in [0, 21] {
            let r = table(33, 1, |w| entry(w, 1, 2, 3, 0x0010, datum));
            assert!(detail(r).contains("type value"), "{datum}");
        }
        // An old-format type rule is checked too.
        let r = table(19, 1, |w| {
            w.u32s(&[5, 1, 2, 3, 0x0020, 0]);
        });
        assert!(detail(r).contains("type value 0"));
    }

    #[test]
    fn key_types_and_class_are_range_checked() {
        for (s, t, c, what) in [(0, 1, 1, "type"), (1, 21, 1, "type"), (1, 1, 7, "class")] {
            let r = table(33, 1, |w| entry(w, s, t, c, 0x0001, 1));
            let detail = detail(r);
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
        assert!(detail(r).contains("empty"));
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

    #[test]
    fn kinds_round_trip_through_their_bits() {
        let mut known = 0;
        for bits in 0..=u16::MAX {
            if let Some(k) = AvtabKind::from_bits(bits) {
                assert_eq!(k.bits(), bits);
                known += 1;
            }
        }
        assert_eq!(known, 9);
    }

    /// Symbol counts big enough for tables of many distinct keys.
    fn big_counts() -> Counts {
        Counts {
            types: 3000,
            classes: 200,
            ..counts(33)
        }
    }

    /// `n` distinct pseudo-random keys (source, target, class, specifier, datum), a tenth of
    /// them type rules.
    fn distinct_keys(n: usize) -> Vec<(u16, u16, u16, u16, u32)> {
        let mut seen = std::collections::HashSet::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = x >> 16;
            let s = (r % 3000) as u16 + 1;
            let t = ((r >> 12) % 3000) as u16 + 1;
            let c = ((r >> 24) % 200) as u16 + 1;
            let spec = [0x0001, 0x0002, 0x0004, 0x0010][((r >> 32) % 10).min(3) as usize];
            if seen.insert((s, t, c, spec)) {
                out.push((s, t, c, spec, (r >> 40) as u32 % 3000 + 1));
            }
        }
        out
    }

    fn encode(keys: &[(u16, u16, u16, u16, u32)]) -> Vec<u8> {
        let mut w = W::new();
        w.u32(keys.len() as u32);
        for &(s, t, c, spec, d) in keys {
            entry(&mut w, s, t, c, spec, d);
        }
        w.0
    }

    #[test]
    fn duplicate_check_is_exact_on_large_tables() {
        // Enough keys that the filter has false positives, which must not be reported;
        // every true duplicate must be, and the first one in file order.
        let keys = distinct_keys(60_000);
        let (t, _) = read(&mut Cursor::new(&encode(&keys)), &big_counts()).unwrap();
        assert_eq!(t.len(), keys.len());
        for (dup_at, of) in [
            (1, 0),
            (777, 776),
            (30_000, 12),
            (59_999, 59_998),
            (59_999, 0),
        ] {
            let mut k = keys.clone();
            k[dup_at] = k[of];
            // A later duplicate too: the first one is reported.
            if dup_at + 10 < k.len() {
                k[dup_at + 10] = k[of];
            }
            match read(&mut Cursor::new(&encode(&k)), &big_counts()) {
                Err(PolicyError::Invalid { detail, .. }) => assert!(
                    detail.starts_with(&format!("entry {dup_at} of 60000: duplicate ")),
                    "{detail}"
                ),
                other => panic!("{dup_at}: {:?}", other.map(|(t, _)| t.len())),
            }
        }
    }

    #[test]
    fn a_duplicate_is_reported_before_a_later_fault_and_after_an_earlier_one() {
        let keys = distinct_keys(5_000);
        let bad_class = |k: &mut Vec<(u16, u16, u16, u16, u32)>, i: usize| k[i].2 = 999;
        let bad_flag = |k: &mut Vec<(u16, u16, u16, u16, u32)>, i: usize| {
            k[i].3 = 0x8001;
        };
        for fault in [bad_class, bad_flag] {
            // Duplicate at 3000, fault at 3001: the duplicate.
            let mut k = keys.clone();
            k[3000] = k[100];
            fault(&mut k, 3001);
            let d = detail(read(&mut Cursor::new(&encode(&k)), &big_counts()).map(|(t, _)| t));
            assert!(d.starts_with("entry 3000 of 5000: duplicate"), "{d}");
            // Fault at 2999: the fault.
            let mut k = keys.clone();
            k[3000] = k[100];
            fault(&mut k, 2999);
            let d = detail(read(&mut Cursor::new(&encode(&k)), &big_counts()).map(|(t, _)| t));
            assert!(d.starts_with("entry 2999 of 5000: "), "{d}");
            assert!(!d.contains("duplicate"), "{d}");
        }
        // A table cut short (inside a last, extended-permission entry) after a duplicate:
        // the duplicate.
        let mut k = keys.clone();
        k[10] = k[3];
        let mut bytes = encode(&k);
        bytes[..4].copy_from_slice(&5001u32.to_le_bytes());
        let mut w = W::new();
        xentry(&mut w, 1, 2, 0x0100, 1, 0x89);
        bytes.extend_from_slice(&w.0[..w.0.len() - 6]);
        match read(&mut Cursor::new(&bytes), &big_counts()) {
            Err(PolicyError::Invalid { detail, .. }) => {
                assert!(
                    detail.starts_with("entry 10 of 5001: duplicate"),
                    "{detail}"
                )
            }
            other => panic!("{:?}", other.map(|(t, _)| t.len())),
        }
        // Without the duplicate: the truncation.
        bytes[4 + 10 * 12..4 + 11 * 12].copy_from_slice(&encode(&keys)[4 + 10 * 12..4 + 11 * 12]);
        assert!(matches!(
            read(&mut Cursor::new(&bytes), &big_counts()),
            Err(PolicyError::Truncated { .. })
        ));
    }

    #[test]
    fn old_format_duplicate_within_a_record_is_found() {
        // Record 1 repeats record 0's allow rule alongside a new dontaudit.
        let r = table(19, 2, |w| {
            w.u32s(&[5, 1, 2, 3, 0x0001, 0x11]);
            w.u32s(&[6, 1, 2, 3, 0x0005, 0x11, 0x22]);
        });
        assert_eq!(
            detail(r),
            "entry 1 of 2: duplicate allow rule (source type 1, target type 2, class 3)"
        );
    }

    #[test]
    fn type_rule_keys_answer_exactly_when_the_filter_cannot() {
        let keys = distinct_keys(20_000);
        let (t, _) = read(&mut Cursor::new(&encode(&keys)), &big_counts()).unwrap();
        // A filter far too small: it rules nothing out, so every answer is exact.
        let mut type_rules = Bloom::with_capacity(0);
        for e in t.entries.iter().filter(|e| e.key.kind.is_type_rule()) {
            type_rules.insert(key_word(&e.key));
        }
        let tiny = AvtabKeys {
            type_rules,
            exact: OnceCell::new(),
        };
        let full = AvtabKeys::of(&t);
        for e in &t.entries {
            let mut k = e.key;
            for kind in [AvtabKind::Transition, AvtabKind::Member] {
                k.kind = kind;
                let expected = t.entries.iter().any(|x| x.key == k);
                assert_eq!(tiny.has_type_rule(&t, &k), expected, "{k:?}");
                assert_eq!(full.has_type_rule(&t, &k), expected, "{k:?}");
            }
        }
    }
}
