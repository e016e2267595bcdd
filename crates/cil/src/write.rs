//! Writing a compiled policy as secilc writes it: libsepol 3.4's layout with secilc's
//! avtab size, at the `-c` version, with the warnings libsepol prints for what an older
//! version cannot hold. One function so that every caller (the `build` command, the module
//! store builder, the tests) writes the same bytes.

use crate::{CilError, Compiled, Options, CIL_AVTAB_SLOTS};
use arbiter_policy::symbols::DefaultRange;
use arbiter_policy::version;
use arbiter_policy::write::{write_policy_with, Layout, Unsupported, WriteOptions};

/// A written policy and the messages libsepol prints on stderr while writing it.
#[derive(Clone, Debug)]
pub struct WrittenPolicy {
    /// The binary policy, byte-identical to secilc's for the same input and options.
    pub bytes: Vec<u8>,
    /// libsepol's warnings for content the requested version leaves out, in the order
    /// libsepol prints them.
    pub warnings: Vec<String>,
}

/// Writes `compiled` at `opts.policy_version` (`secilc -c`) in libsepol 3.4's layout with
/// [`CIL_AVTAB_SLOTS`]. Content an older version cannot hold is dropped where libsepol
/// drops it (with its warning) and refused where libsepol refuses it.
pub fn write_policy(compiled: &Compiled, opts: &Options) -> Result<WrittenPolicy, CilError> {
    let p = &compiled.policy;
    let v = opts.policy_version;
    let written = write_policy_with(
        p,
        v,
        &WriteOptions {
            layout: Layout::Libsepol34 {
                avtab_slots: CIL_AVTAB_SLOTS,
            },
            ..WriteOptions::default()
        },
    )
    .map_err(|e| CilError {
        messages: vec![format!("Failed to write binary policy: {e}")],
        status: 255,
    })?;
    let dropped = |f: fn(&Unsupported) -> bool| written.dropped.iter().any(f);
    let mut warnings = Vec::new();
    // policydb_write's order: permissive types first, class_write while writing the
    // symbols, then role transitions, filename transitions and range transitions.
    if dropped(|u| matches!(u, Unsupported::PermissiveTypes(_))) {
        warnings.push(format!(
            "libsepol.policydb_write: Warning! Policy version {v} cannot support permissive types, but some were defined"
        ));
    }
    if dropped(|u| matches!(u, Unsupported::Glblub(_))) {
        // libsepol walks its class hash table here; arbiter lists the classes by value.
        for c in p
            .classes
            .iter()
            .filter(|c| c.default_range == DefaultRange::Glblub)
        {
            warnings.push(format!(
                "libsepol.class_write: class {} default_range set to GLBLUB but policy version is {v} ({} required), discarding",
                c.name,
                version::GLBLUB
            ));
        }
    }
    if dropped(|u| matches!(u, Unsupported::RoleTransitionClasses(_))) {
        warnings.push(
            "libsepol.role_trans_write: Discarding role_transition rules for security classes other than \"process\"".into(),
        );
    }
    // libsepol 3.4 tests the table's pointer, not its size: any kernel policy below
    // version 25 gets this warning.
    if v < version::FILENAME_TRANS {
        warnings.push("libsepol.policydb_write: Discarding filename type transition rules".into());
    }
    if dropped(|u| matches!(u, Unsupported::RangeTransitionClasses(_))) {
        warnings.push(
            "libsepol.range_write_helper: Discarding range_transition rules for security classes other than \"process\"".into(),
        );
    }
    Ok(WrittenPolicy {
        bytes: written.bytes,
        warnings,
    })
}
