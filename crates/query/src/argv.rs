//! A small argparse-compatible command-line reader for the setools-style commands, whose
//! multi-letter single-dash options (`-ds`, `-Sp`, `-eb`) clap cannot express.
//!
//! Accepted forms: an exact option, `--long=VALUE`, a unique prefix of a long option
//! (argparse's abbreviations, so `--type_trans` and `--role_trans` keep working), and
//! `-xVALUE` for one-letter options that take a value.

use std::collections::HashMap;

/// One option: its spellings, whether it takes a value (`Some(true)`: required,
/// `Some(false)`: optional, `None`: a flag), and the key its value is stored under.
pub struct Opt {
    /// Spellings (`-s`, `--source`).
    pub names: &'static [&'static str],
    /// Whether a value follows: `Some(true)` required, `Some(false)` optional, `None` a flag.
    pub value: Option<bool>,
    /// Key under which the value is stored.
    pub key: &'static str,
}

/// What was read: flags and values by key (in command-line order), and positionals.
#[derive(Default, Debug)]
pub struct Parsed {
    /// Values by key, in command-line order.
    pub values: HashMap<&'static str, Vec<Option<String>>>,
    /// Keys in the order they were given.
    pub order: Vec<&'static str>,
    /// Positional arguments.
    pub positional: Vec<String>,
}

impl Parsed {
    /// Whether a flag or option was given.
    pub fn has(&self, key: &str) -> bool {
        self.values.contains_key(key)
    }
    /// The last value given for a key (argparse keeps the last).
    pub fn value(&self, key: &str) -> Option<&str> {
        self.values.get(key)?.last()?.as_deref()
    }
}

/// A usage error, reported as argparse does (stderr, exit status 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Reads `args` against `opts`.
pub fn parse(args: &[String], opts: &[Opt]) -> Result<Parsed, UsageError> {
    let mut out = Parsed::default();
    let find_exact = |s: &str| opts.iter().find(|o| o.names.contains(&s));
    let mut i = 0;
    let mut only_positional = false;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if only_positional || arg == "-" || !arg.starts_with('-') {
            out.positional.push(arg.clone());
            continue;
        }
        if arg == "--" {
            only_positional = true;
            continue;
        }
        let (name, inline): (&str, Option<String>) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let (opt, inline) = if let Some(o) = find_exact(name) {
            (o, inline)
        } else if name.starts_with("--") {
            let cands: Vec<&Opt> = opts
                .iter()
                .filter(|o| {
                    o.names
                        .iter()
                        .any(|n| n.starts_with("--") && n.starts_with(name))
                })
                .collect();
            match cands.as_slice() {
                [o] => (*o, inline),
                [] => {
                    return Err(UsageError(format!(
                        "unrecognized arguments: {}",
                        arbiter_io::prefix(arg)
                    )))
                }
                many => {
                    let names: Vec<&str> = many
                        .iter()
                        .flat_map(|o| o.names.iter().filter(|n| n.starts_with(name)))
                        .copied()
                        .collect();
                    return Err(UsageError(format!(
                        "ambiguous option: {name} could match {}",
                        names.join(", ")
                    )));
                }
            }
        } else if let Some(o) = find_exact(&arg[..2.min(arg.len())]).filter(|o| o.value.is_some()) {
            (o, Some(arg[2..].to_string()))
        } else {
            return Err(UsageError(format!("unrecognized arguments: {arg}")));
        };
        let value = match opt.value {
            None => {
                if inline.is_some() {
                    return Err(UsageError(format!(
                        "argument {}: ignored explicit argument '{}'",
                        opt.names.join("/"),
                        inline.unwrap_or_default()
                    )));
                }
                None
            }
            Some(required) => match inline {
                Some(v) => Some(v),
                None => match args.get(i) {
                    Some(next) if !next.starts_with('-') || next == "-" => {
                        i += 1;
                        Some(next.clone())
                    }
                    _ if required => {
                        return Err(UsageError(format!(
                            "argument {}: expected one argument",
                            opt.names.join("/")
                        )))
                    }
                    _ => None,
                },
            },
        };
        out.values.entry(opt.key).or_default().push(value);
        out.order.push(opt.key);
    }
    Ok(out)
}
