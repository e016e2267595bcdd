//! Information flow analysis: where information can flow from a type, and through whom,
//! as setools 4.4.1's `InfoFlowAnalysis` decides it.
//!
//! setools builds a networkx graph of about a million edges as Python dictionaries (≈25 s,
//! ≈880 MB on Debian's policy). Here the graph is a dense matrix of edge weights (one byte
//! per ordered pair of types) plus each node's successors in edge-creation order, which is
//! all that decides what seinfoflow prints: the successor order fixes the path order, the
//! weight decides `-w`. The rules of an edge are looked up only for the edges printed with
//! `--full`, and their multiplicity (setools lists a rule twice on an edge it creates both
//! as a write and as a read flow) is recomputed from the rule's sides.

use crate::permmap::PermissionMap;
use crate::search::{self, Adjacency};
use crate::AnalysisError;
use arbiter_policy::avtab::{AvtabDatum, AvtabKind};
use arbiter_policy::TypeId;
use arbiter_query::terules::{self, TeRuleRef};
use arbiter_query::{render, Index};
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::OnceLock;

/// One allow rule that carries information, with its weights.
#[derive(Copy, Clone, Debug)]
struct FlowRule {
    rule: TeRuleRef,
    source: TypeId,
    target: TypeId,
    read: u8,
    write: u8,
}

/// The information flow graph of one policy under one permission map.
pub struct InfoFlowGraph<'i, 'p> {
    index: &'i Index<'p>,
    /// Node number of each type slot (`u32::MAX` for attributes).
    node_of: Vec<u32>,
    /// The type of each node number.
    types: Vec<TypeId>,
    /// `weight[u * n + v]`: the edge u→v's weight (the largest of its rules'), 0 = no edge.
    weight: Vec<u8>,
    /// Per node, its successors in edge-creation order.
    succ: Vec<Vec<u32>>,
    /// Per node, its position in networkx's node order (the order setools' edges first
    /// named it), `NONE` when it has no edge and so is not in the graph.
    rank: Vec<u32>,
    /// The nodes in networkx's node order.
    order: Vec<u32>,
    /// The rules with a non-zero weight, in `terules()` order.
    rules: Vec<FlowRule>,
    /// Per source slot, indices into `rules`.
    by_source: HashMap<TypeId, Vec<u32>>,
}

const NONE: u32 = u32::MAX;

/// One step of a flow: an edge, in the direction information flows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// Where information comes from.
    pub source: TypeId,
    /// Where it goes.
    pub target: TypeId,
    /// The edge's weight (the largest weight among its rules).
    pub weight: u8,
}

/// What a query excludes: types, edges below a weight, rules disabled by booleans.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// Types removed from the graph.
    pub exclude: Vec<TypeId>,
    /// Edges lighter than this are dropped (1 keeps all).
    pub min_weight: u8,
    /// `None`: every rule counts. `Some(values)`: conditional rules count only when
    /// enabled under these values (by boolean index; the others keep their defaults).
    pub booleans: Option<Vec<bool>>,
}

impl<'i, 'p> InfoFlowGraph<'i, 'p> {
    /// Builds the graph: one pass over the allow rules in setools' order.
    pub fn new(index: &'i Index<'p>, map: &PermissionMap) -> Self {
        let p = index.policy();
        let mut node_of = vec![NONE; index.type_slots()];
        let mut types = Vec::new();
        for (i, d) in p.types.iter().enumerate() {
            if d.flavor == arbiter_policy::symbols::TypeFlavor::Type {
                if let Some(t) = TypeId::from_index(i) {
                    node_of[i] = types.len() as u32;
                    types.push(t);
                }
            }
        }
        let n = types.len();
        // Per class: the read and write weight of each permission bit.
        let class_weights: Vec<Vec<(u8, u8)>> = (0..p.classes.len())
            .map(|c| {
                let mut w = vec![(0u8, 0u8); 32];
                if let Some(cid) = arbiter_policy::ClassId::from_index(c) {
                    let name = index.class_name(cid);
                    for (perm, bit) in index.class_perms(cid) {
                        if let Some(slot) = w.get_mut(bit as usize) {
                            *slot = map.weights(name, perm);
                        }
                    }
                }
                w
            })
            .collect();
        let mut g = InfoFlowGraph {
            index,
            node_of,
            types,
            weight: vec![0; n * n],
            succ: vec![Vec::new(); n],
            rank: vec![NONE; n],
            order: Vec::new(),
            rules: Vec::new(),
            by_source: HashMap::new(),
        };
        let mut src: Vec<u32> = Vec::new();
        let mut tgt: Vec<u32> = Vec::new();
        // The largest read and write weight each (source, target) side pair has carried so
        // far: a later rule on the same sides (the same statement for another class, say)
        // whose weight is not larger creates no edge and raises no weight, so its pairs
        // are not visited again.
        let mut seen: HashMap<(TypeId, TypeId), (u8, u8)> = HashMap::new();
        for r in terules::raw_order(p, AvtabKind::Allowed.bits()) {
            let Some(e) = terules::entry(p, r) else {
                continue;
            };
            let AvtabDatum::Perms(bits) = e.datum() else {
                continue;
            };
            let Some(cw) = class_weights.get(e.key.class.index()) else {
                continue;
            };
            let (mut read, mut write) = (0u8, 0u8);
            let mut b = bits;
            while b != 0 {
                let bit = b.trailing_zeros() as usize;
                b &= b - 1;
                let (r_, w_) = cw[bit];
                read = read.max(r_);
                write = write.max(w_);
            }
            if read == 0 && write == 0 {
                continue;
            }
            g.by_source
                .entry(e.key.source)
                .or_default()
                .push(g.rules.len() as u32);
            g.rules.push(FlowRule {
                rule: r,
                source: e.key.source,
                target: e.key.target,
                read,
                write,
            });
            let prev = seen.entry((e.key.source, e.key.target)).or_insert((0, 0));
            let read_new = if read > prev.0 { read } else { 0 };
            let write_new = if write > prev.1 { write } else { 0 };
            prev.0 = prev.0.max(read);
            prev.1 = prev.1.max(write);
            if read_new == 0 && write_new == 0 {
                // An earlier rule on the same sides named every node this one would.
                continue;
            }
            src.clear();
            src.extend(
                index
                    .expand(e.key.source)
                    .iter()
                    .map(|t| g.node_of[t.index()]),
            );
            tgt.clear();
            tgt.extend(
                index
                    .expand(e.key.target)
                    .iter()
                    .map(|t| g.node_of[t.index()]),
            );
            g.add_nodes(&src, &tgt, write > 0);
            g.add_rule(&src, &tgt, read_new, write_new);
        }
        g
    }

    /// Gives the nodes a rule's edges name their place in networkx's node order: setools
    /// visits the (s, t) pairs with s ≠ t in product order and adds s→t (s, then t, enter
    /// the graph) when the rule writes, else t→s (t first). Once one source has had a pair,
    /// every target is in the graph, so later sources only add themselves.
    fn add_nodes(&mut self, src: &[u32], tgt: &[u32], write: bool) {
        let InfoFlowGraph { rank, order, .. } = self;
        let mut add = |u: u32| {
            let r = &mut rank[u as usize];
            if *r == NONE {
                *r = order.len() as u32;
                order.push(u);
            }
        };
        let mut targets_added = false;
        for &s in src {
            if !tgt.iter().any(|&t| t != s) {
                continue;
            }
            if targets_added {
                add(s);
                continue;
            }
            for &t in tgt.iter().filter(|&&t| t != s) {
                if write {
                    add(s);
                    add(t);
                } else {
                    add(t);
                    add(s);
                }
            }
            targets_added = true;
        }
    }

    /// setools visits the rule's (s, t) pairs in product order, adding s→t for the write
    /// weight and t→s for the read weight. Only each tail's successor order is observable,
    /// so the pairs are visited tail by tail (row by row of the matrix): for a tail u, the
    /// read edges u→s with s before u come first, then u's write edges, then the read edges
    /// with s after u — their order in setools' product.
    fn add_rule(&mut self, src: &[u32], tgt: &[u32], read: u8, write: u8) {
        let n = self.types.len();
        let InfoFlowGraph { weight, succ, .. } = self;
        let mut touch = |u: u32, v: u32, w: u8| {
            let cell = &mut weight[u as usize * n + v as usize];
            if *cell == 0 {
                succ[u as usize].push(v);
            }
            if w > *cell {
                *cell = w;
            }
        };
        if write > 0 {
            for &u in src {
                let in_tgt = read > 0 && tgt.binary_search(&u).is_ok();
                if in_tgt {
                    for &s in src.iter().take_while(|&&s| s < u) {
                        touch(u, s, read);
                    }
                }
                for &t in tgt {
                    if t != u {
                        touch(u, t, write);
                    }
                }
                if in_tgt {
                    for &s in src.iter().skip_while(|&&s| s <= u) {
                        touch(u, s, read);
                    }
                }
            }
        }
        if read > 0 {
            for &u in tgt {
                if write > 0 && src.binary_search(&u).is_ok() {
                    continue;
                }
                for &s in src {
                    if s != u {
                        touch(u, s, read);
                    }
                }
            }
        }
    }

    /// The index the graph was built over.
    pub fn index(&self) -> &'i Index<'p> {
        self.index
    }

    /// `Graph nodes` as seinfoflow's `--stats` prints it.
    pub fn node_count(&self) -> usize {
        self.order.len()
    }

    /// `Graph edges` as seinfoflow's `--stats` prints it.
    pub fn edge_count(&self) -> usize {
        self.succ.iter().map(Vec::len).sum()
    }

    /// The type named `name`, as setools' `lookup_type`.
    pub fn lookup_type(&self, name: &str) -> Result<TypeId, AnalysisError> {
        crate::lookup_type(self.index, name)
    }

    /// Whether conditional rule `r` is enabled under `values` (unconditional rules are).
    fn enabled(&self, r: TeRuleRef, values: &[bool]) -> bool {
        match r {
            TeRuleRef::Cond { node, branch, .. } => {
                let p = self.index.policy();
                let Some(c) = p.cond_nodes.get(node as usize) else {
                    return true;
                };
                let v = render::cond_eval(&c.expr, |b| values.get(b).copied().unwrap_or(false));
                v == branch
            }
            _ => true,
        }
    }

    /// The working graph for one filter (setools' `_build_subgraph`).
    pub fn view(&self, filter: &Filter) -> InfoFlowView<'_, 'i, 'p> {
        let n = self.types.len();
        let mut kept = vec![true; n];
        for t in &filter.exclude {
            if let Some(&u) = self.node_of.get(t.index()) {
                if u != NONE {
                    kept[u as usize] = false;
                }
            }
        }
        // With booleans, an edge survives when one of its rules is enabled, or a disabled
        // rule is listed on it twice (setools removes one occurrence of each disabled rule).
        let survives: Option<Vec<bool>> = filter.booleans.as_ref().map(|values| {
            let mut ok = vec![false; n * n];
            let mut src = Vec::new();
            let mut tgt = Vec::new();
            for fr in &self.rules {
                src.clear();
                src.extend(
                    self.index
                        .expand(fr.source)
                        .iter()
                        .map(|t| self.node_of[t.index()]),
                );
                tgt.clear();
                tgt.extend(
                    self.index
                        .expand(fr.target)
                        .iter()
                        .map(|t| self.node_of[t.index()]),
                );
                if self.enabled(fr.rule, values) {
                    for &s in &src {
                        for &t in &tgt {
                            if s != t {
                                if fr.write > 0 {
                                    ok[s as usize * n + t as usize] = true;
                                }
                                if fr.read > 0 {
                                    ok[t as usize * n + s as usize] = true;
                                }
                            }
                        }
                    }
                } else if fr.write > 0 && fr.read > 0 {
                    let both: Vec<u32> = src
                        .iter()
                        .copied()
                        .filter(|s| tgt.binary_search(s).is_ok())
                        .collect();
                    for &s in &both {
                        for &t in &both {
                            if s != t {
                                ok[s as usize * n + t as usize] = true;
                            }
                        }
                    }
                }
            }
            ok
        });
        let min = filter.min_weight.max(1);
        let adjacency = Adjacency::from_lists((0..n).map(|u| {
            let row = &self.weight[u * n..(u + 1) * n];
            let survives = survives.as_deref();
            let keep_u = kept[u];
            let kept = &kept;
            self.succ[u].iter().copied().filter(move |&v| {
                keep_u
                    && kept[v as usize]
                    && row[v as usize] >= min
                    && !matches!(survives, Some(s) if !s[u * n + v as usize])
            })
        }));
        InfoFlowView {
            graph: self,
            kept,
            adjacency,
            predecessors: OnceLock::new(),
            booleans: filter.booleans.clone(),
        }
    }
}

/// The graph as one query sees it.
pub struct InfoFlowView<'g, 'i, 'p> {
    graph: &'g InfoFlowGraph<'i, 'p>,
    kept: Vec<bool>,
    adjacency: Adjacency,
    /// Each node's predecessors as setools' subgraph holds them: networkx's `copy()`
    /// re-adds the edges tail by tail in node order, so a node's predecessors come in node
    /// order (not in the order their edges were created). Built at the first query that
    /// walks edges backward.
    predecessors: OnceLock<Adjacency>,
    booleans: Option<Vec<bool>>,
}

impl InfoFlowView<'_, '_, '_> {
    fn node(&self, t: TypeId) -> Option<u32> {
        let u = *self.graph.node_of.get(t.index())?;
        (u != NONE && self.kept[u as usize] && self.graph.rank[u as usize] != NONE).then_some(u)
    }

    fn predecessors(&self) -> &Adjacency {
        self.predecessors.get_or_init(|| {
            self.adjacency
                .predecessors_by(self.graph.order.iter().copied())
        })
    }

    fn step(&self, u: u32, v: u32) -> Step {
        let g = self.graph;
        Step {
            source: g.types[u as usize],
            target: g.types[v as usize],
            weight: g.weight[u as usize * g.types.len() + v as usize],
        }
    }

    /// The flows out of `source`, in seinfoflow's order.
    pub fn flows_out(&self, source: TypeId, emit: &mut dyn FnMut(Step) -> ControlFlow<()>) {
        let Some(u) = self.node(source) else { return };
        for &v in self.adjacency.successors(u) {
            if emit(self.step(u, v)).is_break() {
                return;
            }
        }
    }

    /// The flows into `target`, in seinfoflow's order (setools' `in_edges` on its
    /// subgraph: the sources in node order).
    pub fn flows_in(&self, target: TypeId, emit: &mut dyn FnMut(Step) -> ControlFlow<()>) {
        let Some(v) = self.node(target) else { return };
        for &u in self.predecessors().successors(v) {
            if emit(self.step(u, v)).is_break() {
                return;
            }
        }
    }

    /// The one shortest flow path networkx's `shortest_path` finds (see
    /// [`search::shortest_path`]); nothing when there is none.
    pub fn shortest_path(
        &self,
        source: TypeId,
        target: TypeId,
        emit: &mut dyn FnMut(&[Step]) -> ControlFlow<()>,
    ) {
        let (Some(s), Some(t)) = (self.node(source), self.node(target)) else {
            return;
        };
        if let Some(p) = search::shortest_path(&self.adjacency, self.predecessors(), s, t) {
            let _ = self.walk(&p, emit);
        }
    }

    fn walk(
        &self,
        path: &[u32],
        emit: &mut dyn FnMut(&[Step]) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let steps: Vec<Step> = path.windows(2).map(|w| self.step(w[0], w[1])).collect();
        emit(&steps)
    }

    /// Every shortest flow path (networkx `all_shortest_paths`, hop count).
    pub fn all_shortest_paths(
        &self,
        source: TypeId,
        target: TypeId,
        emit: &mut dyn FnMut(&[Step]) -> ControlFlow<()>,
    ) {
        let (Some(s), Some(t)) = (self.node(source), self.node(target)) else {
            return;
        };
        search::all_shortest_paths(&self.adjacency, s, t, &mut |p| self.walk(p, emit));
    }

    /// Every flow path of 1 to `max_steps` steps (networkx `all_simple_paths`).
    pub fn all_paths(
        &self,
        source: TypeId,
        target: TypeId,
        max_steps: usize,
        emit: &mut dyn FnMut(&[Step]) -> ControlFlow<()>,
    ) {
        let (Some(s), Some(t)) = (self.node(source), self.node(target)) else {
            return;
        };
        search::all_simple_paths(&self.adjacency, s, t, max_steps, &mut |p| {
            self.walk(p, emit)
        });
    }

    /// The rules of a step as setools lists them on the edge: in `terules()` order, a rule
    /// twice when it makes the flow both as a write and as a read, and with booleans, one
    /// occurrence of each disabled rule removed.
    pub fn rules(&self, step: Step) -> Vec<TeRuleRef> {
        let g = self.graph;
        let index = g.index;
        let (a, b) = (step.source, step.target);
        let mut found: Vec<(u32, TeRuleRef)> = Vec::new();
        let mut scan = |from: TypeId, to: TypeId, write: bool| {
            for slot in std::iter::once(from).chain(index.attributes_of(from)) {
                for &k in g.by_source.get(&slot).into_iter().flatten() {
                    let fr = g.rules[k as usize];
                    let w = if write { fr.write } else { fr.read };
                    if w > 0 && crate::rules::stands_for(index, fr.target, to) {
                        found.push((k, fr.rule));
                    }
                }
            }
        };
        scan(a, b, true);
        scan(b, a, false);
        found.sort_by_key(|&(k, _)| k);
        let mut rules: Vec<TeRuleRef> = found.into_iter().map(|(_, r)| r).collect();
        if let Some(values) = &self.booleans {
            let mut removed: Vec<TeRuleRef> = Vec::new();
            let disabled: Vec<TeRuleRef> = rules
                .iter()
                .copied()
                .filter(|&r| !g.enabled(r, values))
                .collect();
            for r in disabled {
                if !removed.contains(&r) {
                    if let Some(i) = rules.iter().position(|&x| x == r) {
                        rules.remove(i);
                    }
                    removed.push(r);
                }
            }
        }
        rules
    }
}

/// Boolean values for [`Filter::booleans`]: the policy's defaults with `overrides`
/// (name → value) applied; unknown names are ignored, as setools ignores them.
pub fn boolean_values(index: &Index<'_>, overrides: &[(String, bool)]) -> Vec<bool> {
    let mut v: Vec<bool> = index.policy().bools.iter().map(|b| b.state).collect();
    for (name, value) in overrides {
        if let Some(i) = index.boolean(name) {
            if let Some(slot) = v.get_mut(i as usize) {
                *slot = *value;
            }
        }
    }
    v
}
