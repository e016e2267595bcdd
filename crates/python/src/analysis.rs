//! The native half of `arbiter.setools.permmap`: setools 4.4.1's permission map files are
//! validated by the engine's parser (`arbiter_analysis::permmap`, the one `arbiter
//! infoflow` uses), so the Python `PermissionMap` and the CLI accept and refuse the same
//! files with the same `FILE:LINE:reason: token` messages.
//!
//! [`InfoFlow`] and [`Dta`] serve `arbiter.setools.infoflow.InfoFlowAnalysis` and
//! `arbiter.setools.dta.DomainTransitionAnalysis`: the engine's graphs
//! (`arbiter_analysis::{infoflow, dta}`, the ones `arbiter infoflow` and `arbiter dta` print
//! from, byte-identical to seinfoflow and sedta) answer each query, and each step's rules
//! come back as the same rule objects `TERuleQuery` yields.
//!
//! Each handle keeps its graph for its whole life, as setools' analyses keep theirs: a graph
//! borrows the policy's index, which borrows the policy, so both live on the stack of one
//! worker thread per handle (see [`Worker`]) that builds them once and answers the queries
//! sent to it. The working view (setools' subgraph) is kept too and rebuilt only when a
//! query's settings (excluded types, minimum weight, booleans, direction) differ from the
//! previous query's, as setools rebuilds its subgraph only when a setting changes.

use crate::setools::{PolicyDb, TeResults};
use arbiter_analysis::dta::{DomainTransitionGraph, DtaView, Transition};
use arbiter_analysis::infoflow::{boolean_values, Filter, InfoFlowGraph, InfoFlowView, Step};
use arbiter_analysis::permmap::{PermissionMap, SETOOLS_PERM_MAP};
use arbiter_policy::Policy as Model;
use arbiter_query::Index;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::ops::ControlFlow;
use std::sync::{mpsc, Arc};

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

/// A thread that owns one analysis's index and graph and answers requests of type `R`
/// (each carrying the channel its answer goes back on). The handle holds only the sending
/// end: dropping the handle closes the channel, which ends the thread.
struct Worker<R> {
    requests: mpsc::Sender<R>,
}

impl<R: Send + 'static> Worker<R> {
    fn spawn(name: &str, serve: impl FnOnce(mpsc::Receiver<R>) + Send + 'static) -> PyResult<Self> {
        let (requests, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || serve(rx))
            .map_err(|e| {
                PyRuntimeError::new_err(format!("{name}: cannot start its thread: {e}"))
            })?;
        Ok(Worker { requests })
    }

    /// Sends the request `make` builds around a reply channel and waits, without the GIL,
    /// for the answer. A worker that is gone (it panicked) is an error, not a hang.
    fn ask<A: Send>(
        &self,
        py: Python<'_>,
        make: impl FnOnce(mpsc::SyncSender<A>) -> R,
    ) -> PyResult<A> {
        let (reply, answer) = mpsc::sync_channel(1);
        let gone = || PyRuntimeError::new_err("arbiter: the analysis worker thread has stopped");
        self.requests.send(make(reply)).map_err(|_| gone())?;
        py.detach(move || answer.recv()).map_err(|_| gone())
    }
}

/// One information flow step as Python reads it: `(source type value, target type value,
/// weight, rules)`.
pub type FlowStep = (u32, u32, u8, TeResults);

type Paths<S> = Result<Vec<Vec<S>>, String>;

/// One information flow query as [`InfoFlow::query`] receives it.
struct FlowQuery {
    kind: String,
    source: String,
    target: Option<String>,
    maxlen: usize,
    min_weight: u8,
    exclude: Vec<String>,
    booleans: Option<Vec<(String, bool)>>,
}

/// What a worker is asked: its graph's size, or a query whose paths are made of steps `S`.
enum Request<Q, S> {
    Stats(mpsc::SyncSender<(usize, usize)>),
    Query(Q, mpsc::SyncSender<Paths<S>>),
}

type FlowRequest = Request<FlowQuery, FlowStep>;

/// The loop both workers run once their graph is built: answers requests until the handle
/// is dropped, keeping the last query's view (in `view`, which `answer` reads and replaces
/// through [`current_view`]) for the next one with the same settings.
fn serve<Q, S, K, V>(
    rx: mpsc::Receiver<Request<Q, S>>,
    stats: (usize, usize),
    mut answer: impl FnMut(&mut Option<(K, V)>, Q) -> Paths<S>,
) {
    let mut view = None;
    for request in rx {
        match request {
            Request::Stats(reply) => {
                let _ = reply.send(stats);
            }
            Request::Query(q, reply) => {
                let _ = reply.send(answer(&mut view, q));
            }
        }
    }
}

/// A policy and a permission map, as one `InfoFlowAnalysis` uses them. The map is the
/// Python `PermissionMap`'s text (as its `save` writes it) with its disabled permissions
/// excluded, taken when the analysis (re)builds its graph, so later edits of the Python map
/// count only after the analysis is told the map changed, as in setools. The graph is built
/// once, on the handle's worker thread, starting when the handle is made.
#[pyclass(frozen, module = "arbiter._native")]
pub struct InfoFlow {
    worker: Worker<FlowRequest>,
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
        let model = db.model().clone();
        let worker = Worker::spawn("arbiter-infoflow", move |rx| {
            serve_infoflow(&model, &map, rx)
        })?;
        Ok(InfoFlow { worker })
    }

    /// `(nodes, edges)` of the whole graph (setools' `get_stats`).
    fn stats(&self, py: Python<'_>) -> PyResult<(usize, usize)> {
        self.worker.ask(py, FlowRequest::Stats)
    }

    /// Runs one query: `kind` is `out` or `in` (the flows out of or into `source`, each a
    /// one-step path), `shortest_path` (networkx's one), `all_paths` (up to `maxlen` steps)
    /// or `all_shortest_paths`. `exclude` holds type names; `booleans`, when given, the
    /// overridden boolean values.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (kind, source, target, maxlen, min_weight, exclude, booleans))]
    fn query(
        &self,
        py: Python<'_>,
        kind: String,
        source: String,
        target: Option<String>,
        maxlen: usize,
        min_weight: u8,
        exclude: Vec<String>,
        booleans: Option<Vec<(String, bool)>>,
    ) -> PyResult<Vec<Vec<FlowStep>>> {
        let q = FlowQuery {
            kind,
            source,
            target,
            maxlen,
            min_weight,
            exclude,
            booleans,
        };
        self.worker
            .ask(py, |reply| FlowRequest::Query(q, reply))?
            .map_err(PyValueError::new_err)
    }
}

/// The information flow worker: builds the index and graph, then [`serve`]s.
fn serve_infoflow(model: &Arc<Model>, map: &PermissionMap, rx: mpsc::Receiver<FlowRequest>) {
    let index = Index::new(model);
    let g = InfoFlowGraph::new(&index, map);
    serve(rx, (g.node_count(), g.edge_count()), |view, q| {
        flow_query(model, &g, view, q)
    });
}

fn flow_query<'g, 'i, 'p>(
    model: &Arc<Model>,
    g: &'g InfoFlowGraph<'i, 'p>,
    view: &mut Option<(Filter, InfoFlowView<'g, 'i, 'p>)>,
    q: FlowQuery,
) -> Paths<FlowStep> {
    let err = |e: arbiter_analysis::AnalysisError| e.to_string();
    let index = g.index();
    let filter = Filter {
        exclude: q
            .exclude
            .iter()
            .map(|t| g.lookup_type(t))
            .collect::<Result<_, _>>()
            .map_err(err)?,
        min_weight: q.min_weight,
        booleans: q.booleans.map(|b| boolean_values(index, &b)),
    };
    let Some(view) = current_view(view, filter, |f| g.view(f)) else {
        return Err("no view".to_string());
    };
    let s = g.lookup_type(&q.source).map_err(err)?;
    let t = q
        .target
        .as_deref()
        .map(|t| g.lookup_type(t))
        .transpose()
        .map_err(err)?;
    let mut paths: Vec<Vec<Step>> = Vec::new();
    let mut keep = |p: &[Step]| {
        paths.push(p.to_vec());
        ControlFlow::Continue(())
    };
    match (q.kind.as_str(), t) {
        ("out", _) => view.flows_out(s, &mut |st| keep(&[st])),
        ("in", _) => view.flows_in(s, &mut |st| keep(&[st])),
        ("shortest_path", Some(t)) => view.shortest_path(s, t, &mut keep),
        ("all_paths", Some(t)) => view.all_paths(s, t, q.maxlen, &mut keep),
        ("all_shortest_paths", Some(t)) => view.all_shortest_paths(s, t, &mut keep),
        (kind, _) => return Err(format!("unknown query {kind}")),
    }
    Ok(paths
        .into_iter()
        .map(|p| {
            p.into_iter()
                .map(|st| {
                    let rules = TeResults::from_refs(model, index, &view.rules(st));
                    (value(st.source), value(st.target), st.weight, rules)
                })
                .collect()
        })
        .collect())
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

/// One domain transition query as [`Dta::query`] receives it.
struct DtaQuery {
    kind: String,
    source: String,
    target: Option<String>,
    maxlen: usize,
    reverse: bool,
    exclude: Vec<String>,
}

type DtaRequest = Request<DtaQuery, DtaStep>;

/// A policy as one `DomainTransitionAnalysis` uses it: the engine's domain transition graph
/// (`arbiter_analysis::dta`, the one `arbiter dta` prints from, byte-identical to sedta),
/// built once on the handle's worker thread as [`InfoFlow`]'s is.
#[pyclass(frozen, module = "arbiter._native")]
pub struct Dta {
    worker: Worker<DtaRequest>,
}

fn value(t: arbiter_policy::TypeId) -> u32 {
    t.index() as u32 + 1
}

#[pymethods]
impl Dta {
    #[new]
    fn new(db: PyRef<'_, PolicyDb>) -> PyResult<Dta> {
        let model = db.model().clone();
        let worker = Worker::spawn("arbiter-dta", move |rx| serve_dta(&model, rx))?;
        Ok(Dta { worker })
    }

    /// `(nodes, edges)` of the whole graph (setools' `get_stats`).
    fn stats(&self, py: Python<'_>) -> PyResult<(usize, usize)> {
        self.worker.ask(py, DtaRequest::Stats)
    }

    /// Runs one query: `kind` is `transitions` (each a one-step path), `shortest_path`
    /// (networkx's one), `all_paths` (up to `maxlen` steps) or `all_shortest_paths`; steps
    /// come in their real direction.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (kind, source, target, maxlen, reverse, exclude))]
    fn query(
        &self,
        py: Python<'_>,
        kind: String,
        source: String,
        target: Option<String>,
        maxlen: usize,
        reverse: bool,
        exclude: Vec<String>,
    ) -> PyResult<Vec<Vec<DtaStep>>> {
        let q = DtaQuery {
            kind,
            source,
            target,
            maxlen,
            reverse,
            exclude,
        };
        self.worker
            .ask(py, |reply| DtaRequest::Query(q, reply))?
            .map_err(PyValueError::new_err)
    }
}

/// The domain transition worker, as [`serve_infoflow`].
fn serve_dta(model: &Arc<Model>, rx: mpsc::Receiver<DtaRequest>) {
    let index = Index::new(model);
    let g = DomainTransitionGraph::new(&index);
    serve(rx, (g.node_count(), g.edge_count()), |view, q| {
        dta_query(model, &g, view, q)
    });
}

type DtaKey = (bool, Vec<arbiter_policy::TypeId>);

fn dta_query<'g, 'i, 'p>(
    model: &Arc<Model>,
    g: &'g DomainTransitionGraph<'i, 'p>,
    view: &mut Option<(DtaKey, DtaView<'g, 'i, 'p>)>,
    q: DtaQuery,
) -> Paths<DtaStep> {
    let err = |e: arbiter_analysis::AnalysisError| e.to_string();
    let index = g.index();
    let exclude: Vec<_> = q
        .exclude
        .iter()
        .map(|t| g.lookup_type(t))
        .collect::<Result<_, _>>()
        .map_err(err)?;
    let Some(view) = current_view(view, (q.reverse, exclude), |k| g.view(k.0, &k.1)) else {
        return Err("no view".to_string());
    };
    let s = g.lookup_type(&q.source).map_err(err)?;
    let t = q
        .target
        .as_deref()
        .map(|t| g.lookup_type(t))
        .transpose()
        .map_err(err)?;
    let mut paths: Vec<Vec<Transition>> = Vec::new();
    let mut keep = |p: &[arbiter_analysis::dta::Step<'_>]| {
        paths.push(p.iter().map(|st| view.full(st)).collect());
        ControlFlow::Continue(())
    };
    match (q.kind.as_str(), t) {
        ("transitions", _) => view.transitions(s, &mut |st| keep(std::slice::from_ref(st))),
        ("shortest_path", Some(t)) => view.shortest_path(s, t, &mut keep),
        ("all_paths", Some(t)) => view.all_paths(s, t, q.maxlen, &mut keep),
        ("all_shortest_paths", Some(t)) => view.all_shortest_paths(s, t, &mut keep),
        (kind, _) => return Err(format!("unknown query {kind}")),
    }
    let rules = |r: &[arbiter_query::terules::TeRuleRef]| TeResults::from_refs(model, index, r);
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
}

/// Adds the analysis functions to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Dta>()?;
    m.add_class::<InfoFlow>()?;
    m.add_function(wrap_pyfunction!(_check_perm_map, m)?)?;
    m.add_function(wrap_pyfunction!(_default_perm_map, m)?)?;
    Ok(())
}

/// The working view for `key`: the cached one when its settings are the same, else a new
/// one (the old view dropped first, so two are never held at once) — setools' rule of
/// rebuilding its subgraph only when a setting changes. Shared by both analyses' workers.
fn current_view<K: PartialEq, V>(
    slot: &mut Option<(K, V)>,
    key: K,
    make: impl FnOnce(&K) -> V,
) -> Option<&V> {
    if !matches!(slot, Some((k, _)) if *k == key) {
        *slot = None;
        let v = make(&key);
        *slot = Some((key, v));
    }
    slot.as_ref().map(|(_, v)| v)
}
