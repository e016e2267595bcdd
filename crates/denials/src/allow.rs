//! The rules `audit2allow -p POLICY` generates (policycoreutils 3.4, no refpolicy
//! interfaces), with its grouping, order, annotations and spacing, and the module text
//! around them that its `-m`, `-r`, `-D` and `-x` ask for ([`crate::module`]).
//!
//! sepolgen keys access vectors by (source type, target type, class, verdict) in first-seen
//! order and merges permissions; each becomes one `allow` rule (target `self` when it equals
//! the source), annotated with the verdict. Rules are stably sorted by source, target and
//! class and grouped under `#============= SOURCE ==============` headers; roles from
//! invalid-context records follow under `#============= ROLES ==============`. With `-x`,
//! an `allowxperm` rule follows, after the `allow` rules of the same source, target and
//! class, for each access vector whose denials logged ioctl commands.

use crate::engine::Verdict;
use crate::module::{space_set, Explanation, Generation, Require};
use crate::why::{constraint_causes, split_context};
use crate::wrap::wrap;
use crate::xperm::XpermSet;
use arbiter_decide::KeyedState;
use std::collections::{BTreeSet, HashMap};
use std::convert::Infallible;
use std::fmt::Write as _;

/// sepolgen's `BADTCLASS` verdict: the rule is generated, without annotation.
const UNKNOWN_CLASS: i32 = -4;

/// The generator's maps: keyed by names from logs, so with random keys; a folded-multiply
/// hash, because a fleet's final step adds hundreds of thousands of denials on its serial
/// end (interning names with SipHash took 178 M of the 821 M instructions of adding the
/// 206,437 distinct denials of an 80,000-line fleet).
type Map<K, V> = HashMap<K, V, KeyedState>;

/// Rules past which [`AllowGenerator::render`] writes on two threads (a few milliseconds of
/// text; below it a thread costs more than it saves).
const PARALLEL_RULES: usize = 8192;

struct Access {
    /// Source type, target type and class as interned names ([`AllowGenerator::names`]):
    /// no string of their own, as a fleet's final step makes a hundred thousand access
    /// vectors, each of which allocated, copied and freed three.
    ids: [u32; 3],
    /// The contexts of the first record, kept for a constraint verdict's causes only. Boxed,
    /// as `origin`: most vectors have neither, and a fleet's hundred thousand vectors are
    /// written to fresh pages on its final step (104 bytes fewer each).
    contexts: Option<Box<(String, String)>>,
    /// The permissions as interned names ([`AllowGenerator::names`]), in string order, each
    /// once: a fleet's final step builds a hundred thousand vectors, and a set of owned
    /// strings per vector (a tree node and a string per permission) made allocation a
    /// quarter of adding them.
    perms: Vec<u32>,
    /// The verdict of the first record of the group (sepolgen keeps the first's data).
    verdict: Option<Verdict>,
    /// The non-zero `ioctlcmd`s of the merged records.
    xperms: XpermSet,
    /// Where the first record came from (`-v` prints it).
    origin: Option<Box<Origin>>,
    /// Every record (`-e` prints them).
    notes: Vec<RecordNote>,
}

/// One record as `audit2allow -e` explains it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordNote {
    /// The record header ([`crate::parse::header`]).
    pub header: String,
    /// `scontext=` as logged.
    pub scontext: String,
    /// `tcontext=` as logged.
    pub tcontext: String,
    /// `tclass=` as logged.
    pub tclass: String,
    /// The permissions as logged (order and repetitions kept).
    pub perms: Vec<String>,
    /// `comm=` without its first and last character.
    pub comm: String,
    /// `exe=` without its first and last character.
    pub exe: String,
    /// The line as read, with its `\n` when it had one.
    pub message: String,
}

/// What `audit2allow -v` tells of the first record of a rule: `comm=` and `exe=` (their
/// first and last characters dropped, quotes or not, as sepolgen does) and the record
/// header that ties it to an `AVC_PATH` record's path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origin {
    /// `comm=`, empty when absent.
    pub comm: String,
    /// `exe=`, empty when absent.
    pub exe: String,
    /// The record header ([`crate::parse::header`]).
    pub header: String,
}

/// Accumulates denials and renders audit2allow's output.
///
/// Type and class names are interned to small integers as they arrive, so that a record
/// of a known access vector allocates nothing and the writer's sort compares integers
/// (ranks of the names in string order) rather than strings: a fleet's audit2allow text
/// runs to tens of thousands of rules.
#[derive(Default)]
pub struct AllowGenerator {
    /// (source, target, class, verdict code) → access vector, names interned.
    index: Map<(u32, u32, u32, i32), usize>,
    access: Vec<Access>,
    /// Interned type, class and permission names: name → id, and id → name.
    names: Map<String, u32>,
    name_list: Vec<String>,
    /// role → types, first-seen order of roles.
    roles: Vec<(String, BTreeSet<String>)>,
    /// Header → path of `AVC_PATH` records (the last one of a header wins).
    paths: Map<String, String>,
    /// [`AllowGenerator::add`]'s permission ids, kept between calls.
    perm_scratch: Vec<u32>,
}

impl AllowGenerator {
    /// An empty generator.
    pub fn new() -> AllowGenerator {
        AllowGenerator::default()
    }

    /// Adds one denial. `verdict` is `None` for a class the policy does not define (which
    /// audit2allow still turns into a rule). Returns the index of its access vector.
    pub fn add(
        &mut self,
        scontext: &str,
        tcontext: &str,
        tclass: &str,
        perms: &[&str],
        verdict: Option<&Verdict>,
        ioctlcmd: Option<i64>,
    ) -> usize {
        let src = split_context(scontext).2;
        let tgt = split_context(tcontext).2;
        let ids = [self.intern(src), self.intern(tgt), self.intern(tclass)];
        // The permissions' ids in a vector the generator keeps (a call per record of a log
        // allocates nothing).
        let mut perm_ids = std::mem::take(&mut self.perm_scratch);
        perm_ids.clear();
        perm_ids.extend(perms.iter().map(|p| self.intern(p)));
        let code = verdict.map_or(UNKNOWN_CLASS, Verdict::code);
        let added = self.add_vector(
            ids,
            code,
            || {
                let constraint = matches!(verdict, Some(Verdict::Constraint(_)));
                let contexts = constraint.then(|| (scontext.to_string(), tcontext.to_string()));
                Ok::<_, Infallible>((verdict.cloned(), contexts))
            },
            perm_ids.iter().copied(),
            ioctlcmd,
        );
        self.perm_scratch = perm_ids;
        match added {
            Ok(i) => i,
            Err(never) => match never {},
        }
    }

    /// Adds an access vector's denials at once, as [`AllowGenerator::add`] of each would:
    /// the source type, target type and class as [`AllowGenerator::name_id`]s, the verdict's
    /// code (`verdict.map_or(-4, Verdict::code)` of its denials), and the union of their
    /// permissions (as [`AllowGenerator::name_id`]s too) and `ioctlcmd`s (zero is no
    /// command). `first` gives the first denial's
    /// verdict and, for a constraint verdict, its two contexts; it is called only when the
    /// vector is new, since later denials change neither, and its error is returned (the
    /// generator unchanged). A fleet's final step adds the access vectors its workers
    /// aggregated instead of every distinct denial. Returns the vector's index.
    pub fn add_vector<E>(
        &mut self,
        ids: [u32; 3],
        code: i32,
        first: impl FnOnce() -> Result<(Option<Verdict>, Option<(String, String)>), E>,
        perms: impl IntoIterator<Item = u32>,
        ioctlcmds: impl IntoIterator<Item = i64>,
    ) -> Result<usize, E> {
        let key = (ids[0], ids[1], ids[2], code);
        let perms = perms.into_iter();
        let i = match self.index.get(&key) {
            Some(&i) => i,
            None => {
                let (verdict, contexts) = first()?;
                debug_assert_eq!(verdict.as_ref().map_or(UNKNOWN_CLASS, Verdict::code), code);
                self.access.push(Access {
                    ids,
                    contexts: contexts.map(Box::new),
                    perms: Vec::with_capacity(perms.size_hint().0),
                    verdict,
                    xperms: XpermSet::new(),
                    origin: None,
                    notes: Vec::new(),
                });
                self.index.insert(key, self.access.len() - 1);
                self.access.len() - 1
            }
        };
        let names = &self.name_list;
        let a = &mut self.access[i];
        for p in perms {
            // A vector has a few permissions: found by comparing names, kept in their order.
            let name = names[p as usize].as_str();
            if let Err(at) = a
                .perms
                .binary_search_by(|&q| names[q as usize].as_str().cmp(name))
            {
                a.perms.insert(at, p);
            }
        }
        for c in ioctlcmds {
            if c != 0 {
                a.xperms.add(c);
            }
        }
        Ok(i)
    }

    /// Makes room for `vectors` more access vectors (a fleet's final step knows how many
    /// its blobs hold at most), so that the table and index are not grown and copied as
    /// they fill.
    pub fn reserve(&mut self, vectors: usize) {
        self.access.reserve(vectors);
        self.index.reserve(vectors);
    }

    /// The id of a type, class or permission name for [`AllowGenerator::add_vector`],
    /// interned on first sight.
    pub fn name_id(&mut self, name: &str) -> u32 {
        self.intern(name)
    }

    /// The id of a name, interned on first sight.
    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.names.get(name) {
            return id;
        }
        let id = self.name_list.len() as u32;
        self.names.insert(name.to_string(), id);
        self.name_list.push(name.to_string());
        id
    }

    /// Records where the denial just added as access vector `i` came from; only the first
    /// record of a vector counts.
    pub fn note_origin(&mut self, i: usize, origin: Origin) {
        if let Some(a) = self.access.get_mut(i) {
            if a.origin.is_none() {
                a.origin = Some(Box::new(origin));
            }
        }
    }

    /// Adds a record to access vector `i`'s explanation (`-e`).
    pub fn add_note(&mut self, i: usize, note: RecordNote) {
        if let Some(a) = self.access.get_mut(i) {
            a.notes.push(note);
        }
    }

    /// Adds an `AVC_PATH` record's path for the records of its header.
    pub fn add_path(&mut self, header: &str, path: &str) {
        if !header.is_empty() {
            self.paths.insert(header.to_string(), path.to_string());
        }
    }

    /// Adds a `role R types T;` requirement from an invalid-context record.
    pub fn add_role(&mut self, role: &str, ty: &str) {
        match self.roles.iter_mut().find(|(r, _)| r == role) {
            Some((_, types)) => {
                types.insert(ty.to_string());
            }
            None => self
                .roles
                .push((role.to_string(), BTreeSet::from([ty.to_string()]))),
        }
    }

    /// Number of distinct access vectors so far.
    pub fn len(&self) -> usize {
        self.access.len()
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.access.is_empty() && self.roles.is_empty()
    }

    /// The generated rules as JSON, in audit2allow's order: source, target (`self` when
    /// equal), class, permissions, verdict name (`null` for an unknown class), booleans, the
    /// logged ioctl commands (as `-x` prints them, `null` when none), the rule keyword, and
    /// with `-v` the first record's comm, exe and path (`origin`, else `null`); with
    /// `-m`/`-r`, the module name and the require block.
    pub fn to_json(&self, g: &Generation) -> serde_json::Value {
        let keyword = if g.dontaudit { "dontaudit" } else { "allow" };
        let rules: Vec<serde_json::Value> = self
            .ordered()
            .into_iter()
            .map(|(i, tgt)| {
                let a = &self.access[i];
                let booleans: Vec<serde_json::Value> = match &a.verdict {
                    Some(Verdict::Boolean(f)) => f
                        .iter()
                        .map(|b| serde_json::json!({"name": b.name, "value": b.value}))
                        .collect(),
                    _ => Vec::new(),
                };
                let verbose = g.explain != Explanation::None;
                let origin = a.origin.as_ref().filter(|_| verbose).map(|o| {
                    let path = self.paths.get(&o.header).map_or("", String::as_str);
                    serde_json::json!({"comm": o.comm, "exe": o.exe, "path": path})
                });
                serde_json::json!({
                    "origin": origin,
                    "rule": keyword,
                    "source": self.src(a),
                    "target": tgt,
                    "class": self.class(a),
                    "perms": self.perm_names(a).collect::<Vec<_>>(),
                    "verdict": a.verdict.as_ref().map(Verdict::name),
                    "booleans": booleans,
                    "ioctl": (!a.xperms.is_empty()).then(|| a.xperms.to_string()),
                })
            })
            .collect();
        let roles: Vec<serde_json::Value> = self
            .roles
            .iter()
            .map(|(r, t)| serde_json::json!({"role": r, "types": t}))
            .collect();
        let mut v = serde_json::json!({ "rules": rules, "roles": roles });
        if let Some(name) = &g.module {
            v["module"] = serde_json::json!(name.as_str());
        }
        if g.writes_requires() {
            let r = self.require();
            let classes: serde_json::Map<String, serde_json::Value> = r
                .classes()
                .map(|(c, p)| (c.to_string(), serde_json::json!(p)))
                .collect();
            v["require"] = serde_json::json!({
                "types": r.types().collect::<Vec<_>>(),
                "classes": classes,
                "roles": r.roles().collect::<Vec<_>>(),
            });
        }
        v
    }

    /// audit2allow's output for these options: the text `-m NAME` writes to standard output
    /// and `-M NAME` to `NAME.te`.
    pub fn render(&self, g: &Generation) -> String {
        // sepolgen's writer prints the module node itself (an empty line), the module
        // statement and a spacer, the require block (empty when off) and a spacer, then the
        // rules.
        let mut out = String::from("\n");
        if let Some(name) = &g.module {
            let _ = write!(out, "module {} 1.0;\n\n", name.as_str());
        }
        if g.writes_requires() {
            out.push_str(&self.require().render());
            out.push('\n');
        }
        out.push('\n');
        let order = self.rule_order(g.xperms);
        self.render_rules(&order, g, &mut out);
        if !self.roles.is_empty() {
            out.push_str("#============= ROLES ==============\n");
            let mut roles: Vec<&(String, BTreeSet<String>)> = self.roles.iter().collect();
            roles.sort_by(|a, b| a.0.cmp(&b.0));
            for (role, types) in roles {
                for t in types {
                    let _ = writeln!(out, "role {role} types {t};");
                }
                out.push('\n');
            }
        }
        out
    }

    /// Writes the rules' text in `order` to `out`, under their sources' headers. A fleet's
    /// output runs to tens of thousands of rules and is written alone at the end of the run,
    /// so past [`PARALLEL_RULES`] the second half (cut where a source's section starts) is
    /// written on a second thread: the sections are independent, and the halves joined are
    /// the text one thread writes.
    fn render_rules(&self, order: &[(usize, &str, bool)], g: &Generation, out: &mut String) {
        let Some(mid) = self.split_point(order) else {
            self.write_rules(order, g, true, out);
            return;
        };
        let (first, second) = order.split_at(mid);
        // The first half is written straight into `out` (a fleet's text is megabytes: each
        // copy of it is as many fresh pages on the final step).
        let rest = std::thread::scope(|scope| {
            let rest = scope.spawn(|| {
                let mut out = String::new();
                self.write_rules(second, g, false, &mut out);
                out
            });
            self.write_rules(first, g, true, out);
            rest.join()
        });
        match rest {
            Ok(rest) => out.push_str(&rest),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// Where [`AllowGenerator::render_rules`] cuts `order` in two: the first rule of the
    /// source section that follows the middle, if there are [`PARALLEL_RULES`] rules and
    /// such a section.
    fn split_point(&self, order: &[(usize, &str, bool)]) -> Option<usize> {
        if order.len() < PARALLEL_RULES {
            return None;
        }
        let source = |k: usize| self.access[order[k].0].ids[0];
        let mut mid = order.len() / 2;
        while mid < order.len() && source(mid) == source(mid - 1) {
            mid += 1;
        }
        (mid < order.len()).then_some(mid)
    }

    /// Writes the rules of `order` to `out`, a header before each source's first rule (and
    /// an empty line before every header but the output's first).
    fn write_rules(
        &self,
        order: &[(usize, &str, bool)],
        g: &Generation,
        at_start: bool,
        out: &mut String,
    ) {
        let (keyword, xkeyword) = if g.dontaudit {
            ("dontaudit", "dontauditxperm")
        } else {
            ("allow", "allowxperm")
        };
        let mut cur: Option<u32> = None;
        for &(i, tgt, ext) in order {
            let a = &self.access[i];
            let (src, class) = (self.src(a), self.class(a));
            if cur != Some(a.ids[0]) {
                if cur.is_some() || !at_start {
                    out.push('\n');
                }
                cur = Some(a.ids[0]);
                let _ = writeln!(out, "#============= {src} ==============");
            }
            if ext {
                let _ = writeln!(out, "{xkeyword} {src} {tgt}:{class} ioctl {};", a.xperms);
                continue;
            }
            let before = out.len();
            self.write_comment(i, g, out);
            if out.len() > before {
                out.push('\n');
            }
            // `space_set` written in place: no vector or string per rule.
            for part in [keyword, " ", src, " ", tgt, ":", class, " "] {
                out.push_str(part);
            }
            let mut perms = self.perm_names(a);
            match (perms.next(), a.perms.len()) {
                (Some(p), 1) => out.push_str(p),
                (first, _) => {
                    out.push_str("{ ");
                    for (k, p) in first.into_iter().chain(perms).enumerate() {
                        if k > 0 {
                            out.push(' ');
                        }
                        out.push_str(p);
                    }
                    out.push_str(" }");
                }
            }
            out.push_str(";\n");
        }
    }

    /// sepolgen's `gen_requires`, run over the rules in generation order (before the
    /// writer sorts them): that order decides the order of the classes.
    pub fn require(&self) -> Require {
        let mut r = Require::new();
        for i in self.first_seen_order() {
            let a = &self.access[i];
            r.add_type(self.src(a));
            if a.ids[1] != a.ids[0] {
                r.add_type(self.tgt(a));
            }
            r.add_class(
                self.class(a),
                a.perms.iter().map(|&p| &self.name_list[p as usize]),
            );
        }
        for (role, types) in &self.roles {
            r.add_role(role);
            for t in types {
                r.add_type(t);
            }
        }
        r
    }

    /// The order sepolgen generates rules in: its nested dicts iterated, source, then
    /// target, then (class, verdict), each in first-seen order.
    ///
    /// That is: accesses ordered by the first access of their source, then by the first
    /// access of their (source, target) pair, then by their own index.
    fn first_seen_order(&self) -> Vec<usize> {
        // By name id (ids are dense).
        let mut src_first: Vec<usize> = vec![usize::MAX; self.name_list.len()];
        let mut pair_first: Map<(u32, u32), usize> = Map::default();
        let mut keyed: Vec<(usize, usize, usize)> = Vec::with_capacity(self.access.len());
        for (i, a) in self.access.iter().enumerate() {
            let first = &mut src_first[a.ids[0] as usize];
            if *first == usize::MAX {
                *first = i;
            }
            let s = *first;
            let p = *pair_first.entry((a.ids[0], a.ids[1])).or_insert(i);
            keyed.push((s, p, i));
        }
        keyed.sort_unstable();
        keyed.into_iter().map(|(_, _, i)| i).collect()
    }

    /// The source type of `a`.
    fn src(&self, a: &Access) -> &str {
        &self.name_list[a.ids[0] as usize]
    }

    /// The target type of `a`.
    fn tgt(&self, a: &Access) -> &str {
        &self.name_list[a.ids[1] as usize]
    }

    /// The class of `a`.
    fn class(&self, a: &Access) -> &str {
        &self.name_list[a.ids[2] as usize]
    }

    /// The permissions of `a`, in string order.
    fn perm_names<'s>(&'s self, a: &'s Access) -> impl Iterator<Item = &'s str> + 's {
        a.perms.iter().map(|&p| self.name_list[p as usize].as_str())
    }

    /// The written target: `self` when it equals the source (the same interned name).
    fn rule_target(&self, a: &Access) -> &str {
        if a.ids[0] == a.ids[1] {
            "self"
        } else {
            self.tgt(a)
        }
    }

    /// Rule order: generation order stably sorted by source, target as written, class.
    fn ordered(&self) -> Vec<(usize, &str)> {
        self.rule_order(false)
            .into_iter()
            .map(|(i, t, _)| (i, t))
            .collect()
    }

    /// The writer's order of `allow` rules and, with `xperms`, `allowxperm` rules (the
    /// `bool`): sepolgen's writer stably sorts all `allow` rules in generation order, then
    /// all `allowxperm` rules, by source, target as written, class, so that an
    /// `allowxperm` rule follows the `allow` rules of its key.
    ///
    /// That is one sort by (source, target as written, class, `allowxperm`, generation
    /// order), and within one source generation order is the order of the first access of
    /// each (source, target) pair, then the access's own index
    /// ([`AllowGenerator::first_seen_order`]): so one unstable sort of unique keys, instead
    /// of sorting into generation order and then stably by name (two sorts of a fleet's
    /// hundred thousand vectors, a third of its rendering). The sort compares ranks of the
    /// names in string order ("self" ranked among them), the same order as comparing the
    /// strings.
    fn rule_order(&self, xperms: bool) -> Vec<(usize, &str, bool)> {
        let mut by_name: Vec<&str> = self.name_list.iter().map(String::as_str).collect();
        by_name.push("self");
        by_name.sort_unstable();
        by_name.dedup();
        let rank_of = |name: &str| by_name.binary_search(&name).unwrap_or(0) as u32;
        let rank: Vec<u32> = self.name_list.iter().map(|n| rank_of(n)).collect();
        let self_rank = rank_of("self");
        let mut pair_first: Map<(u32, u32), u32> = Map::default();
        // (names' ranks, `allowxperm`, the pair's first access, the access).
        type SortKey = ((u32, u32, u32), bool, u32, u32);
        let mut rules: Vec<SortKey> = Vec::with_capacity(self.access.len());
        for (i, a) in self.access.iter().enumerate() {
            let tgt = if a.ids[0] == a.ids[1] {
                self_rank
            } else {
                rank[a.ids[1] as usize]
            };
            let key = (rank[a.ids[0] as usize], tgt, rank[a.ids[2] as usize]);
            let i = i as u32;
            let pair = *pair_first.entry((a.ids[0], a.ids[1])).or_insert(i);
            rules.push((key, false, pair, i));
        }
        if xperms {
            let xrules: Vec<_> = rules
                .iter()
                .filter(|r| !self.access[r.3 as usize].xperms.is_empty())
                .map(|&(key, _, pair, i)| (key, true, pair, i))
                .collect();
            rules.extend(xrules);
        }
        rules.sort_unstable();
        rules
            .into_iter()
            .map(|(_, ext, _, i)| {
                let i = i as usize;
                (i, self.rule_target(&self.access[i]), ext)
            })
            .collect()
    }

    /// Writes rule `i`'s comment lines (none for most verdicts) to `c`, without the newline
    /// that ends them: in place, since a fleet's text has a hundred thousand comments.
    fn write_comment(&self, i: usize, g: &Generation, c: &mut String) {
        let a = &self.access[i];
        if g.explain == Explanation::Long {
            let mut lines: Vec<String> = Vec::new();
            for n in &a.notes {
                let path = self.paths.get(&n.header).map_or("", String::as_str);
                let ctx = |c: &str| -> String {
                    if g.mls_kernel && c.split(':').count() < 4 {
                        format!("{c}:s0")
                    } else {
                        c.to_string()
                    }
                };
                let perms: Vec<&str> = n.perms.iter().map(String::as_str).collect();
                lines.push(format!(" {}", n.header));
                lines.push(format!(
                    "  scontext=\"{}\" tcontext=\"{}\"",
                    ctx(&n.scontext),
                    ctx(&n.tcontext)
                ));
                lines.push(format!(
                    "  class=\"{}\" perms=\"{}\"",
                    n.tclass,
                    space_set(&perms)
                ));
                lines.push(format!(
                    "  comm=\"{}\" exe=\"{}\" path=\"{}\"",
                    n.comm, n.exe, path
                ));
                lines.extend(wrap(&format!("message=\"{}\"", n.message), 80, "  ", "   "));
            }
            let commented: Vec<String> = lines.iter().map(|l| format!("#{l}")).collect();
            c.push_str(&commented.join("\n"));
        }
        if g.explain == Explanation::Short {
            let perms: Vec<&str> = self.perm_names(a).collect();
            let _ = write!(
                c,
                "# src=\"{}\" tgt=\"{}\" class=\"{}\", perms=\"{}\"",
                self.src(a),
                self.tgt(a),
                self.class(a),
                space_set(&perms)
            );
            if let Some(o) = &a.origin {
                let path = self.paths.get(&o.header).map_or("", String::as_str);
                let _ = write!(
                    c,
                    "\n# comm=\"{}\" exe=\"{}\" path=\"{}\"",
                    o.comm, o.exe, path
                );
            }
        }
        match &a.verdict {
            Some(Verdict::Allow) => {
                c.push_str("\n#!!!! This avc is allowed in the current policy");
                if !a.xperms.is_empty() {
                    c.push_str(
                        "\n#!!!! This av rule may have been overridden by an extended permission av rule",
                    );
                }
            }
            Some(Verdict::DontAudit) => {
                c.push_str("\n#!!!! This avc has a dontaudit rule in the current policy")
            }
            Some(Verdict::Boolean(fixes)) => {
                if fixes.len() > 1 {
                    let names: Vec<&str> = fixes.iter().map(|f| f.name.as_str()).collect();
                    let _ = write!(
                        c,
                        "\n#!!!! This avc can be allowed using one of the these booleans:\n#     {}",
                        names.join(", ")
                    );
                } else if let Some(f) = fixes.first() {
                    let _ = write!(
                        c,
                        "\n#!!!! This avc can be allowed using the boolean '{}'",
                        f.name
                    );
                }
            }
            Some(Verdict::Constraint(buf)) => {
                c.push_str("\n#!!!! This avc is a constraint violation.  You would need to modify the attributes of either the source or target types to allow this access.");
                c.push_str("\n#Constraint rule: ");
                let _ = write!(c, "\n#\t{buf}");
                let (s, t) = a
                    .contexts
                    .as_deref()
                    .map_or(("", ""), |(s, t)| (s.as_str(), t.as_str()));
                for (x, y) in constraint_causes(s, t) {
                    let _ = write!(
                        c,
                        "\n#\tPossible cause is the source {x} and target {y} are different."
                    );
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fleet-sized output is written on two threads, cut at a source's section: the
    /// text must be the one a single pass writes, with and without `-x` (whose
    /// `allowxperm` rules follow their `allow` rules) and `-D`.
    #[test]
    fn rules_written_on_two_threads_equal_one_pass() {
        let mut g = AllowGenerator::new();
        // Sources of very different sizes, so the middle falls inside a section; targets
        // equal to the source (`self`) and not; ioctl commands on some.
        for i in 0..(PARALLEL_RULES as u32 + 3000) {
            let src = format!("u:r:s{}_t:s0", (i * 7919) % 97 % (1 + i % 13));
            let tgt = if i % 5 == 0 {
                src.clone()
            } else {
                format!("u:r:t{i}_t:s0")
            };
            let class = ["file", "dir", "chr_file"][(i % 3) as usize];
            let verdict = if i % 11 == 0 {
                Verdict::Allow
            } else {
                Verdict::TeRule
            };
            let ioctl = (i % 4 == 0).then_some(i64::from(0x5400 + i % 16));
            g.add(&src, &tgt, class, &["read", "ioctl"], Some(&verdict), ioctl);
        }
        for xperms in [false, true] {
            for dontaudit in [false, true] {
                let gen = Generation {
                    xperms,
                    dontaudit,
                    ..Generation::default()
                };
                let order = g.rule_order(xperms);
                assert!(
                    g.split_point(&order).is_some(),
                    "the two-thread path is taken"
                );
                let mut one_pass = String::new();
                g.write_rules(&order, &gen, true, &mut one_pass);
                // Written after what `out` holds already, as `render` writes it.
                let mut two = String::from("head\n");
                g.render_rules(&order, &gen, &mut two);
                assert_eq!(two, format!("head\n{one_pass}"));
            }
        }
    }

    /// The writer's order in one sort equals sepolgen's: generation order, then a stable
    /// sort by source, target as written and class, `allowxperm` rules after all `allow`
    /// rules; with verdicts that split a key, a target literally named `self`, and
    /// sources first met in one order and sorted in another.
    #[test]
    fn rule_order_is_generation_order_stably_sorted_by_name() {
        let mut g = AllowGenerator::new();
        let verdicts = [Verdict::TeRule, Verdict::Allow, Verdict::DontAudit];
        for i in 0..600u32 {
            let src = format!("u:r:s{}_t", (i * 31) % 7);
            let tgt = match i % 9 {
                0 => src.clone(),
                1 => "u:r:self".to_string(),
                k => format!("u:r:t{}_t", (i * 17 + k) % 11),
            };
            let class = ["file", "dir"][(i % 2) as usize];
            let ioctl = (i % 5 == 0).then_some(0x5400);
            g.add(
                &src,
                &tgt,
                class,
                &["read"],
                Some(&verdicts[(i % 3) as usize]),
                ioctl,
            );
        }
        for xperms in [false, true] {
            let rank = |n: &str| n.to_string();
            let key = |i: usize| {
                let a = &g.access[i];
                (rank(g.src(a)), rank(g.rule_target(a)), rank(g.class(a)))
            };
            let order = g.first_seen_order();
            let mut want: Vec<(usize, bool)> = order.iter().map(|&i| (i, false)).collect();
            if xperms {
                want.extend(
                    order
                        .iter()
                        .filter(|&&i| !g.access[i].xperms.is_empty())
                        .map(|&i| (i, true)),
                );
            }
            want.sort_by_key(|&(i, _)| key(i));
            let got: Vec<(usize, bool)> = g
                .rule_order(xperms)
                .into_iter()
                .map(|(i, _, ext)| (i, ext))
                .collect();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn permissions_are_written_once_each_in_string_order_whatever_their_arrival() {
        // Permissions are interned with the type and class names: a permission spelled like
        // a type (`a_t`) or the class (`file`) is still a permission of its own rule.
        let mut g = AllowGenerator::new();
        let deny = |g: &mut AllowGenerator, perms: &[&str]| {
            g.add(
                "u:r:a_t:s0",
                "u:r:b_t:s0",
                "file",
                perms,
                Some(&Verdict::TeRule),
                None,
            )
        };
        let i = deny(&mut g, &["write", "read", "write"]);
        assert_eq!(deny(&mut g, &["file", "append", "read"]), i);
        let ids = ["a_t", "b_t", "file"].map(|n| g.name_id(n));
        let perms = ["a_t", "getattr", "write"].map(|n| g.name_id(n));
        let added = g.add_vector(
            ids,
            Verdict::TeRule.code(),
            || Ok::<_, Infallible>((Some(Verdict::TeRule), None)),
            perms,
            [0],
        );
        assert_eq!(added, Ok(i));
        assert_eq!(
            g.render(&Generation::default()),
            "\n\n#============= a_t ==============\n\
             allow a_t b_t:file { a_t append file getattr read write };\n"
        );
    }

    #[test]
    fn same_source_and_target_is_written_self_and_permissions_merge() {
        let mut g = AllowGenerator::new();
        g.add(
            "u:r:a_t:s0",
            "u:r:a_t:s0",
            "file",
            &["write"],
            Some(&Verdict::TeRule),
            None,
        );
        g.add(
            "u:r:a_t:s0",
            "u:r:a_t:s0",
            "file",
            &["read"],
            Some(&Verdict::TeRule),
            None,
        );
        assert_eq!(
            g.render(&Generation::default()),
            "\n\n#============= a_t ==============\nallow a_t self:file { read write };\n"
        );
    }

    #[test]
    fn groups_sort_by_source_and_verdicts_stay_apart() {
        let mut g = AllowGenerator::new();
        g.add(
            "u:r:z_t",
            "u:r:x_t",
            "file",
            &["read"],
            Some(&Verdict::Allow),
            Some(0x5401),
        );
        g.add(
            "u:r:b_t",
            "u:r:x_t",
            "dir",
            &["search"],
            Some(&Verdict::TeRule),
            None,
        );
        g.add("u:r:z_t", "u:r:x_t", "file", &["read"], None, None);
        assert_eq!(
            g.render(&Generation::default()),
            "\n\n#============= b_t ==============\nallow b_t x_t:dir search;\n\n#============= z_t ==============\n\n#!!!! This avc is allowed in the current policy\n#!!!! This av rule may have been overridden by an extended permission av rule\nallow z_t x_t:file read;\nallow z_t x_t:file read;\n"
        );
    }
}
