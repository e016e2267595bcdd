//! Domains: the stack of up to 16 layers that `landlock_restrict_self` builds, merged into
//! one immutable, flat table.
//!
//! # Layout
//!
//! A [`Domain`] owns one `Box<[u32]>` (the only allocation besides the short hierarchy list):
//!
//! ```text
//! [ layer masks: num_layers words, fs | net << 16 | scope << 18 ]
//! [ fs index ]    sorted: keys[n], starts[n + 1]     hash: slots[n + 1] of (key, next, start)
//! [ net index ]   (same shape)
//! [ layer entries: one word per (rule, layer): layer index << 16 | access ]
//! ```
//!
//! A rule's entries run from its start to the next rule's start, in ascending layer order;
//! the terminating start (or slot) makes the end branch-free, as in the coalesced-hash RFC.
//! The sorted layout keeps the keys in their own dense array, in order, for a binary search
//! that touches only keys. The hash layout is a
//! coalesced hash table filled to 100%: a key's home slot is `hash_long(key, bits)` folded
//! into the table, collisions are chained through `next` inside the table (a chain ends at a
//! slot pointing to itself), and a lookup stops at once when the home slot holds a key of
//! another home. Either way a rule costs 4 bytes per layer entry plus 8 (sorted) or 12 (hash)
//! bytes per key.
//!
//! A domain is never written after [`Domain::restrict`] returns, so any number of threads may
//! check against a shared `&Domain` with no synchronisation at all.

use crate::access::{fs, AccessFs, AccessNet, Scopes};
use crate::object::ObjectId;
use crate::ruleset::{Handled, Ruleset};
use std::sync::atomic::{AtomicU64, Ordering};

/// The kernel's limit on stacked layers (`LANDLOCK_MAX_NUM_LAYERS`).
pub const MAX_LAYERS: usize = 16;

/// How a domain's rule index is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Layout {
    /// Keys sorted in a dense array, binary search: 4 bytes less per rule and faster
    /// merges.
    Sorted,
    /// Coalesced hash table, 100% full, chains inside the array (the 2025 RFC's layout): the
    /// default, because checks (many per second) beat merges (one per `restrict_self`) and
    /// `arbiter bench landlock` measures it faster on deep walks and large domains.
    #[default]
    Hash,
}

/// One layer's grant inside a rule: which layer (0-based) and which rights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerEntry(u32);

impl LayerEntry {
    /// An entry for layer `layer` (0-based) granting `access`.
    pub fn new(layer: usize, access: u16) -> Self {
        LayerEntry(((layer as u32) << 16) | u32::from(access))
    }
    /// The layer index (0-based; the kernel's `level - 1`).
    pub fn layer(self) -> usize {
        (self.0 >> 16) as usize
    }
    /// The rights granted (fs rights, or net rights in the low bits).
    pub fn access(self) -> u16 {
        self.0 as u16
    }
}

/// Why a domain cannot be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DomainError {
    /// The parent already has 16 layers (E2BIG).
    #[error("E2BIG: the domain already has {MAX_LAYERS} layers")]
    TooManyLayers,
    /// More rules than a 32-bit index can address.
    #[error("too many rules for one domain")]
    TooManyRules,
}

/// The layer entries of one rule, in ascending layer order (a view into a domain).
#[derive(Clone, Copy, Debug, Default)]
pub struct RuleLayers<'a>(&'a [u32]);

impl<'a> RuleLayers<'a> {
    /// Entries from raw words (`layer << 16 | access`).
    pub fn from_words(words: &'a [u32]) -> Self {
        RuleLayers(words)
    }
    /// No rule.
    pub fn none() -> Self {
        RuleLayers(&[])
    }
    /// Whether there is no entry (no rule).
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0.is_empty()
    }
    /// The entries.
    #[inline]
    pub fn iter(self) -> impl Iterator<Item = LayerEntry> + 'a {
        self.0.iter().map(|&w| LayerEntry(w))
    }
}

/// Read access to a domain's layers and rules: implemented by the flat [`Domain`] and by the
/// benchmark's kernel-style tree, so that the checks run unchanged over both.
pub trait Rules {
    /// Number of layers (1..=16).
    fn num_layers(&self) -> usize;
    /// The stored handled masks of layer `layer` (fs upgraded with REFER when non-zero).
    fn layer(&self, layer: usize) -> Handled;
    /// The layer entries of the path-beneath rule on `object` (empty if none).
    fn find_fs(&self, object: ObjectId) -> RuleLayers<'_>;
    /// The layer entries of the rule on `port` (empty if none).
    fn find_net(&self, port: u16) -> RuleLayers<'_>;
}

static NEXT_HIERARCHY: AtomicU64 = AtomicU64::new(1);

/// An immutable merged domain (see the module documentation for the layout).
#[derive(Clone, Debug)]
pub struct Domain {
    layout: Layout,
    num_layers: u8,
    fs_bits: u8,
    net_bits: u8,
    num_fs: u32,
    num_net: u32,
    fs_off: u32,
    net_off: u32,
    /// Hierarchy node ids, one per layer from the root: two domains share a prefix exactly
    /// when they descend from the same `restrict_self` calls (for scopes).
    hierarchy: Box<[u64]>,
    buf: Box<[u32]>,
}

/// Rules sorted by key, with their entries: the merge's output before it is laid out.
struct RuleList {
    keys: Vec<u32>,
    starts: Vec<u32>,
    entries: Vec<u32>,
}

impl RuleList {
    fn with_capacity(n: usize) -> Self {
        let mut starts = Vec::with_capacity(n + 1);
        starts.push(0);
        RuleList {
            keys: Vec::with_capacity(n),
            starts,
            entries: Vec::with_capacity(n),
        }
    }
    fn push(&mut self, key: u32, entries: RuleLayers<'_>, extra: Option<LayerEntry>) {
        self.keys.push(key);
        self.entries.extend_from_slice(entries.0);
        self.entries.extend(extra.map(|e| e.0));
        self.starts.push(self.entries.len() as u32);
    }
    fn entries_of(&self, i: usize) -> &[u32] {
        &self.entries[self.starts[i] as usize..self.starts[i + 1] as usize]
    }
}

/// The RFC's hash: `hash_long(key, bits)` (golden-ratio multiply, top bits), folded once.
#[inline]
fn home_slot(key: u32, bits: u8, size: u32) -> u32 {
    if bits == 0 {
        return 0;
    }
    const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;
    let h = (u64::from(key).wrapping_mul(GOLDEN_RATIO_64) >> (64 - u32::from(bits))) as u32;
    if h >= size {
        h - size
    } else {
        h
    }
}

fn hash_bits(n: u32) -> u8 {
    if n <= 1 {
        0
    } else {
        ((n - 1).ilog2() + 1) as u8
    }
}

/// Merges the parent's rules (sorted by key) with one new layer's rules (sorted by key).
fn merge_rules(
    parent: Option<(&Domain, bool)>,
    new: impl Iterator<Item = (u32, u16)>,
    layer: usize,
    capacity: usize,
) -> RuleList {
    let mut old: Vec<(u32, RuleLayers<'_>)> = Vec::new();
    if let Some((p, is_fs)) = parent {
        old = p.rules(is_fs).collect();
        old.sort_unstable_by_key(|r| r.0);
    }
    let mut out = RuleList::with_capacity(old.len() + capacity);
    let mut old = old.into_iter().peekable();
    for (key, access) in new {
        while let Some(&(k, e)) = old.peek() {
            if k >= key {
                break;
            }
            out.push(k, e, None);
            old.next();
        }
        let e = LayerEntry::new(layer, access);
        match old.peek() {
            Some(&(k, entries)) if k == key => {
                out.push(k, entries, Some(e));
                old.next();
            }
            _ => out.push(key, RuleLayers::none(), Some(e)),
        }
    }
    for (k, e) in old {
        out.push(k, e, None);
    }
    out
}

impl Domain {
    /// `landlock_restrict_self`: a new domain = the parent's layers and rules (copied) plus one
    /// layer made from `ruleset`. The layer's fs mask gets REFER when it handles any fs right
    /// (`landlock_upgrade_handled_access_masks`).
    pub fn restrict(
        parent: Option<&Domain>,
        ruleset: &Ruleset,
        layout: Layout,
    ) -> Result<Domain, DomainError> {
        let parent_layers = parent.map_or(0, |p| p.num_layers as usize);
        if parent_layers >= MAX_LAYERS {
            return Err(DomainError::TooManyLayers);
        }
        let layer = parent_layers;
        let mut h = ruleset.handled();
        if h.fs != 0 {
            h.fs |= fs::REFER;
        }
        let mut masks: Vec<u32> = parent.map_or(Vec::new(), |p| p.buf[..parent_layers].to_vec());
        masks.push(pack_handled(h));
        let fs_list = merge_rules(
            parent.map(|p| (p, true)),
            ruleset.fs_rules().map(|(o, a)| (o.0, a)),
            layer,
            ruleset.fs_rules().len(),
        );
        let net_list = merge_rules(
            parent.map(|p| (p, false)),
            ruleset
                .net_rules()
                .map(|(p, a)| (u32::from(p), u16::from(a))),
            layer,
            ruleset.net_rules().len(),
        );
        let mut hierarchy: Vec<u64> = parent.map_or(Vec::new(), |p| p.hierarchy.to_vec());
        hierarchy.push(NEXT_HIERARCHY.fetch_add(1, Ordering::Relaxed));
        Domain::assemble(layout, &masks, &fs_list, &net_list, hierarchy.into())
    }

    fn assemble(
        layout: Layout,
        masks: &[u32],
        fs_list: &RuleList,
        net_list: &RuleList,
        hierarchy: Box<[u64]>,
    ) -> Result<Domain, DomainError> {
        let num_fs = fs_list.keys.len();
        let num_net = net_list.keys.len();
        let total = masks.len()
            + index_words(layout, num_fs)
            + index_words(layout, num_net)
            + fs_list.entries.len()
            + net_list.entries.len();
        if total >= u32::MAX as usize {
            return Err(DomainError::TooManyRules);
        }
        let mut buf = vec![0u32; total];
        buf[..masks.len()].copy_from_slice(masks);
        let fs_off = masks.len();
        let net_off = fs_off + index_words(layout, num_fs);
        let mut entry_pos = net_off + index_words(layout, num_net);
        let fs_bits = hash_bits(num_fs as u32);
        let net_bits = hash_bits(num_net as u32);
        entry_pos = write_index(layout, &mut buf, fs_off, fs_list, fs_bits, entry_pos);
        let end = write_index(layout, &mut buf, net_off, net_list, net_bits, entry_pos);
        debug_assert_eq!(end, total);
        Ok(Domain {
            layout,
            num_layers: masks.len() as u8,
            fs_bits,
            net_bits,
            num_fs: num_fs as u32,
            num_net: num_net as u32,
            fs_off: fs_off as u32,
            net_off: net_off as u32,
            hierarchy,
            buf: buf.into_boxed_slice(),
        })
    }

    /// The same domain (same hierarchy) in another layout.
    pub fn with_layout(&self, layout: Layout) -> Domain {
        let collect = |is_fs: bool| {
            let mut rules: Vec<(u32, RuleLayers<'_>)> = self.rules(is_fs).collect();
            rules.sort_unstable_by_key(|r| r.0);
            let mut list = RuleList::with_capacity(rules.len());
            for (k, e) in rules {
                list.push(k, e, None);
            }
            list
        };
        let masks = &self.buf[..self.num_layers as usize];
        Domain::assemble(
            layout,
            masks,
            &collect(true),
            &collect(false),
            self.hierarchy.clone(),
        )
        .expect("a valid domain stays valid in another layout")
    }

    /// The index layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Number of path-beneath rules (distinct objects).
    pub fn num_fs_rules(&self) -> usize {
        self.num_fs as usize
    }

    /// Number of port rules.
    pub fn num_net_rules(&self) -> usize {
        self.num_net as usize
    }

    /// Number of (rule, layer) entries.
    pub fn num_entries(&self) -> usize {
        self.buf.len()
            - self.num_layers as usize
            - index_words(self.layout, self.num_fs as usize)
            - index_words(self.layout, self.num_net as usize)
    }

    /// Bytes owned by the domain (the flat buffer, the hierarchy and the header).
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.buf.len() * 4 + self.hierarchy.len() * 8
    }

    /// Hierarchy node ids from the first layer to the last.
    pub fn hierarchy(&self) -> &[u64] {
        &self.hierarchy
    }

    /// Every rule of one kind (fs or net) with its entries, in slot order.
    pub fn rules(&self, is_fs: bool) -> impl Iterator<Item = (u32, RuleLayers<'_>)> + '_ {
        let (off, n) = if is_fs {
            (self.fs_off, self.num_fs)
        } else {
            (self.net_off, self.num_net)
        };
        (0..n as usize).map(move |i| match self.layout {
            Layout::Sorted => {
                let off = off as usize;
                (self.buf[off + i], self.range(off + n as usize + i, 1))
            }
            Layout::Hash => {
                let slot = off as usize + i * 3;
                (self.buf[slot], self.range(slot + 2, 3))
            }
        })
    }

    /// The entries from the start word at `at` to the one `stride` words later.
    #[inline]
    fn range(&self, at: usize, stride: usize) -> RuleLayers<'_> {
        let start = self.buf[at] as usize;
        let end = self.buf[at + stride] as usize;
        RuleLayers(&self.buf[start..end])
    }

    #[inline]
    fn find(&self, off: u32, n: u32, bits: u8, key: u32) -> RuleLayers<'_> {
        if n == 0 {
            return RuleLayers::none();
        }
        let off = off as usize;
        match self.layout {
            Layout::Sorted => {
                let keys = &self.buf[off..off + n as usize];
                let (mut lo, mut len) = (0usize, keys.len());
                while len > 1 {
                    let half = len / 2;
                    if keys[lo + half] <= key {
                        lo += half;
                    }
                    len -= half;
                }
                if keys[lo] == key {
                    self.range(off + n as usize + lo, 1)
                } else {
                    RuleLayers::none()
                }
            }
            Layout::Hash => {
                let home = home_slot(key, bits, n);
                let mut i = home as usize;
                let first = off + i * 3;
                // Most lookups on a walk hit at the home slot: compare first, and only on a
                // mismatch ask whether this slot starts the home's chain at all.
                if self.buf[first] == key {
                    return self.range(first + 2, 3);
                }
                if home_slot(self.buf[first], bits, n) != home {
                    return RuleLayers::none();
                }
                loop {
                    let slot = off + i * 3;
                    if self.buf[slot] == key {
                        return self.range(slot + 2, 3);
                    }
                    let next = self.buf[slot + 1] as usize;
                    if next == i {
                        return RuleLayers::none();
                    }
                    i = next;
                }
            }
        }
    }
}

impl Rules for Domain {
    #[inline]
    fn num_layers(&self) -> usize {
        self.num_layers as usize
    }
    #[inline]
    fn layer(&self, layer: usize) -> Handled {
        unpack_handled(self.buf[layer])
    }
    #[inline]
    fn find_fs(&self, object: ObjectId) -> RuleLayers<'_> {
        self.find(self.fs_off, self.num_fs, self.fs_bits, object.0)
    }
    #[inline]
    fn find_net(&self, port: u16) -> RuleLayers<'_> {
        self.find(self.net_off, self.num_net, self.net_bits, u32::from(port))
    }
}

/// Where slot `i` of an index at `off` with `n` rules keeps a word: `(off, n, i) -> index`.
type SlotPos = fn(usize, usize, usize) -> usize;

/// Words an index of `n` rules takes.
fn index_words(layout: Layout, n: usize) -> usize {
    match layout {
        Layout::Sorted => 2 * n + 1,
        Layout::Hash => 3 * (n + 1),
    }
}

fn pack_handled(h: Handled) -> u32 {
    u32::from(h.fs) | (u32::from(h.net) << 16) | (u32::from(h.scope) << 18)
}

fn unpack_handled(w: u32) -> Handled {
    Handled {
        fs: w as AccessFs,
        net: ((w >> 16) & 3) as AccessNet,
        scope: ((w >> 18) & 3) as Scopes,
    }
}

/// Writes one index (slots + terminating slot) and its rules' entries; returns the next
/// free entry position.
fn write_index(
    layout: Layout,
    buf: &mut [u32],
    off: usize,
    list: &RuleList,
    bits: u8,
    mut pos: usize,
) -> usize {
    let n = list.keys.len();
    // (key word, start word) positions of slot i, and the terminating start.
    let (order, key_at, start_at): (Vec<usize>, SlotPos, SlotPos) = match layout {
        Layout::Sorted => (
            (0..n).collect(),
            |off, _, i| off + i,
            |off, n, i| off + n + i,
        ),
        Layout::Hash => {
            let (order, next) = coalesced_placement(&list.keys, bits);
            for (slot, &nx) in next.iter().enumerate() {
                buf[off + slot * 3 + 1] = nx;
            }
            (order, |off, _, i| off + i * 3, |off, _, i| off + i * 3 + 2)
        }
    };
    for (slot, &rule) in order.iter().enumerate() {
        buf[key_at(off, n, slot)] = list.keys[rule];
        buf[start_at(off, n, slot)] = pos as u32;
        let e = list.entries_of(rule);
        buf[pos..pos + e.len()].copy_from_slice(e);
        pos += e.len();
    }
    buf[start_at(off, n, n)] = pos as u32;
    pos
}

/// Places `keys` in a table of `keys.len()` slots: every key whose home slot is free first,
/// then the others in free slots taken from the end, appended to their home's chain.
/// Returns the rule at each slot and each slot's `next`.
fn coalesced_placement(keys: &[u32], bits: u8) -> (Vec<usize>, Vec<u32>) {
    let n = keys.len();
    const FREE: usize = usize::MAX;
    let mut at = vec![FREE; n];
    let mut next: Vec<u32> = (0..n as u32).collect();
    let mut pending = Vec::new();
    for (r, &k) in keys.iter().enumerate() {
        let h = home_slot(k, bits, n as u32) as usize;
        if at[h] == FREE {
            at[h] = r;
        } else {
            pending.push(r);
        }
    }
    let mut free = n;
    for r in pending {
        loop {
            free -= 1;
            if at[free] == FREE {
                break;
            }
        }
        at[free] = r;
        let mut i = home_slot(keys[r], bits, n as u32) as usize;
        while next[i] as usize != i {
            i = next[i] as usize;
        }
        next[i] = free as u32;
    }
    (at, next)
}
