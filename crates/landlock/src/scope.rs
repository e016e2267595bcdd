//! IPC scoping between domains (`task.c:domain_is_scoped`): abstract UNIX sockets and
//! signals.

use crate::access::Scopes;
use crate::domain::{Domain, Rules};

/// Whether `client` may not reach `server` for scope `bit` (true = EPERM): for every client
/// layer that sets the scope, the server must be in that layer's domain or a nested one, i.e.
/// share the client's hierarchy node at that depth. An unsandboxed server (None) is outside
/// every scoped layer; an unsandboxed client is never scoped.
pub fn is_scoped(client: Option<&Domain>, server: Option<&Domain>, bit: Scopes) -> bool {
    let Some(client) = client else {
        return false;
    };
    let server_nodes = server.map_or(&[][..], |s| s.hierarchy());
    let client_nodes = client.hierarchy();
    (0..client.num_layers())
        .any(|l| client.layer(l).scope & bit != 0 && server_nodes.get(l) != Some(&client_nodes[l]))
}
