//! Loading the policy a command names, and applying boolean overrides.

use arbiter_decide::security::SecurityServer;
use arbiter_policy::Policy;

/// The embedded default policy: `policies/bin/default.33`, compiled from
/// `policies/src/default.conf` by `policies/regen.sh`.
pub const BUILTIN: &[u8] = include_bytes!("../../../policies/bin/default.33");

/// The name that selects the embedded policy.
pub const BUILTIN_NAME: &str = "builtin";

/// Reads the policy named on the command line.
pub fn policy(arg: &str) -> Result<Policy, String> {
    if arg == BUILTIN_NAME {
        return Policy::from_bytes(BUILTIN).map_err(|e| format!("embedded policy: {e}"));
    }
    Policy::open(arg).map_err(|e| e.to_string())
}

/// Builds a server for the policy and applies `NAME=VALUE` boolean settings.
pub fn server(arg: &str, bools: &[String]) -> Result<SecurityServer, String> {
    let server = SecurityServer::new(policy(arg)?);
    if !bools.is_empty() {
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
            let id = server
                .publisher()
                .bool_id(name)
                .map_err(|e| e.to_string())?;
            server.publisher().set_bool(id, value);
        }
        server.publisher().commit();
    }
    Ok(server)
}
