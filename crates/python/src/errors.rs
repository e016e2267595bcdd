//! The exception hierarchy and the mapping of the engine's errors onto it.
//!
//! ```text
//! arbiter.Error                 every error the engine reports
//! ├── PolicyError               a policy that cannot be read (.offset, .what, .path)
//! ├── ContextError              a context that does not parse or the policy forbids (.context)
//! └── UnknownNameError          a class, permission or boolean the policy lacks (.name)
//! ```
//!
//! Bad arguments (a wrong type, an unknown hash name, a slot count that is not a power of
//! two) raise Python's own `TypeError` / `ValueError`, as any Python API does. A Rust panic
//! inside the engine is caught at the boundary ([`guard`]) and raised as `arbiter.Error`:
//! it never unwinds into the interpreter.

use arbiter_decide::DecideError;
use arbiter_policy::PolicyError as ReadError;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

create_exception!(
    arbiter,
    Error,
    PyException,
    "Base class of every error arbiter raises."
);
create_exception!(
    arbiter,
    PolicyError,
    Error,
    "A policy could not be read. `.offset` is the byte offset the reader stood at (None when \
     the fault is not at one place), `.what` names what was being read, `.path` the file \
     (None for an image in memory)."
);
create_exception!(
    arbiter,
    ContextError,
    Error,
    "A security context is malformed, names a user, role, type or level the policy lacks, \
     or is a combination the policy does not allow. `.context` is the context concerned."
);
create_exception!(
    arbiter,
    UnknownNameError,
    Error,
    "A class, permission or boolean name the policy does not define (or rejects, under \
     handle_unknown=reject). `.name` is the name concerned."
);

/// Registers the exception types and their attribute defaults (so `.offset` and friends
/// exist even on an instance raised from Python code).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let policy = py.get_type::<PolicyError>();
    for attr in ["offset", "what", "path"] {
        policy.setattr(attr, py.None())?;
    }
    py.get_type::<ContextError>()
        .setattr("context", py.None())?;
    py.get_type::<UnknownNameError>()
        .setattr("name", py.None())?;
    m.add("Error", py.get_type::<Error>())?;
    m.add("PolicyError", policy)?;
    m.add("ContextError", py.get_type::<ContextError>())?;
    m.add("UnknownNameError", py.get_type::<UnknownNameError>())?;
    Ok(())
}

/// Builds an exception instance with attributes set.
fn with_attrs<'a>(err: PyErr, attrs: impl IntoIterator<Item = (&'a str, Option<String>)>) -> PyErr {
    Python::attach(|py| {
        let value = err.value(py);
        for (k, v) in attrs {
            // Setting an attribute on a fresh exception instance cannot fail in practice;
            // if it did, the exception without the attribute is still the right one.
            let _ = value.setattr(k, v);
        }
    });
    err
}

/// A policy read failure as `PolicyError`.
pub fn policy_error(e: ReadError) -> PyErr {
    let message = e.to_string();
    let (offset, what, path): (Option<usize>, String, Option<String>) = match &e {
        ReadError::Io { path, .. } => (None, "file".into(), Some(path.display().to_string())),
        ReadError::Truncated { what, offset, .. } => (Some(*offset), (*what).into(), None),
        ReadError::BadMagic { .. } => (Some(0), "magic number".into(), None),
        ReadError::UnsupportedTarget { .. } => (None, "policy target".into(), None),
        ReadError::UnsupportedVersion { .. } => (None, "policy version".into(), None),
        ReadError::CountTooLarge { what, offset, .. } => (Some(*offset), (*what).into(), None),
        ReadError::Invalid { what, offset, .. } => (Some(*offset), (*what).into(), None),
        ReadError::Inconsistent { what, .. } => (None, what.clone(), None),
        ReadError::TrailingBytes { offset, .. } => (Some(*offset), "trailing bytes".into(), None),
        _ => (None, "policy".into(), None),
    };
    let err = PolicyError::new_err(message);
    let err = with_attrs(err, [("what", Some(what)), ("path", path)]);
    Python::attach(|py| {
        let _ = err.value(py).setattr("offset", offset);
    });
    err
}

/// An engine error about the context `context` (the caller's words for it in `which`, e.g.
/// "source context"), or about a name.
pub fn context_error(e: DecideError, which: &str, context: &str) -> PyErr {
    match e {
        DecideError::MalformedContext { .. }
        | DecideError::InvalidContext { .. }
        | DecideError::UnknownUser(_)
        | DecideError::UnknownRole(_)
        | DecideError::UnknownType(_)
        | DecideError::UnknownSensitivity(_)
        | DecideError::UnknownCategory(_) => with_attrs(
            ContextError::new_err(format!("{which}: {e}")),
            [("context", Some(context.to_string()))],
        ),
        other => decide_error(other),
    }
}

/// Any engine error, by kind.
pub fn decide_error(e: DecideError) -> PyErr {
    let message = e.to_string();
    match e {
        DecideError::UnknownClass(name)
        | DecideError::UnknownBoolean(name)
        | DecideError::RejectedUnknown(name) => {
            with_attrs(UnknownNameError::new_err(message), [("name", Some(name))])
        }
        DecideError::UnknownPermission { perm, .. } => {
            with_attrs(UnknownNameError::new_err(message), [("name", Some(perm))])
        }
        DecideError::MalformedContext { ref context, .. }
        | DecideError::InvalidContext { ref context, .. }
        | DecideError::InvalidComputedContext { ref context, .. } => {
            let context = context.clone();
            with_attrs(ContextError::new_err(message), [("context", Some(context))])
        }
        DecideError::UnknownUser(_)
        | DecideError::UnknownRole(_)
        | DecideError::UnknownType(_)
        | DecideError::UnknownSensitivity(_)
        | DecideError::UnknownCategory(_) => ContextError::new_err(message),
        DecideError::InitialSidCollision(_) => with_attrs(
            PolicyError::new_err(message),
            [("what", Some("initial SID".into()))],
        ),
        _ => Error::new_err(message),
    }
}

/// Runs engine code, turning a panic into `arbiter.Error` instead of unwinding into Python.
pub fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| Err(panic_error(payload)))
}

/// A caught panic's payload as `arbiter.Error`.
pub fn panic_error(payload: Box<dyn std::any::Any + Send>) -> PyErr {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    Error::new_err(format!("internal error in arbiter (please report): {text}"))
}
