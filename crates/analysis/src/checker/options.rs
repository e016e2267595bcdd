//! Check options from text to policy objects, as setools' checker descriptors read them:
//! single names are stripped and looked up; sets split on any whitespace and are either
//! strict (an unknown name is an error) or forgiving (it is dropped); type sets are
//! expanded to member types; `perms` splits on single spaces only and is validated
//! against the check's classes (or every class).

use super::pytext::{is_py_space, py_strip};
use super::CheckerError;
use arbiter_policy::{ClassId, RoleId, TypeId};
use arbiter_query::Index;

/// What option values are read against: the policy and the check being built.
pub struct Ctx<'a, 'p> {
    /// The policy's index.
    pub index: &'a Index<'p>,
    /// The configuration file as named.
    pub path: &'a str,
    /// The check (section) name.
    pub check: &'a str,
    /// What setools logs at info level while it reads the options (an item a forgiving
    /// set drops, an expected type also exempt), in order: sechecker `-v` prints it.
    pub log: std::cell::RefCell<Vec<String>>,
}

/// A set of types over the policy's type slots (attributes already expanded).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypeSet(pub Vec<bool>);

impl TypeSet {
    /// Whether `t` is in the set.
    pub fn contains(&self, t: TypeId) -> bool {
        self.0.get(t.index()).copied().unwrap_or(false)
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        !self.0.iter().any(|&b| b)
    }

    /// The members, by slot.
    pub fn members(&self) -> impl Iterator<Item = TypeId> + '_ {
        self.0
            .iter()
            .enumerate()
            .filter(|(_, &b)| b)
            .filter_map(|(i, _)| TypeId::from_index(i))
    }
}

/// A raw option value and the line it was set on.
pub type Raw = Option<(String, usize)>;

impl Ctx<'_, '_> {
    fn invalid(
        &self,
        option: &str,
        line: usize,
        message: String,
        logged: Option<String>,
    ) -> CheckerError {
        CheckerError::InvalidValue(Box::new(super::ValueError {
            path: self.path.to_string(),
            check: self.check.to_string(),
            option: option.to_string(),
            line,
            message,
            logged,
        }))
    }

    /// A single type or attribute (`lookup_type_or_attr`), e.g. assert_te's `source`.
    pub fn single_type(&self, option: &str, raw: &Raw) -> Result<Option<TypeId>, CheckerError> {
        let Some((value, line)) = raw.as_ref().filter(|(v, _)| !v.is_empty()) else {
            return Ok(None);
        };
        let name = py_strip(value);
        self.index.type_or_attr(name).map(Some).ok_or_else(|| {
            self.invalid(
                option,
                *line,
                format!(
                    "{}: Invalid {option} setting: {name} is not a valid type attribute",
                    self.check
                ),
                None,
            )
        })
    }

    /// A single role (`lookup_role`), e.g. assert_rbac's `source`.
    pub fn single_role(&self, option: &str, raw: &Raw) -> Result<Option<RoleId>, CheckerError> {
        let Some((value, line)) = raw.as_ref().filter(|(v, _)| !v.is_empty()) else {
            return Ok(None);
        };
        let name = py_strip(value);
        self.index.role(name).map(Some).ok_or_else(|| {
            self.invalid(
                option,
                *line,
                format!(
                    "{}: Invalid {option} setting: {name} is not a valid role",
                    self.check
                ),
                None,
            )
        })
    }

    /// The items of a set option: split on any whitespace, empty items dropped.
    fn items(value: &str) -> impl Iterator<Item = &str> {
        value.split(is_py_space).filter(|s| !s.is_empty())
    }

    /// Looks each item up with `lookup`; a failure is an error when `strict`, else the
    /// item is dropped (setools logs it at info level).
    fn set<T>(
        &self,
        option: &str,
        raw: &Raw,
        strict: bool,
        what: &str,
        lookup: impl Fn(&str) -> Option<T>,
    ) -> Result<Vec<T>, CheckerError> {
        let Some((value, line)) = raw.as_ref() else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for item in Self::items(value) {
            match lookup(item) {
                Some(x) => out.push(x),
                None if strict => {
                    let reason = format!("{item} is not a valid {what}");
                    return Err(self.invalid(
                        option,
                        *line,
                        format!("{}: Invalid {option} item: {reason}", self.check),
                        Some(format!("Invalid {option} item: {reason}")),
                    ));
                }
                None => self.log.borrow_mut().push(format!(
                    "{}: Invalid {option} item: {item} is not a valid {what}",
                    self.check
                )),
            }
        }
        Ok(out)
    }

    /// A set of types and attributes, expanded to member types.
    pub fn type_set(&self, option: &str, raw: &Raw, strict: bool) -> Result<TypeSet, CheckerError> {
        let ids = self.set(option, raw, strict, "type attribute", |n| {
            self.index.type_or_attr(n)
        })?;
        let mut set = vec![false; self.index.type_slots()];
        for id in ids {
            for &t in self.index.expand(id) {
                if let Some(b) = set.get_mut(t.index()) {
                    *b = true;
                }
            }
        }
        Ok(TypeSet(set))
    }

    /// Logs setools' note when a check expects a type or role it also exempts: `Overlap
    /// in expect_SIDE and exempt_SIDE: NAMES` (setools joins the names in a Python set's
    /// order, which changes with the hash seed; here they are sorted).
    pub fn note_overlap(&self, side: &str, mut names: Vec<&str>) {
        if names.is_empty() {
            return;
        }
        names.sort_unstable();
        self.log.borrow_mut().push(format!(
            "Overlap in expect_{side} and exempt_{side}: {}",
            names.join(", ")
        ));
    }

    /// A set of roles (a role expands to itself).
    pub fn role_set(
        &self,
        option: &str,
        raw: &Raw,
        strict: bool,
    ) -> Result<Vec<RoleId>, CheckerError> {
        let mut v = self.set(option, raw, strict, "role", |n| self.index.role(n))?;
        v.sort_unstable();
        v.dedup();
        Ok(v)
    }

    /// A strict set of classes.
    pub fn class_set(&self, option: &str, raw: &Raw) -> Result<Vec<ClassId>, CheckerError> {
        let mut v = self.set(option, raw, true, "class", |n| self.index.class(n))?;
        v.sort_unstable();
        v.dedup();
        Ok(v)
    }

    /// `perms`: split on single spaces (a tab or newline stays inside a name), each name
    /// required to be a permission of one of `classes` (of any class when none is given).
    pub fn perms(
        &self,
        option: &str,
        raw: &Raw,
        classes: &[ClassId],
    ) -> Result<Vec<String>, CheckerError> {
        let Some((value, line)) = raw.as_ref().filter(|(v, _)| !v.is_empty()) else {
            return Ok(Vec::new());
        };
        let mut perms: Vec<String> = value
            .split(' ')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        perms.sort();
        perms.dedup();
        if let Err(reason) = validate_perms_any(self.index, &perms, classes) {
            return Err(self.invalid(
                option,
                *line,
                format!("{}: Invalid {option} setting: {reason}", self.check),
                None,
            ));
        }
        Ok(perms)
    }
}

/// setools' `validate_perms_any`: every permission must exist in at least one of `classes`
/// (all classes when empty). The message lists the missing names; setools joins a Python
/// set there, whose order changes between runs, so they are listed sorted.
pub fn validate_perms_any(
    index: &Index<'_>,
    perms: &[String],
    classes: &[ClassId],
) -> Result<(), String> {
    if perms.is_empty() {
        return Err("No permissions specified.".to_string());
    }
    let all: Vec<ClassId>;
    let selected = if classes.is_empty() {
        all = (0..index.policy().classes.len())
            .filter_map(ClassId::from_index)
            .collect();
        &all[..]
    } else {
        classes
    };
    let mut invalid: Vec<&String> = perms
        .iter()
        .filter(|p| {
            !selected
                .iter()
                .any(|&c| index.class_perms(c).any(|(n, _)| n == p.as_str()))
        })
        .collect();
    if invalid.is_empty() {
        return Ok(());
    }
    invalid.sort();
    let names = invalid
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    Err(if classes.is_empty() {
        format!("Permission(s) do not exist any class: {names}")
    } else {
        format!("Permission(s) do not exist in the specified classes: {names}")
    })
}

/// setools' `config_bool_value`: true for `yes`, `true` or `1` (any case, stripped).
pub fn bool_value(raw: &Raw) -> bool {
    raw.as_ref()
        .is_some_and(|(v, _)| matches!(py_strip(v).to_lowercase().as_str(), "yes" | "true" | "1"))
}
