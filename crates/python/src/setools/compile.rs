//! Python source compiled to a code object without `builtins.compile`.
//!
//! `compile()` first asks whether its argument is an AST object (`PyAST_Check`), and that
//! question makes CPython build its 119 AST node classes, once per interpreter: about
//! 0.2 MB resident that a script run by `python3 -m arbiter.setools` (whose runner compiles
//! the script) or a query class's generated `__init__` paid for nothing. The C API's
//! `Py_CompileString` (PyO3's [`PyCode::compile`]) parses and compiles the same source with
//! the same rules (a coding declaration or BOM in the bytes is honoured, as by
//! `compile(bytes, ...)`; no compiler flags are inherited, as from a module without
//! `__future__` imports) and never builds them.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::code::PyCodeInput;
use pyo3::types::PyCode;
use std::ffi::CString;

/// `compile(source, filename, "exec")` for `source` bytes and a file system encoded
/// `filename`, as the code object CPython's own compiler makes; a `SyntaxError` as
/// `compile` raises it. Source or file name holding a NUL byte is a `ValueError` (the
/// caller hands such source to `compile`, which reports it its own way).
#[pyfunction]
pub fn compile_source<'py>(
    py: Python<'py>,
    source: &[u8],
    filename: &[u8],
) -> PyResult<Bound<'py, PyCode>> {
    let nul = |_| PyValueError::new_err("source or file name contains a NUL byte");
    let source = CString::new(source).map_err(nul)?;
    let filename = CString::new(filename).map_err(nul)?;
    PyCode::compile(py, &source, &filename, PyCodeInput::File)
}
