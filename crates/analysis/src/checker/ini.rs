//! The part of Python's `configparser.ConfigParser()` (3.11, default settings) that
//! sechecker's configuration files go through: sections, `=`/`:` options, whole-line `#`
//! and `;` comments, indented continuation lines, `[DEFAULT]` inheritance, strict
//! duplicate detection, and `%(name)s` interpolation at read time. Errors carry Python's
//! text (sechecker prints it) and the line they come from.
//!
//! Parsing only records text and lines; what an option means is decided by
//! [`super::options`] when a check is built.

use super::pytext::{py_repr, py_strip, py_trim_start_len};

/// One `name = value` (or continued, multi-line) option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IniOption {
    /// The name, lower-cased (configparser's `optionxform`).
    pub name: String,
    /// The raw value: its lines stripped and joined with newlines, trailing blanks removed.
    pub value: String,
    /// The 1-based line the option starts on.
    pub line: usize,
}

/// One `[name]` section with its own options in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IniSection {
    /// The header text between the first `[` and the last `]`.
    pub name: String,
    /// The line of the header.
    pub line: usize,
    /// Its options, in file order.
    pub options: Vec<IniOption>,
}

/// A parsed file: the `[DEFAULT]` options and the other sections in file order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ini {
    /// Options of every `[DEFAULT]` section, inherited by all sections.
    pub defaults: Vec<IniOption>,
    /// The sections other than `[DEFAULT]`, in order of first appearance.
    pub sections: Vec<IniSection>,
}

/// A file configparser refuses, with its message (`str()` of the Python exception).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IniError {
    /// A section header seen twice.
    #[error(
        "While reading from {} [line {line:2}]: section {} already exists",
        py_repr(file),
        py_repr(section)
    )]
    DuplicateSection {
        /// The file name as given.
        file: String,
        /// The repeated section.
        section: String,
        /// The line of the repetition.
        line: usize,
    },
    /// An option set twice in one section.
    #[error(
        "While reading from {} [line {line:2}]: option {} in section {} already exists",
        py_repr(file),
        py_repr(option),
        py_repr(section)
    )]
    DuplicateOption {
        /// The file name as given.
        file: String,
        /// The section.
        section: String,
        /// The repeated option (lower-cased).
        option: String,
        /// The line of the repetition.
        line: usize,
    },
    /// Text before the first section header.
    #[error(
        "File contains no section headers.\nfile: {}, line: {line}\n{}",
        py_repr(file),
        py_repr(text)
    )]
    MissingSectionHeader {
        /// The file name as given.
        file: String,
        /// The offending line's number.
        line: usize,
        /// The offending line, with its newline.
        text: String,
    },
    /// Lines that are neither headers, options, continuations nor comments.
    #[error("Source contains parsing errors: {}{}", py_repr(file), errors.iter().map(|(n, t)| format!("\n\t[line {n:2}]: {}", py_repr(t))).collect::<String>())]
    Parsing {
        /// The file name as given.
        file: String,
        /// Each bad line's number and text (with its newline).
        errors: Vec<(usize, String)>,
    },
}

impl IniError {
    /// The first line the error is about.
    pub fn line(&self) -> usize {
        match self {
            IniError::DuplicateSection { line, .. }
            | IniError::DuplicateOption { line, .. }
            | IniError::MissingSectionHeader { line, .. } => *line,
            IniError::Parsing { errors, .. } => errors.first().map_or(0, |e| e.0),
        }
    }
}

/// An interpolation failure (`%` misuse or an unknown `%(name)s`), Python's
/// `InterpolationError` text. sechecker does not count it as a configuration error: it
/// exits 3, not 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct InterpolationError {
    /// Python's message.
    pub message: String,
    /// The option being read.
    pub option: String,
    /// The line of that option.
    pub line: usize,
}

/// Python's text-mode lines: `\n`, `\r\n` and `\r` all end a line and read as `\n`.
fn lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                cur.push('\n');
                out.push(std::mem::take(&mut cur));
            }
            '\n' => {
                cur.push('\n');
                out.push(std::mem::take(&mut cur));
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Where continuation lines of the current option go.
#[derive(Clone, Copy)]
enum Target {
    Defaults,
    Section(usize),
}

/// An option being read: its lines until the next option or header.
struct Pending {
    target: Target,
    index: usize,
    parts: Vec<String>,
}

/// Parses `text` as configparser reads a file named `source`.
pub fn parse(source: &str, text: &str) -> Result<Ini, IniError> {
    let mut ini = Ini::default();
    let mut cursect: Option<Target> = None;
    let mut sectname = String::new();
    let mut pending: Option<Pending> = None;
    let mut added_sections: Vec<String> = Vec::new();
    let mut added_options: std::collections::HashSet<(String, String)> = Default::default();
    let mut indent_level = 0usize;
    let mut errors: Vec<(usize, String)> = Vec::new();
    let flush = |ini: &mut Ini, p: Option<Pending>| {
        if let Some(p) = p {
            let value = p
                .parts
                .join("\n")
                .trim_end_matches(super::pytext::is_py_space)
                .to_string();
            let opts = match p.target {
                Target::Defaults => &mut ini.defaults,
                Target::Section(i) => &mut ini.sections[i].options,
            };
            if let Some(o) = opts.get_mut(p.index) {
                o.value = value;
            }
        }
    };
    for (i, line) in lines(text).iter().enumerate() {
        let lineno = i + 1;
        let is_comment = {
            let s = py_strip(line);
            s.starts_with('#') || s.starts_with(';')
        };
        let value = if is_comment { "" } else { py_strip(line) };
        if value.is_empty() {
            // An empty line belongs to the value being read; a comment line does not.
            if !is_comment && cursect.is_some() {
                if let Some(p) = pending.as_mut() {
                    p.parts.push(String::new());
                }
            }
            continue;
        }
        let cur_indent = py_trim_start_len(line);
        if cursect.is_some() && pending.is_some() && cur_indent > indent_level {
            if let Some(p) = pending.as_mut() {
                p.parts.push(value.to_string());
            }
            continue;
        }
        indent_level = cur_indent;
        if let Some(header) = section_header(value) {
            flush(&mut ini, pending.take());
            sectname = header.to_string();
            if let Some(k) = ini.sections.iter().position(|s| s.name == header) {
                if added_sections.iter().any(|s| s == header) {
                    return Err(IniError::DuplicateSection {
                        file: source.to_string(),
                        section: header.to_string(),
                        line: lineno,
                    });
                }
                cursect = Some(Target::Section(k));
            } else if header == "DEFAULT" {
                cursect = Some(Target::Defaults);
            } else {
                ini.sections.push(IniSection {
                    name: header.to_string(),
                    line: lineno,
                    options: Vec::new(),
                });
                added_sections.push(header.to_string());
                cursect = Some(Target::Section(ini.sections.len() - 1));
            }
            continue;
        }
        let Some(target) = cursect else {
            return Err(IniError::MissingSectionHeader {
                file: source.to_string(),
                line: lineno,
                text: line.clone(),
            });
        };
        match value.find(['=', ':']) {
            Some(at) => {
                flush(&mut ini, pending.take());
                let raw_name = &value[..at];
                if raw_name.is_empty() {
                    errors.push((lineno, line.clone()));
                }
                let name = raw_name
                    .trim_end_matches(super::pytext::is_py_space)
                    .to_lowercase();
                if !added_options.insert((sectname.clone(), name.clone())) {
                    return Err(IniError::DuplicateOption {
                        file: source.to_string(),
                        section: sectname.clone(),
                        option: name,
                        line: lineno,
                    });
                }
                let first = py_strip(&value[at + 1..]).to_string();
                let opts = match target {
                    Target::Defaults => &mut ini.defaults,
                    Target::Section(i) => &mut ini.sections[i].options,
                };
                // A name already present (a re-opened DEFAULT is not strict-checked by
                // section, only by option) is replaced in place, as a dict assignment.
                let index = match opts.iter().position(|o| o.name == name) {
                    Some(k) => {
                        opts[k].line = lineno;
                        k
                    }
                    None => {
                        opts.push(IniOption {
                            name,
                            value: String::new(),
                            line: lineno,
                        });
                        opts.len() - 1
                    }
                };
                pending = Some(Pending {
                    target,
                    index,
                    parts: vec![first],
                });
            }
            None => errors.push((lineno, line.clone())),
        }
    }
    flush(&mut ini, pending.take());
    if !errors.is_empty() {
        return Err(IniError::Parsing {
            file: source.to_string(),
            errors,
        });
    }
    Ok(ini)
}

/// `\[(?P<header>.+)\]` matched at the start of a stripped line: the text between the
/// first `[` and the last `]` (at least one character); anything after that `]` is ignored.
fn section_header(value: &str) -> Option<&str> {
    let rest = value.strip_prefix('[')?;
    let end = rest.rfind(']')?;
    (end > 0).then(|| &rest[..end])
}

impl Ini {
    /// The options a section sees: its own, then the `[DEFAULT]` ones it does not set,
    /// in the order configparser lists them (`SectionProxy.__iter__`).
    pub fn option_names<'a>(&'a self, section: &'a IniSection) -> Vec<&'a IniOption> {
        let mut out: Vec<&IniOption> = section.options.iter().collect();
        for d in &self.defaults {
            if !section.options.iter().any(|o| o.name == d.name) {
                out.push(d);
            }
        }
        out
    }

    /// The raw option as a section sees it (its own, else the default's).
    fn raw<'a>(&'a self, section: &'a IniSection, name: &str) -> Option<&'a IniOption> {
        section
            .options
            .iter()
            .find(|o| o.name == name)
            .or_else(|| self.defaults.iter().find(|o| o.name == name))
    }

    /// `section.get(name)`: the value with `%(other)s` and `%%` interpolated, `None` when
    /// the option is not set.
    pub fn get(
        &self,
        section: &IniSection,
        name: &str,
    ) -> Result<Option<(String, usize)>, InterpolationError> {
        let Some(opt) = self.raw(section, name) else {
            return Ok(None);
        };
        let mut out = String::new();
        self.interpolate(section, opt, &opt.value, &mut out, 1)?;
        Ok(Some((out, opt.line)))
    }

    /// `BasicInterpolation._interpolate_some`, depth-limited at 10 as Python is.
    fn interpolate(
        &self,
        section: &IniSection,
        opt: &IniOption,
        mut rest: &str,
        out: &mut String,
        depth: usize,
    ) -> Result<(), InterpolationError> {
        let fail = |message: String| InterpolationError {
            message,
            option: opt.name.clone(),
            line: opt.line,
        };
        if depth > 10 {
            return Err(fail(format!(
                "Recursion limit exceeded in value substitution: option {} in section {} contains an interpolation key which cannot be substituted in 10 steps. Raw value: {}",
                py_repr(&opt.name),
                py_repr(&section.name),
                py_repr(&opt.value)
            )));
        }
        while !rest.is_empty() {
            let Some(p) = rest.find('%') else {
                out.push_str(rest);
                return Ok(());
            };
            out.push_str(&rest[..p]);
            rest = &rest[p..];
            let after = &rest[1..];
            if after.starts_with('%') {
                out.push('%');
                rest = &rest[2..];
            } else if let Some(inner) = after.strip_prefix('(') {
                // `%\(([^)]+)\)s`
                let key = inner
                    .find(')')
                    .filter(|&k| k > 0 && inner[k + 1..].starts_with('s'));
                let Some(k) = key else {
                    return Err(fail(format!(
                        "bad interpolation variable reference {}",
                        py_repr(rest)
                    )));
                };
                let var = inner[..k].to_lowercase();
                rest = &inner[k + 2..];
                let Some(v) = self.raw(section, &var) else {
                    return Err(fail(format!(
                        "Bad value substitution: option {} in section {} contains an interpolation key {} which is not a valid option name. Raw value: {}",
                        py_repr(&opt.name),
                        py_repr(&section.name),
                        py_repr(&var),
                        py_repr(&opt.value)
                    )));
                };
                if v.value.contains('%') {
                    self.interpolate(section, opt, &v.value, out, depth + 1)?;
                } else {
                    out.push_str(&v.value);
                }
            } else {
                return Err(fail(format!(
                    "'%' must be followed by '%' or '(', found: {}",
                    py_repr(rest)
                )));
            }
        }
        Ok(())
    }
}
