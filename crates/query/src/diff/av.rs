//! The AV rule sections (allow, auditallow, dontaudit), expanded and compared as sediff
//! does, streamed one source type at a time.

use super::Section;
use crate::index::Index;
use crate::render;
use arbiter_policy::avtab::{Avtab, AvtabDatum, AvtabKind};
use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::{ClassId, TypeId};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The section keys this module answers.
pub(super) const KEYS: &[&str] = &["allow", "auditallow", "dontaudit"];

/// The section for `key`, or `None` when `key` is not one of [`KEYS`].
pub(super) fn section(key: &str, li: &Index<'_>, ri: &Index<'_>) -> Option<Section> {
    Some(match key {
        "allow" => av_section(li, ri, AvtabKind::Allowed, "Allow Rules"),
        "auditallow" => av_section(li, ri, AvtabKind::AuditAllow, "Auditallow Rules"),
        "dontaudit" => av_section(li, ri, AvtabKind::AuditDeny, "Dontaudit Rules"),
        _ => return None,
    })
}

/// A rule's place in an expanded key: conditional (interned expression, branch) or none.
type CondKey = Option<(u32, bool)>;

/// One policy's side of the AV comparison, indexed for streaming by source type.
struct AvSide<'a, 'p> {
    index: &'a Index<'p>,
    /// For each type-table slot: the rules written on it as source, as (table, entry,
    /// conditional key).
    by_source: Vec<Vec<(bool, u32, CondKey)>>,
    /// Per class: this policy's permission bit -> shared permission number.
    perm_map: Vec<[u8; 32]>,
    /// Per class slot: the shared class number.
    class_map: Vec<u32>,
    /// Per type slot: the shared type number (`u32::MAX` for attributes).
    type_map: Vec<u32>,
}

/// Names shared by both policies: conditional expressions, type names, class names and
/// per-class permission names, each mapped to a small number.
#[derive(Default)]
struct Shared {
    conds: HashMap<String, u32>,
    cond_text: Vec<String>,
    classes: HashMap<String, u32>,
    class_text: Vec<String>,
    types: HashMap<String, u32>,
    type_text: Vec<String>,
    perms: Vec<HashMap<String, u8>>,
    perm_text: Vec<Vec<String>>,
}

impl Shared {
    fn cond(&mut self, text: String) -> u32 {
        if let Some(&i) = self.conds.get(&text) {
            return i;
        }
        let i = self.cond_text.len() as u32;
        self.conds.insert(text.clone(), i);
        self.cond_text.push(text);
        i
    }
    fn type_name(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.types.get(name) {
            return i;
        }
        let i = self.type_text.len() as u32;
        self.types.insert(name.to_string(), i);
        self.type_text.push(name.to_string());
        i
    }
    fn class(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.classes.get(name) {
            return i;
        }
        let i = self.class_text.len() as u32;
        self.classes.insert(name.to_string(), i);
        self.class_text.push(name.to_string());
        self.perms.push(HashMap::new());
        self.perm_text.push(Vec::new());
        i
    }
    fn perm(&mut self, class: u32, name: &str) -> u8 {
        let m = &mut self.perms[class as usize];
        if let Some(&i) = m.get(name) {
            return i;
        }
        let i = self.perm_text[class as usize].len().min(127) as u8;
        m.insert(name.to_string(), i);
        self.perm_text[class as usize].push(name.to_string());
        i
    }
}

fn av_side<'a, 'p>(index: &'a Index<'p>, kind: AvtabKind, shared: &mut Shared) -> AvSide<'a, 'p> {
    let p = index.policy();
    let mut by_source = vec![Vec::new(); p.types.len()];
    let mut push = |table: &Avtab, cond: bool, i: usize, key: CondKey| {
        if let Some(e) = table.entries.get(i) {
            if e.key.kind == kind {
                if let Some(v) = by_source.get_mut(e.key.source.index()) {
                    v.push((cond, i as u32, key));
                }
            }
        }
    };
    for i in 0..p.avtab.entries.len() {
        push(&p.avtab, false, i, None);
    }
    for node in &p.cond_nodes {
        let text = render::cond_expr(p, &node.expr);
        let id = shared.cond(text);
        for (list, branch) in [(&node.true_list, true), (&node.false_list, false)] {
            for i in list.start..list.end {
                push(&p.cond_avtab, true, i as usize, Some((id, branch)));
            }
        }
    }
    let mut perm_map = Vec::with_capacity(p.classes.len());
    let mut class_map = Vec::with_capacity(p.classes.len());
    for c in 0..p.classes.len() {
        let mut map = [u8::MAX; 32];
        let mut sc = u32::MAX;
        if let Some(cid) = ClassId::from_index(c) {
            if !p.classes[c].name.is_empty() {
                sc = shared.class(index.class_name(cid));
                for (name, bit) in index.class_perms(cid) {
                    map[bit as usize] = shared.perm(sc, name);
                }
            }
        }
        perm_map.push(map);
        class_map.push(sc);
    }
    let type_map = p
        .types
        .iter()
        .map(|t| {
            if t.flavor == TypeFlavor::Type {
                shared.type_name(&t.name)
            } else {
                u32::MAX
            }
        })
        .collect();
    AvSide {
        index,
        by_source,
        perm_map,
        class_map,
        type_map,
    }
}

/// An expanded key of one source type, packed so that sorting groups a (target, class)
/// with its unconditional entry first: target (shared type number, 24 bits) << 40 | shared
/// class (16 bits) << 24 | conditional (24 bits; 0: none, else 1 + 2 * expression + branch).
type Key = u64;

fn pack(target: u32, class: u32, ck: CondKey) -> Key {
    let cond = match ck {
        None => 0,
        Some((c, b)) => (1 + 2 * u64::from(c) + u64::from(b)) & 0xff_ffff,
    };
    (u64::from(target & 0xff_ffff) << 40) | (u64::from(class & 0xffff) << 24) | cond
}

fn unpack(k: Key) -> (u32, u32, CondKey) {
    let cond = k & 0xff_ffff;
    let ck = if cond == 0 {
        None
    } else {
        Some((((cond - 1) / 2) as u32, (cond - 1) % 2 == 1))
    };
    ((k >> 40) as u32, ((k >> 24) & 0xffff) as u32, ck)
}

impl AvSide<'_, '_> {
    /// Every expanded key of source type `s` with its permissions, sorted by key, merged,
    /// and with conditional permissions also granted unconditionally removed.
    fn expand_source(&self, s: TypeId, kind: AvtabKind, out: &mut Vec<(Key, u128)>) {
        out.clear();
        let p = self.index.policy();
        let slots = std::iter::once(s).chain(self.index.attributes_of(s));
        for slot in slots {
            for &(cond, i, ck) in self.by_source.get(slot.index()).into_iter().flatten() {
                let table = if cond { &p.cond_avtab } else { &p.avtab };
                let Some(e) = table.entries.get(i as usize) else {
                    continue;
                };
                let AvtabDatum::Perms(bits) = e.datum() else {
                    continue;
                };
                let bits = if kind == AvtabKind::AuditDeny {
                    !bits
                } else {
                    bits
                };
                let (Some(map), Some(&class)) = (
                    self.perm_map.get(e.key.class.index()),
                    self.class_map.get(e.key.class.index()),
                ) else {
                    continue;
                };
                let mut set = 0u128;
                for (b, &shared_bit) in map.iter().enumerate() {
                    if bits & (1 << b) != 0 && shared_bit != u8::MAX {
                        set |= 1u128 << shared_bit;
                    }
                }
                if set == 0 {
                    continue;
                }
                for &t in self.index.expand(e.key.target) {
                    let Some(&tid) = self.type_map.get(t.index()) else {
                        continue;
                    };
                    out.push((pack(tid, class, ck), set));
                }
            }
        }
        out.sort_unstable_by_key(|e| e.0);
        let mut merged: Vec<(Key, u128)> = Vec::with_capacity(out.len());
        let mut uncond: Option<(Key, u128)> = None;
        for &(k, v) in out.iter() {
            if let Some(last) = merged.last_mut() {
                if last.0 == k {
                    last.1 |= v;
                    continue;
                }
            }
            merged.push((k, v));
        }
        let mut w = 0;
        for r in 0..merged.len() {
            let (k, mut v) = merged[r];
            let group = k & !0xff_ffff;
            if k & 0xff_ffff == 0 {
                uncond = Some((group, v));
            } else if let Some((g, u)) = uncond {
                if g == group {
                    v &= !u;
                }
            }
            if v != 0 {
                merged[w] = (k, v);
                w += 1;
            }
        }
        merged.truncate(w);
        *out = merged;
    }
}

fn av_section(
    left: &Index<'_>,
    right: &Index<'_>,
    kind: AvtabKind,
    title: &'static str,
) -> Section {
    let mut shared = Shared::default();
    let l = av_side(left, kind, &mut shared);
    let r = av_side(right, kind, &mut shared);
    let mut s = Section {
        title,
        noun: title,
        has_modified: true,
        ..Section::default()
    };
    let perm_names = |class: u32, set: u128| -> Vec<&str> {
        let mut v: Vec<&str> = (0..128)
            .filter(|b| set & (1u128 << b) != 0)
            .filter_map(|b| {
                shared
                    .perm_text
                    .get(class as usize)?
                    .get(b)
                    .map(String::as_str)
            })
            .collect();
        v.sort_unstable();
        v
    };
    let cond_suffix = |ck: CondKey, block: bool| match ck {
        None => String::new(),
        Some((c, branch)) => {
            let text = shared.cond_text.get(c as usize).map_or("", String::as_str);
            if block {
                format!(" [ {text} ]:{}", if branch { "True" } else { "False" })
            } else {
                format!(" [ {text} ]")
            }
        }
    };
    let kw = kind.name();
    let statement = |src: &str, tgt: &str, class: u32, set: u128, ck: CondKey| {
        let perms = perm_names(class, set);
        let body = if perms.len() > 1 {
            format!("{{ {} }};", perms.join(" "))
        } else {
            format!("{};", perms.first().copied().unwrap_or(""))
        };
        format!(
            "{kw} {src} {tgt}:{} {body}{}",
            shared
                .class_text
                .get(class as usize)
                .map_or("", String::as_str),
            cond_suffix(ck, true)
        )
    };
    let type_ids = |idx: &Index<'_>| -> BTreeMap<String, TypeId> {
        let p = idx.policy();
        (0..p.types.len())
            .filter_map(TypeId::from_index)
            .filter(|t| p.types[t.index()].flavor == TypeFlavor::Type)
            .map(|t| (idx.type_name(t).to_string(), t))
            .collect()
    };
    let (lt, rt) = (type_ids(left), type_ids(right));
    let mut sources: BTreeSet<&str> = lt.keys().map(String::as_str).collect();
    sources.extend(rt.keys().map(String::as_str));
    let mut modified: Vec<(String, String)> = Vec::new();
    let (mut lm, mut rm) = (Vec::new(), Vec::new());
    let tname = |t: u32| shared.type_text.get(t as usize).map_or("", String::as_str);
    for src in sources {
        match lt.get(src) {
            Some(&t) => l.expand_source(t, kind, &mut lm),
            None => lm.clear(),
        }
        match rt.get(src) {
            Some(&t) => r.expand_source(t, kind, &mut rm),
            None => rm.clear(),
        }
        let (mut i, mut j) = (0, 0);
        while i < lm.len() || j < rm.len() {
            let order = match (lm.get(i), rm.get(j)) {
                (Some(a), Some(b)) => a.0.cmp(&b.0),
                (Some(_), None) => std::cmp::Ordering::Less,
                _ => std::cmp::Ordering::Greater,
            };
            match order {
                std::cmp::Ordering::Less => {
                    let (k, lp) = lm[i];
                    let (t, c, ck) = unpack(k);
                    s.removed.push(statement(src, tname(t), c, lp, ck));
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    let (k, rp) = rm[j];
                    let (t, c, ck) = unpack(k);
                    s.added.push(statement(src, tname(t), c, rp, ck));
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    let ((k, lp), (_, rp)) = (lm[i], rm[j]);
                    i += 1;
                    j += 1;
                    let common = lp & rp;
                    let (added, removed) = (rp & !common, lp & !common);
                    if added == 0 && removed == 0 {
                        continue;
                    }
                    let (t, c, ck) = unpack(k);
                    let mut words: Vec<String> = perm_names(c, common)
                        .into_iter()
                        .map(str::to_string)
                        .collect();
                    words.extend(perm_names(c, added).into_iter().map(|p| format!("+{p}")));
                    words.extend(perm_names(c, removed).into_iter().map(|p| format!("-{p}")));
                    let line = format!(
                        "{kw} {src} {}:{} {{ {} }};{}",
                        tname(t),
                        shared.class_text.get(c as usize).map_or("", String::as_str),
                        words.join(" "),
                        cond_suffix(ck, false)
                    );
                    // sediff sorts modified rules by the left rule's statement.
                    modified.push((statement(src, tname(t), c, lp, ck), line));
                }
            }
        }
    }
    s.added.sort_unstable();
    s.removed.sort_unstable();
    modified.sort_unstable();
    s.modified = modified.into_iter().map(|(_, l)| (l, Vec::new())).collect();
    s
}
