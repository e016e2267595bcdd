//! The native half of `arbiter.setools.permmap`: setools 4.4.1's permission map files are
//! validated by the engine's parser (`arbiter_analysis::permmap`, the one `arbiter
//! infoflow` uses), so the Python `PermissionMap` and the CLI accept and refuse the same
//! files with the same `FILE:LINE:reason: token` messages.
//!
//! [`InfoFlow`] serves `arbiter.setools.infoflow.InfoFlowAnalysis`: the engine's graph
//! (`arbiter_analysis::infoflow`, the one `arbiter infoflow` prints from, byte-identical to
//! seinfoflow) answers each query, and each step's rules come back as the same rule objects
//! `TERuleQuery` yields.

use crate::setools::{PolicyDb, TeResults};
use arbiter_analysis::dta::{DomainTransitionGraph, Transition};
use arbiter_analysis::infoflow::{boolean_values, Filter, InfoFlowGraph, Step};
use arbiter_analysis::permmap::{PermissionMap, SETOOLS_PERM_MAP};
use arbiter_policy::Policy as Model;
use arbiter_query::Index;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::ops::ControlFlow;
use std::sync::Arc;

/// Checks permission map text read from `path`; a refused map raises `ValueError(message)`
/// with setools' wording, which `permmap.py` turns into `PermissionMapParseError`.
#[pyfunction]
fn _check_perm_map(path: &str, text: &str) -> PyResult<()> {
    PermissionMap::parse(path, text)
        .map(|_| ())
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Where setools' own default map is installed (read from there, never shipped: see
/// `arbiter_analysis::permmap`).
#[pyfunction]
fn _default_perm_map() -> &'static str {
    SETOOLS_PERM_MAP
}

/// One information flow step as Python reads it: `(source type value, target type value,
/// weight, rules)`.
pub type FlowStep = (u32, u32, u8, TeResults);

/// A policy and a permission map, as one `InfoFlowAnalysis` uses them. The map is the
/// Python `PermissionMap`'s text (as its `save` writes it) with its disabled permissions
/// excluded, taken when the analysis (re)builds its graph, so later edits of the Python map
/// count only after the analysis is told the map changed, as in setools.
///
/// The graph borrows the policy's index, so it is built per query rather than kept: on the
/// small policies this costs milliseconds; on Debian's about a second per query.
#[pyclass(frozen, module = "arbiter._native")]
pub struct InfoFlow {
    model: Arc<Model>,
    map: PermissionMap,
}

#[pymethods]
impl InfoFlow {
    /// `excluded`: `(class, permission)` pairs left out of the weights.
    #[new]
    fn new(
        db: PyRef<'_, PolicyDb>,
        path: &str,
        text: &str,
        excluded: Vec<(String, String)>,
    ) -> PyResult<InfoFlow> {
        let mut map =
            PermissionMap::parse(path, text).map_err(|e| PyValueError::new_err(e.to_string()))?;
        for (class, perm) in &excluded {
            map.exclude_permission(class, perm);
        }
        Ok(InfoFlow {
            model: db.model().clone(),
            map,
        })
    }

    /// `(nodes, edges)` of the whole graph (setools' `get_stats`).
    fn stats(&self, py: Python<'_>) -> (usize, usize) {
        py.detach(|| {
            let index = Index::new(&self.model);
            let g = InfoFlowGraph::new(&index, &self.map);
            (g.node_count(), g.edge_count())
        })
    }

    /// Runs one query: `kind` is `out` or `in` (the flows out of or into `source`, each a
    /// one-step path), `shortest_path` (networkx's one), `all_paths` (up to `maxlen` steps)
    /// or `all_shortest_paths`. `exclude` holds type
    /// names; `booleans`, when given, the overridden boolean values.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (kind, source, target, maxlen, min_weight, exclude, booleans))]
    fn query(
        &self,
        py: Python<'_>,
        kind: &str,
        source: &str,
        target: Option<&str>,
        maxlen: usize,
        min_weight: u8,
        exclude: Vec<String>,
        booleans: Option<Vec<(String, bool)>>,
    ) -> PyResult<Vec<Vec<FlowStep>>> {
        let err = |e: arbiter_analysis::AnalysisError| PyValueError::new_err(e.to_string());
        py.detach(|| {
            let index = Index::new(&self.model);
            let g = InfoFlowGraph::new(&index, &self.map);
            let filter = Filter {
                exclude: exclude
                    .iter()
                    .map(|t| g.lookup_type(t))
                    .collect::<Result<_, _>>()
                    .map_err(err)?,
                min_weight,
                booleans: booleans.map(|b| boolean_values(&index, &b)),
            };
            let view = g.view(&filter);
            let s = g.lookup_type(source).map_err(err)?;
            let mut paths: Vec<Vec<Step>> = Vec::new();
            let mut keep = |p: &[Step]| {
                paths.push(p.to_vec());
                ControlFlow::Continue(())
            };
            match (kind, target) {
                ("out", _) => view.flows_out(s, &mut |st| keep(&[st])),
                ("in", _) => view.flows_in(s, &mut |st| keep(&[st])),
                ("shortest_path", Some(t)) => {
                    let t = g.lookup_type(t).map_err(err)?;
                    view.shortest_path(s, t, &mut keep)
                }
                ("all_paths", Some(t)) => {
                    let t = g.lookup_type(t).map_err(err)?;
                    view.all_paths(s, t, maxlen, &mut keep)
                }
                ("all_shortest_paths", Some(t)) => {
                    let t = g.lookup_type(t).map_err(err)?;
                    view.all_shortest_paths(s, t, &mut keep)
                }
                _ => return Err(PyValueError::new_err(format!("unknown query {kind}"))),
            }
            Ok(paths
                .into_iter()
                .map(|p| {
                    p.into_iter()
                        .map(|st| {
                            let rules = TeResults::from_refs(&self.model, &index, &view.rules(st));
                            (
                                st.source.index() as u32 + 1,
                                st.target.index() as u32 + 1,
                                st.weight,
                                rules,
                            )
                        })
                        .collect()
                })
                .collect())
        })
    }
}

/// One entrypoint of a domain transition: `(type value, entrypoint rules, execute rules,
/// type_transition rules)`.
pub type DtaEntrypoint = (u32, TeResults, TeResults, TeResults);

/// One domain transition as Python reads it: `(source value, target value, transition
/// rules, entrypoints, setexec rules, dyntransition rules, setcurrent rules)`.
pub type DtaStep = (
    u32,
    u32,
    TeResults,
    Vec<DtaEntrypoint>,
    TeResults,
    TeResults,
    TeResults,
);

/// A policy as one `DomainTransitionAnalysis` uses it: the engine's domain transition graph
/// (`arbiter_analysis::dta`, the one `arbiter dta` prints from, byte-identical to sedta),
/// built per query as [`InfoFlow`]'s is.
#[pyclass(frozen, module = "arbiter._native")]
pub struct Dta {
    model: Arc<Model>,
}

fn value(t: arbiter_policy::TypeId) -> u32 {
    t.index() as u32 + 1
}

#[pymethods]
impl Dta {
    #[new]
    fn new(db: PyRef<'_, PolicyDb>) -> Dta {
        Dta {
            model: db.model().clone(),
        }
    }

    /// `(nodes, edges)` of the whole graph (setools' `get_stats`).
    fn stats(&self, py: Python<'_>) -> (usize, usize) {
        py.detach(|| {
            let index = Index::new(&self.model);
            let g = DomainTransitionGraph::new(&index);
            (g.node_count(), g.edge_count())
        })
    }

    /// Runs one query: `kind` is `transitions` (each a one-step path), `shortest_path`
    /// (networkx's one), `all_paths` (up to `maxlen` steps) or `all_shortest_paths`; steps
    /// come in their real direction.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (kind, source, target, maxlen, reverse, exclude))]
    fn query(
        &self,
        py: Python<'_>,
        kind: &str,
        source: &str,
        target: Option<&str>,
        maxlen: usize,
        reverse: bool,
        exclude: Vec<String>,
    ) -> PyResult<Vec<Vec<DtaStep>>> {
        let err = |e: arbiter_analysis::AnalysisError| PyValueError::new_err(e.to_string());
        py.detach(|| {
            let index = Index::new(&self.model);
            let g = DomainTransitionGraph::new(&index);
            let exclude: Vec<_> = exclude
                .iter()
                .map(|t| g.lookup_type(t))
                .collect::<Result<_, _>>()
                .map_err(err)?;
            let view = g.view(reverse, &exclude);
            let s = g.lookup_type(source).map_err(err)?;
            let mut paths: Vec<Vec<Transition>> = Vec::new();
            let mut keep = |p: &[arbiter_analysis::dta::Step<'_>]| {
                paths.push(p.iter().map(|st| view.full(st)).collect());
                ControlFlow::Continue(())
            };
            match (kind, target) {
                ("transitions", _) => view.transitions(s, &mut |st| keep(std::slice::from_ref(st))),
                ("all_paths", Some(t)) => {
                    let t = g.lookup_type(t).map_err(err)?;
                    view.all_paths(s, t, maxlen, &mut keep)
                }
                ("all_shortest_paths", Some(t)) => {
                    let t = g.lookup_type(t).map_err(err)?;
                    view.all_shortest_paths(s, t, &mut keep)
                }
                ("shortest_path", Some(t)) => {
                    let t = g.lookup_type(t).map_err(err)?;
                    view.shortest_path(s, t, &mut keep)
                }
                _ => return Err(PyValueError::new_err(format!("unknown query {kind}"))),
            }
            let rules = |r: &[arbiter_query::terules::TeRuleRef]| {
                TeResults::from_refs(&self.model, &index, r)
            };
            Ok(paths
                .into_iter()
                .map(|p| {
                    p.into_iter()
                        .map(|t| {
                            (
                                value(t.source),
                                value(t.target),
                                rules(&t.transition),
                                t.entrypoints
                                    .iter()
                                    .map(|e| {
                                        (
                                            value(e.name),
                                            rules(&e.entrypoint),
                                            rules(&e.execute),
                                            rules(&e.type_transition),
                                        )
                                    })
                                    .collect(),
                                rules(&t.setexec),
                                rules(&t.dyntransition),
                                rules(&t.setcurrent),
                            )
                        })
                        .collect()
                })
                .collect())
        })
    }
}

/// Adds the analysis functions to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Dta>()?;
    m.add_class::<InfoFlow>()?;
    m.add_function(wrap_pyfunction!(_check_perm_map, m)?)?;
    m.add_function(wrap_pyfunction!(_default_perm_map, m)?)?;
    Ok(())
}
