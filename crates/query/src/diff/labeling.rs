//! The labeling sections: initial SIDs, ibendportcon, ibpkeycon, fs_use, genfscon,
//! netifcon, nodecon and portcon statements.
//!
//! Each statement is matched across the policies by what it labels (a SID name, a port
//! range, a network...) and is modified when its context differs. Contexts are compared as
//! setools' `ContextWrapper` does: user, role and type by name, and the range by its
//! levels' sensitivity and category names; a policy without MLS has no range, so its
//! contexts never equal those of an MLS policy.

use super::mls::LevelMatch;
use super::Section;
use crate::index::Index;
use crate::info;
use arbiter_policy::mls::Context;
use std::collections::HashMap;
use std::hash::Hash;

/// The section keys this module answers.
pub(super) const KEYS: &[&str] = &[
    "initialsid",
    "ibendportcon",
    "ibpkeycon",
    "fs_use",
    "genfscon",
    "netifcon",
    "nodecon",
    "portcon",
];

/// The section for `key`, or `None` when `key` is not one of [`KEYS`].
pub(super) fn section(key: &str, li: &Index<'_>, ri: &Index<'_>) -> Option<Section> {
    if !KEYS.contains(&key) {
        return None;
    }
    let contexts = Contexts::new(li, ri);
    Some(match key {
        "initialsid" => initial_sids(&contexts),
        "ibendportcon" => contexts.section("Ibendportcons", ("", ""), |ix| {
            ix.policy()
                .ocontexts
                .ibendports
                .iter()
                .map(|e| {
                    let head = format!("ibendportcon {} {}", e.device, e.port);
                    ((e.device.to_string(), e.port), head, &e.context)
                })
                .collect()
        }),
        "ibpkeycon" => contexts.section("Ibpkeycons", ("", ""), |ix| {
            ix.policy()
                .ocontexts
                .ibpkeys
                .iter()
                .map(|k| {
                    let key = (k.subnet_prefix, k.low, k.high);
                    (key, info::ibpkeycon_head(k), &k.context)
                })
                .collect()
        }),
        "fs_use" => contexts.section("Fs_use", (";", ";"), |ix| {
            ix.policy()
                .ocontexts
                .fs_use
                .iter()
                .map(|f| {
                    let kw = info::fs_use_keyword(f.behavior);
                    let head = format!("{kw} {}", f.fstype);
                    ((kw, f.fstype.to_string()), head, &f.context)
                })
                .collect()
        }),
        "genfscon" => contexts.section("Genfscons", ("", ";"), |ix| {
            let p = ix.policy();
            p.genfs
                .iter()
                .map(|g| {
                    let ft = info::genfs_filetype(p, g.class);
                    let head = format!("genfscon {} {} {ft}", g.fstype, g.path);
                    (
                        (g.fstype.to_string(), g.path.to_string(), ft),
                        head,
                        &g.context,
                    )
                })
                .collect()
        }),
        "netifcon" => netifcons(&contexts),
        "nodecon" => contexts.section("Nodecons", ("", ";"), |ix| {
            let o = &ix.policy().ocontexts;
            let v4 = o.nodes.iter().map(|n| {
                let (net, prefix) = info::network4(n.addr, n.mask);
                let key = (false, net.to_vec(), prefix);
                (key, info::nodecon_head4(n.addr, n.mask), &n.context)
            });
            let v6 = o.nodes6.iter().map(|n| {
                let (net, prefix) = info::network6(n.addr, n.mask);
                let key = (true, net.to_vec(), prefix);
                (key, info::nodecon_head6(n.addr, n.mask), &n.context)
            });
            v4.chain(v6).collect()
        }),
        "portcon" => contexts.section("Portcons", ("", ";"), |ix| {
            ix.policy()
                .ocontexts
                .ports
                .iter()
                .map(|pc| {
                    let key = (pc.protocol, pc.low, pc.high);
                    (key, info::portcon_head(pc), &pc.context)
                })
                .collect()
        }),
        _ => return None,
    })
}

/// One statement: its matching key, its text up to the context, and its context.
type Labeled<'p, K> = (K, String, &'p Context);

/// Both policies, with what comparing their contexts needs.
struct Contexts<'a, 'p> {
    left: &'a Index<'p>,
    right: &'a Index<'p>,
    levels: LevelMatch<'p>,
}

impl<'a, 'p> Contexts<'a, 'p> {
    fn new(left: &'a Index<'p>, right: &'a Index<'p>) -> Self {
        Contexts {
            left,
            right,
            levels: LevelMatch::new(left.policy(), right.policy()),
        }
    }

    /// Whether a left context and a right context are the same context.
    fn same(&self, l: &Context, r: &Context) -> bool {
        let (lp, rp) = (self.left.policy(), self.right.policy());
        let user = |p: &'p arbiter_policy::Policy, c: &Context| {
            p.users.get(c.user.index()).map_or("", |u| &*u.name)
        };
        user(lp, l) == user(rp, r)
            && self.left.role_name(l.role) == self.right.role_name(r.role)
            && self.left.type_name(l.ty) == self.right.type_name(r.ty)
            && match (lp.mls, rp.mls) {
                (true, true) => self.levels.same_range(&l.range, &r.range),
                (false, false) => true,
                _ => false,
            }
    }

    /// A section of statements matched by key: added and removed ones listed by their
    /// statement (`HEAD CONTEXT` and the first of `ends`), modified ones as
    /// `HEAD +[new context] -[old context]` and the second of `ends`, all sorted by
    /// statement (the left policy's, for modified ones).
    fn section<K: Hash + Eq>(
        &self,
        title: &'static str,
        (statement_end, end): (&str, &str),
        items: impl Fn(&'a Index<'p>) -> Vec<Labeled<'p, K>>,
    ) -> Section {
        let (l, r) = (items(self.left), items(self.right));
        let mut s = Section {
            title,
            noun: title,
            has_modified: true,
            ..Section::default()
        };
        let statement = |ix: &Index<'_>, (_, head, ctx): &Labeled<'_, K>| {
            format!("{head} {}{statement_end}", info::context(ix, ctx))
        };
        let (lk, rk) = (first_by_key(&l), first_by_key(&r));
        s.added = sorted(
            rk.iter()
                .filter(|(k, _)| !lk.contains_key(*k))
                .map(|(_, &i)| statement(self.right, &r[i])),
        );
        s.removed = sorted(
            lk.iter()
                .filter(|(k, _)| !rk.contains_key(*k))
                .map(|(_, &i)| statement(self.left, &l[i])),
        );
        let mut modified: Vec<(String, String)> = lk
            .iter()
            .filter_map(|(k, &i)| rk.get(k).map(|&j| (&l[i], &r[j])))
            .filter(|(a, b)| !self.same(a.2, b.2))
            .map(|(a, b)| {
                let line = format!(
                    "{} +[{}] -[{}]{end}",
                    a.1,
                    info::context(self.right, b.2),
                    info::context(self.left, a.2)
                );
                (statement(self.left, a), line)
            })
            .collect();
        modified.sort();
        s.modified = modified.into_iter().map(|(_, m)| (m, Vec::new())).collect();
        s
    }
}

/// Key -> position of the first statement with that key (setools' sets keep the first).
fn first_by_key<K: Hash + Eq, T>(items: &[(K, String, T)]) -> HashMap<&K, usize> {
    let mut m = HashMap::with_capacity(items.len());
    for (i, (k, _, _)) in items.iter().enumerate() {
        m.entry(k).or_insert(i);
    }
    m
}

fn sorted(v: impl Iterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = v.collect();
    v.sort();
    v
}

/// Initial SIDs, matched and sorted by name; modified ones as `NAME +[new] -[old];`.
fn initial_sids(c: &Contexts<'_, '_>) -> Section {
    let sids = |ix: &Index<'_>| -> Vec<(&'static str, usize)> {
        let mut v: Vec<(&'static str, usize)> = ix
            .policy()
            .ocontexts
            .initial_sids
            .iter()
            .enumerate()
            .map(|(i, s)| (info::sid_name(s.sid), i))
            .collect();
        v.sort();
        v.dedup_by_key(|x| x.0);
        v
    };
    let (l, r) = (sids(c.left), sids(c.right));
    let (lm, rm): (HashMap<&str, usize>, HashMap<&str, usize>) =
        (l.iter().copied().collect(), r.iter().copied().collect());
    let statement = |ix: &Index<'_>, name: &str, i: usize| {
        let ctx = &ix.policy().ocontexts.initial_sids[i].context;
        format!("sid {name} {}", info::context(ix, ctx))
    };
    let mut s = Section {
        title: "Initial SIDs",
        noun: "Initial SIDs",
        has_modified: true,
        ..Section::default()
    };
    s.added = r
        .iter()
        .filter(|(n, _)| !lm.contains_key(n))
        .map(|&(n, i)| statement(c.right, n, i))
        .collect();
    s.removed = l
        .iter()
        .filter(|(n, _)| !rm.contains_key(n))
        .map(|&(n, i)| statement(c.left, n, i))
        .collect();
    for &(name, i) in &l {
        let Some(&j) = rm.get(name) else { continue };
        let (lc, rc) = (
            &c.left.policy().ocontexts.initial_sids[i].context,
            &c.right.policy().ocontexts.initial_sids[j].context,
        );
        if !c.same(lc, rc) {
            s.modified.push((
                format!(
                    "{name} +[{}] -[{}];",
                    info::context(c.right, rc),
                    info::context(c.left, lc)
                ),
                Vec::new(),
            ));
        }
    }
    s
}

/// Netifcons, matched by interface name; a modified one lists its changed interface
/// (`Context:`) and packet (`Packet Context:`) contexts on lines of their own.
fn netifcons(c: &Contexts<'_, '_>) -> Section {
    let statement = |ix: &Index<'_>, n: &arbiter_policy::ocontext::NetifCon| {
        format!(
            "netifcon {} {} {}",
            n.name,
            info::context(ix, &n.if_context),
            info::context(ix, &n.msg_context)
        )
    };
    let (ln, rn) = (
        &c.left.policy().ocontexts.netifs,
        &c.right.policy().ocontexts.netifs,
    );
    let keyed = |v: &[arbiter_policy::ocontext::NetifCon]| {
        let mut m: HashMap<String, usize> = HashMap::new();
        for (i, n) in v.iter().enumerate() {
            m.entry(n.name.to_string()).or_insert(i);
        }
        m
    };
    let (lk, rk) = (keyed(ln), keyed(rn));
    let mut s = Section {
        title: "Netifcons",
        noun: "Netifcons",
        has_modified: true,
        ..Section::default()
    };
    s.added = sorted(
        rk.iter()
            .filter(|(k, _)| !lk.contains_key(*k))
            .map(|(_, &i)| statement(c.right, &rn[i])),
    );
    s.removed = sorted(
        lk.iter()
            .filter(|(k, _)| !rk.contains_key(*k))
            .map(|(_, &i)| statement(c.left, &ln[i])),
    );
    let mut modified = Vec::new();
    for (name, &i) in &lk {
        let Some(&j) = rk.get(name) else { continue };
        let (a, b) = (&ln[i], &rn[j]);
        let mut change = Vec::new();
        let mut details = Vec::new();
        for (what, lc, rc) in [
            ("Context", &a.if_context, &b.if_context),
            ("Packet Context", &a.msg_context, &b.msg_context),
        ] {
            if !c.same(lc, rc) {
                change.push(format!("Modified {what}"));
                details.push(format!("{what}:"));
                details.push(format!("   + {}", info::context(c.right, rc)));
                details.push(format!("   - {}", info::context(c.left, lc)));
            }
        }
        if !change.is_empty() {
            modified.push((
                statement(c.left, a),
                (format!("{name} ({})", change.join(", ")), details),
            ));
        }
    }
    modified.sort_by(|x, y| x.0.cmp(&y.0));
    s.modified = modified.into_iter().map(|(_, m)| m).collect();
    s
}
