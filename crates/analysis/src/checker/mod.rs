//! sechecker 4.4.1: configuration-driven policy checks with its .ini format, check types,
//! report text and exit status.
//!
//! The configuration is read in three steps, as setools does and in its order: `ini.rs`
//! parses the file (Python's configparser: sections, options, lines), [`PolicyChecker::new`]
//! validates every section against the policy into a typed [`Check`] (unknown types,
//! options and names fail here, before anything runs), and [`PolicyChecker::run`] runs the
//! checks and writes the report ([`Report`]). Each check type is one module:
//! `assert_te.rs`, `assert_rbac.rs`, `empty_typeattr.rs`, `ro_execs.rs` (private: their
//! items are used through [`PolicyChecker`]).
//!
//! Errors print setools' text (that is what sechecker shows on stdout) and also carry the
//! file and line they come from ([`CheckerError::location`]).

mod assert_rbac;
mod assert_te;
mod empty_typeattr;
mod ini;
mod options;
mod pytext;
pub(crate) mod report;
mod ro_execs;

use arbiter_query::Index;
use ini::{Ini, IniSection, InterpolationError};
use options::{Ctx, Raw};

pub use report::{CheckResult, CheckStatus, Report};

/// A configuration sechecker refuses. `Display` is sechecker's message; [`exit_status`]
/// is its exit code (2 for its `InvalidCheckerConfig` family, 3 for the rest).
///
/// [`exit_status`]: CheckerError::exit_status
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckerError {
    /// The file cannot be read (`reason` is Python's `[Errno N] text: 'path'`).
    #[error("Unable to parse checker config {path}: {reason}")]
    Unreadable {
        /// The configuration path as given.
        path: String,
        /// Why.
        reason: String,
    },
    /// configparser refused the file.
    #[error("Unable to parse checker config {path}: {error}")]
    Ini {
        /// The configuration path as given.
        path: String,
        /// configparser's error.
        error: Box<ini::IniError>,
    },
    /// No section besides `[DEFAULT]`.
    #[error("No checks found in {path}.")]
    NoChecks {
        /// The configuration path as given.
        path: String,
    },
    /// A section without `check_type`.
    #[error("{check}: Missing check_type option.")]
    MissingCheckType {
        /// The configuration path.
        path: String,
        /// The section.
        check: String,
        /// The section's header line.
        line: usize,
    },
    /// A `check_type` sechecker does not have.
    #[error("{check}: Unknown policy check type: {check_type}")]
    UnknownCheckType {
        /// The configuration path.
        path: String,
        /// The section.
        check: String,
        /// The value given.
        check_type: String,
        /// The `check_type` line.
        line: usize,
    },
    /// An option the check type does not take.
    #[error("{check}: Invalid option: {option}")]
    InvalidOption {
        /// The configuration path.
        path: String,
        /// The section.
        check: String,
        /// The option (lower-cased).
        option: String,
        /// Its line.
        line: usize,
    },
    /// A value that names nothing in the policy, or a check missing what it needs.
    #[error("{}", .0.message)]
    InvalidValue(Box<ValueError>),
    /// A `%` interpolation error (sechecker exits 3 on these).
    #[error("{}", .0.error)]
    Interpolation(Box<InterpolationFailure>),
}

/// The details of [`CheckerError::InvalidValue`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueError {
    /// The configuration path.
    pub path: String,
    /// The section.
    pub check: String,
    /// The option (empty when the check as a whole is incomplete).
    pub option: String,
    /// The option's (or section's) line.
    pub line: usize,
    /// sechecker's message.
    pub message: String,
    /// What setools also logs on stderr for a strict set item.
    pub logged: Option<String>,
}

/// The details of [`CheckerError::Interpolation`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterpolationFailure {
    /// The configuration path.
    pub path: String,
    /// The section.
    pub check: String,
    /// Python's error.
    pub error: InterpolationError,
}

impl CheckerError {
    /// sechecker's exit status for this error.
    pub fn exit_status(&self) -> u8 {
        match self {
            CheckerError::Interpolation(_) => 3,
            _ => 2,
        }
    }

    /// `FILE:LINE` (or `FILE`) of what the error is about, for a diagnostic beside
    /// sechecker's message.
    pub fn location(&self) -> String {
        match self {
            CheckerError::Unreadable { path, .. } | CheckerError::NoChecks { path } => path.clone(),
            CheckerError::Ini { path, error } => format!("{path}:{}", error.line()),
            CheckerError::MissingCheckType { path, line, .. }
            | CheckerError::UnknownCheckType { path, line, .. }
            | CheckerError::InvalidOption { path, line, .. } => format!("{path}:{line}"),
            CheckerError::InvalidValue(v) => format!("{}:{}", v.path, v.line),
            CheckerError::Interpolation(i) => format!("{}:{}", i.path, i.error.line),
        }
    }

    /// What setools logs on stderr before the message (a strict set item's failure).
    pub fn logged(&self) -> Option<&str> {
        match self {
            CheckerError::InvalidValue(v) => v.logged.as_deref(),
            _ => None,
        }
    }
}

/// The options every check type takes.
const GLOBAL_OPTIONS: &[&str] = &["check_type", "desc", "disable"];

/// A validated check of one type.
#[derive(Debug, Clone)]
pub enum CheckKind {
    /// `assert_te`.
    AssertTe(assert_te::AssertTe),
    /// `assert_rbac`.
    AssertRbac(assert_rbac::AssertRbac),
    /// `empty_typeattr`.
    EmptyTypeattr(empty_typeattr::EmptyTypeattr),
    /// `ro_execs`.
    RoExecs(ro_execs::RoExecs),
}

impl CheckKind {
    /// What setools logs at info level as the check starts, and the kind of rules its
    /// queries log (`TE` or `RBAC`).
    pub fn start_log(&self, index: &Index<'_>) -> (String, &'static str) {
        match self {
            CheckKind::AssertTe(_) => ("Checking TE allow rule assertion.".to_string(), "TE"),
            CheckKind::AssertRbac(_) => ("Checking RBAC allow rule assertion.".to_string(), "RBAC"),
            CheckKind::EmptyTypeattr(e) => {
                let name = match &e.attr {
                    Ok(a) => index.type_name(*a).to_string(),
                    Err(name) => name.clone(),
                };
                (format!("Checking type attribute {name} is empty."), "TE")
            }
            CheckKind::RoExecs(_) => ("Checking executables are read-only.".to_string(), "TE"),
        }
    }

    /// The `check_type` name.
    pub fn type_name(&self) -> &'static str {
        match self {
            CheckKind::AssertTe(_) => "assert_te",
            CheckKind::AssertRbac(_) => "assert_rbac",
            CheckKind::EmptyTypeattr(_) => "empty_typeattr",
            CheckKind::RoExecs(_) => "ro_execs",
        }
    }
}

/// One section of the configuration, validated.
#[derive(Debug, Clone)]
pub struct Check {
    /// The section name.
    pub name: String,
    /// `desc`, printed before the result.
    pub desc: Option<String>,
    /// `disable`: non-empty text disables the check and is printed as the reason.
    pub disable: Option<String>,
    /// The check type and its options.
    pub kind: CheckKind,
}

/// What one check run writes and counts: the report text of its body and its failures
/// (rule texts, type names or "Expected …" messages; one per failure).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckOutput {
    /// The body text, exactly as sechecker writes it.
    pub text: String,
    /// The failures, in report order.
    pub failures: Vec<String>,
    /// How many rule queries the check ran: setools logs `Generating … rule results from
    /// POLICY` at info level for each (sechecker `-v` prints them).
    pub rule_queries: usize,
}

impl CheckOutput {
    /// `log_fail`: four spaces, `* `, the item.
    pub fn fail(&mut self, item: String) {
        self.text.push_str("    * ");
        self.text.push_str(&item);
        self.text.push('\n');
        self.failures.push(item);
    }
}

/// A validated configuration: the checks of one .ini file against one policy.
#[derive(Debug, Clone)]
pub struct PolicyChecker {
    /// The configuration path as given (printed in the report).
    pub config: String,
    /// The checks in file order.
    pub checks: Vec<Check>,
}

impl PolicyChecker {
    /// Reads and validates the file at `path` (the report names it as given).
    pub fn open(index: &Index<'_>, path: &str) -> Result<PolicyChecker, CheckerError> {
        let text = read_config(path)?;
        PolicyChecker::new(index, path, &text)
    }

    /// Validates configuration `text` named `path`, section by section in file order; the
    /// first error is returned, as sechecker stops at it.
    pub fn new(index: &Index<'_>, path: &str, text: &str) -> Result<PolicyChecker, CheckerError> {
        PolicyChecker::new_logged(index, path, text, &mut Vec::new())
    }

    /// [`PolicyChecker::new`], with what setools logs at info level while validating
    /// appended to `log` (also when validation then fails, as setools has logged it by then).
    pub fn new_logged(
        index: &Index<'_>,
        path: &str,
        text: &str,
        log: &mut Vec<String>,
    ) -> Result<PolicyChecker, CheckerError> {
        let ini = ini::parse(path, text).map_err(|error| CheckerError::Ini {
            path: path.to_string(),
            error: Box::new(error),
        })?;
        log.push("Validating configuration settings.".to_string());
        let mut checks = Vec::new();
        for section in &ini.sections {
            checks.push(build_check(index, path, &ini, section, log)?);
        }
        if checks.is_empty() {
            return Err(CheckerError::NoChecks {
                path: path.to_string(),
            });
        }
        Ok(PolicyChecker {
            config: path.to_string(),
            checks,
        })
    }

    /// Runs every check (disabled ones are only reported) in file order.
    pub fn run(&self, index: &Index<'_>) -> Vec<CheckResult> {
        self.checks
            .iter()
            .map(|c| {
                let status = if let Some(reason) = c.disable.as_ref().filter(|d| !d.is_empty()) {
                    CheckStatus::Disabled(reason.clone())
                } else {
                    let r = match &c.kind {
                        CheckKind::AssertTe(x) => x.run(index),
                        CheckKind::AssertRbac(x) => Ok(x.run(index)),
                        CheckKind::EmptyTypeattr(x) => Ok(x.run(index)),
                        CheckKind::RoExecs(x) => x.run(index),
                    };
                    match r {
                        Ok(out) => CheckStatus::Ran(out),
                        Err(e) => CheckStatus::Error(e),
                    }
                };
                CheckResult {
                    name: c.name.clone(),
                    check_type: c.kind.type_name(),
                    desc: c.desc.clone().filter(|d| !d.is_empty()),
                    status,
                }
            })
            .collect()
    }
}

/// Reads the configuration as Python's `open()` would, with its error text.
pub(crate) fn read_config(path: &str) -> Result<String, CheckerError> {
    let unreadable = |reason: String| CheckerError::Unreadable {
        path: path.to_string(),
        reason,
    };
    let bytes = std::fs::read(path).map_err(|e| unreadable(errno_text(&e, path)))?;
    String::from_utf8(bytes).map_err(|e| {
        unreadable(format!(
            "'utf-8' codec can't decode byte 0x{:02x} in position {}: invalid start byte",
            e.as_bytes()[e.utf8_error().valid_up_to()],
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Python's `OSError` text: `[Errno 2] No such file or directory: 'path'`.
pub fn errno_text(e: &std::io::Error, path: &str) -> String {
    let text = e.to_string();
    match e.raw_os_error() {
        Some(n) => {
            let msg = text.split(" (os error").next().unwrap_or(&text);
            format!("[Errno {n}] {msg}: {}", pytext::py_repr(path))
        }
        None => text,
    }
}

/// Builds one check, reading its options in setools' order (so the first error is the
/// one sechecker reports).
fn build_check(
    index: &Index<'_>,
    path: &str,
    ini: &Ini,
    section: &IniSection,
    log: &mut Vec<String>,
) -> Result<Check, CheckerError> {
    let check = section.name.as_str();
    let get = |name: &str| -> Result<Raw, CheckerError> {
        ini.get(section, name).map_err(|error| {
            CheckerError::Interpolation(Box::new(InterpolationFailure {
                path: path.to_string(),
                check: check.to_string(),
                error,
            }))
        })
    };
    let Some((check_type, type_line)) = get("check_type")? else {
        return Err(CheckerError::MissingCheckType {
            path: path.to_string(),
            check: check.to_string(),
            line: section.line,
        });
    };
    let accepted: &[&str] = match check_type.as_str() {
        "assert_te" => assert_te::OPTIONS,
        "assert_rbac" => assert_rbac::OPTIONS,
        "empty_typeattr" => empty_typeattr::OPTIONS,
        "ro_execs" => ro_execs::OPTIONS,
        _ => {
            return Err(CheckerError::UnknownCheckType {
                path: path.to_string(),
                check: check.to_string(),
                check_type,
                line: type_line,
            })
        }
    };
    for opt in ini.option_names(section) {
        let name = opt.name.as_str();
        if !GLOBAL_OPTIONS.contains(&name) && !accepted.contains(&name) {
            return Err(CheckerError::InvalidOption {
                path: path.to_string(),
                check: check.to_string(),
                option: opt.name.clone(),
                line: opt.line,
            });
        }
    }
    let desc = get("desc")?.map(|(v, _)| v);
    let disable = get("disable")?.map(|(v, _)| v);
    let ctx = Ctx {
        index,
        path,
        check,
        log: Default::default(),
    };
    let kind = (|| -> Result<CheckKind, CheckerError> {
        Ok(match check_type.as_str() {
            "assert_te" => {
                CheckKind::AssertTe(assert_te::AssertTe::build(&ctx, &get, section.line)?)
            }
            "assert_rbac" => {
                CheckKind::AssertRbac(assert_rbac::AssertRbac::build(&ctx, &get, section.line)?)
            }
            "empty_typeattr" => CheckKind::EmptyTypeattr(empty_typeattr::EmptyTypeattr::build(
                &ctx,
                &get,
                section.line,
            )?),
            _ => CheckKind::RoExecs(ro_execs::RoExecs::build(&ctx, &get)?),
        })
    })();
    log.append(&mut ctx.log.borrow_mut());
    let kind = kind?;
    Ok(Check {
        name: check.to_string(),
        desc,
        disable,
        kind,
    })
}

/// Reads an option (interpolated) by name.
pub type Getter<'a> = dyn Fn(&str) -> Result<Raw, CheckerError> + 'a;
