//! What secilc prints around the compiler's own messages: the progress lines libsepol logs
//! at `CIL_INFO` (secilc's `-v -v`) as `cil_compile` and `cil_build_policydb` reach each
//! phase, and the line secilc adds when `cil_compile` fails.

use crate::{CilError, Options};

/// The lines `secilc -v -v` prints for a build that succeeds, in order: one `Parsing`
/// line per non-empty file (secilc skips empty ones, as our callers do), then one per
/// phase; with `-N` the neverallow and bounds checks are skipped and so are their lines.
/// Below verbosity 2 there are none.
///
/// Not covered: the `CIL_INFO` lines libsepol adds while it disables optionals ("Failed
/// to resolve … / Disabling optional … / Resetting declarations"), which follow its
/// resolution passes statement by statement.
pub(crate) fn success_lines(names: &[String], opts: &Options) -> Vec<String> {
    if opts.verbose < 2 {
        return Vec::new();
    }
    let mut out: Vec<String> = names.iter().map(|n| format!("Parsing {n}")).collect();
    out.extend(
        [
            "Building AST from Parse Tree",
            "Destroying Parse Tree",
            "Resolving AST",
            "Qualifying Names",
            "Compile post process",
            "Building policy binary",
        ]
        .map(String::from),
    );
    if !opts.disable_neverallow {
        out.extend(
            [
                "Checking Neverallows",
                "Checking User Bounds",
                "Checking Role Bounds",
                "Checking Type Bounds",
            ]
            .map(String::from),
        );
    }
    out
}

/// secilc's `Failed to compile cildb: RC` after a failure of `cil_compile` (building the
/// AST, resolving, qualifying names), RC being libsepol's return code, which is also the
/// exit status (`-1` → 255, `-2` → 254). Added once: passes that already end their report
/// with it keep theirs.
pub(crate) fn cildb_failed(e: impl Into<CilError>) -> CilError {
    let mut e = e.into();
    if !e
        .messages
        .iter()
        .any(|m| m.starts_with("Failed to compile cildb: "))
    {
        let rc = i32::from(e.status) - 256;
        e.messages.push(format!("Failed to compile cildb: {rc}"));
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_need_two_v_and_drop_checks_with_n() {
        let names = vec!["a.cil".to_string()];
        let mut o = Options {
            verbose: 1,
            ..Options::default()
        };
        assert!(success_lines(&names, &o).is_empty());
        o.verbose = 2;
        let all = success_lines(&names, &o);
        assert_eq!(all.first().map(String::as_str), Some("Parsing a.cil"));
        assert_eq!(all.last().map(String::as_str), Some("Checking Type Bounds"));
        o.disable_neverallow = true;
        assert_eq!(success_lines(&names, &o).len(), all.len() - 4);
    }

    #[test]
    fn cildb_trailer_carries_the_status_and_is_added_once() {
        let e = cildb_failed(CilError {
            messages: vec!["x".into()],
            status: 254,
        });
        assert_eq!(e.messages, ["x", "Failed to compile cildb: -2"]);
        assert_eq!(cildb_failed(e).messages.len(), 2);
    }
}
