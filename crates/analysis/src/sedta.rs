//! `sedta` 4.4.1's command line and report, over [`crate::dta`]: the same options, the
//! same text on stdout, the same exit status (0 done, 1 analysis error printed on stdout,
//! 2 usage error on stderr).

use crate::dta::{DomainTransitionGraph, Step, Transition};
use crate::AnalysisError;
use arbiter_query::argv::{self, Opt};
use arbiter_query::terules;
use arbiter_query::Index;
use std::io::{self, Write};
use std::ops::ControlFlow;

/// The options, as sedta declares them (`-p` is the policy).
const OPTS: &[Opt] = &[
    Opt {
        names: &["-p", "--policy"],
        value: Some(true),
        key: "policy",
    },
    Opt {
        names: &["-s", "--source"],
        value: Some(true),
        key: "source",
    },
    Opt {
        names: &["-t", "--target"],
        value: Some(true),
        key: "target",
    },
    Opt {
        names: &["--full"],
        value: None,
        key: "full",
    },
    Opt {
        names: &["--stats"],
        value: None,
        key: "stats",
    },
    Opt {
        names: &["-v", "--verbose"],
        value: None,
        key: "verbose",
    },
    Opt {
        names: &["--debug"],
        value: None,
        key: "debug",
    },
    Opt {
        names: &["-S", "--shortest_path"],
        value: None,
        key: "shortest",
    },
    Opt {
        names: &["-A", "--all_paths"],
        value: Some(true),
        key: "all",
    },
    Opt {
        names: &["-r", "--reverse"],
        value: None,
        key: "reverse",
    },
    Opt {
        names: &["-l", "--limit_trans"],
        value: Some(true),
        key: "limit",
    },
    Opt {
        names: &["--json"],
        value: None,
        key: "json",
    },
];

/// The usage line printed with usage errors.
pub const USAGE: &str = "usage: arbiter dta [-h] [--version] -p POLICY -s SOURCE [-t TARGET] \
[--full] [--stats] [-v] [--debug] [-S] [-A MAX_STEPS] [-r] [-l LIMIT_TRANS] [--json] \
[exclude ...]";

/// A parsed sedta command line.
#[derive(Debug, Clone, Default)]
pub struct DtaArgs {
    /// The policy file.
    pub policy: String,
    /// `-s`.
    pub source: String,
    /// `-t`.
    pub target: Option<String>,
    /// `--full`.
    pub full: bool,
    /// `--stats`.
    pub stats: bool,
    /// `-S`.
    pub shortest: bool,
    /// `-A N`.
    pub all_paths: Option<i64>,
    /// `-r`.
    pub reverse: bool,
    /// `-l N` (0 = no limit).
    pub limit: u64,
    /// Excluded types (positionals).
    pub exclude: Vec<String>,
    /// `--json`: one JSON document instead of the text report.
    pub json: bool,
}

/// argparse's `type=int` conversion.
pub(crate) fn int_arg(
    p: &argv::Parsed,
    key: &str,
    spelling: &str,
) -> Result<Option<i64>, argv::UsageError> {
    match p.value(key) {
        None => Ok(None),
        Some(v) => v.trim().parse::<i64>().map(Some).map_err(|_| {
            argv::UsageError(format!("argument {spelling}: invalid int value: '{v}'"))
        }),
    }
}

/// argparse takes `-1` after an option that wants a value as that value (the parser has
/// no option that looks like a negative number); spell such pairs `--long=-1` for
/// [`argv::parse`].
pub(crate) fn join_negative_values(args: &[String], opts: &[Opt]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let opt = opts
            .iter()
            .find(|o| o.value == Some(true) && o.names.contains(&a.as_str()));
        let next = args.get(i + 1);
        let negative = next.is_some_and(|n| {
            n.strip_prefix('-')
                .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
        });
        if let (Some(o), Some(n), true) = (opt, next, negative) {
            let long = o
                .names
                .iter()
                .find(|x| x.starts_with("--"))
                .unwrap_or(&o.names[0]);
            out.push(format!("{long}={n}"));
            i += 2;
        } else {
            out.push(a.clone());
            i += 1;
        }
    }
    out
}

impl DtaArgs {
    /// Reads sedta's command line (without the program name), with its checks and messages.
    pub fn parse(args: &[String]) -> Result<DtaArgs, argv::UsageError> {
        let p = argv::parse(&join_negative_values(args, OPTS), OPTS)?;
        let Some(source) = p.value("source") else {
            return Err(argv::UsageError(
                "the following arguments are required: -s/--source".into(),
            ));
        };
        let Some(policy) = p.value("policy") else {
            return Err(argv::UsageError(
                "a policy file is required (-p POLICY)".into(),
            ));
        };
        let all_paths = int_arg(&p, "all", "-A/--all_paths")?;
        let limit = int_arg(&p, "limit", "-l/--limit_trans")?.unwrap_or(0);
        let a = DtaArgs {
            policy: policy.to_string(),
            source: source.to_string(),
            target: p
                .value("target")
                .filter(|t| !t.is_empty())
                .map(str::to_string),
            full: p.has("full"),
            stats: p.has("stats"),
            shortest: p.has("shortest"),
            all_paths,
            reverse: p.has("reverse"),
            // sedta does not check the sign; a negative limit never stops the listing.
            limit: u64::try_from(limit).unwrap_or(0),
            exclude: p.positional.clone(),
            json: p.has("json"),
        };
        let algorithm = a.shortest || a.all_paths.is_some_and(|n| n != 0);
        if a.target.is_none() && algorithm {
            return Err(argv::UsageError(
                "The target type must be specified to determine a path.".into(),
            ));
        }
        if a.target.is_some() && !algorithm {
            return Err(argv::UsageError(
                "An algorithm must be specified to determine a path.".into(),
            ));
        }
        Ok(a)
    }
}

/// The rule block `--full` prints after a transition or step.
fn write_rules(out: &mut dyn Write, index: &Index<'_>, t: &Transition) -> io::Result<()> {
    let st = |r| terules::statement(index, r);
    writeln!(out)?;
    if !t.transition.is_empty() {
        writeln!(out, "Domain transition rule(s):")?;
        for &r in &t.transition {
            writeln!(out, "{}", st(r))?;
        }
        if !t.setexec.is_empty() {
            writeln!(out, "\nSet execution context rule(s):")?;
            for &r in &t.setexec {
                writeln!(out, "{}", st(r))?;
            }
        }
        for e in &t.entrypoints {
            writeln!(out, "\nEntrypoint {}:", index.type_name(e.name))?;
            writeln!(out, "\tDomain entrypoint rule(s):")?;
            for &r in &e.entrypoint {
                writeln!(out, "\t{}", st(r))?;
            }
            writeln!(out, "\n\tFile execute rule(s):")?;
            for &r in &e.execute {
                writeln!(out, "\t{}", st(r))?;
            }
            if !e.type_transition.is_empty() {
                writeln!(out, "\n\tType transition rule(s):")?;
                for &r in &e.type_transition {
                    writeln!(out, "\t{}", st(r))?;
                }
            }
            writeln!(out)?;
        }
    }
    if !t.dyntransition.is_empty() {
        writeln!(out, "Dynamic transition rule(s):")?;
        for &r in &t.dyntransition {
            writeln!(out, "{}", st(r))?;
        }
        writeln!(out, "\nSet current process context rule(s):")?;
        for &r in &t.setcurrent {
            writeln!(out, "{}", st(r))?;
        }
        writeln!(out)?;
    }
    writeln!(out)
}

/// Runs one sedta query on a built graph and writes sedta's report. Returns the exit
/// status: 0, or 1 after printing an analysis error as sedta does.
pub fn run(g: &DomainTransitionGraph<'_, '_>, a: &DtaArgs, out: &mut dyn Write) -> io::Result<u8> {
    match report(g, a, out) {
        Ok(r) => r.map(|()| 0),
        Err(e) => {
            writeln!(out, "{e}")?;
            Ok(1)
        }
    }
}

/// The report, or the analysis error that stops it before anything is printed.
fn report(
    g: &DomainTransitionGraph<'_, '_>,
    a: &DtaArgs,
    out: &mut dyn Write,
) -> Result<io::Result<()>, AnalysisError> {
    let index = g.index();
    let exclude = a
        .exclude
        .iter()
        .map(|n| g.lookup_type(n))
        .collect::<Result<Vec<_>, _>>()?;
    let paths = a.shortest || a.all_paths.is_some_and(|n| n != 0);
    let max_steps = if a.shortest { None } else { a.all_paths };
    if let Some(n) = max_steps {
        if paths && n < 1 {
            return Err(AnalysisError::MaxLength);
        }
    }
    let source = g.lookup_type(&a.source)?;
    let target = match (&a.target, paths) {
        (Some(t), true) => Some(g.lookup_type(t)?),
        _ => None,
    };
    let view = g.view(a.reverse, &exclude);
    if a.json {
        return Ok(json(&view, index, source, target, max_steps, a.limit, out));
    }
    let mut io_result = Ok(());
    let mut count: u64 = 0;
    let limit = a.limit;
    if let Some(target) = target {
        let mut emit = |steps: &[Step<'_>]| {
            count += 1;
            let r = (|| -> io::Result<()> {
                writeln!(out, "Domain transition path {count}:")?;
                for (k, t) in steps.iter().enumerate() {
                    writeln!(
                        out,
                        "Step {}: {} -> {}",
                        k + 1,
                        index.type_name(t.source),
                        index.type_name(t.target)
                    )?;
                    if a.full {
                        write_rules(out, index, &view.full(t))?;
                    }
                }
                if limit != 0 && count >= limit {
                    return Ok(());
                }
                writeln!(out)
            })();
            if let Err(e) = r {
                io_result = Err(e);
                return ControlFlow::Break(());
            }
            if limit != 0 && count >= limit {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        match max_steps {
            None => view.all_shortest_paths(source, target, &mut emit),
            Some(n) => view.all_paths(source, target, usize::try_from(n).unwrap_or(0), &mut emit),
        }
        if let Err(e) = io_result {
            return Ok(Err(e));
        }
        if let Err(e) = writeln!(out, "\n{count} domain transition path(s) found.") {
            return Ok(Err(e));
        }
    } else {
        view.transitions(source, &mut |t| {
            count += 1;
            let r = (|| -> io::Result<()> {
                writeln!(
                    out,
                    "Transition {count}: {} -> {}",
                    index.type_name(t.source),
                    index.type_name(t.target)
                )?;
                if a.full {
                    write_rules(out, index, &view.full(t))?;
                }
                Ok(())
            })();
            if let Err(e) = r {
                io_result = Err(e);
                return ControlFlow::Break(());
            }
            if limit != 0 && count >= limit {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        if let Err(e) = io_result {
            return Ok(Err(e));
        }
        if let Err(e) = writeln!(out, "\n{count} domain transition(s) found.") {
            return Ok(Err(e));
        }
    }
    if a.stats {
        if let Err(e) = write!(
            out,
            "\nGraph statistics:\nGraph nodes: {}\nGraph edges: {}\n",
            g.node_count(),
            g.edge_count()
        ) {
            return Ok(Err(e));
        }
    }
    Ok(Ok(()))
}

/// One transition as a JSON object: its types and every rule list as statement text.
pub fn transition_json(index: &Index<'_>, t: &Transition) -> serde_json::Value {
    let texts = |rules: &[terules::TeRuleRef]| -> Vec<String> {
        rules
            .iter()
            .map(|&r| terules::statement(index, r))
            .collect()
    };
    serde_json::json!({
        "source": index.type_name(t.source),
        "target": index.type_name(t.target),
        "transition": texts(&t.transition),
        "entrypoints": t.entrypoints.iter().map(|e| serde_json::json!({
            "name": index.type_name(e.name),
            "entrypoint": texts(&e.entrypoint),
            "execute": texts(&e.execute),
            "type_transition": texts(&e.type_transition),
        })).collect::<Vec<_>>(),
        "setexec": texts(&t.setexec),
        "dyntransition": texts(&t.dyntransition),
        "setcurrent": texts(&t.setcurrent),
    })
}

/// `--json`: JSON Lines, one object per transition (`{"transition": …}`) or per path
/// (`{"path": [steps]}`), streamed, then `{"count": N}`.
fn json(
    view: &crate::dta::DtaView<'_, '_, '_>,
    index: &Index<'_>,
    source: arbiter_policy::TypeId,
    target: Option<arbiter_policy::TypeId>,
    max_steps: Option<i64>,
    limit: u64,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut count: u64 = 0;
    let mut result = Ok(());
    let mut line = |v: serde_json::Value, count: u64| -> ControlFlow<()> {
        if let Err(e) = writeln!(out, "{v}") {
            result = Err(e);
            return ControlFlow::Break(());
        }
        if limit != 0 && count >= limit {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    match target {
        None => view.transitions(source, &mut |t| {
            count += 1;
            line(
                serde_json::json!({ "transition": transition_json(index, &view.full(t)) }),
                count,
            )
        }),
        Some(target) => {
            let mut emit = |steps: &[Step<'_>]| {
                count += 1;
                let steps: Vec<_> = steps
                    .iter()
                    .map(|t| transition_json(index, &view.full(t)))
                    .collect();
                line(serde_json::json!({ "path": steps }), count)
            };
            match max_steps {
                None => view.all_shortest_paths(source, target, &mut emit),
                Some(n) => {
                    view.all_paths(source, target, usize::try_from(n).unwrap_or(0), &mut emit)
                }
            }
        }
    }
    result?;
    writeln!(out, "{}", serde_json::json!({ "count": count }))
}
