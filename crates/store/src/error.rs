//! Why a store build failed. Every variant names the file it is about.

use std::path::{Path, PathBuf};

/// A store build error.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file could not be read, written or renamed.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A line of `semanage.conf` that libsemanage 3.4 would refuse.
    #[error("{}:{line}: {msg}", path.display())]
    Conf {
        path: PathBuf,
        line: usize,
        msg: String,
    },
    /// The module store's layout is not what libsemanage writes.
    #[error("{}: {msg}", path.display())]
    Store { path: PathBuf, msg: String },
    /// A module with no `cil` file: libsemanage would run an HLL compiler; we do not.
    #[error("module `{name}` has no cil file ({}); its {lang} source must be compiled to CIL first (semodule runs {compiler} for that, arbiter does not)", path.display())]
    HllOnly {
        name: String,
        lang: String,
        path: PathBuf,
        compiler: String,
    },
    /// The CIL compiler failed (the messages secilc/semodule would print).
    #[error("{0}")]
    Compile(#[from] arbiter_cil::CilError),
    /// Writing the binary policy failed.
    #[error("writing the binary policy: {0}")]
    Write(#[from] arbiter_policy::write::WriteError),
    /// A text input (seusers, users_extra, file_contexts) that genhomedircon cannot use.
    #[error("{0}")]
    Homedirs(String),
    /// An external program (sefcontext_compile) failed.
    #[error("{0}")]
    External(String),
    /// A failure of the builder itself (a worker thread that panicked).
    #[error("internal error: {0}")]
    Internal(String),
    /// A store feature this builder does not implement; refusing beats a wrong policy.
    #[error("unsupported: {0}")]
    Unsupported(String),
}

impl StoreError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> StoreError {
        StoreError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
    pub(crate) fn store(path: &Path, msg: impl Into<String>) -> StoreError {
        StoreError::Store {
            path: path.to_path_buf(),
            msg: msg.into(),
        }
    }
}
