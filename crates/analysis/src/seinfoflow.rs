//! `seinfoflow` 4.4.1's command line and report, over [`crate::infoflow`]: the same
//! options, text and exit status (0 done, 1 analysis error printed on stdout, 2 usage error
//! on stderr).

use crate::infoflow::{boolean_values, Filter, InfoFlowGraph, InfoFlowView, Step};
use crate::permmap::PermissionMap;
use crate::sedta::{int_arg, join_negative_values};
use crate::AnalysisError;
use arbiter_query::argv::{self, Opt};
use arbiter_query::{terules, Index};
use std::io::{self, Write};
use std::ops::ControlFlow;

const OPTS: &[Opt] = &[
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
        names: &["-p", "--policy"],
        value: Some(true),
        key: "policy",
    },
    Opt {
        names: &["-m", "--map"],
        value: Some(true),
        key: "map",
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
        names: &["-w", "--min_weight"],
        value: Some(true),
        key: "weight",
    },
    Opt {
        names: &["-l", "--limit_flows"],
        value: Some(true),
        key: "limit",
    },
    Opt {
        names: &["-b", "--booleans"],
        value: Some(true),
        key: "booleans",
    },
    Opt {
        names: &["--json"],
        value: None,
        key: "json",
    },
];

/// The usage line printed with usage errors.
pub const USAGE: &str = "usage: arbiter infoflow [-h] [--full] [--version] [--stats] [-v] \
[--debug] -p POLICY [-m MAP] -s SOURCE [-t TARGET] [-S] [-A MAX_STEPS] [-w MIN_WEIGHT] \
[-l LIMIT_FLOWS] [-b BOOLEANS] [--json] [exclude ...]";

/// A parsed seinfoflow command line.
#[derive(Debug, Clone, Default)]
pub struct InfoFlowArgs {
    /// The policy file.
    pub policy: String,
    /// `-m`: the permission map (setools' default when absent).
    pub map: Option<String>,
    /// `-s`.
    pub source: String,
    /// `-t`.
    pub target: Option<String>,
    /// `-S`.
    pub shortest: bool,
    /// `-A N`.
    pub all_paths: Option<i64>,
    /// `-w` (default 3).
    pub min_weight: i64,
    /// `-l` (0 = no limit).
    pub limit: u64,
    /// `-b`: `None` = every rule counts; `Some` = defaults with these overrides.
    pub booleans: Option<Vec<(String, bool)>>,
    /// `--full`.
    pub full: bool,
    /// `--stats`.
    pub stats: bool,
    /// Excluded types.
    pub exclude: Vec<String>,
    /// `--json`: JSON Lines instead of the text report.
    pub json: bool,
}

impl InfoFlowArgs {
    /// Reads seinfoflow's command line (without the program name), with its checks.
    pub fn parse(args: &[String]) -> Result<InfoFlowArgs, argv::UsageError> {
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
        let min_weight = int_arg(&p, "weight", "-w/--min_weight")?.unwrap_or(3);
        let limit = int_arg(&p, "limit", "-l/--limit_flows")?.unwrap_or(0);
        let target = p
            .value("target")
            .filter(|t| !t.is_empty())
            .map(str::to_string);
        let shortest = p.has("shortest");
        let algorithm = shortest || all_paths.is_some_and(|n| n != 0);
        if target.is_none() && algorithm {
            return Err(argv::UsageError(
                "The target type must be specified to determine a path.".into(),
            ));
        }
        if target.is_some() && !algorithm {
            return Err(argv::UsageError(
                "A target type is not used for flows in/out of a type.".into(),
            ));
        }
        if limit < 0 {
            return Err(argv::UsageError(
                "Limit on information flows cannot be negative.".into(),
            ));
        }
        let booleans = match p.value("booleans") {
            None => None,
            Some("default") => Some(Vec::new()),
            Some(text) => {
                let mut v = Vec::new();
                for item in text.split(',') {
                    let parts: Vec<&str> = item.split(':').collect();
                    let [name, value] = parts[..] else {
                        return Err(argv::UsageError(
                            "Expected boolean format foo:true,bar:false".into(),
                        ));
                    };
                    let value = match value.to_lowercase().as_str() {
                        "true" => true,
                        "false" => false,
                        _ => {
                            return Err(argv::UsageError(
                                "Conditional value must be true or false.".into(),
                            ))
                        }
                    };
                    v.push((name.to_string(), value));
                }
                Some(v)
            }
        };
        Ok(InfoFlowArgs {
            policy: policy.to_string(),
            map: p.value("map").map(str::to_string),
            source: source.to_string(),
            target,
            shortest,
            all_paths,
            min_weight,
            limit: limit as u64,
            booleans,
            full: p.has("full"),
            stats: p.has("stats"),
            exclude: p.positional.clone(),
            json: p.has("json"),
        })
    }

    /// The permission map the query names (`-m`), or setools' default.
    pub fn load_map(&self) -> Result<PermissionMap, AnalysisError> {
        match &self.map {
            Some(path) => PermissionMap::open(path),
            None => PermissionMap::setools_default(),
        }
    }

    /// The graph filter the query asks for, after setools' checks (weight, then excluded
    /// type lookups).
    pub fn filter(&self, index: &Index<'_>) -> Result<Filter, AnalysisError> {
        if !(1..=10).contains(&self.min_weight) {
            return Err(AnalysisError::MinWeight);
        }
        let exclude = self
            .exclude
            .iter()
            .map(|n| crate::lookup_type(index, n))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Filter {
            exclude,
            min_weight: self.min_weight as u8,
            booleans: self.booleans.as_ref().map(|o| boolean_values(index, o)),
        })
    }
}

/// Views already derived, by filter: a batch's queries share them.
#[derive(Default)]
pub struct ViewCache<'g, 'i, 'p> {
    views: Vec<(Filter, InfoFlowView<'g, 'i, 'p>)>,
}

/// Runs one seinfoflow query on a built graph (whose map the caller loaded from
/// [`InfoFlowArgs::load_map`]) and writes seinfoflow's report; returns the exit status.
pub fn run<'g, 'i, 'p>(
    g: &'g InfoFlowGraph<'i, 'p>,
    cache: &mut ViewCache<'g, 'i, 'p>,
    a: &InfoFlowArgs,
    out: &mut dyn Write,
) -> io::Result<u8> {
    match report(g, cache, a, out) {
        Ok(r) => r.map(|()| 0),
        Err(e) => {
            writeln!(out, "{e}")?;
            Ok(1)
        }
    }
}

fn report<'g, 'i, 'p>(
    g: &'g InfoFlowGraph<'i, 'p>,
    cache: &mut ViewCache<'g, 'i, 'p>,
    a: &InfoFlowArgs,
    out: &mut dyn Write,
) -> Result<io::Result<()>, AnalysisError> {
    let index = g.index();
    let filter = a.filter(index)?;
    let paths = a.shortest || a.all_paths.is_some_and(|n| n != 0);
    let max_steps = if a.shortest { None } else { a.all_paths };
    if let (true, Some(n)) = (paths, max_steps) {
        if n < 1 {
            return Err(AnalysisError::MaxLength);
        }
    }
    let source = g.lookup_type(&a.source)?;
    let target = match (&a.target, paths) {
        (Some(t), true) => Some(g.lookup_type(t)?),
        _ => None,
    };
    let at = match cache.views.iter().position(|(f, _)| *f == filter) {
        Some(i) => i,
        None => {
            let view = g.view(&filter);
            cache.views.push((filter, view));
            cache.views.len() - 1
        }
    };
    let view = &cache.views[at].1;
    let sorted_rules = |step: Step| -> Vec<String> {
        let mut texts: Vec<String> = view
            .rules(step)
            .into_iter()
            .map(|r| terules::statement(index, r))
            .collect();
        texts.sort();
        texts
    };
    let name = |t| index.type_name(t);
    let limit = a.limit;
    let mut count: u64 = 0;
    let mut result: io::Result<()> = Ok(());
    let finish = |r: io::Result<()>, count: u64, result: &mut io::Result<()>| {
        if let Err(e) = r {
            *result = Err(e);
            return ControlFlow::Break(());
        }
        if limit != 0 && count >= limit {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    match target {
        Some(target) => {
            let mut emit = |steps: &[Step]| {
                count += 1;
                let r = (|| -> io::Result<()> {
                    if a.json {
                        let v: Vec<_> = steps
                            .iter()
                            .map(|&s| step_json(index, s, a.full.then(|| sorted_rules(s))))
                            .collect();
                        return writeln!(out, "{}", serde_json::json!({ "path": v }));
                    }
                    writeln!(out, "Flow {count}:")?;
                    for (k, &s) in steps.iter().enumerate() {
                        writeln!(
                            out,
                            "  Step {}: {} -> {}",
                            k + 1,
                            name(s.source),
                            name(s.target)
                        )?;
                        if a.full {
                            for r in sorted_rules(s) {
                                writeln!(out, "    {r}")?;
                            }
                            writeln!(out)?;
                        }
                    }
                    if limit != 0 && count >= limit {
                        return Ok(());
                    }
                    writeln!(out)
                })();
                finish(r, count, &mut result)
            };
            match max_steps {
                None => view.all_shortest_paths(source, target, &mut emit),
                Some(n) => {
                    view.all_paths(source, target, usize::try_from(n).unwrap_or(0), &mut emit)
                }
            }
        }
        None => view.flows_out(source, &mut |s| {
            count += 1;
            let r = (|| -> io::Result<()> {
                if a.json {
                    let v = step_json(index, s, a.full.then(|| sorted_rules(s)));
                    return writeln!(out, "{}", serde_json::json!({ "flow": v }));
                }
                writeln!(
                    out,
                    "Flow {count}: {} -> {}",
                    name(s.source),
                    name(s.target)
                )?;
                if a.full {
                    for r in sorted_rules(s) {
                        writeln!(out, "    {r}")?;
                    }
                    writeln!(out)?;
                }
                Ok(())
            })();
            finish(r, count, &mut result)
        }),
    }
    if let Err(e) = result {
        return Ok(Err(e));
    }
    let tail = if a.json {
        writeln!(out, "{}", serde_json::json!({ "count": count }))
    } else {
        writeln!(out, "\n{count} information flow(s) found.")
    };
    if let Err(e) = tail {
        return Ok(Err(e));
    }
    if a.stats && !a.json {
        return Ok(write!(
            out,
            "\nGraph statistics:\nGraph nodes: {}\nGraph edges: {}\n",
            g.node_count(),
            g.edge_count()
        ));
    }
    Ok(Ok(()))
}

/// One step as JSON: types, weight and (with `--full`) the sorted rule texts.
fn step_json(index: &Index<'_>, s: Step, rules: Option<Vec<String>>) -> serde_json::Value {
    let mut v = serde_json::json!({
        "source": index.type_name(s.source),
        "target": index.type_name(s.target),
        "weight": s.weight,
    });
    if let (Some(rules), Some(obj)) = (rules, v.as_object_mut()) {
        obj.insert("rules".into(), serde_json::json!(rules));
    }
    v
}
