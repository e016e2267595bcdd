//! Loading the policy a command names, and applying boolean overrides.

use arbiter_decide::SecurityServer;
use arbiter_policy::{Policy, BUILTIN_POLICY as BUILTIN};

/// The name that selects the embedded policy.
pub const BUILTIN_NAME: &str = "builtin";

/// Reads the policy named on the command line.
pub fn policy(arg: &str) -> Result<Policy, String> {
    if arg == BUILTIN_NAME {
        return Policy::from_bytes(BUILTIN).map_err(|e| format!("embedded policy: {e}"));
    }
    if std::path::Path::new(arg).is_dir() {
        return Err(format!("{arg}: is a directory, not a policy file"));
    }
    Policy::open(arg).map_err(|e| e.to_string())
}

/// Builds a server for the policy and applies `NAME=VALUE` boolean settings.
pub fn server(arg: &str, bools: &[String]) -> Result<SecurityServer, String> {
    let server = SecurityServer::new(policy(arg)?);
    if !bools.is_empty() {
        let mut values = Vec::with_capacity(bools.len());
        for b in bools {
            let (name, value) = b
                .split_once('=')
                .ok_or_else(|| format!("boolean setting {b:?} is not NAME=VALUE"))?;
            let value = match value {
                "1" | "true" | "on" => true,
                "0" | "false" | "off" => false,
                _ => {
                    return Err(format!(
                        "boolean {name}: value {value:?} is not one of 1/0/true/false/on/off"
                    ))
                }
            };
            values.push((name, value));
        }
        server.set_booleans(&values).map_err(|e| e.to_string())?;
    }
    Ok(server)
}
