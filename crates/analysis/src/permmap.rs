//! Permission maps in setools' file format: for each class, each permission's information
//! flow direction (read, write, both, none, unmapped) and weight (1–10).
//!
//! The parser is setools 4.4.1's `PermissionMap.load` state machine with its messages
//! (`FILE:LINE:reason: token`), including what it tolerates: tokens past the third are
//! ignored, fewer classes than announced are accepted, a repeated class or permission
//! replaces the earlier one. Where setools crashes (a permission line with fewer than three
//! tokens: Python's `list index out of range`) the same text is returned as an error.
//!
//! setools' own map (`setools/perm_map`, installed with python3-setools) is not shipped in
//! arbiter: it is distributed under the GPL (Debian's copyright file) and arbiter under
//! Apache-2.0. [`PermissionMap::setools_default`] reads it from its installed path.

use crate::AnalysisError;
use std::collections::HashMap;

/// Where setools 4.4.1 installs its default permission map on Debian and Ubuntu.
pub const SETOOLS_PERM_MAP: &str = "/usr/lib/python3/dist-packages/setools/perm_map";

/// A permission's information flow direction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Direction {
    /// `r`: information flows from the object to the subject.
    Read,
    /// `w`: from the subject to the object.
    Write,
    /// `b`: both ways.
    Both,
    /// `n`: no flow.
    None,
    /// `u`: not mapped (ignored).
    Unmapped,
}

impl Direction {
    fn parse(s: &str) -> Option<Direction> {
        Some(match s {
            "r" => Direction::Read,
            "w" => Direction::Write,
            "b" => Direction::Both,
            "n" => Direction::None,
            "u" => Direction::Unmapped,
            _ => return None,
        })
    }
}

/// One permission's mapping.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// Flow direction.
    pub direction: Direction,
    /// Weight, 1–10.
    pub weight: u8,
    /// False once excluded ([`PermissionMap::exclude_permission`]).
    pub enabled: bool,
}

/// A permission map: class name → permission name → mapping.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PermissionMap {
    /// The file it was read from (setools' `str()` of the map).
    pub path: String,
    classes: HashMap<String, HashMap<String, Mapping>>,
}

impl PermissionMap {
    /// Reads setools' default map from [`SETOOLS_PERM_MAP`].
    pub fn setools_default() -> Result<PermissionMap, AnalysisError> {
        PermissionMap::open(SETOOLS_PERM_MAP)
    }

    /// Reads a map file; errors are worded as setools words them.
    pub fn open(path: &str) -> Result<PermissionMap, AnalysisError> {
        let text = std::fs::read(path).map_err(|e| {
            let detail = match e.kind() {
                std::io::ErrorKind::NotFound => "[Errno 2] No such file or directory".to_string(),
                std::io::ErrorKind::PermissionDenied => "[Errno 13] Permission denied".to_string(),
                _ => e.to_string(),
            };
            AnalysisError::PermMap(format!("{detail}: '{path}'"))
        })?;
        let text = String::from_utf8(text).map_err(|e| {
            AnalysisError::PermMap(format!(
                "'utf-8' codec can't decode byte at position {}: {path}",
                e.utf8_error().valid_up_to()
            ))
        })?;
        PermissionMap::parse(path, &text)
    }

    /// Parses map text; `path` names it in error messages.
    pub fn parse(path: &str, text: &str) -> Result<PermissionMap, AnalysisError> {
        let err =
            |line: usize, what: String| AnalysisError::PermMap(format!("{path}:{line}:{what}"));
        let mut map = PermissionMap {
            path: path.to_string(),
            classes: HashMap::new(),
        };
        enum State {
            Count,
            Class,
            Perms { class: String, left: u64 },
        }
        let mut state = State::Count;
        let mut num_classes: i64 = 0;
        let mut class_count: i64 = 0;
        for (n, line) in python_lines(text).enumerate() {
            let n = n + 1;
            let entry: Vec<&str> = line.split_whitespace().collect();
            let Some(first) = entry.first() else { continue };
            if first.starts_with('#') {
                continue;
            }
            state = match state {
                State::Count => {
                    num_classes = python_int(first)
                        .ok_or_else(|| err(n, format!("Invalid number of classes: {first}")))?;
                    if num_classes < 1 {
                        return Err(err(
                            n,
                            format!("Number of classes must be positive: {first}"),
                        ));
                    }
                    State::Class
                }
                State::Class => {
                    if entry.len() != 3 || entry[0] != "class" {
                        let repr: Vec<String> = entry.iter().map(|t| python_repr(t)).collect();
                        return Err(err(
                            n,
                            format!("Invalid class declaration: [{}]", repr.join(", ")),
                        ));
                    }
                    let num_perms = python_int(entry[2]).ok_or_else(|| {
                        err(n, format!("Invalid number of permissions: {}", entry[2]))
                    })?;
                    if num_perms < 1 {
                        return Err(err(
                            n,
                            format!("Number of permissions must be positive: {}", entry[2]),
                        ));
                    }
                    class_count += 1;
                    if class_count > num_classes {
                        return Err(err(n, format!("Extra class found: {}", entry[1])));
                    }
                    map.classes.insert(entry[1].to_string(), HashMap::new());
                    State::Perms {
                        class: entry[1].to_string(),
                        left: num_perms as u64,
                    }
                }
                State::Perms { class, left } => {
                    // setools reads the direction before the weight: `read x` is an
                    // invalid direction, `read r` its IndexError.
                    let index_error = || AnalysisError::PermMap("list index out of range".into());
                    let dir = entry.get(1).ok_or_else(index_error)?;
                    let direction = Direction::parse(dir).ok_or_else(|| {
                        err(n, format!("Invalid information flow direction: {dir}"))
                    })?;
                    let weight = entry.get(2).ok_or_else(index_error)?;
                    let w = python_int(weight)
                        .ok_or_else(|| err(n, format!("Invalid permission weight: {weight}")))?;
                    if !(1..=10).contains(&w) {
                        return Err(err(n, format!("Permission weight must be 1-10: {weight}")));
                    }
                    map.classes.entry(class.clone()).or_default().insert(
                        entry[0].to_string(),
                        Mapping {
                            direction,
                            weight: w as u8,
                            enabled: true,
                        },
                    );
                    if left <= 1 {
                        State::Class
                    } else {
                        State::Perms {
                            class,
                            left: left - 1,
                        }
                    }
                }
            };
        }
        Ok(map)
    }

    /// The mapping of a class's permission, if the map has one.
    pub fn mapping(&self, class: &str, perm: &str) -> Option<&Mapping> {
        self.classes.get(class)?.get(perm)
    }

    /// Excludes a permission from the analysis (setools' `exclude_permission`).
    pub fn exclude_permission(&mut self, class: &str, perm: &str) -> bool {
        match self.classes.get_mut(class).and_then(|c| c.get_mut(perm)) {
            Some(m) => {
                m.enabled = false;
                true
            }
            None => false,
        }
    }

    /// Excludes every permission of a class (setools' `exclude_class`).
    pub fn exclude_class(&mut self, class: &str) -> bool {
        match self.classes.get_mut(class) {
            Some(c) => {
                c.values_mut().for_each(|m| m.enabled = false);
                true
            }
            None => false,
        }
    }

    /// The read and write weights a permission contributes (0 for none).
    pub fn weights(&self, class: &str, perm: &str) -> (u8, u8) {
        match self.mapping(class, perm) {
            Some(m) if m.enabled => match m.direction {
                Direction::Read => (m.weight, 0),
                Direction::Write => (0, m.weight),
                Direction::Both => (m.weight, m.weight),
                Direction::None | Direction::Unmapped => (0, 0),
            },
            _ => (0, 0),
        }
    }
}

/// Lines as Python's text-mode file iteration splits them (universal newlines).
fn python_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest.find(['\n', '\r']).unwrap_or(rest.len());
        let line = &rest[..end];
        let skip = if rest[end..].starts_with("\r\n") {
            2
        } else {
            usize::from(end < rest.len())
        };
        rest = &rest[end + skip..];
        Some(line)
    })
}

/// Python's `int(str)` for the forms a map holds: optional sign, decimal digits,
/// underscores between digits, surrounding whitespace already removed.
fn python_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    if !digits.chars().all(|c| c.is_ascii_digit() || c == '_') {
        return None;
    }
    let clean: String = s.chars().filter(|&c| c != '_').collect();
    clean.parse().ok()
}

/// Python's `repr()` of a plain string token.
fn python_repr(s: &str) -> String {
    if s.contains('\'') && !s.contains('"') {
        format!("\"{s}\"")
    } else {
        format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "# comment\n2\n\nclass file 2\n read r 10 # trailing\n write w 10\nclass process 1\n transition w 5\n";

    #[test]
    fn a_small_map_parses_with_comments_and_trailing_tokens() {
        let m = PermissionMap::parse("m", SMALL).expect("valid map");
        assert_eq!(m.weights("file", "read"), (10, 0));
        assert_eq!(m.weights("process", "transition"), (0, 5));
        assert_eq!(m.weights("file", "nosuch"), (0, 0));
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = PermissionMap::parse("m", "2\nclass file 1\n read x 10\n").unwrap_err();
        assert_eq!(e.to_string(), "m:3:Invalid information flow direction: x");
        let e = PermissionMap::parse("m", "1\nclass file 1\n read r 11\n").unwrap_err();
        assert_eq!(e.to_string(), "m:3:Permission weight must be 1-10: 11");
        let e = PermissionMap::parse("m", "1\nclass file 1\n read r 1\nclass dir 1\n").unwrap_err();
        assert_eq!(e.to_string(), "m:4:Extra class found: dir");
        let e = PermissionMap::parse("m", "x\n").unwrap_err();
        assert_eq!(e.to_string(), "m:1:Invalid number of classes: x");
        let e = PermissionMap::parse("m", "1\nclass file\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "m:2:Invalid class declaration: ['class', 'file']"
        );
        let e = PermissionMap::parse("m", "1\nclass file 1\n read\n").unwrap_err();
        assert_eq!(e.to_string(), "list index out of range");
        // The direction is read before the weight (setools' order).
        let e = PermissionMap::parse("m", "1\nclass file 1\n read x\n").unwrap_err();
        assert_eq!(e.to_string(), "m:3:Invalid information flow direction: x");
    }

    #[test]
    fn excluding_a_permission_removes_its_weight() {
        let mut m = PermissionMap::parse("m", SMALL).expect("valid map");
        assert!(m.exclude_permission("file", "read"));
        assert_eq!(m.weights("file", "read"), (0, 0));
        assert!(m.exclude_class("process"));
        assert_eq!(m.weights("process", "transition"), (0, 0));
    }
}
