//! Access-vector and type rules entered into the unconditional table (or a
//! conditional list) in libsepol's order, and the rule form the checks read.

use super::*;

pub(super) fn murmur(key: &AvtabKey) -> u32 {
    key.libsepol_hash() & (crate::CIL_AVTAB_SLOTS - 1)
}

/// Sorts unconditional entries into libsepol's written order: slot, then (s, t, c), then
/// insertion order.
///
/// The order is computed on one `u64` per entry (slot above, position below) and applied
/// in place: 8 bytes an entry of scratch where `sort_by_cached_key` took 16, at the
/// point where the build's memory peaks.
pub(super) fn avtab_order(entries: &mut [AvtabEntry]) {
    let n = u32::try_from(entries.len()).expect("avtab entries are counted in u32");
    let mut order: Vec<u64> = (0..n)
        .map(|i| (u64::from(murmur(&entries[i as usize].key)) << 32) | u64::from(i))
        .collect();
    let pos = |x: u64| (x & u64::from(u32::MAX)) as usize;
    // By slot and position; then each run of one slot (a few entries at most: 2^20
    // slots) by (s, t, c), position breaking ties.
    sort_by_slot(&mut order);
    let mut a = 0;
    while a < order.len() {
        let slot = order[a] >> 32;
        // Runs are a few entries: a scan, where a binary search over the rest of the
        // table cost 100 instructions an entry.
        let mut b = a + 1;
        while b < order.len() && order[b] >> 32 == slot {
            b += 1;
        }
        if b - a > 1 {
            order[a..b].sort_unstable_by(|&x, &y| {
                let (kx, ky) = (&entries[pos(x)].key, &entries[pos(y)].key);
                (kx.source, kx.target, kx.class, pos(x)).cmp(&(
                    ky.source,
                    ky.target,
                    ky.class,
                    pos(y),
                ))
            });
        }
        a = b;
    }
    // Entry j takes the entry at `pos(order[j])`: follow each cycle of the permutation,
    // marking a place done by pointing it at itself.
    for start in 0..order.len() {
        let mut cur = start;
        while pos(order[cur]) != cur {
            let next = pos(order[cur]);
            order[cur] = cur as u64;
            if next == start {
                break;
            }
            entries.swap(cur, next);
            cur = next;
        }
    }
}

/// Sorts `order` (slot in the high 32 bits, position in the low) as integers, in place:
/// the entries are first dealt into buckets by the slot's top bits (an American flag
/// sort: each entry swapped into its bucket's next free place), about four entries a
/// bucket and at most 2^14 buckets (64 KB of bucket ends), then each bucket sorted by
/// insertion (by comparison past 16 entries). A comparison sort of the whole table cost
/// 150 instructions an entry, and one of 1,024 buckets of a hundred entries 45; a radix
/// sort with a second buffer put that buffer at the build's memory peak.
fn sort_by_slot(order: &mut [u64]) {
    let n = order.len();
    let bits = (usize::BITS - n.leading_zeros())
        .saturating_sub(2)
        .clamp(4, 14);
    let buckets = 1usize << bits;
    let top = order.iter().map(|&x| x >> 32).max().unwrap_or(0);
    let shift = 32 + (64 - top.leading_zeros()).saturating_sub(bits);
    let digit = |x: u64| (x >> shift) as usize & (buckets - 1);
    // Positions fit u32: the avtab is numbered in u32 ([`avtab_order`]).
    let mut end = vec![0u32; buckets];
    for &x in order.iter() {
        end[digit(x)] += 1;
    }
    let mut sum = 0;
    for e in end.iter_mut() {
        sum += *e;
        *e = sum;
    }
    // `next[d]`: bucket d's first place not yet holding one of its entries.
    let mut next = vec![0u32; buckets];
    next[1..].copy_from_slice(&end[..buckets - 1]);
    for d in 0..buckets {
        while next[d] < end[d] {
            let x = order[next[d] as usize];
            let dx = digit(x);
            if dx != d {
                order.swap(next[d] as usize, next[dx] as usize);
            }
            next[dx] += 1;
        }
    }
    let mut start = 0;
    for &e in &end {
        let bucket = &mut order[start..e as usize];
        if bucket.len() > 16 {
            bucket.sort_unstable();
        } else {
            for i in 1..bucket.len() {
                let x = bucket[i];
                let mut j = i;
                while j > 0 && bucket[j - 1] > x {
                    bucket[j] = bucket[j - 1];
                    j -= 1;
                }
                bucket[j] = x;
            }
        }
        start = e as usize;
    }
}

pub(super) fn kind_bits(kw: Kw) -> AvtabKind {
    match kw {
        Kw::Allow => AvtabKind::Allowed,
        Kw::AuditAllow => AvtabKind::AuditAllow,
        Kw::DontAudit => AvtabKind::AuditDeny,
        Kw::TypeTransition => AvtabKind::Transition,
        Kw::TypeChange => AvtabKind::Change,
        _ => AvtabKind::Member,
    }
}

/// An av rule statement as the checks see it (`crate::check::AstRule`).
pub(super) fn ast_rule(l: &mut L<'_>, s: u32) -> Result<crate::check::AstRule, Fail> {
    use crate::check::TypeRef;
    let st = l.ast.stmts[s as usize];
    let a = l.args(s);
    let operand = |l: &mut L<'_>, n: u32| -> Result<(Option<TypeRef>, String), Fail> {
        Ok(match l.tref(n)? {
            TRef::Type(i) => (Some(TypeRef::Type(i)), l.name(l.types[i as usize])),
            TRef::Attr(x) => {
                let m = l.members(x)?;
                (Some(TypeRef::Attr(x, m)), l.name(l.attrs[x as usize]))
            }
            TRef::SelfT => (None, Kw::SelfKw.text().into()),
        })
    };
    let (src, src_name) = operand(l, a[1])?;
    let (tgt, tgt_name) = operand(l, a[2])?;
    let src = src.ok_or_else(|| err(format!("self is not a valid source at {}", l.here(s))))?;
    let x = matches!(
        st.kw,
        Kw::AllowX | Kw::AuditAllowX | Kw::DontAuditX | Kw::NeverAllowX
    );
    let (perms, ioctls, perm_text) = if x {
        let (ci, nums) = permx_value(l, a[3])?;
        let px = if l.t.is_list(a[3]) {
            a[3]
        } else {
            let d = l.look(Ns::PermissionX, a[3])?;
            l.args(l.ast.decls[d as usize].stmt)[2]
        };
        let k = l.t.kids(px);
        let expr = node_text(l, k[2]);
        let expr = if l.t.is_list(k[2]) {
            expr
        } else {
            format!("({expr})")
        };
        let text = format!("(ioctl {} {expr})", node_text(l, k[1]));
        let cd = l.classes[ci as usize];
        let bit = l.perm_bit(cd, ci, Kw::Ioctl.sym())?;
        (vec![(ci, bit)], Some((ci, nums)), text)
    } else {
        let perms = match l.handed_perms(s) {
            Some(v) => vec![v],
            None => l.classperms(a[3])?,
        };
        (perms, None, node_text(l, a[3]))
    };
    Ok(crate::check::AstRule {
        stmt: s,
        src,
        tgt,
        perms,
        ioctls,
        text: format!("({} {src_name} {tgt_name} {perm_text})", st.kw.text()),
    })
}

/// The error for an entry whose datum is not the one its kind stores (never made by the
/// lowering, whose rule kinds choose their datum).
pub(super) fn mismatch(e: arbiter_policy::avtab::DatumKindMismatch) -> Fail {
    err(e.to_string())
}

/// The error for an avtab past what the rule index can number.
pub(super) fn too_many(_: avindex::TooManyRules) -> Fail {
    err("Too many access vector table entries".into())
}

pub(super) type UnTab<'x> = (&'x mut Vec<AvtabEntry>, &'x mut AvIndex);

/// Lowers an av rule statement into the unconditional table (`uncond`) or a branch of
/// a conditional node (`cond`).
pub(super) fn av_rule(
    l: &mut L<'_>,
    s: u32,
    uncond: Option<UnTab<'_>>,
    cond: Option<(&mut CondBuild, bool)>,
) -> Result<(), Fail> {
    let st = l.ast.stmts[s as usize];
    if st.kw == Kw::DontAudit && l.opts.disable_dontaudit {
        return Ok(());
    }
    let a = l.args(s);
    let src = l.tref(a[1])?;
    let tgt = l.tref(a[2])?;
    let kind = kind_bits(st.kw);
    let mut to = match (uncond, cond) {
        (Some(u), _) => RuleDest::Table(u),
        (None, Some((cb, br))) => RuleDest::List(if br {
            &mut cb.true_list
        } else {
            &mut cb.false_list
        }),
        (None, None) => return Ok(()),
    };
    // Most statements (a macro's rule at each call) name one type or kept attribute on
    // each side and one permission list the resolver handed over: one key, no buffers.
    let handed = l.handed_perms(s);
    if let Some((ci, bits)) = handed {
        let sv = match (src, tgt) {
            // With `self`, an attribute source is expanded whether kept or not.
            (TRef::Type(i), TRef::SelfT) => Some(l.type_val[i as usize]),
            (_, TRef::SelfT) => None,
            _ => one_value(l, src)?,
        };
        let tv = match tgt {
            TRef::SelfT => sv,
            _ => one_value(l, tgt)?,
        };
        if let (Some(sv), Some(tv)) = (sv, tv) {
            if bits != 0 {
                enter(&mut to, rule_key(sv, tv, ci, kind), bits)?;
            }
            return Ok(());
        }
    }
    let mut cps = std::mem::take(&mut l.cp_buf);
    cps.clear();
    match handed {
        Some(v) => cps.push(v),
        None => l.classperms_into(a[3], 0, &mut cps)?,
    }
    let mut srcs = std::mem::take(&mut l.src_buf);
    let mut tgts = std::mem::take(&mut l.tgt_buf);
    let selfy = tgt == TRef::SelfT;
    if selfy {
        l.expand_all_into(src, &mut srcs)?;
        tgts.clear();
    } else {
        l.expand_av_into(src, &mut srcs)?;
        l.expand_av_into(tgt, &mut tgts)?;
    }
    for &sv in &srcs {
        let tl: &[u32] = if selfy {
            std::slice::from_ref(&sv)
        } else {
            &tgts
        };
        for &tv in tl {
            for &(ci, bits) in &cps {
                if bits != 0 {
                    enter(&mut to, rule_key(sv, tv, ci, kind), bits)?;
                }
            }
        }
    }
    l.cp_buf = cps;
    l.src_buf = srcs;
    l.tgt_buf = tgts;
    Ok(())
}

/// The common case of an av rule, without [`av_rule`]'s general machinery: a
/// permission list the resolver handed over, and on each side a type or a kept
/// attribute (or a type and `self`) already in the [`L::tref`] memo: all but a few
/// hundred of a distribution policy's 160,000 unconditional rules. Its one entry and
/// the entry's permission word, or `Some(None)` for a list with no bit (no entry at all); `None` for any other rule,
/// which [`av_rule`] then enters (or reports the failure of). Always inlined, into the
/// rules' loops, where the call, the result through memory and the destination's
/// dispatch cost about a third of each rule.
#[inline(always)]
fn fast_entry(l: &L<'_>, s: u32) -> Option<Option<(AvtabEntry, u32)>> {
    let (ci, bits) = l.handed_perms(s)?;
    let a = l.args(s);
    let (&sn, &tn) = (a.get(1)?, a.get(2)?);
    // With `self`, an attribute source is expanded whether kept or not.
    let (sv, tv) = if l.t.sym(tn) == Some(Kw::SelfKw.sym()) {
        let sv = l.type_val[l.memo_type(sn)? as usize];
        (sv, sv)
    } else {
        (l.memo_one_value(sn)?, l.memo_one_value(tn)?)
    };
    if bits == 0 {
        return Some(None);
    }
    let kind = kind_bits(l.ast.stmts[s as usize].kw);
    let data = if kind == AvtabKind::AuditDeny {
        !bits
    } else {
        bits
    };
    let entry = AvtabEntry::new(rule_key(sv, tv, ci, kind), AvtabDatum::Perms(data)).ok()?;
    Some(Some((entry, data)))
}

/// [`fast_entry`] entered into the unconditional table (merged with an entry of the
/// same key). Returns false, having changed nothing, for a rule it does not take.
#[inline(always)]
pub(super) fn av_rule_fast(
    l: &L<'_>,
    s: u32,
    tab: &mut Vec<AvtabEntry>,
    idx: &mut AvIndex,
) -> bool {
    let Some(entry) = fast_entry(l, s) else {
        return false;
    };
    let Some((entry, data)) = entry else {
        return true;
    };
    let deny = entry.key.kind == AvtabKind::AuditDeny;
    match idx.find_or_append(tab, entry) {
        Ok(Some(i)) => {
            if let Some(mut p) = tab[i as usize].perms_mut() {
                if deny {
                    *p &= data
                } else {
                    *p |= data
                }
            }
            true
        }
        Ok(None) => true,
        Err(_) => false,
    }
}

/// [`fast_entry`] appended to a conditional branch's list (merged later, as libsepol
/// does). Returns false, having changed nothing, for a rule it does not take.
#[inline(always)]
pub(super) fn av_rule_fast_cond(l: &L<'_>, s: u32, list: &mut Vec<AvtabEntry>) -> bool {
    match fast_entry(l, s) {
        Some(entry) => {
            list.extend(entry.map(|(e, _)| e));
            true
        }
        None => false,
    }
}

/// An av rule side that stands for one value: a type, or a kept attribute not expanded.
#[inline(always)]
fn one_value(l: &mut L<'_>, r: TRef) -> Result<Option<u32>, Fail> {
    Ok(match r {
        TRef::Type(i) => Some(l.type_val[i as usize]),
        TRef::Attr(x) if l.attr_kept_whole(x)? => Some(l.attr_val[x as usize]),
        _ => None,
    })
}

/// Where an av rule's keys go: the unconditional table (merged by key) or a
/// conditional branch's list (merged later, as libsepol does).
enum RuleDest<'x> {
    Table(UnTab<'x>),
    List(&'x mut Vec<AvtabEntry>),
}

#[inline(always)]
fn rule_key(sv: u32, tv: u32, ci: u32, kind: AvtabKind) -> AvtabKey {
    AvtabKey {
        source: TypeId::new(sv as u16).expect("type"),
        target: TypeId::new(tv as u16).expect("type"),
        class: ClassId::new(ci as u16 + 1).expect("class"),
        kind,
    }
}

/// Enters one key with permission bits `bits` (dontaudit stores the complement, and
/// merges by intersection).
#[inline(always)]
fn enter(to: &mut RuleDest<'_>, key: AvtabKey, bits: u32) -> Result<(), Fail> {
    let deny = key.kind == AvtabKind::AuditDeny;
    let data = if deny { !bits } else { bits };
    let entry = AvtabEntry::new(key, AvtabDatum::Perms(data)).map_err(mismatch)?;
    match to {
        RuleDest::Table((tab, idx)) => {
            // One probe of the index whether the key is new or not.
            if let Some(i) = idx.find_or_append(tab, entry).map_err(too_many)? {
                if let Some(mut p) = tab[i as usize].perms_mut() {
                    if deny {
                        *p &= data
                    } else {
                        *p |= data
                    }
                }
            }
        }
        RuleDest::List(list) => list.push(entry),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_sort_orders_as_integers_do() {
        // Slots over the whole 20-bit range and beyond one pass, positions ascending.
        let mut order: Vec<u64> = (0..5000u64)
            .map(|i| ((i * 7919 % 1_048_576) << 32) | i)
            .collect();
        order.extend((5000..5100u64).map(|i| (3u64 << 32) | i));
        let mut expected = order.clone();
        expected.sort_unstable();
        sort_by_slot(&mut order);
        assert_eq!(order, expected);
        // Slots that fit one bucket digit, and an empty table.
        let mut small: Vec<u64> = (0..300u64).rev().map(|i| ((i % 7) << 32) | i).collect();
        let mut expected = small.clone();
        expected.sort_unstable();
        sort_by_slot(&mut small);
        assert_eq!(small, expected);
        sort_by_slot(&mut []);
        // A distribution policy's size (2^14 buckets), slots over the 20 bits of
        // libsepol's table, a few sharing a slot.
        let mut big: Vec<u64> = (0..120_000u64)
            .map(|i| ((i * 2_654_435_761 % 1_048_576) << 32) | i)
            .collect();
        big.extend((120_000..120_040u64).map(|i| (77u64 << 32) | i));
        let mut expected = big.clone();
        expected.sort_unstable();
        sort_by_slot(&mut big);
        assert_eq!(big, expected);
    }
}
