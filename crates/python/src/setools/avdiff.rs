//! The expanded access-vector comparison behind `PolicyDifference`'s AV rule sections
//! (`added/removed/modified_allows` and the other AV kinds), done natively: setools 4.4.1
//! runs it in Python over every (source type, target type) pair of every rule, which takes
//! it tens of seconds on Debian's policy.
//!
//! The algorithm and the order of its results are setools' (`setools/diff/terules.py`):
//! rules keyed by (conditional expression, block, source, target, class), permissions of a
//! key unioned with the first rule kept, a conditional key's permissions already granted
//! unconditionally on the same side dropped, and results listed in the order setools'
//! nested dicts iterate (each level in the order its keys were first seen, the left policy
//! first). The Python half interns every name to a number and builds the rule objects of
//! the (few) results.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::collections::hash_map::Entry;
use std::hash::{BuildHasherDefault, Hasher};

/// The maps here hold one entry per expanded (source, target) pair: 8.2 million between
/// Debian's default and MLS policies, where SipHash (std's default, made to resist
/// adversarial keys) was most of the comparison's time. The keys are small integers that
/// the Python half interned from the two policies being compared, so a multiplicative
/// hash (the Fx hash of rustc and Firefox) is enough.
#[derive(Default, Clone, Copy)]
struct FxHasher(u64);

impl FxHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type HashMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// One rule as the Python half passes it: (conditional id, block, class id, permission
/// ids, source type ids, target type ids). Conditional id 0 is "unconditional" (its block
/// is `true`, as setools' `"True"`).
pub type RuleIn = (u32, bool, u32, Vec<u32>, Vec<u32>, Vec<u32>);

/// One result: (0 added / 1 removed / 2 modified, index of the rule derived from in its
/// side's list (the right side for added, the left otherwise), source id, target id, left
/// permission ids, right permission ids).
pub type DiffOut = (u8, usize, u32, u32, Vec<u32>, Vec<u32>);

/// (conditional, block, source, target, class).
type Key = (u32, bool, u32, u32, u32);

/// One side of a key: its permission bits (in the class's bit numbering) and its first rule.
#[derive(Clone, Copy)]
struct Side {
    bits: u64,
    /// u32, not usize: one entry per expanded pair, millions of them.
    rule: u32,
}

/// A key's two sides, 32 bytes: `[Option<Side>; 2]` took 48 (an `Option` adds a padded
/// tag to each side), on millions of pairs. A side that has no rule holds `Slot::NONE`.
#[derive(Clone, Copy)]
struct Slot(Side);

impl Slot {
    const NONE: Slot = Slot(Side {
        bits: 0,
        rule: u32::MAX,
    });

    fn get(self) -> Option<Side> {
        (self.0.rule != u32::MAX).then_some(self.0)
    }

    fn set(&mut self, side: Option<Side>) {
        *self = side.map_or(Slot::NONE, Slot);
    }
}

struct Pair {
    sides: [Slot; 2],
}

impl Default for Pair {
    fn default() -> Self {
        Pair {
            sides: [Slot::NONE; 2],
        }
    }
}

/// Permission ids to bits, per class (a class has at most 64 permissions: 32 in SELinux).
#[derive(Default)]
struct PermBits {
    bit: HashMap<(u32, u32), u32>,
    next: HashMap<u32, u32>,
    names: HashMap<(u32, u32), u32>,
}

impl PermBits {
    fn mask(&mut self, class: u32, perms: &[u32]) -> Result<u64, PermOverflow> {
        let mut mask = 0u64;
        for &p in perms {
            let b = match self.bit.get(&(class, p)) {
                Some(&b) => b,
                None => {
                    let next = self.next.entry(class).or_insert(0);
                    if *next >= 64 {
                        return Err(PermOverflow(class));
                    }
                    let b = *next;
                    *next += 1;
                    self.bit.insert((class, p), b);
                    self.names.insert((class, b), p);
                    b
                }
            };
            mask |= 1 << b;
        }
        Ok(mask)
    }

    fn ids(&self, class: u32, mut bits: u64) -> Vec<u32> {
        let mut out = Vec::with_capacity(bits.count_ones() as usize);
        while bits != 0 {
            let b = bits.trailing_zeros();
            bits &= bits - 1;
            if let Some(&p) = self.names.get(&(class, b)) {
                out.push(p);
            }
        }
        out
    }
}

/// First-seen ordinals of the key prefixes, so the flat map sorts into setools' nested
/// iteration order.
#[derive(Default)]
struct Order {
    cond: HashMap<u32, u32>,
    block: HashMap<(u32, bool), u32>,
    src: HashMap<(u32, bool, u32), u32>,
    tgt: HashMap<(u32, bool, u32, u32), u32>,
}

impl Order {
    /// Notes a (conditional, block) pair when a rule is seen, as setools creates its dict.
    fn note_block(&mut self, c: u32, b: bool) {
        let n = self.cond.len() as u32;
        self.cond.entry(c).or_insert(n);
        let n = self.block.len() as u32;
        self.block.entry((c, b)).or_insert(n);
    }

    /// Notes a source when a rule's expansion reaches it, even with no target (setools
    /// creates its dict before looking at the targets).
    fn note_src(&mut self, c: u32, b: bool, s: u32) {
        let n = self.src.len() as u32;
        self.src.entry((c, b, s)).or_insert(n);
    }

    fn note_tgt(&mut self, c: u32, b: bool, s: u32, t: u32) {
        let n = self.tgt.len() as u32;
        self.tgt.entry((c, b, s, t)).or_insert(n);
    }

    fn rank(&self, key: &Key, entry: usize) -> (u32, u32, u32, u32, usize) {
        let (c, b, s, t, _) = *key;
        (
            self.cond[&c],
            self.block[&(c, b)],
            self.src[&(c, b, s)],
            self.tgt[&(c, b, s, t)],
            entry,
        )
    }
}

/// The added, removed and modified expanded AV rules from `left` to `right`, in setools'
/// order.
#[pyfunction]
pub fn av_rule_diff(
    py: Python<'_>,
    left: Vec<RuleIn>,
    right: Vec<RuleIn>,
) -> PyResult<Vec<DiffOut>> {
    // Seconds of work on large policies: other Python threads run meanwhile.
    py.detach(move || diff(&left, &right))
        .map_err(|e: PermOverflow| PyValueError::new_err(e.to_string()))
}

/// A class with more permission names than a 64-bit mask holds.
#[derive(Debug, thiserror::Error)]
#[error("class id {0} has more than 64 permissions")]
struct PermOverflow(u32);

fn diff(left: &[RuleIn], right: &[RuleIn]) -> Result<Vec<DiffOut>, PermOverflow> {
    let mut perms = PermBits::default();
    let mut order = Order::default();
    let mut index: HashMap<Key, u32> = HashMap::default();
    let mut keys: Vec<Key> = Vec::new();
    let mut entries: Vec<Pair> = Vec::new();
    // setools seeds the unconditional block first.
    order.note_block(0, true);
    for (side, rules) in [(0usize, left), (1, right)] {
        for (i, (cond, block, class, rule_perms, sources, targets)) in rules.iter().enumerate() {
            let bits = perms.mask(*class, rule_perms)?;
            order.note_block(*cond, *block);
            for &s in sources {
                order.note_src(*cond, *block, s);
                for &t in targets {
                    let key = (*cond, *block, s, t, *class);
                    // One hash per pair (entry, not get then insert).
                    let e = match index.entry(key) {
                        Entry::Occupied(o) => *o.get() as usize,
                        Entry::Vacant(v) => {
                            order.note_tgt(*cond, *block, s, t);
                            v.insert(entries.len() as u32);
                            keys.push(key);
                            entries.push(Pair::default());
                            entries.len() - 1
                        }
                    };
                    let slot = &mut entries[e].sides[side];
                    match slot.get() {
                        Some(_) => slot.0.bits |= bits,
                        None => slot.set(Some(Side {
                            bits,
                            rule: i as u32,
                        })),
                    }
                }
            }
        }
    }
    remove_redundant(&keys, &mut entries, &index);
    // Each entry's rank is looked up once (not once per comparison).
    let mut ranked: Vec<_> = (0..entries.len())
        .map(|e| order.rank(&keys[e], e))
        .collect();
    ranked.sort_unstable();
    let mut out = Vec::new();
    for (.., e) in ranked {
        let (_, _, s, t, class) = keys[e];
        let [l, r] = entries[e].sides;
        match [l.get(), r.get()] {
            [Some(l), Some(r)] => {
                if l.bits != r.bits {
                    out.push((
                        2,
                        l.rule as usize,
                        s,
                        t,
                        perms.ids(class, l.bits),
                        perms.ids(class, r.bits),
                    ));
                }
            }
            [Some(l), None] => out.push((
                1,
                l.rule as usize,
                s,
                t,
                perms.ids(class, l.bits),
                Vec::new(),
            )),
            [None, Some(r)] => out.push((
                0,
                r.rule as usize,
                s,
                t,
                Vec::new(),
                perms.ids(class, r.bits),
            )),
            [None, None] => {}
        }
    }
    Ok(out)
}

/// Drops from each conditional key the permissions the same side grants unconditionally
/// (a side left with none disappears), as setools' `_av_remove_redundant_rules`.
fn remove_redundant(keys: &[Key], entries: &mut [Pair], index: &HashMap<Key, u32>) {
    for (e, key) in keys.iter().enumerate() {
        let (c, _, s, t, class) = *key;
        if c == 0 {
            continue;
        }
        let Some(&u) = index.get(&(0, true, s, t, class)) else {
            continue;
        };
        let uncond = entries[u as usize].sides;
        for (slot, us) in entries[e].sides.iter_mut().zip(uncond) {
            if let (Some(us), Some(cs)) = (us.get(), slot.get()) {
                let rest = cs.bits & !us.bits;
                if rest != cs.bits {
                    slot.set((rest != 0).then_some(Side {
                        bits: rest,
                        rule: cs.rule,
                    }));
                }
            }
        }
    }
}
