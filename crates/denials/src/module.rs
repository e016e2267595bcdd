//! What `audit2allow` puts around and into its rules when asked for a module: the options
//! `-m NAME` (a `module NAME 1.0;` statement), `-r` (a `require { ... }` block), `-D`
//! (`dontaudit` instead of `allow`), `-x` (`allowxperm` rules for logged ioctl commands) and
//! `-v` (a comment explaining each rule),
//! and the require block sepolgen's `gen_requires` collects.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use thiserror::Error;

/// audit2allow's generation options (policycoreutils 3.4, no refpolicy interfaces).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Generation {
    /// `-m NAME` / `-M NAME`: a `module NAME 1.0;` statement; implies [`Self::requires`].
    pub module: Option<ModuleName>,
    /// `-r`: a `require { ... }` block naming every type, class, permission and role used.
    pub requires: bool,
    /// `-D`: `dontaudit` (and `dontauditxperm`) rules instead of `allow`.
    pub dontaudit: bool,
    /// `-x`: an `allowxperm ... ioctl` rule after each rule whose denials logged an ioctl
    /// command.
    pub xperms: bool,
    /// `-v` / `-e`: a comment before each rule explaining it.
    pub explain: Explanation,
    /// libselinux's `is_selinux_mls_enabled()` where audit2allow runs: `-e` then prints a
    /// context without a level with `:s0` ([`crate::package::kernel_mls_enabled`]).
    pub mls_kernel: bool,
}

/// How much each generated rule is explained (sepolgen's `NO_EXPLANATION`,
/// `SHORT_EXPLANATION`, `LONG_EXPLANATION`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Explanation {
    /// No comment.
    #[default]
    None,
    /// `-v`: the access, and the first record's `comm`, `exe` and path (of an `AVC_PATH`
    /// record with the same header).
    Short,
    /// `-e`: every record of the rule: header, contexts, class and permissions as logged,
    /// `comm`, `exe`, path, and the record itself wrapped at 80 columns.
    Long,
}

impl Generation {
    /// Whether the require block is written (`-r`, or a module name).
    pub fn writes_requires(&self) -> bool {
        self.requires || self.module.is_some()
    }
}

/// A module name as sepolgen's `is_valid_name` accepts it: an ASCII letter, then letters,
/// digits, `-`, `_`, `.`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleName(String);

/// A module name audit2allow refuses (its message, without the `error: ` prefix).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("module names must begin with a letter, optionally followed by letters, numbers, \"-\", \"_\", \".\" (got {0:?})")]
pub struct BadModuleName(pub String);

impl ModuleName {
    /// Checks `name`. audit2allow ignores an empty name (it then writes no module at all);
    /// arbiter refuses it like any other invalid name.
    pub fn parse(name: &str) -> Result<ModuleName, BadModuleName> {
        let ok = name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if ok {
            Ok(ModuleName(name.to_string()))
        } else {
            Err(BadModuleName(name.to_string()))
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The `require { ... }` block: types of the rules (sources, targets other than `self`,
/// types of `role R types T;`), each class with the union of its rules' permissions (classes
/// in the order their first rule was generated), roles.
///
/// sepolgen keeps types and roles in Python sets and prints them in hash order, which
/// differs from run to run (string hashing is randomised and `audit2allow` runs with `-E`,
/// so `PYTHONHASHSEED` cannot fix it); arbiter prints them sorted.
#[derive(Clone, Debug, Default)]
pub struct Require {
    types: BTreeSet<String>,
    classes: Vec<(String, BTreeSet<String>)>,
    roles: BTreeSet<String>,
}

impl Require {
    /// An empty block.
    pub fn new() -> Require {
        Require::default()
    }

    /// Adds a type (`self` is not a type and is skipped, as sepolgen discards it).
    pub fn add_type(&mut self, ty: &str) {
        if ty != "self" {
            self.types.insert(ty.to_string());
        }
    }

    /// Adds permissions of a class.
    pub fn add_class<'a>(&mut self, class: &str, perms: impl IntoIterator<Item = &'a String>) {
        let i = match self.classes.iter().position(|(c, _)| c == class) {
            Some(i) => i,
            None => {
                self.classes.push((class.to_string(), BTreeSet::new()));
                self.classes.len() - 1
            }
        };
        self.classes[i].1.extend(perms.into_iter().cloned());
    }

    /// Adds a role.
    pub fn add_role(&mut self, role: &str) {
        self.roles.insert(role.to_string());
    }

    /// The types, sorted.
    pub fn types(&self) -> impl Iterator<Item = &str> {
        self.types.iter().map(String::as_str)
    }

    /// The classes and their permissions, in first-use order.
    pub fn classes(&self) -> impl Iterator<Item = (&str, &BTreeSet<String>)> {
        self.classes.iter().map(|(c, p)| (c.as_str(), p))
    }

    /// The roles, sorted.
    pub fn roles(&self) -> impl Iterator<Item = &str> {
        self.roles.iter().map(String::as_str)
    }

    /// sepolgen's `Require.to_string`: empty when there is nothing to require.
    pub fn render(&self) -> String {
        if self.types.is_empty() && self.classes.is_empty() && self.roles.is_empty() {
            return String::new();
        }
        let mut s = String::from("require {\n");
        for t in &self.types {
            let _ = writeln!(s, "\ttype {t};");
        }
        for (c, perms) in &self.classes {
            let perms: Vec<&str> = perms.iter().map(String::as_str).collect();
            let _ = writeln!(s, "\tclass {c} {};", space_set(&perms));
        }
        for r in &self.roles {
            let _ = writeln!(s, "\trole {r};");
        }
        s.push('}');
        s
    }
}

/// sepolgen's `list_to_space_str`: `a`, or `{ a b }`.
pub(crate) fn space_set(items: &[&str]) -> String {
    if items.len() == 1 {
        items[0].to_string()
    } else {
        format!("{{ {} }}", items.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_follow_sepolgens_rule() {
        for ok in ["a", "local", "my-mod_1.2", "Z9"] {
            assert!(ModuleName::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["", "1abc", "-x", "a b", "a/b", "é", "_a", "a$"] {
            assert!(ModuleName::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn require_block_lists_types_classes_in_first_use_order_and_roles() {
        let mut r = Require::new();
        assert_eq!(r.render(), "");
        r.add_type("b_t");
        r.add_type("self");
        r.add_type("a_t");
        let p = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        r.add_class("file", &p(&["write"]));
        r.add_class("dir", &p(&["search"]));
        r.add_class("file", &p(&["read", "write"]));
        r.add_role("user_r");
        assert_eq!(
            r.render(),
            "require {\n\ttype a_t;\n\ttype b_t;\n\tclass file { read write };\n\tclass dir search;\n\trole user_r;\n}"
        );
    }
}
