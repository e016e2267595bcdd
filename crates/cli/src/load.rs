//! Loading the policy a command names, and applying boolean overrides.
//!
//! A policy is named by a path, and a Linux path is bytes: it is taken as an `OsStr`, never
//! required to be UTF-8. Pipes, FIFOs, `/dev/stdin` and process substitution work (see
//! `arbiter_policy::Policy::open`).

use arbiter_decide::{DecideError, SecurityServer};
use arbiter_io::quote;
use arbiter_policy::{PolicyError, ValidPolicy, BUILTIN_POLICY as BUILTIN};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Why the policy a command names, or a boolean setting for it, cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The embedded policy does not read (a build defect).
    #[error("embedded policy: {0}")]
    Builtin(PolicyError),
    /// A directory where a policy file was expected.
    #[error("{}: is a directory, not a policy file", .0.display())]
    Directory(PathBuf),
    /// The policy file cannot be read or is not a valid policy (its message names the
    /// file and offset).
    #[error(transparent)]
    Policy(PolicyError),
    /// A `--bool` argument without `=`.
    #[error("boolean setting {} is not NAME=VALUE", quote(.0))]
    BoolSetting(String),
    /// A `--bool` value that is no truth value.
    #[error("boolean {}: value {} is not one of 1/0/true/false/on/off", quote(.name), quote(.value))]
    BoolValue {
        /// The boolean's name.
        name: String,
        /// The value given.
        value: String,
    },
    /// The security server refuses the settings (an unknown boolean).
    #[error(transparent)]
    Booleans(DecideError),
}

/// The name that selects the embedded policy.
pub const BUILTIN_NAME: &str = "builtin";

/// Reads (and validates) the policy named on the command line.
pub fn policy(arg: impl AsRef<OsStr>) -> Result<ValidPolicy, LoadError> {
    let arg = arg.as_ref();
    if arg == BUILTIN_NAME {
        return ValidPolicy::from_bytes(BUILTIN).map_err(LoadError::Builtin);
    }
    let path = Path::new(arg);
    if path.is_dir() {
        return Err(LoadError::Directory(path.into()));
    }
    ValidPolicy::open(path).map_err(LoadError::Policy)
}

/// Builds a server for the policy and applies `NAME=VALUE` boolean settings.
pub fn server(arg: impl AsRef<OsStr>, bools: &[String]) -> Result<SecurityServer, LoadError> {
    let server = SecurityServer::new(policy(arg)?);
    if !bools.is_empty() {
        let mut values = Vec::with_capacity(bools.len());
        for b in bools {
            let (name, value) = b
                .split_once('=')
                .ok_or_else(|| LoadError::BoolSetting(b.clone()))?;
            let value = match value {
                "1" | "true" | "on" => true,
                "0" | "false" | "off" => false,
                _ => {
                    return Err(LoadError::BoolValue {
                        name: name.to_string(),
                        value: value.to_string(),
                    })
                }
            };
            values.push((name, value));
        }
        server.set_booleans(&values).map_err(LoadError::Booleans)?;
    }
    Ok(server)
}
