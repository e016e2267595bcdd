//! landlockconfig's TOML and JSON formats: parsing (text → [`Config`], no filesystem access)
//! separate from resolution (paths → objects → [`Ruleset`]).
//!
//! Keys (TOML / JSON): `abi`; `[[variable]] name, literal` / `variable[] {name, literal}`;
//! `[[ruleset]] handled_access_fs, handled_access_net, scoped` / `ruleset[] {handledAccessFs,
//! handledAccessNet, scoped}`; `[[path_beneath]] allowed_access, parent` / `pathBeneath[]
//! {allowedAccess, parent}`; `[[net_port]] allowed_access, port` / `netPort[] {allowedAccess,
//! port}`. All `ruleset` entries OR into one layer, and every rule's rights are added to the
//! handled set. Rights are named as in the kernel (`read_file`, `bind_tcp`, `signal`) or by the
//! groups `abi.all`, `abi.read_execute`, `abi.read_write`, which need `abi`. `${name}` in a
//! parent expands to each literal of that variable.

use crate::access::{
    fs, fs_right_by_name, fs_rights_of_abi, net_right_by_name, net_rights_of_abi, scope_by_name,
    scopes_of_abi, AccessFs, AccessNet, Scopes,
};
use crate::object::ObjectRegistry;
use crate::ruleset::{Ruleset, RulesetError};
use crate::sys;
use std::path::{Path, PathBuf};

/// Largest configuration file read (bytes).
pub const MAX_FILE_BYTES: usize = 4 << 20;
/// Largest number of paths or ports one file may expand to.
pub const MAX_EXPANDED: usize = 1 << 16;

/// The file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// TOML (snake_case keys).
    Toml,
    /// JSON (camelCase keys).
    Json,
}

/// A path-beneath rule after variable expansion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathRule {
    /// Rights granted.
    pub access: AccessFs,
    /// Parent paths.
    pub parents: Vec<String>,
}

/// A port rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortRule {
    /// Rights granted.
    pub access: AccessNet,
    /// Ports (may exceed 65535: the ruleset rejects those as the kernel does).
    pub ports: Vec<u64>,
}

/// One parsed configuration: one layer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// Declared ABI.
    pub abi: Option<u32>,
    /// Handled fs rights (rule rights included).
    pub handled_fs: AccessFs,
    /// Handled net rights (rule rights included).
    pub handled_net: AccessNet,
    /// Scopes.
    pub scoped: Scopes,
    /// Path-beneath rules.
    pub path_beneath: Vec<PathRule>,
    /// Port rules.
    pub net_port: Vec<PortRule>,
}

/// What is wrong with a configuration file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigErrorKind {
    /// Unreadable file.
    #[error("cannot read: {0}")]
    Io(String),
    /// Larger than [`MAX_FILE_BYTES`].
    #[error("file larger than {MAX_FILE_BYTES} bytes")]
    TooLarge,
    /// Syntax error from the TOML or JSON parser (with its line and column).
    #[error("syntax: {0}")]
    Syntax(String),
    /// A key the format does not have.
    #[error("unknown key `{key}`")]
    UnknownKey {
        /// Key path.
        key: String,
    },
    /// A missing key.
    #[error("missing key `{key}`")]
    MissingKey {
        /// Key path.
        key: String,
    },
    /// A value of the wrong type.
    #[error("`{key}`: expected {expected}")]
    Type {
        /// Key path.
        key: String,
        /// What was expected.
        expected: &'static str,
    },
    /// An unknown right, scope or group name.
    #[error("`{key}`: unknown {kind} `{value}`")]
    UnknownName {
        /// Key path.
        key: String,
        /// Right kind.
        kind: &'static str,
        /// The name.
        value: String,
    },
    /// An `abi.*` group without `abi`.
    #[error("`{key}`: `{value}` needs a top-level `abi`")]
    NeedsAbi {
        /// Key path.
        key: String,
        /// The group.
        value: String,
    },
    /// A bad value.
    #[error("`{key}`: bad value `{value}`")]
    BadValue {
        /// Key path.
        key: String,
        /// The value.
        value: String,
    },
    /// `${name}` without a variable.
    #[error("`{key}`: undefined variable `{name}`")]
    UndefinedVariable {
        /// Key path.
        key: String,
        /// The variable.
        name: String,
    },
    /// Too many paths or ports after expansion.
    #[error("`{key}`: expands to more than {MAX_EXPANDED} entries")]
    TooMany {
        /// Key path.
        key: String,
    },
    /// The kernel would reject the resulting ruleset or rule.
    #[error("`{key}`: {error}")]
    Ruleset {
        /// Key path or path.
        key: String,
        /// The kernel's rejection.
        error: RulesetError,
    },
}

/// A configuration error naming the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {kind}")]
pub struct ConfigError {
    /// The file (or `<input>`).
    pub file: String,
    /// What is wrong.
    pub kind: ConfigErrorKind,
}

/// A format-neutral value tree.
enum Node {
    Int(i64),
    Str(String),
    Arr(Vec<Node>),
    Table(Vec<(String, Node)>),
    Other,
}

fn from_toml(v: toml::Value) -> Node {
    match v {
        toml::Value::Integer(i) => Node::Int(i),
        toml::Value::String(s) => Node::Str(s),
        toml::Value::Array(a) => Node::Arr(a.into_iter().map(from_toml).collect()),
        toml::Value::Table(t) => {
            Node::Table(t.into_iter().map(|(k, v)| (k, from_toml(v))).collect())
        }
        toml::Value::Float(_) => Node::Other,
        toml::Value::Boolean(_) => Node::Other,
        toml::Value::Datetime(_) => Node::Other,
    }
}

fn from_json(v: serde_json::Value) -> Node {
    match v {
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Node::Int(i),
            None => Node::Other,
        },
        serde_json::Value::String(s) => Node::Str(s),
        serde_json::Value::Array(a) => Node::Arr(a.into_iter().map(from_json).collect()),
        serde_json::Value::Object(o) => {
            Node::Table(o.into_iter().map(|(k, v)| (k, from_json(v))).collect())
        }
        serde_json::Value::Bool(_) => Node::Other,
        serde_json::Value::Null => Node::Other,
    }
}

/// Canonical (TOML) key → JSON spelling.
const JSON_KEYS: [(&str, &str); 8] = [
    ("handled_access_fs", "handledAccessFs"),
    ("handled_access_net", "handledAccessNet"),
    ("path_beneath", "pathBeneath"),
    ("net_port", "netPort"),
    ("allowed_access", "allowedAccess"),
    ("scoped", "scoped"),
    ("parent", "parent"),
    ("port", "port"),
];

struct Parser {
    format: Format,
    abi: Option<u32>,
    variables: Vec<(String, Vec<String>)>,
}

type Res<T> = Result<T, ConfigErrorKind>;

impl Parser {
    fn spell(&self, key: &str) -> String {
        match self.format {
            Format::Toml => key.to_string(),
            Format::Json => JSON_KEYS
                .iter()
                .find(|(t, _)| *t == key)
                .map_or(key.to_string(), |(_, j)| j.to_string()),
        }
    }

    /// Splits a table into the known keys (canonical names), rejecting unknown ones.
    fn fields<'a>(
        &self,
        at: &str,
        t: &'a [(String, Node)],
        known: &[&str],
    ) -> Res<Vec<(&'static str, &'a Node)>> {
        let mut out = Vec::new();
        for (k, v) in t {
            let canon = known
                .iter()
                .find(|c| self.spell(c) == *k)
                .ok_or_else(|| ConfigErrorKind::UnknownKey { key: join(at, k) })?;
            // `known` holds 'static names; find the same one in the static table.
            let canon: &'static str = STATIC_KEYS
                .iter()
                .find(|s| *s == canon)
                .copied()
                .unwrap_or("?");
            out.push((canon, v));
        }
        Ok(out)
    }

    fn array<'a>(&self, key: &str, v: &'a Node) -> Res<&'a [Node]> {
        match v {
            Node::Arr(a) if a.len() <= MAX_EXPANDED => Ok(a),
            Node::Arr(_) => Err(ConfigErrorKind::TooMany { key: key.into() }),
            _ => Err(ConfigErrorKind::Type {
                key: key.into(),
                expected: "an array",
            }),
        }
    }

    fn string<'a>(&self, key: &str, v: &'a Node) -> Res<&'a str> {
        match v {
            Node::Str(s) => Ok(s),
            _ => Err(ConfigErrorKind::Type {
                key: key.into(),
                expected: "a string",
            }),
        }
    }

    /// Right names (or groups) → mask, in one of the three kinds.
    fn rights(&self, key: &str, v: &Node, kind: RightKind) -> Res<u16> {
        let mut mask = 0u16;
        for (i, item) in self.array(key, v)?.iter().enumerate() {
            let k = format!("{key}[{i}]");
            let name = self.string(&k, item)?;
            let bits = if let Some(group) = name.strip_prefix("abi.") {
                let abi = self.abi.ok_or_else(|| ConfigErrorKind::NeedsAbi {
                    key: k.clone(),
                    value: name.into(),
                })?;
                let all_fs = fs_rights_of_abi(abi);
                match (kind, group) {
                    (RightKind::Fs, "all") => all_fs,
                    (RightKind::Fs, "read_execute") => {
                        (fs::EXECUTE | fs::READ_FILE | fs::READ_DIR | fs::REFER) & all_fs
                    }
                    (RightKind::Fs, "read_write") => all_fs & !fs::EXECUTE,
                    (RightKind::Net, "all") => u16::from(net_rights_of_abi(abi)),
                    (RightKind::Scope, "all") => u16::from(scopes_of_abi(abi)),
                    _ => None.ok_or_else(|| ConfigErrorKind::UnknownName {
                        key: k.clone(),
                        kind: kind.name(),
                        value: name.into(),
                    })?,
                }
            } else {
                let b = match kind {
                    RightKind::Fs => fs_right_by_name(name),
                    RightKind::Net => net_right_by_name(name).map(u16::from),
                    RightKind::Scope => scope_by_name(name).map(u16::from),
                };
                b.ok_or_else(|| ConfigErrorKind::UnknownName {
                    key: k.clone(),
                    kind: kind.name(),
                    value: name.into(),
                })?
            };
            mask |= bits;
        }
        Ok(mask)
    }

    fn expand(&self, key: &str, s: &str) -> Res<Vec<String>> {
        let mut out = vec![String::new()];
        let mut rest = s;
        while let Some(start) = rest.find("${") {
            let end = rest[start..]
                .find('}')
                .ok_or_else(|| ConfigErrorKind::BadValue {
                    key: key.into(),
                    value: s.into(),
                })?
                + start;
            let name = &rest[start + 2..end];
            let lits = self
                .variables
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, l)| l)
                .ok_or_else(|| ConfigErrorKind::UndefinedVariable {
                    key: key.into(),
                    name: name.into(),
                })?;
            if out.len().saturating_mul(lits.len()) > MAX_EXPANDED {
                return Err(ConfigErrorKind::TooMany { key: key.into() });
            }
            let prefix = &rest[..start];
            out = out
                .iter()
                .flat_map(|o| lits.iter().map(move |l| format!("{o}{prefix}{l}")))
                .collect();
            rest = &rest[end + 1..];
        }
        for o in &mut out {
            o.push_str(rest);
        }
        Ok(out)
    }
}

const STATIC_KEYS: [&str; 13] = [
    "abi",
    "variable",
    "ruleset",
    "path_beneath",
    "net_port",
    "name",
    "literal",
    "handled_access_fs",
    "handled_access_net",
    "scoped",
    "allowed_access",
    "parent",
    "port",
];

#[derive(Clone, Copy)]
enum RightKind {
    Fs,
    Net,
    Scope,
}

impl RightKind {
    fn name(self) -> &'static str {
        match self {
            RightKind::Fs => "filesystem right",
            RightKind::Net => "network right",
            RightKind::Scope => "scope",
        }
    }
}

/// A table's entries, in file order.
type Table = [(String, Node)];

/// The text's top-level table, in the format-neutral tree.
fn top_table(text: &str, format: Format) -> Res<Vec<(String, Node)>> {
    let root = match format {
        Format::Toml => from_toml(toml::Value::Table(
            text.parse::<toml::Table>()
                .map_err(|e| ConfigErrorKind::Syntax(e.to_string().trim().replace('\n', " ")))?,
        )),
        Format::Json => from_json(
            serde_json::from_str(text).map_err(|e| ConfigErrorKind::Syntax(e.to_string()))?,
        ),
    };
    match root {
        Node::Table(top) => Ok(top),
        _ => Err(ConfigErrorKind::Type {
            key: "(top level)".into(),
            expected: "a table",
        }),
    }
}

/// The `abi` key: an integer from 1 to `u32::MAX`.
fn abi(v: &Node) -> Res<u32> {
    match v {
        Node::Int(i) if (1..=i64::from(u32::MAX)).contains(i) => Ok(*i as u32),
        _ => Err(ConfigErrorKind::Type {
            key: "abi".into(),
            expected: "an integer >= 1",
        }),
    }
}

/// The sections of a configuration, one step each.
impl Parser {
    /// The items of the array section `sec`, each a table, with its key (`sec[i]`).
    fn tables<'a>(&self, sec: &str, v: &'a Node) -> Res<Vec<(String, &'a Table)>> {
        let mut out = Vec::new();
        for (i, item) in self.array(sec, v)?.iter().enumerate() {
            let at = format!("{sec}[{i}]");
            let Node::Table(t) = item else {
                return Err(ConfigErrorKind::Type {
                    key: at,
                    expected: "a table",
                });
            };
            out.push((at, t.as_slice()));
        }
        Ok(out)
    }

    /// One `[[variable]]`: its name and its literals.
    fn variable(&self, at: &str, t: &Table) -> Res<(String, Vec<String>)> {
        let (mut name, mut lits) = (None, None);
        for (k, v) in self.fields(at, t, &["name", "literal"])? {
            if k == "name" {
                name = Some(self.string(&join(at, "name"), v)?.to_string());
            } else {
                let key = join(at, "literal");
                let l: Res<Vec<String>> = self
                    .array(&key, v)?
                    .iter()
                    .enumerate()
                    .map(|(j, x)| self.string(&format!("{key}[{j}]"), x).map(str::to_string))
                    .collect();
                lits = Some(l?);
            }
        }
        let name = name.ok_or_else(|| ConfigErrorKind::MissingKey {
            key: join(at, "name"),
        })?;
        let lits = lits.ok_or_else(|| ConfigErrorKind::MissingKey {
            key: join(at, "literal"),
        })?;
        Ok((name, lits))
    }

    /// One `[[ruleset]]`: its handled rights and scopes, added to the configuration's.
    fn ruleset(&self, at: &str, t: &Table, c: &mut Config) -> Res<()> {
        let known = ["handled_access_fs", "handled_access_net", "scoped"];
        for (k, v) in self.fields(at, t, &known)? {
            let key = join(at, &self.spell(k));
            match k {
                "handled_access_fs" => c.handled_fs |= self.rights(&key, v, RightKind::Fs)?,
                "handled_access_net" => {
                    c.handled_net |= self.rights(&key, v, RightKind::Net)? as u8
                }
                _ => c.scoped |= self.rights(&key, v, RightKind::Scope)? as u8,
            }
        }
        Ok(())
    }

    /// The two keys of a rule, `allowed_access` (rights of `kind`) and `second` (an
    /// array), both required: the rights, and the array with its key.
    fn rule_fields<'a>(
        &self,
        at: &str,
        t: &'a Table,
        second: &str,
        kind: RightKind,
    ) -> Res<(u16, String, &'a [Node])> {
        let (mut access, mut targets) = (None, None);
        for (k, v) in self.fields(at, t, &["allowed_access", second])? {
            let key = join(at, &self.spell(k));
            if k == "allowed_access" {
                access = Some(self.rights(&key, v, kind)?);
            } else {
                targets = Some((key.clone(), self.array(&key, v)?));
            }
        }
        let access = access.ok_or_else(|| ConfigErrorKind::MissingKey {
            key: join(at, &self.spell("allowed_access")),
        })?;
        let (key, targets) = targets.ok_or_else(|| ConfigErrorKind::MissingKey {
            key: join(at, &self.spell(second)),
        })?;
        Ok((access, key, targets))
    }

    /// One `[[path_beneath]]`, its parents with variables expanded; `expanded` counts the
    /// paths of the whole configuration against [`MAX_EXPANDED`].
    fn path_beneath(&self, at: &str, t: &Table, expanded: &mut usize) -> Res<PathRule> {
        let (access, key, targets) = self.rule_fields(at, t, "parent", RightKind::Fs)?;
        let mut parents = Vec::new();
        for (j, t) in targets.iter().enumerate() {
            let k = format!("{key}[{j}]");
            let e = self.expand(&k, self.string(&k, t)?)?;
            *expanded += e.len();
            if *expanded > MAX_EXPANDED {
                return Err(ConfigErrorKind::TooMany { key: k });
            }
            parents.extend(e);
        }
        Ok(PathRule { access, parents })
    }

    /// One `[[net_port]]`: its rights and ports (non-negative integers; the range is
    /// checked when resolved, as the kernel does).
    fn net_port(&self, at: &str, t: &Table) -> Res<PortRule> {
        let (access, key, targets) = self.rule_fields(at, t, "port", RightKind::Net)?;
        let mut ports = Vec::new();
        for (j, t) in targets.iter().enumerate() {
            match t {
                Node::Int(n) if *n >= 0 => ports.push(*n as u64),
                _ => {
                    return Err(ConfigErrorKind::Type {
                        key: format!("{key}[{j}]"),
                        expected: "a port number",
                    })
                }
            }
        }
        Ok(PortRule {
            access: access as u8,
            ports,
        })
    }
}

fn join(at: &str, k: &str) -> String {
    if at.is_empty() {
        k.to_string()
    } else {
        format!("{at}.{k}")
    }
}

impl Config {
    /// Reads and parses a file; the format comes from the extension (`.json` → JSON, else
    /// TOML).
    pub fn from_file(path: &Path) -> Result<Config, ConfigError> {
        let file = path.display().to_string();
        let err = |kind| ConfigError {
            file: file.clone(),
            kind,
        };
        // Read to the end with the bound, not sized by `stat`: a FIFO or process
        // substitution (`--layer <(gen-rules)`) has a size of 0.
        let file =
            std::fs::File::open(path).map_err(|e| err(ConfigErrorKind::Io(e.to_string())))?;
        let bytes = match arbiter_io::read_to_end_bounded(file, MAX_FILE_BYTES as u64) {
            Ok(b) => b,
            Err(e) if e.get_ref().is_some_and(|r| r.is::<arbiter_io::TooLarge>()) => {
                return Err(err(ConfigErrorKind::TooLarge))
            }
            Err(e) => return Err(err(ConfigErrorKind::Io(e.to_string()))),
        };
        let text = String::from_utf8(bytes).map_err(|e| {
            err(ConfigErrorKind::Io(format!(
                "not UTF-8 (byte {})",
                e.utf8_error().valid_up_to()
            )))
        })?;
        let format = if path.extension().is_some_and(|e| e == "json") {
            Format::Json
        } else {
            Format::Toml
        };
        Config::parse(&text, format).map_err(err)
    }

    /// Parses text in a format.
    pub fn parse(text: &str, format: Format) -> Result<Config, ConfigErrorKind> {
        if text.len() > MAX_FILE_BYTES {
            return Err(ConfigErrorKind::TooLarge);
        }
        let top = top_table(text, format)?;
        let mut p = Parser {
            format,
            abi: None,
            variables: Vec::new(),
        };
        let fields = p.fields(
            "",
            &top,
            &["abi", "variable", "ruleset", "path_beneath", "net_port"],
        )?;
        // abi and variables first: the other sections use them.
        for (k, v) in &fields {
            match *k {
                "abi" => p.abi = Some(abi(v)?),
                "variable" => {
                    for (at, t) in p.tables("variable", v)? {
                        let variable = p.variable(&at, t)?;
                        p.variables.push(variable);
                    }
                }
                _ => {}
            }
        }
        let mut c = Config {
            abi: p.abi,
            ..Config::default()
        };
        let mut expanded = 0usize;
        for (k, v) in &fields {
            let sec = p.spell(k);
            match *k {
                "ruleset" => {
                    for (at, t) in p.tables(&sec, v)? {
                        p.ruleset(&at, t, &mut c)?;
                    }
                }
                "path_beneath" => {
                    for (at, t) in p.tables(&sec, v)? {
                        let rule = p.path_beneath(&at, t, &mut expanded)?;
                        c.handled_fs |= rule.access;
                        c.path_beneath.push(rule);
                    }
                }
                "net_port" => {
                    for (at, t) in p.tables(&sec, v)? {
                        let rule = p.net_port(&at, t)?;
                        c.handled_net |= rule.access;
                        c.net_port.push(rule);
                    }
                }
                _ => {}
            }
        }
        Ok(c)
    }

    /// landlockconfig's composition of several configurations into one layer: the handled
    /// sets are intersected, every rule of every config is intersected with them (rules
    /// left with no right are dropped), and the smallest `abi` wins. Commutative up to rule
    /// order; None for an empty slice.
    pub fn compose(configs: &[Config]) -> Option<Config> {
        let first = configs.first()?;
        let mut c = Config {
            abi: configs.iter().filter_map(|c| c.abi).min(),
            handled_fs: configs
                .iter()
                .fold(first.handled_fs, |a, c| a & c.handled_fs),
            handled_net: configs
                .iter()
                .fold(first.handled_net, |a, c| a & c.handled_net),
            scoped: configs.iter().fold(first.scoped, |a, c| a & c.scoped),
            ..Config::default()
        };
        for cfg in configs {
            for r in &cfg.path_beneath {
                let access = r.access & c.handled_fs;
                if access != 0 {
                    c.path_beneath.push(PathRule {
                        access,
                        parents: r.parents.clone(),
                    });
                }
            }
            for r in &cfg.net_port {
                let access = r.access & c.handled_net;
                if access != 0 {
                    c.net_port.push(PortRule {
                        access,
                        ports: r.ports.clone(),
                    });
                }
            }
        }
        Some(c)
    }

    /// Resolves the paths on this machine into a [`Ruleset`] over `registry`'s objects.
    /// Missing paths are reported in `warnings` and skipped; a rule on a non-directory keeps
    /// only the file rights (as rust-landlock's `path_beneath_rules` does), so the kernel and
    /// the evaluator get the same rules.
    pub fn resolve(&self, registry: &mut ObjectRegistry) -> Result<Resolved, ConfigErrorKind> {
        let mut ruleset = Ruleset::new(
            u64::from(self.handled_fs),
            u64::from(self.handled_net),
            u64::from(self.scoped),
        )
        .map_err(|error| ConfigErrorKind::Ruleset {
            key: "ruleset".into(),
            error,
        })?;
        let mut warnings = Vec::new();
        let mut paths = Vec::new();
        let mut ports = Vec::new();
        for rule in &self.path_beneath {
            for parent in &rule.parents {
                let st = match sys::stat(Path::new(parent), true) {
                    Ok(st) => st,
                    Err(e) => {
                        warnings.push(format!("skipping {parent}: {e}"));
                        continue;
                    }
                };
                let is_dir = st.mode & 0o170000 == 0o040000;
                let access = if is_dir {
                    rule.access
                } else {
                    rule.access & fs::FILE
                };
                if access == 0 {
                    warnings.push(format!(
                        "skipping {parent}: no file right for a non-directory"
                    ));
                    continue;
                }
                let obj = registry.intern(st.key);
                ruleset
                    .add_path_beneath(obj, is_dir, u64::from(access))
                    .map_err(|error| ConfigErrorKind::Ruleset {
                        key: parent.clone(),
                        error,
                    })?;
                paths.push((PathBuf::from(parent), access));
            }
        }
        for rule in &self.net_port {
            for &port in &rule.ports {
                ruleset
                    .add_net_port(port, u64::from(rule.access))
                    .map_err(|error| ConfigErrorKind::Ruleset {
                        key: format!("port {port}"),
                        error,
                    })?;
                ports.push((port, rule.access));
            }
        }
        Ok(Resolved {
            ruleset,
            paths,
            ports,
            warnings,
        })
    }
}

/// Layers loaded from configuration files, for the evaluator and for the kernel.
#[derive(Clone, Debug)]
pub struct Layers {
    /// The evaluator's domain and registry.
    pub sandbox: crate::eval::Sandbox,
    /// Each layer as resolved (the rules handed to the kernel by `run`).
    pub resolved: Vec<Resolved>,
}

/// Loads and resolves one configuration file per layer, in order, and stacks them into a
/// domain (one `landlock_restrict_self` per file).
pub fn load_layers(
    files: &[PathBuf],
    layout: crate::domain::Layout,
) -> Result<Layers, ConfigError> {
    let mut sandbox = crate::eval::Sandbox::default();
    let mut resolved = Vec::new();
    for f in files {
        let file = f.display().to_string();
        let err = |kind| ConfigError {
            file: file.clone(),
            kind,
        };
        let c = Config::from_file(f)?;
        let r = c.resolve(&mut sandbox.registry).map_err(err)?;
        let d = crate::domain::Domain::restrict(sandbox.domain.as_ref(), &r.ruleset, layout)
            .map_err(|e| {
                err(ConfigErrorKind::BadValue {
                    key: "layer".into(),
                    value: e.to_string(),
                })
            })?;
        sandbox.domain = Some(d);
        resolved.push(r);
    }
    Ok(Layers { sandbox, resolved })
}

/// A configuration resolved on this machine.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The ruleset for the evaluator.
    pub ruleset: Ruleset,
    /// The same rules for the kernel: `(path, rights)`.
    pub paths: Vec<(PathBuf, AccessFs)>,
    /// `(port, rights)`.
    pub ports: Vec<(u64, AccessNet)>,
    /// Skipped paths.
    pub warnings: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::{net, scope};

    const EXAMPLE: &str = r#"
abi = 5
[[variable]]
name = "dirs"
literal = ["/usr", "/etc"]
[[ruleset]]
handled_access_fs = ["abi.all"]
handled_access_net = ["bind_tcp"]
scoped = ["signal"]
[[path_beneath]]
allowed_access = ["abi.read_execute"]
parent = ["${dirs}/x", "/bin"]
[[net_port]]
allowed_access = ["connect_tcp"]
port = [80, 443]
"#;

    #[test]
    fn toml_example_parses_with_groups_variables_and_rule_rights_added_to_handled() {
        let c = Config::parse(EXAMPLE, Format::Toml).unwrap();
        assert_eq!(c.abi, Some(5));
        assert_eq!(c.handled_fs, fs::ALL);
        assert_eq!(c.handled_net, net::BIND_TCP | net::CONNECT_TCP);
        assert_eq!(c.scoped, scope::SIGNAL);
        assert_eq!(c.path_beneath[0].parents, vec!["/usr/x", "/etc/x", "/bin"]);
        assert_eq!(
            c.path_beneath[0].access,
            fs::EXECUTE | fs::READ_FILE | fs::READ_DIR | fs::REFER
        );
        assert_eq!(c.net_port[0].ports, vec![80, 443]);
    }

    #[test]
    fn json_uses_camel_case_keys() {
        let j = r#"{"abi": 1, "ruleset": [{"handledAccessFs": ["abi.all"]}],
                   "pathBeneath": [{"allowedAccess": ["read_file"], "parent": ["/tmp"]}]}"#;
        let c = Config::parse(j, Format::Json).unwrap();
        assert_eq!(c.handled_fs, 0x1fff);
        let bad = r#"{"ruleset": [{"handled_access_fs": ["read_file"]}]}"#;
        assert_eq!(
            Config::parse(bad, Format::Json).unwrap_err(),
            ConfigErrorKind::UnknownKey {
                key: "ruleset[0].handled_access_fs".into()
            }
        );
    }

    #[test]
    fn errors_name_the_key_and_value() {
        let e = Config::parse(
            "[[path_beneath]]\nallowed_access = [\"read\"]\nparent = [\"/\"]",
            Format::Toml,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`path_beneath[0].allowed_access[0]`: unknown filesystem right `read`"
        );
        let e = Config::parse(
            "[[ruleset]]\nhandled_access_fs = [\"abi.all\"]",
            Format::Toml,
        )
        .unwrap_err();
        assert!(matches!(e, ConfigErrorKind::NeedsAbi { .. }), "{e}");
        let e = Config::parse(
            "[[path_beneath]]\nallowed_access = [\"read_file\"]",
            Format::Toml,
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "missing key `path_beneath[0].parent`");
        let e = Config::parse("abi = \"x\"", Format::Toml).unwrap_err();
        assert!(matches!(e, ConfigErrorKind::Type { .. }));
        let e = Config::parse(
            "[[path_beneath]]\nallowed_access = [\"read_file\"]\nparent = [\"${nope}\"]",
            Format::Toml,
        )
        .unwrap_err();
        assert!(matches!(e, ConfigErrorKind::UndefinedVariable { .. }));
        assert!(matches!(
            Config::parse("abi = ", Format::Toml),
            Err(ConfigErrorKind::Syntax(_))
        ));
    }

    #[test]
    fn hostile_inputs_are_errors_not_panics() {
        let deep = "[".repeat(100_000);
        assert!(Config::parse(&deep, Format::Json).is_err());
        assert!(Config::parse(&format!("a = {deep}"), Format::Toml).is_err());
        // A variable product that would explode is refused before it is built.
        let mut t = String::from("[[variable]]\nname = \"v\"\nliteral = [");
        t.push_str(
            &(0..300)
                .map(|i| format!("\"{i}\""))
                .collect::<Vec<_>>()
                .join(","),
        );
        t.push_str(
            "]\n[[path_beneath]]\nallowed_access = [\"read_file\"]\nparent = [\"${v}${v}${v}\"]\n",
        );
        assert!(matches!(
            Config::parse(&t, Format::Toml),
            Err(ConfigErrorKind::TooMany { .. })
        ));
        assert!(matches!(
            Config::parse(
                "[[net_port]]\nallowed_access = [\"bind_tcp\"]\nport = [-1]",
                Format::Toml
            ),
            Err(ConfigErrorKind::Type { .. })
        ));
    }

    #[test]
    fn composition_intersects_handled_sets_and_drops_emptied_rules() {
        let a = Config::parse(
            "abi = 5\n[[ruleset]]\nhandled_access_fs = [\"read_file\", \"write_file\"]\n\
             [[path_beneath]]\nallowed_access = [\"write_file\"]\nparent = [\"/tmp\"]\n",
            Format::Toml,
        )
        .unwrap();
        let b = Config::parse(
            "abi = 3\n[[path_beneath]]\nallowed_access = [\"read_file\", \"execute\"]\nparent = [\"/usr\"]\n",
            Format::Toml,
        )
        .unwrap();
        let c = Config::compose(&[a.clone(), b.clone()]).unwrap();
        assert_eq!(c.abi, Some(3));
        assert_eq!(c.handled_fs, fs::READ_FILE);
        assert_eq!(
            c.path_beneath.len(),
            1,
            "the write_file rule is emptied and dropped"
        );
        assert_eq!(c.path_beneath[0].access, fs::READ_FILE);
        let d = Config::compose(&[b, a]).unwrap();
        assert_eq!(
            (d.abi, d.handled_fs, d.path_beneath.len()),
            (c.abi, c.handled_fs, 1)
        );
        assert!(Config::compose(&[]).is_none());
    }

    #[test]
    fn resolve_rejects_ports_above_65535_like_the_kernel() {
        let c = Config::parse(
            "[[net_port]]\nallowed_access = [\"bind_tcp\"]\nport = [70000]",
            Format::Toml,
        )
        .unwrap();
        let e = c.resolve(&mut ObjectRegistry::new()).unwrap_err();
        assert!(matches!(
            e,
            ConfigErrorKind::Ruleset {
                error: RulesetError::PortTooLarge(70000),
                ..
            }
        ));
    }
}
