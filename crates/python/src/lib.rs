//! arbiter for Python: the security server, its access vector cache and policy reading,
//! as the extension module `arbiter` (PyO3; built and installed by maturin with
//! `pip install ./crates/python`).
//!
//! ```python
//! import arbiter
//! srv = arbiter.Server(arbiter.Policy.open("/etc/selinux/default/policy/policy.33"))
//! v = srv.check("system_u:system_r:httpd_t:s0", "system_u:object_r:httpd_sys_content_t:s0",
//!               "file", ["read", "open"])
//! assert v.allowed and bool(v)
//! ```
//!
//! Every object is immutable from Python's side (`frozen`) and holds the engine behind an
//! `Arc`, so one `Server` or `Avc` can be shared by any number of Python threads; the batch
//! calls release the GIL and run on every core (the `batch` module explains how). Engine errors
//! become exceptions of one hierarchy ([`errors`]), and no Rust panic crosses into Python.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod avc;
mod batch;
mod bsm;
mod build;
mod checker;
mod decision;
mod denials;
pub mod errors;
mod explanation;
mod fleet;
mod landlock;
mod policy;
mod server;
pub mod setools;

pub use avc::Avc;
pub use decision::{AvDecision, Verdict};
pub use explanation::Explanation;
pub use policy::Policy;
pub use server::Server;

use pyo3::prelude::*;

/// Panics inside the boundary guard, so the tests can pin that a panic becomes
/// `arbiter.Error` instead of unwinding into the interpreter. Not part of the API.
#[pyfunction]
fn _panic_for_tests() -> PyResult<()> {
    errors::guard(|| -> PyResult<()> { panic!("deliberate panic for the tests") })
}

/// The extension module `arbiter._native`, re-exported by the package `arbiter`.
#[pymodule]
#[pyo3(name = "_native")]
fn arbiter_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    m.add_class::<Policy>()?;
    m.add_class::<Server>()?;
    m.add_class::<Avc>()?;
    m.add_class::<Verdict>()?;
    m.add_class::<AvDecision>()?;
    m.add_class::<Explanation>()?;
    m.add_class::<setools::PolicyDb>()?;
    m.add_class::<setools::TeResults>()?;
    setools::register(m)?;
    denials::register(m)?;
    checker::register(m)?;
    fleet::register(m)?;
    bsm::register(m)?;
    landlock::register(m)?;
    build::register(m)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    Ok(())
}
