//! Domain transition analysis: which domains a process can enter from which, through which
//! rules, as setools 4.4.1's `DomainTransitionAnalysis` decides it.
//!
//! The graph is built once per policy ([`DomainTransitionGraph::new`]); each choice of
//! direction and excluded types derives a [`DtaView`] from it, and any number of queries
//! run on a view. Node and edge orders are networkx's insertion orders over setools' rule
//! order, so transitions and paths come out in sedta's order.

use crate::rules::SlotRules;
use crate::search::{self, Adjacency};
use crate::AnalysisError;
use arbiter_policy::avtab::{AvtabDatum, AvtabKind};
use arbiter_policy::TypeId;
use arbiter_query::terules::{self, TeRuleRef};
use arbiter_query::Index;
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::sync::OnceLock;

/// The rules that let a domain enter another through one entrypoint type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entrypoint {
    /// The entrypoint (executable) type.
    pub name: TypeId,
    /// `allow TARGET NAME:file entrypoint` rules.
    pub entrypoint: Vec<TeRuleRef>,
    /// `allow SOURCE NAME:file execute` rules.
    pub execute: Vec<TeRuleRef>,
    /// `type_transition SOURCE NAME:process TARGET` rules.
    pub type_transition: Vec<TeRuleRef>,
}

/// One edge of the graph: a transition from `source` to `target` and the rules for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// The domain transitioned from.
    pub source: TypeId,
    /// The domain entered.
    pub target: TypeId,
    /// `allow SOURCE TARGET:process transition` rules.
    pub transition: Vec<TeRuleRef>,
    /// Entrypoints, in the order setools found them (a Python set's order in setools; here
    /// the order of the types' values).
    pub entrypoints: Vec<Entrypoint>,
    /// `allow SOURCE *:process setexec` rules.
    pub setexec: Vec<TeRuleRef>,
    /// `allow SOURCE TARGET:process dyntransition` rules.
    pub dyntransition: Vec<TeRuleRef>,
    /// `allow SOURCE *:process setcurrent` rules.
    pub setcurrent: Vec<TeRuleRef>,
}

/// One edge as the graph keeps it: the rule lists setools keeps per edge, with the
/// entrypoint, execute and type_transition lists left to be looked up when a transition
/// is printed in full.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Edge {
    source: TypeId,
    target: TypeId,
    transition: Vec<TeRuleRef>,
    /// Entrypoint types, by name.
    entrypoints: Vec<TypeId>,
    /// Whether the source's setexec rules are attached.
    setexec: bool,
    dyntransition: Vec<TeRuleRef>,
    /// Whether the source's setcurrent rules are attached.
    setcurrent: bool,
}

/// A transition found by a query: its domains, in real direction; [`DtaView::full`] gives
/// its rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step<'e> {
    /// The domain transitioned from.
    pub source: TypeId,
    /// The domain entered.
    pub target: TypeId,
    edge: &'e Edge,
}

/// The rule tables transitions are validated and printed from.
#[derive(Default)]
struct Tables {
    setexec: HashMap<TypeId, Vec<TeRuleRef>>,
    setcurrent: HashMap<TypeId, Vec<TeRuleRef>>,
    execute: SlotRules,
    entrypoint: SlotRules,
    type_trans: SlotRules,
}

/// The domain transition graph of one policy, as setools' `_build_graph` leaves it.
pub struct DomainTransitionGraph<'i, 'p> {
    index: &'i Index<'p>,
    tables: Tables,
    /// Nodes in insertion order.
    nodes: Vec<TypeId>,
    /// Node number of each type slot (`u32::MAX` when not a node).
    node_of: Vec<u32>,
    /// Edges in creation order (deleted ones are `None`).
    edges: Vec<Option<Edge>>,
    /// Per node, its out-edges (indices into `edges`) in creation order.
    succ: Vec<Vec<u32>>,
}

const NONE: u32 = u32::MAX;

/// A set over type slots as 64-bit words.
fn bits(set: &[bool]) -> Vec<u64> {
    let mut w = vec![0u64; set.len().div_ceil(64)];
    for (i, _) in set.iter().enumerate().filter(|(_, &b)| b) {
        w[i / 64] |= 1 << (i % 64);
    }
    w
}

/// The types in both sets, ascending.
fn set_bits<'a>(a: &'a [u64], b: &'a [u64]) -> impl Iterator<Item = TypeId> + 'a {
    a.iter()
        .zip(b)
        .enumerate()
        .flat_map(|(i, (&x, &y))| {
            let mut w = x & y;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let bit = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(i * 64 + bit)
            })
        })
        .filter_map(TypeId::from_index)
}

/// The new type of a type_transition rule.
fn default_of(index: &Index<'_>, r: TeRuleRef) -> Option<TypeId> {
    let p = index.policy();
    match r {
        TeRuleRef::Filename { trans, outcome, .. } => p
            .filename_trans
            .get(trans as usize)?
            .outcomes
            .get(outcome as usize)
            .map(|o| o.1),
        _ => match terules::entry(p, r)?.datum() {
            AvtabDatum::Type(t) => Some(t),
            _ => None,
        },
    }
}

impl<'i, 'p> DomainTransitionGraph<'i, 'p> {
    /// Builds the graph: one pass over the allow and type_transition rules in setools'
    /// order, then setools' validation of every edge.
    pub fn new(index: &'i Index<'p>) -> Self {
        let p = index.policy();
        let mut g = DomainTransitionGraph {
            index,
            tables: Tables::default(),
            nodes: Vec::new(),
            node_of: vec![NONE; index.type_slots()],
            edges: Vec::new(),
            succ: Vec::new(),
        };
        let process = index.class("process");
        let file = index.class("file");
        let bit = |class: Option<arbiter_policy::ClassId>, name: &str| -> u32 {
            class
                .and_then(|c| index.class_perms(c).find(|&(n, _)| n == name))
                .map_or(0, |(_, b)| 1u32 << b)
        };
        let (transition, dyntransition) =
            (bit(process, "transition"), bit(process, "dyntransition"));
        let (setexec_bit, setcurrent_bit) = (bit(process, "setexec"), bit(process, "setcurrent"));
        let (execute_bit, entrypoint_bit) = (bit(file, "execute"), bit(file, "entrypoint"));

        let mut setexec: HashMap<TypeId, Vec<TeRuleRef>> = HashMap::new();
        let mut setcurrent: HashMap<TypeId, Vec<TeRuleRef>> = HashMap::new();
        let mut execute = SlotRules::default();
        let mut entrypoint = SlotRules::default();
        let mut type_trans = SlotRules::default();
        let mut edge_of: HashMap<(TypeId, TypeId), u32> = HashMap::new();

        let kinds = AvtabKind::Allowed.bits() | AvtabKind::Transition.bits();
        for r in terules::raw_order(p, kinds) {
            let (kind, source, target, class, datum) = match r {
                TeRuleRef::Filename {
                    trans,
                    outcome,
                    source,
                } => {
                    let Some(ft) = p.filename_trans.get(trans as usize) else {
                        continue;
                    };
                    let Some(&(_, new)) = ft.outcomes.get(outcome as usize) else {
                        continue;
                    };
                    (
                        AvtabKind::Transition,
                        source,
                        ft.target,
                        ft.class,
                        AvtabDatum::Type(new),
                    )
                }
                _ => {
                    let Some(e) = terules::entry(p, r) else {
                        continue;
                    };
                    (
                        e.key.kind,
                        e.key.source,
                        e.key.target,
                        e.key.class,
                        e.datum(),
                    )
                }
            };
            match (kind, datum) {
                (AvtabKind::Allowed, AvtabDatum::Perms(perms)) if Some(class) == process => {
                    for (bit, dyn_) in [(transition, false), (dyntransition, true)] {
                        if bit == 0 || perms & bit == 0 {
                            continue;
                        }
                        for &s in index.expand(source) {
                            for &t in index.expand(target) {
                                if s != t {
                                    let k = g.edge(&mut edge_of, s, t);
                                    if let Some(Some(e)) = g.edges.get_mut(k as usize) {
                                        if dyn_ {
                                            e.dyntransition.push(r);
                                        } else {
                                            e.transition.push(r);
                                        }
                                    }
                                }
                            }
                        }
                    }
                    for (bit, map) in [
                        (setexec_bit, &mut setexec),
                        (setcurrent_bit, &mut setcurrent),
                    ] {
                        if bit != 0 && perms & bit != 0 {
                            for &s in index.expand(source) {
                                map.entry(s).or_default().push(r);
                            }
                        }
                    }
                }
                (AvtabKind::Allowed, AvtabDatum::Perms(perms)) if Some(class) == file => {
                    if execute_bit != 0 && perms & execute_bit != 0 {
                        execute.push(r, source, target);
                    }
                    if entrypoint_bit != 0 && perms & entrypoint_bit != 0 {
                        entrypoint.push(r, source, target);
                    }
                }
                (AvtabKind::Transition, AvtabDatum::Type(_)) if Some(class) == process => {
                    type_trans.push(r, source, target);
                }
                _ => {}
            }
        }
        g.tables = Tables {
            setexec,
            setcurrent,
            execute,
            entrypoint,
            type_trans,
        };
        g.validate();
        g
    }

    /// The edge s→t, created (with its nodes, s first) if new; its index.
    fn edge(&mut self, edge_of: &mut HashMap<(TypeId, TypeId), u32>, s: TypeId, t: TypeId) -> u32 {
        match edge_of.get(&(s, t)) {
            Some(&k) => k,
            None => {
                let sn = self.add_node(s);
                self.add_node(t);
                let k = self.edges.len() as u32;
                self.edges.push(Some(Edge {
                    source: s,
                    target: t,
                    transition: Vec::new(),
                    entrypoints: Vec::new(),
                    setexec: false,
                    dyntransition: Vec::new(),
                    setcurrent: false,
                }));
                self.succ[sn as usize].push(k);
                edge_of.insert((s, t), k);
                k
            }
        }
    }

    fn add_node(&mut self, t: TypeId) -> u32 {
        let slot = &mut self.node_of[t.index()];
        if *slot == NONE {
            *slot = self.nodes.len() as u32;
            self.nodes.push(t);
            self.succ.push(Vec::new());
        }
        *slot
    }

    /// setools' validation pass, edge by edge in networkx's edge order (node order, then
    /// each node's successor order), with its bookkeeping quirk: once an entrypoint m has
    /// been considered for an edge leaving s, setools' `type_trans[s][m]` holds a key, so m
    /// counts as "having a type_transition" for s's later edges.
    fn validate(&mut self) {
        let index = self.index;
        let t = &self.tables;
        let mut touched: HashSet<(TypeId, TypeId)> = HashSet::new();
        let mut exe_cache: HashMap<TypeId, Vec<u64>> = HashMap::new();
        let mut entry_cache: HashMap<TypeId, Vec<u64>> = HashMap::new();
        let mut scratch = Vec::new();
        for n in 0..self.nodes.len() {
            for &k in &self.succ[n] {
                let Some(edge) = self.edges[k as usize].as_mut() else {
                    continue;
                };
                let (s, d) = (edge.source, edge.target);
                let mut invalid_trans = true;
                if !edge.transition.is_empty() {
                    let entry = entry_cache
                        .entry(d)
                        .or_insert_with(|| bits(t.entrypoint.targets_of(index, d, &mut scratch)));
                    let exe = exe_cache
                        .entry(s)
                        .or_insert_with(|| bits(t.execute.targets_of(index, s, &mut scratch)));
                    let matched: Vec<TypeId> = set_bits(entry, exe).collect();
                    if !matched.is_empty() {
                        let has_setexec = t.setexec.contains_key(&s);
                        let slots = crate::rules::slots_of(index, s);
                        let mut has_tt = false;
                        for &m in &matched {
                            let (any_tt, tt_to_d) =
                                t.type_trans.any_between(index, &slots, m, |r| {
                                    default_of(index, r) == Some(d)
                                });
                            if has_setexec || any_tt || touched.contains(&(s, m)) {
                                edge.entrypoints.push(m);
                            }
                            has_tt |= tt_to_d;
                            touched.insert((s, m));
                        }
                        edge.setexec = has_setexec;
                        edge.entrypoints
                            .sort_by(|a, b| index.type_name(*a).cmp(index.type_name(*b)));
                        invalid_trans = !has_setexec && !has_tt;
                    }
                }
                let mut invalid_dyn = true;
                if !edge.dyntransition.is_empty() && t.setcurrent.contains_key(&s) {
                    edge.setcurrent = true;
                    invalid_dyn = false;
                }
                if invalid_trans && invalid_dyn {
                    self.edges[k as usize] = None;
                } else if invalid_trans {
                    edge.transition.clear();
                    edge.entrypoints.clear();
                    edge.setexec = false;
                } else if invalid_dyn {
                    edge.dyntransition.clear();
                    edge.setcurrent = false;
                }
            }
        }
        for list in &mut self.succ {
            list.retain(|&k| self.edges[k as usize].is_some());
        }
    }

    /// A step's rules, as setools lists them on its edge.
    pub fn full(&self, step: &Step<'_>) -> Transition {
        let index = self.index;
        let t = &self.tables;
        let e = step.edge;
        let (s, d) = (e.source, e.target);
        Transition {
            source: s,
            target: d,
            transition: e.transition.clone(),
            entrypoints: e
                .entrypoints
                .iter()
                .map(|&m| Entrypoint {
                    name: m,
                    entrypoint: t.entrypoint.between(index, d, m, |_| true),
                    execute: t.execute.between(index, s, m, |_| true),
                    type_transition: t
                        .type_trans
                        .between(index, s, m, |r| default_of(index, r) == Some(d)),
                })
                .collect(),
            setexec: if e.setexec {
                t.setexec.get(&s).cloned().unwrap_or_default()
            } else {
                Vec::new()
            },
            dyntransition: e.dyntransition.clone(),
            setcurrent: if e.setcurrent {
                t.setcurrent.get(&s).cloned().unwrap_or_default()
            } else {
                Vec::new()
            },
        }
    }

    /// The index the graph was built over.
    pub fn index(&self) -> &'i Index<'p> {
        self.index
    }

    /// `Graph nodes` as sedta's `--stats` prints it (nodes left without edges still count).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// `Graph edges` as sedta's `--stats` prints it.
    pub fn edge_count(&self) -> usize {
        self.succ.iter().map(Vec::len).sum()
    }

    /// The working graph for one direction and set of excluded types (setools'
    /// `_build_subgraph`).
    pub fn view(&self, reverse: bool, exclude: &[TypeId]) -> DtaView<'_, 'i, 'p> {
        let n = self.nodes.len();
        let excluded: HashSet<TypeId> = exclude.iter().copied().collect();
        let node_kept: Vec<bool> = self.nodes.iter().map(|t| !excluded.contains(t)).collect();
        // Forward successor lists, or the reversed graph's: the forward predecessors of
        // each node in forward node order (networkx re-adds edges node by node).
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (u, succ) in self.succ.iter().enumerate() {
            for &k in succ {
                let Some(e) = &self.edges[k as usize] else {
                    continue;
                };
                let v = self.node_of[e.target.index()];
                if reverse {
                    lists[v as usize].push(k);
                } else {
                    lists[u].push(k);
                }
            }
        }
        let mut data: HashMap<u32, Edge> = HashMap::new();
        let mut kept_edges: Vec<Vec<u32>> = Vec::with_capacity(n);
        for list in lists {
            let mut kept = Vec::with_capacity(list.len());
            for k in list {
                let Some(e) = &self.edges[k as usize] else {
                    continue;
                };
                let (su, tv) = (
                    self.node_of[e.source.index()],
                    self.node_of[e.target.index()],
                );
                if !node_kept[su as usize] || !node_kept[tv as usize] {
                    continue;
                }
                if !excluded.is_empty() && e.entrypoints.iter().any(|x| excluded.contains(x)) {
                    let mut e = e.clone();
                    e.entrypoints.retain(|x| !excluded.contains(x));
                    if e.entrypoints.is_empty() && e.dyntransition.is_empty() {
                        continue;
                    }
                    data.insert(k, e);
                }
                kept.push(k);
            }
            kept_edges.push(kept);
        }
        let adjacency = Adjacency::from_lists(kept_edges.iter().map(|list| {
            list.iter().filter_map(|&k| {
                let e = self.edges[k as usize].as_ref()?;
                Some(self.node_of[if reverse { e.source } else { e.target }.index()])
            })
        }));
        DtaView {
            graph: self,
            reverse,
            node_kept,
            kept_edges,
            adjacency,
            predecessors: OnceLock::new(),
            data,
        }
    }

    /// The type named `name` (aliases resolve; attributes are refused), as setools'
    /// `lookup_type`.
    pub fn lookup_type(&self, name: &str) -> Result<TypeId, AnalysisError> {
        crate::lookup_type(self.index, name)
    }
}

/// The graph as one analysis sees it: direction chosen, excluded types removed.
pub struct DtaView<'g, 'i, 'p> {
    graph: &'g DomainTransitionGraph<'i, 'p>,
    reverse: bool,
    node_kept: Vec<bool>,
    /// Per node, its out-edges in this view, in order.
    kept_edges: Vec<Vec<u32>>,
    adjacency: Adjacency,
    /// Each node's predecessors as setools' subgraph holds them, built at the first query
    /// that walks edges backward. setools' subgraph is a copy that re-adds the edges tail by
    /// tail in node order: forward, a node's predecessors come in node order; reversed
    /// (`reverse(copy=True)` adds v→u for each forward u→v), a node's predecessors are its
    /// forward successors in their creation order.
    predecessors: OnceLock<Adjacency>,
    /// Edges whose entrypoints the exclusion changed.
    data: HashMap<u32, Edge>,
}

impl DtaView<'_, '_, '_> {
    fn node(&self, t: TypeId) -> Option<u32> {
        let n = *self.graph.node_of.get(t.index())?;
        (n != NONE && self.node_kept[n as usize]).then_some(n)
    }

    fn transition(&self, k: u32) -> Option<Step<'_>> {
        let edge = self
            .data
            .get(&k)
            .or_else(|| self.graph.edges.get(k as usize)?.as_ref())?;
        Some(Step {
            source: edge.source,
            target: edge.target,
            edge,
        })
    }

    /// A step's rules, as setools lists them on its edge.
    pub fn full(&self, step: &Step<'_>) -> Transition {
        self.graph.full(step)
    }

    fn predecessors(&self) -> &Adjacency {
        self.predecessors.get_or_init(|| {
            let n = self.kept_edges.len();
            if !self.reverse {
                return self.adjacency.predecessors_by(0..n as u32);
            }
            let mut kept = vec![false; self.graph.edges.len()];
            for &k in self.kept_edges.iter().flatten() {
                kept[k as usize] = true;
            }
            let g = self.graph;
            Adjacency::from_lists(g.succ.iter().map(|list| {
                list.iter()
                    .filter(|&&k| kept[k as usize])
                    .filter_map(|&k| g.edges[k as usize].as_ref())
                    .map(|e| g.node_of[e.target.index()])
                    .collect::<Vec<u32>>()
            }))
        })
    }

    /// The one shortest path networkx's `shortest_path` finds (see
    /// [`search::shortest_path`]), as its steps in real direction; nothing when there is
    /// none.
    pub fn shortest_path(
        &self,
        source: TypeId,
        target: TypeId,
        emit: &mut dyn FnMut(&[Step<'_>]) -> ControlFlow<()>,
    ) {
        let (Some(s), Some(t)) = (self.node(source), self.node(target)) else {
            return;
        };
        if let Some(p) = search::shortest_path(&self.adjacency, self.predecessors(), s, t) {
            let _ = self.walk(&p, emit);
        }
    }

    fn step(&self, from: u32, to: u32) -> Option<Step<'_>> {
        let succ = self.adjacency.successors(from);
        let i = succ.iter().position(|&x| x == to)?;
        self.transition(*self.kept_edges.get(from as usize)?.get(i)?)
    }

    /// The transitions out of `source` (into it, for a reversed view), in sedta's order.
    /// Each is given in its real direction.
    pub fn transitions(&self, source: TypeId, emit: &mut dyn FnMut(&Step<'_>) -> ControlFlow<()>) {
        let Some(n) = self.node(source) else { return };
        for &k in &self.kept_edges[n as usize] {
            if let Some(t) = self.transition(k) {
                if emit(&t).is_break() {
                    return;
                }
            }
        }
    }

    fn walk(
        &self,
        path: &[u32],
        emit: &mut dyn FnMut(&[Step<'_>]) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let steps: Vec<Step<'_>> = path
            .windows(2)
            .filter_map(|w| self.step(w[0], w[1]))
            .collect();
        emit(&steps)
    }

    /// Every shortest path from `source` to `target` (networkx `all_shortest_paths`), each
    /// as its steps in real direction.
    pub fn all_shortest_paths(
        &self,
        source: TypeId,
        target: TypeId,
        emit: &mut dyn FnMut(&[Step<'_>]) -> ControlFlow<()>,
    ) {
        let (Some(s), Some(t)) = (self.node(source), self.node(target)) else {
            return;
        };
        search::all_shortest_paths(&self.adjacency, s, t, &mut |p| self.walk(p, emit));
    }

    /// Every path of 1 to `max_steps` steps (networkx `all_simple_paths`).
    pub fn all_paths(
        &self,
        source: TypeId,
        target: TypeId,
        max_steps: usize,
        emit: &mut dyn FnMut(&[Step<'_>]) -> ControlFlow<()>,
    ) {
        let (Some(s), Some(t)) = (self.node(source), self.node(target)) else {
            return;
        };
        search::all_simple_paths(&self.adjacency, s, t, max_steps, &mut |p| {
            self.walk(p, emit)
        });
    }

    /// Whether the view is reversed.
    pub fn reverse(&self) -> bool {
        self.reverse
    }
}
