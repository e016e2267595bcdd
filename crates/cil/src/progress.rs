//! What secilc prints around the compiler's own messages: the progress lines libsepol logs
//! at `CIL_INFO` (secilc's `-v -v`) as `cil_compile` and `cil_build_policydb` reach each
//! phase, and the line secilc adds when `cil_compile` fails. On a failure the progress lines
//! up to the failing phase come first, as secilc prints them before the error.

use crate::{CilError, Options};

/// The lines `secilc -v -v` prints for a build that succeeds, in order: one `Parsing`
/// line per non-empty file (secilc skips empty ones, as our callers do), then one per
/// phase; with `-N` the neverallow and bounds checks are skipped and so are their lines.
/// Below verbosity 2 there are none. `resolve_log` (what resolution logged while it
/// disabled optionals, [`crate::optional_log::replay`]) follows `Resolving AST`; below
/// verbosity 2 it holds only warnings and errors, and is all there is.
pub(crate) fn success_lines(
    names: &[String],
    opts: &Options,
    mut resolve_log: Vec<String>,
) -> Vec<String> {
    if opts.verbose < 2 {
        return resolve_log;
    }
    let mut out: Vec<String> = names.iter().map(|n| format!("Parsing {n}")).collect();
    out.extend(
        [
            "Building AST from Parse Tree",
            "Destroying Parse Tree",
            "Resolving AST",
        ]
        .map(String::from),
    );
    out.append(&mut resolve_log);
    out.extend(
        [
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

/// The index of `Resolving AST` in [`PHASES`].
const RESOLVING: usize = 2;

/// The libsepol phases whose start secilc reports at `-v -v`, in order; a failure is
/// placed in one by the closing line libsepol logs for it.
const PHASES: &[(&str, &[&str])] = &[
    ("Building AST from Parse Tree", &["Failed to build AST"]),
    ("Destroying Parse Tree", &[]),
    ("Resolving AST", &["Failed to resolve AST"]),
    ("Qualifying Names", &["Failed to qualify names"]),
    ("Compile post process", &["Post process failed"]),
    (
        "Building policy binary",
        &["Failed to generate binary", "Failed to build policydb"],
    ),
];

/// `e` with the progress lines secilc prints at `-v -v` before a failure: one `Parsing`
/// line per file handed to the compiler (`names`, the failing file included), then each
/// phase's line up to the one that failed, known by the closing line its report ends
/// with (a parse error: the `Parsing` lines only). A failure of the neverallow or bounds checks gets each check's line before its
/// own reports (the checks all run, in order: neverallows, users, roles, types). A report
/// whose phase is not known that way (one without libsepol's closing line) is left as it
/// is. `resolve_log` (see [`success_lines`]) follows `Resolving AST` when the failure
/// came at or after resolution. Below verbosity 2 only `resolve_log`'s warnings come
/// before the report.
pub(crate) fn with_failure_lines(
    names: &[String],
    opts: &Options,
    resolve_log: &[String],
    mut e: CilError,
) -> CilError {
    if opts.verbose < 2 {
        if !resolve_log.is_empty() {
            e.messages.splice(0..0, resolve_log.iter().cloned());
        }
        return e;
    }
    // One line a message (some reports are built as one text of several lines).
    if e.messages.iter().any(|m| m.contains('\n')) {
        e.messages = e
            .messages
            .iter()
            .flat_map(|m| m.split('\n'))
            .map(String::from)
            .collect();
    }
    let has = |line: &str| e.messages.iter().any(|m| m == line);
    // secilc optimises the finished policy: every phase and check ran before.
    if has("Failed to optimize policydb") {
        let mut lines = success_lines(names, opts, resolve_log.to_vec());
        lines.append(&mut e.messages);
        e.messages = lines;
        return e;
    }
    let mut lines: Vec<String> = names.iter().map(|n| format!("Parsing {n}")).collect();
    // A parse error (closed by libsepol's `Failure adding FILE`) follows its file's line.
    if let Some(at) = e
        .messages
        .iter()
        .position(|m| m.starts_with("Failure adding "))
    {
        // libsepol's `cil_parser` logs `Failed to parse FILE` (at `CIL_INFO`) first.
        let file = e.messages[at]["Failure adding ".len()..].to_string();
        e.messages.insert(at, format!("Failed to parse {file}"));
        lines.append(&mut e.messages);
        e.messages = lines;
        return e;
    }
    let Some(failed) = PHASES
        .iter()
        .rposition(|(_, closing)| closing.iter().any(|c| has(c)))
    else {
        return e;
    };
    problem_line(&mut e.messages);
    binary_walk_lines(&mut e.messages);
    for (i, (start, _)) in PHASES[..=failed].iter().enumerate() {
        lines.push(start.to_string());
        if i == RESOLVING {
            lines.extend(resolve_log.iter().cloned());
        }
    }
    if failed == PHASES.len() - 1 && !opts.disable_neverallow {
        insert_check_lines(&mut e.messages);
    }
    lines.append(&mut e.messages);
    e.messages = lines;
    e
}

/// libsepol's `Problem at FILE:LINE` (`cil_tree_walk` logs it at `CIL_INFO` for the node
/// whose handler failed): after the last line of the report that names a location before
/// the closing line of a tree walk (building the AST, verifying the database; resolving
/// only for a `Bad bounds statement`, which fails its last pass, named too), unless the
/// report has it already.
fn problem_line(messages: &mut Vec<String>) {
    const WALKS: &[&str] = &[
        "Failed to build AST",
        "Failed to resolve AST",
        "Failed to verify cil database",
    ];
    if messages.iter().any(|m| m.starts_with("Problem at ")) {
        return;
    }
    let Some(close) = messages.iter().position(|m| WALKS.contains(&m.as_str())) else {
        return;
    };
    let Some((at, loc)) = messages[..close]
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, m)| location(m).map(|l| (i, l.to_string())))
    else {
        return;
    };
    let pass = if messages[close] == "Failed to resolve AST" {
        // Only where the failing pass is known (other resolution failures, such as the
        // orders' or the inheritance checks', are not a node's in libsepol).
        let args = messages
            .iter()
            .any(|m| m.contains(" in call argument list at "));
        match failed_pass(&messages[at], args) {
            Some(p) => Some(p),
            None => return,
        }
    } else {
        None
    };
    messages.insert(at + 1, format!("Problem at {loc}"));
    if let Some(p) = pass {
        messages.insert(at + 2, format!("Pass {p} of resolution failed"));
    }
}

/// The libsepol resolution pass (`enum cil_pass`) whose failure a report line names:
/// `Failed to resolve KW statement at …` by the statement's keyword, `Missing arguments`
/// (the call pass), `Bad bounds statement` (the last pass). `args`: the report names a
/// call argument, which the second call pass resolves.
fn failed_pass(line: &str, args: bool) -> Option<u8> {
    // The last line of a macro recursion's trace (`call X at …`): the call pass.
    if line.starts_with("Missing arguments at ") || line.starts_with("call ") {
        return Some(7);
    }
    if line.starts_with("Bad bounds statement at ") {
        return Some(14);
    }
    let kw = line
        .strip_prefix("Failed to resolve ")?
        .split_once(" statement at ")?
        .0;
    Some(match kw {
        "tunableif" => 1,
        "blockinherit" => 3,
        "call" if args => 8,
        "call" => 7,
        "typealiasactual" | "sensitivityaliasactual" | "categoryaliasactual" => 9,
        "sidorder" | "classorder" | "categoryorder" | "sensitivityorder" | "booleanif" => 11,
        "categoryset" => 12,
        "sensitivitycategory" | "classcommon" => 13,
        _ => 14,
    })
}

/// After `Binary policy creation failed at FILE:LINE`, the lines libsepol's binary
/// writer logs at `CIL_INFO` as its tree walk unwinds: `Problem at FILE:LINE`, `Failure
/// while walking cil database`; before a booleanif branch's `Failure while walking …
/// conditional block`, `Problem at` the failing statement of the branch.
fn binary_walk_lines(messages: &mut Vec<String>) {
    // A booleanif branch's walk notes its failing statement first.
    if let Some(at) = messages.iter().position(|m| {
        m.starts_with("Failure while walking ") && m.contains(" conditional block at ")
    }) {
        if let Some(loc) = messages[..at].iter().rev().find_map(|m| location(m)) {
            let line = format!("Problem at {loc}");
            messages.insert(at, line);
        }
    }
    let Some(at) = messages
        .iter()
        .position(|m| m.starts_with("Binary policy creation failed at "))
    else {
        return;
    };
    if messages.get(at + 1).map(String::as_str) != Some("Failed to generate binary") {
        return;
    }
    let Some(loc) = location(&messages[at]).map(str::to_string) else {
        return;
    };
    messages.splice(
        at + 1..at + 1,
        [
            format!("Problem at {loc}"),
            "Failure while walking cil database".to_string(),
        ],
    );
}

/// The `FILE:LINE` a message ends with (` at FILE:LINE`), if it does.
fn location(m: &str) -> Option<&str> {
    let (_, loc) = m.rsplit_once(" at ")?;
    let (file, line) = loc.rsplit_once(':')?;
    (!file.is_empty() && !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()))
        .then_some(loc)
}

/// Puts each check's progress line before its reports when `messages` (a failed binary
/// build) holds check reports: neverallow reports first, then libsepol's user and role
/// bounds reports, then the type bounds reports (`Child type … exceeds bounds …`), then
/// the closing lines.
fn insert_check_lines(messages: &mut Vec<String>) {
    let first = |p: &str| messages.iter().position(|m| m.starts_with(p));
    let is_check = messages
        .iter()
        .any(|m| m.starts_with("neverallow") && m.contains(" check failed at "))
        || first("libsepol.bounds_check_").is_some()
        || first("Child type ").is_some();
    if !is_check {
        return;
    }
    let close = first("Failed to generate binary").unwrap_or(messages.len());
    let types = first("Child type ").unwrap_or(close).min(close);
    let roles = first("libsepol.bounds_check_role")
        .unwrap_or(types)
        .min(types);
    let users = first("libsepol.bounds_check_user")
        .unwrap_or(roles)
        .min(roles);
    // From the back, so that the earlier positions stay valid.
    for (at, line) in [
        (types, "Checking Type Bounds"),
        (roles, "Checking Role Bounds"),
        (users, "Checking User Bounds"),
        (0, "Checking Neverallows"),
    ] {
        messages.insert(at, line.to_string());
    }
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
        assert!(success_lines(&names, &o, Vec::new()).is_empty());
        o.verbose = 2;
        let all = success_lines(&names, &o, Vec::new());
        assert_eq!(all.first().map(String::as_str), Some("Parsing a.cil"));
        assert_eq!(all.last().map(String::as_str), Some("Checking Type Bounds"));
        o.disable_neverallow = true;
        assert_eq!(success_lines(&names, &o, Vec::new()).len(), all.len() - 4);
    }

    #[test]
    fn a_failure_gets_the_progress_lines_of_its_phase_at_two_v() {
        let names = vec!["a.cil".to_string()];
        let failed = |closing: &str| CilError {
            messages: vec!["bad".into(), closing.into()],
            status: 255,
        };
        let mut o = Options {
            verbose: 2,
            ..Options::default()
        };
        let e = with_failure_lines(&names, &o, &[], failed("Failed to resolve AST"));
        assert_eq!(
            e.messages,
            [
                "Parsing a.cil",
                "Building AST from Parse Tree",
                "Destroying Parse Tree",
                "Resolving AST",
                "bad",
                "Failed to resolve AST"
            ]
        );
        let e = with_failure_lines(&names, &o, &[], failed("Failed to build AST"));
        assert_eq!(e.messages.len(), 4);
        let e = with_failure_lines(&names, &o, &[], failed("Failure adding a.cil"));
        assert_eq!(
            e.messages,
            [
                "Parsing a.cil",
                "bad",
                "Failed to parse a.cil",
                "Failure adding a.cil"
            ]
        );
        let e = with_failure_lines(&names, &o, &[], failed("no closing line"));
        assert_eq!(e.messages, ["bad", "no closing line"], "phase unknown");
        o.verbose = 1;
        let e = with_failure_lines(&names, &o, &[], failed("Failed to resolve AST"));
        assert_eq!(e.messages.len(), 2);
    }

    #[test]
    fn a_resolution_failure_gets_problem_and_pass_lines_at_two_v() {
        let names = vec!["a.cil".to_string()];
        let o = Options {
            verbose: 2,
            ..Options::default()
        };
        let e = CilError {
            messages: vec![
                "Failed to resolve blockinherit statement at a.cil:4".into(),
                "Failed to resolve AST".into(),
            ],
            status: 254,
        };
        let log = ["Disabling optional 'x' at a.cil:1".to_string()];
        let e = with_failure_lines(&names, &o, &log, e);
        assert_eq!(
            e.messages[3..],
            [
                "Resolving AST",
                "Disabling optional 'x' at a.cil:1",
                "Failed to resolve blockinherit statement at a.cil:4",
                "Problem at a.cil:4",
                "Pass 3 of resolution failed",
                "Failed to resolve AST"
            ]
        );
    }

    #[test]
    fn binary_failures_get_the_walk_lines_and_locations_need_a_line_number() {
        let mut m: Vec<String> = [
            "Binary policy creation failed at a.cil:2",
            "Failed to generate binary",
        ]
        .map(String::from)
        .to_vec();
        binary_walk_lines(&mut m);
        assert_eq!(m[1], "Problem at a.cil:2");
        assert_eq!(m[2], "Failure while walking cil database");
        assert_eq!(location("Bad type declaration at a.cil:3"), Some("a.cil:3"));
        assert_eq!(location("Failed to resolve AST"), None);
        assert_eq!(location("seen at a.cil:x"), None);
        assert_eq!(
            failed_pass("Failed to resolve call statement at a:1", true),
            Some(8)
        );
        assert_eq!(
            failed_pass("Unable to merge ordered list at a:1", false),
            None
        );
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
