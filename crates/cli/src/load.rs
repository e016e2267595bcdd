//! Loading the policy a command names, and applying boolean overrides.
//!
//! A policy is named by a path, and a Linux path is bytes: it is taken as an `OsStr`, never
//! required to be UTF-8. Pipes, FIFOs, `/dev/stdin` and process substitution work (see
//! `arbiter_policy::Policy::open`).

use arbiter_decide::SecurityServer;
use arbiter_io::quote;
use arbiter_policy::{Policy, BUILTIN_POLICY as BUILTIN};
use std::ffi::OsStr;
use std::path::Path;

/// The name that selects the embedded policy.
pub const BUILTIN_NAME: &str = "builtin";

/// Reads the policy named on the command line.
pub fn policy(arg: impl AsRef<OsStr>) -> Result<Policy, String> {
    let arg = arg.as_ref();
    if arg == BUILTIN_NAME {
        return Policy::from_bytes(BUILTIN).map_err(|e| format!("embedded policy: {e}"));
    }
    let path = Path::new(arg);
    if path.is_dir() {
        return Err(format!(
            "{}: is a directory, not a policy file",
            path.display()
        ));
    }
    Policy::open(path).map_err(|e| e.to_string())
}

/// Builds a server for the policy and applies `NAME=VALUE` boolean settings.
pub fn server(arg: impl AsRef<OsStr>, bools: &[String]) -> Result<SecurityServer, String> {
    let server = SecurityServer::new(policy(arg)?);
    if !bools.is_empty() {
        let mut values = Vec::with_capacity(bools.len());
        for b in bools {
            let (name, value) = b
                .split_once('=')
                .ok_or_else(|| format!("boolean setting {} is not NAME=VALUE", quote(b)))?;
            let value = match value {
                "1" | "true" | "on" => true,
                "0" | "false" | "off" => false,
                _ => {
                    return Err(format!(
                        "boolean {}: value {} is not one of 1/0/true/false/on/off",
                        quote(name),
                        quote(value)
                    ))
                }
            };
            values.push((name, value));
        }
        server.set_booleans(&values).map_err(|e| e.to_string())?;
    }
    Ok(server)
}
