//! `ro_execs`: no executable file type may be writable. A type is executable when an
//! allow rule grants `execute` or `execute_no_trans` on it as a `file` (excluding exempt
//! executing domains and exempt file types); it is writable when an allow rule grants
//! `write` or `append` on it to a domain that is not exempt.
//!
//! setools runs one policy-wide rule query per executable type (about an hour on Debian's
//! policy); here both rule sets are searched once and joined by type, which gives the same
//! rules per type.

use super::assert_te::join;
use super::options::{validate_perms_any, Ctx, TypeSet};
use super::{CheckOutput, CheckerError, Getter};
use arbiter_policy::avtab::AvtabKind;
use arbiter_query::search::{search_te, SearchArgs, TeHit};
use arbiter_query::Index;

/// The options `ro_execs` takes besides the global ones.
pub const OPTIONS: &[&str] = &["exempt_write_domain", "exempt_exec_domain", "exempt_file"];

/// A validated `ro_execs` check (all three sets are forgiving and expanded).
#[derive(Debug, Clone)]
pub struct RoExecs {
    /// Domains whose write rules do not count.
    pub exempt_write_domain: TypeSet,
    /// File types never considered executable.
    pub exempt_file: TypeSet,
    /// Domains whose execute rules do not count.
    pub exempt_exec_domain: TypeSet,
}

impl RoExecs {
    /// Reads the options in setools' order.
    pub fn build(ctx: &Ctx<'_, '_>, get: &Getter<'_>) -> Result<RoExecs, CheckerError> {
        Ok(RoExecs {
            exempt_write_domain: ctx.type_set(
                "exempt_write_domain",
                &get("exempt_write_domain")?,
                false,
            )?,
            exempt_file: ctx.type_set("exempt_file", &get("exempt_file")?, false)?,
            exempt_exec_domain: ctx.type_set(
                "exempt_exec_domain",
                &get("exempt_exec_domain")?,
                false,
            )?,
        })
    }

    /// Runs the check. `Err` carries the message of what setools would raise while running
    /// (a policy without class `file` or one of the permissions), which fails the check.
    pub fn run(&self, index: &Index<'_>) -> Result<CheckOutput, String> {
        let writes = file_rules(index, &["write", "append"])?;
        let execs = file_rules(index, &["execute", "execute_no_trans"])?;
        let slots = index.type_slots();
        let mut executable: Vec<Vec<usize>> = vec![Vec::new(); slots];
        for (k, (_, hit)) in execs.iter().enumerate() {
            let has_source = index
                .expand(hit.source)
                .iter()
                .any(|&s| !self.exempt_exec_domain.contains(s));
            let targets: Vec<_> = index
                .expand(hit.target)
                .iter()
                .copied()
                .filter(|&t| !self.exempt_file.contains(t))
                .collect();
            if !has_source || targets.is_empty() {
                continue;
            }
            for t in targets {
                executable[t.index()].push(k);
            }
        }
        let mut writable: Vec<Vec<usize>> = vec![Vec::new(); slots];
        for (k, (_, hit)) in writes.iter().enumerate() {
            if !index
                .expand(hit.source)
                .iter()
                .any(|&s| !self.exempt_write_domain.contains(s))
            {
                continue;
            }
            for &t in index.expand(hit.target) {
                if !executable[t.index()].is_empty() {
                    writable[t.index()].push(k);
                }
            }
        }
        let mut failing: Vec<(&str, usize)> = writable
            .iter()
            .enumerate()
            .filter(|(_, w)| !w.is_empty())
            .filter_map(|(i, _)| {
                let t = arbiter_policy::TypeId::from_index(i)?;
                Some((index.type_name(t), i))
            })
            .collect();
        failing.sort_unstable();
        // One query collects the executables, then one per executable type.
        let mut out = CheckOutput {
            rule_queries: 1 + executable.iter().filter(|e| !e.is_empty()).count(),
            ..CheckOutput::default()
        };
        for (name, i) in failing {
            out.text.push_str("\n------------\n\n");
            out.text
                .push_str(&format!("Executable type {name} is writable.\n\n"));
            out.text.push_str("Execute rules:\n");
            for &k in &executable[i] {
                out.text.push_str(&format!("    * {}\n", execs[k].0));
            }
            out.text.push_str("\nWrite rules:\n");
            for &k in &writable[i] {
                out.text.push_str(&format!("    * {}\n", writes[k].0));
            }
            out.failures.push(name.to_string());
        }
        Ok(out)
    }
}

/// The allow rules on class `file` granting any of `perms`, sorted by text; errors as
/// setools' query raises them (the class first, then the permissions).
fn file_rules<'p>(index: &Index<'p>, perms: &[&str]) -> Result<Vec<(String, TeHit<'p>)>, String> {
    let file = index
        .class("file")
        .ok_or_else(|| "file is not a valid class".to_string())?;
    let names: Vec<String> = perms.iter().map(|p| p.to_string()).collect();
    validate_perms_any(index, &names, &[file])?;
    let args = SearchArgs {
        te: vec![AvtabKind::Allowed],
        tclass: Some("file".to_string()),
        perms: join(perms.iter().copied()),
        ..SearchArgs::default()
    };
    search_te(index, &args).map_err(|e| e.0)
}
