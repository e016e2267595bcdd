//! The native half of `arbiter.setools`: one handle per opened policy ([`PolicyDb`]) that
//! hands the Python half the symbol tables in setools' iteration order and answers
//! `TERuleQuery` with the query layer (`arbiter_query`), so a query is one scan in Rust and
//! only the matching rules become Python objects.
//!
//! The Python half (`arbiter/setools/*.py`) holds setools 4.4.1's object semantics
//! (equality, hashing, `str()`, exceptions) over the plain tuples returned here.

mod avdiff;
mod compile;
mod constraint;
mod labeling;
mod mls;
mod name_index;
mod query_base;
mod relations;
mod symbol;
mod te;
pub use relations::TypeRelations;
pub use te::TeResults;

/// Adds the table functions of the MLS, labeling and constraint modules and the name
/// index of the symbol queries to `m`.
pub fn register(m: &Bound<'_, pyo3::types::PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(avdiff::av_rule_diff, m)?)?;
    m.add_function(wrap_pyfunction!(compile::compile_source, m)?)?;
    m.add_class::<name_index::NameIndex>()?;
    m.add_class::<TypeRelations>()?;
    m.add_class::<query_base::QueryBase>()?;
    m.add_class::<symbol::SymbolBase>()?;
    m.add_function(wrap_pyfunction!(mls::sensitivity_table, m)?)?;
    m.add_function(wrap_pyfunction!(mls::category_table, m)?)?;
    m.add_function(wrap_pyfunction!(mls::category_names, m)?)?;
    m.add_function(wrap_pyfunction!(mls::category_alias_wins, m)?)?;
    m.add_function(wrap_pyfunction!(mls::user_levels, m)?)?;
    m.add_function(wrap_pyfunction!(mls::range_transitions, m)?)?;
    m.add_function(wrap_pyfunction!(labeling::labeling_tables, m)?)?;
    m.add_function(wrap_pyfunction!(constraint::constraint_table, m)?)?;
    m.add_function(wrap_pyfunction!(constraint::default_table, m)?)?;
    Ok(())
}

use crate::policy::{fspath, model_from, open_path};
use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::{HandleUnknown, Policy as Model};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// `PolicyDb.type_columns` flags: the symbol is an attribute; the type is permissive.
const TYPE_IS_ATTRIBUTE: u8 = 1;
const TYPE_IS_PERMISSIVE: u8 = 2;

/// libsepol's initial symbol table sizes (`symtab_sizes` in policydb.c), by table.
const COMMONS_SLOTS: usize = 2;
const CLASSES_SLOTS: usize = 32;
const ROLES_SLOTS: usize = 16;
const TYPES_SLOTS: usize = 512;
const USERS_SLOTS: usize = 128;
const BOOLS_SLOTS: usize = 16;

/// One loaded policy as `arbiter.setools` sees it. Immutable; the policy is shared.
#[pyclass(frozen, module = "arbiter._native")]
pub struct PolicyDb {
    model: Arc<Model>,
    path: Option<PathBuf>,
    /// The named types and the type aliases sorted by name, built on the first
    /// `type_named` (see there).
    type_names: OnceLock<Vec<TypeName>>,
}

/// An entry of [`PolicyDb::type_names`]: a type slot (`index < types.len()`) or a type
/// alias (`types.len() + its position` in `type_aliases`).
type TypeName = u32;

/// Positions of `names` in libsepol's symbol-table order (see
/// [`arbiter_query::info::hashtab_order`]); `entries` is how many names the table holds.
/// Sorts the positions themselves: no copy of the names, no map from name to position
/// (a transient 0.3 MB for the type table, left in the allocator's heap).
fn hashtab_positions(names: &[&str], entries: usize, initial: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..names.len()).collect();
    arbiter_query::info::hashtab_order_by(&mut order, |&i| names[i], entries, initial);
    order
}

fn bits(e: &arbiter_policy::Ebitmap) -> Vec<u32> {
    e.iter().collect()
}

impl PolicyDb {
    /// The policy model, for the analyses' native handles.
    pub(crate) fn model(&self) -> &Arc<Model> {
        &self.model
    }

    /// The name of a [`TypeName`] entry and the value of the type it names.
    fn type_name_entry(&self, entry: TypeName) -> (&str, u32) {
        let p = &*self.model;
        let e = entry as usize;
        match p.types.get(e) {
            Some(t) => (&t.name, entry + 1),
            None => {
                let a = &p.type_aliases[e - p.types.len()];
                (&a.name, a.target.index() as u32 + 1)
            }
        }
    }
}

#[pymethods]
impl PolicyDb {
    /// Opens `source`: a path (`str`/`os.PathLike`), the image as `bytes`, or an
    /// `arbiter.Policy`.
    #[new]
    fn new(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<PolicyDb> {
        if source.is_instance_of::<PyString>() || source.hasattr("__fspath__")? {
            let path = fspath(source)?;
            let model = open_path(py, path.clone())?;
            return Ok(PolicyDb {
                model: Arc::new(model),
                path: Some(path),
                type_names: OnceLock::new(),
            });
        }
        Ok(PolicyDb {
            model: model_from(source)?,
            path: None,
            type_names: OnceLock::new(),
        })
    }

    /// The file the policy was read from (None for an image in memory).
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.path.clone()
    }

    /// The policy format version.
    #[getter]
    fn version(&self) -> u32 {
        self.model.version
    }

    /// Whether the policy has MLS enabled.
    #[getter]
    fn mls(&self) -> bool {
        self.model.mls
    }

    /// `allow`, `deny` or `reject`.
    #[getter]
    fn handle_unknown(&self) -> &'static str {
        match self.model.handle_unknown {
            HandleUnknown::Allow => "allow",
            HandleUnknown::Deny => "deny",
            HandleUnknown::Reject => "reject",
        }
    }

    /// The image of the policy (for pickling a policy that was not read from a file).
    fn image<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let data = arbiter_policy::write::write_policy(&self.model, self.model.version)
            .map_err(|e| crate::errors::Error::new_err(e.to_string()))?;
        Ok(PyBytes::new(py, &data))
    }

    /// The type table in setools' order, as columns: `(values, flags, aliases)`, one
    /// `int` per type or attribute, `flags` one byte each (`TYPE_IS_ATTRIBUTE`,
    /// `TYPE_IS_PERMISSIVE`), and `aliases` only for the types that have some (position
    /// -> names in their table order). No names: a type object reads its name from
    /// [`type_name`](Self::type_name) when asked.
    ///
    /// Columns rather than a tuple per type: the Python objects built from them keep the
    /// ints, and nothing else is made per type; 5,000 row tuples and alias lists made and
    /// dropped between the kept objects left about 1 MB of Python's memory pools resident
    /// and unused.
    fn type_columns<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyBytes>, Bound<'py, PyDict>)> {
        let p = &*self.model;
        let named: Vec<usize> = (0..p.types.len())
            .filter(|&i| p.types[i].flavor != TypeFlavor::Unnamed)
            .collect();
        let names: Vec<&str> = named.iter().map(|&i| &*p.types[i].name).collect();
        let entries = names.len() + p.type_aliases.len();
        // Aliases grouped by target (stable: each group in the policy's alias order), a
        // list as long as the aliases rather than one per type slot.
        let mut aliases: Vec<(usize, &str)> = p
            .type_aliases
            .iter()
            .map(|a| (a.target.index(), &*a.name))
            .collect();
        aliases.sort_by_key(|&(target, _)| target);
        let order = hashtab_positions(&names, entries, TYPES_SLOTS);
        let mut flags = Vec::with_capacity(order.len());
        let alias_map = PyDict::new(py);
        for (pos, &k) in order.iter().enumerate() {
            let i = named[k];
            let mut f = 0u8;
            if p.types[i].flavor == TypeFlavor::Attribute {
                f |= TYPE_IS_ATTRIBUTE;
            }
            if p.permissive.contains(i as u32 + 1) {
                f |= TYPE_IS_PERMISSIVE;
            }
            flags.push(f);
            let from = aliases.partition_point(|&(target, _)| target < i);
            let to = aliases.partition_point(|&(target, _)| target <= i);
            if from < to {
                let mut al: Vec<&str> = aliases[from..to].iter().map(|&(_, n)| n).collect();
                arbiter_query::info::hashtab_order(&mut al, entries, TYPES_SLOTS);
                alias_map.set_item(pos, PyTuple::new(py, al)?)?;
            }
        }
        let values = PyList::new(py, order.iter().map(|&k| named[k] as u32 + 1))?;
        Ok((values, PyBytes::new(py, &flags), alias_map))
    }

    /// The name of the type or attribute of value `value`, made on each call: the type
    /// objects hold no name (4,000 `str`s kept for the whole run, about 0.27 MB of
    /// Python's memory on a distribution policy), and `str()` of one reads it here.
    fn type_name<'py>(&self, py: Python<'py>, value: u32) -> PyResult<Bound<'py, PyString>> {
        let t = (value as usize)
            .checked_sub(1)
            .and_then(|i| self.model.types.get(i))
            .filter(|t| t.flavor != TypeFlavor::Unnamed)
            .ok_or_else(|| {
                pyo3::exceptions::PyIndexError::new_err(format!("no type of value {value}"))
            })?;
        Ok(PyString::new(py, &t.name))
    }

    /// For every type and attribute slot, by value: a type's attributes, or an attribute's
    /// member types (both ascending by value), held natively (see [`TypeRelations`]).
    fn type_relations(&self) -> PyResult<TypeRelations> {
        TypeRelations::build(&self.model)
    }

    /// The type, attribute or type alias named `name`: `(value, whether the name is an
    /// alias)`, or None. A binary search over the names sorted once per policy (4 bytes a
    /// name) instead of a Python dict of every type by name (0.1 MB for the Debian
    /// policy, built by the first lookup of a script).
    fn type_named(&self, name: &str) -> Option<(u32, bool)> {
        let sorted = self.type_names.get_or_init(|| {
            let p = &*self.model;
            let mut v: Vec<TypeName> = (0..p.types.len() + p.type_aliases.len())
                .filter(|&e| {
                    p.types
                        .get(e)
                        .map_or(true, |t| t.flavor != TypeFlavor::Unnamed)
                })
                .filter_map(|e| TypeName::try_from(e).ok())
                .collect();
            v.sort_unstable_by(|&a, &b| self.type_name_entry(a).0.cmp(self.type_name_entry(b).0));
            v
        });
        let at = sorted
            .binary_search_by(|&e| self.type_name_entry(e).0.cmp(name))
            .ok()?;
        let entry = sorted[at];
        Some((
            self.type_name_entry(entry).1,
            entry as usize >= self.model.types.len(),
        ))
    }

    /// For every type slot, by value: the value of the type that bounds it (0 if none).
    fn type_bounds(&self) -> Vec<u32> {
        self.model
            .types
            .iter()
            .map(|t| t.bounds.map_or(0, |b| b.index() as u32 + 1))
            .collect()
    }

    /// `allow ROLE NEW_ROLE;` rules in the policy's order: `(role value, new role value)`.
    fn role_allows(&self) -> Vec<(u32, u32)> {
        self.model
            .role_allow
            .iter()
            .map(|r| (r.role.index() as u32 + 1, r.new_role.index() as u32 + 1))
            .collect()
    }

    /// `role_transition ROLE TYPE:CLASS NEW_ROLE;` rules in the policy's order: `(role,
    /// type, class, new role)` values.
    fn role_transitions(&self) -> Vec<(u32, u32, u32, u32)> {
        self.model
            .role_trans
            .iter()
            .map(|r| {
                (
                    r.role.index() as u32 + 1,
                    r.ty.index() as u32 + 1,
                    r.class.index() as u32 + 1,
                    r.new_role.index() as u32 + 1,
                )
            })
            .collect()
    }

    /// Roles in setools' order: `(value, name, type values)`.
    fn role_table(&self) -> Vec<(u32, String, Vec<u32>)> {
        let p = &*self.model;
        let names: Vec<&str> = p.roles.iter().map(|r| &*r.name).collect();
        hashtab_positions(&names, names.len(), ROLES_SLOTS)
            .into_iter()
            .map(|i| {
                let r = &p.roles[i];
                (
                    i as u32 + 1,
                    r.name.to_string(),
                    r.types.iter().map(|b| b + 1).collect(),
                )
            })
            .collect()
    }

    /// Users in setools' order: `(value, name, role values, default level, range)` (the
    /// MLS fields as text, None without MLS).
    #[allow(clippy::type_complexity)]
    fn user_table(&self) -> Vec<(u32, String, Vec<u32>, Option<String>, Option<String>)> {
        let p = &*self.model;
        let names: Vec<&str> = p.users.iter().map(|u| &*u.name).collect();
        hashtab_positions(&names, names.len(), USERS_SLOTS)
            .into_iter()
            .map(|i| {
                let u = &p.users[i];
                let (level, range) = if p.mls {
                    (
                        Some(arbiter_query::render::level(p, &u.default_level)),
                        Some(arbiter_query::render::range(p, &u.range)),
                    )
                } else {
                    (None, None)
                };
                (
                    i as u32 + 1,
                    u.name.to_string(),
                    u.roles.iter().map(|b| b + 1).collect(),
                    level,
                    range,
                )
            })
            .collect()
    }

    /// Booleans in setools' order: `(value, default state)`. The names are read when
    /// asked (`bool_name`): the Booleans' objects hold none.
    fn bool_table(&self) -> Vec<(u32, bool)> {
        let p = &*self.model;
        let names: Vec<&str> = p.bools.iter().map(|b| &*b.name).collect();
        hashtab_positions(&names, names.len(), BOOLS_SLOTS)
            .into_iter()
            .map(|i| (i as u32 + 1, p.bools[i].state))
            .collect()
    }

    /// The name of the Boolean of value `value`, made on each call: the Boolean objects
    /// hold no name (the Debian policy's 300 names kept for the whole run were about
    /// 25 kB of Python's memory, and a script that lists or matches Booleans by state
    /// reads none of them).
    fn bool_name<'py>(&self, py: Python<'py>, value: u32) -> PyResult<Bound<'py, PyString>> {
        let b = (value as usize)
            .checked_sub(1)
            .and_then(|i| self.model.bools.get(i))
            .ok_or_else(|| {
                pyo3::exceptions::PyIndexError::new_err(format!("no Boolean of value {value}"))
            })?;
        Ok(PyString::new(py, &b.name))
    }

    /// Classes in setools' order: `(value, name, common name, own permissions)`.
    fn class_table(&self) -> Vec<(u32, String, Option<String>, Vec<String>)> {
        let p = &*self.model;
        let names: Vec<&str> = p.classes.iter().map(|c| &*c.name).collect();
        hashtab_positions(&names, names.len(), CLASSES_SLOTS)
            .into_iter()
            .map(|i| {
                let c = &p.classes[i];
                (
                    i as u32 + 1,
                    c.name.to_string(),
                    c.common
                        .and_then(|id| p.commons.get(id.index()))
                        .map(|k| k.name.to_string()),
                    c.perms.iter().map(|q| q.name.to_string()).collect(),
                )
            })
            .collect()
    }

    /// Commons in setools' order: `(value, name, permissions)`.
    fn common_table(&self) -> Vec<(u32, String, Vec<String>)> {
        let p = &*self.model;
        let names: Vec<&str> = p.commons.iter().map(|c| &*c.name).collect();
        hashtab_positions(&names, names.len(), COMMONS_SLOTS)
            .into_iter()
            .map(|i| {
                let c = &p.commons[i];
                (
                    i as u32 + 1,
                    c.name.to_string(),
                    c.perms.iter().map(|q| q.name.to_string()).collect(),
                )
            })
            .collect()
    }

    /// Conditional `node`: `(infix text as setools prints it, boolean values, postfix
    /// expression as (op, boolean value) pairs with op "" for a boolean)`.
    #[allow(clippy::type_complexity)]
    fn conditional(&self, node: usize) -> Option<(String, Vec<u32>, Vec<(&'static str, u32)>)> {
        use arbiter_policy::cond::CondExpr;
        let p = &*self.model;
        let n = p.cond_nodes.get(node)?;
        let text = arbiter_query::render::cond_expr(p, &n.expr);
        let bools = arbiter_query::render::cond_bools(&n.expr)
            .into_iter()
            .map(|b| b + 1)
            .collect();
        let expr = n
            .expr
            .iter()
            .map(|e| match e {
                CondExpr::Bool(b) => ("", b.index() as u32 + 1),
                CondExpr::Not => ("!", 0),
                CondExpr::Or => ("||", 0),
                CondExpr::And => ("&&", 0),
                CondExpr::Xor => ("^", 0),
                CondExpr::Eq => ("==", 0),
                CondExpr::Neq => ("!=", 0),
            })
            .collect();
        Some((text, bools, expr))
    }

    /// The policy capabilities' bit numbers, ascending.
    fn polcaps(&self) -> Vec<u32> {
        bits(&self.model.policycaps)
    }

    /// Rule and symbol counts as setools' `*_count` properties need them.
    fn counts(&self) -> std::collections::HashMap<&'static str, usize> {
        let p = &*self.model;
        let mut m = std::collections::HashMap::new();
        m.insert("conditional", p.cond_nodes.len());
        m.insert("role_allow", p.role_allow.len());
        m.insert("role_transition", p.role_trans.len());
        m.insert("range_transition", p.range_trans.len());
        m.insert("category", p.categories.len());
        m.insert("level", p.sensitivities.len());
        m
    }

    /// `TERuleQuery.results()`: see [`te::query`].
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (ruletypes, source, source_regex, source_indirect, target, target_regex,
        target_indirect, tclass, tclass_regex, perms, perms_equal, perms_subset, xperms,
        xperms_equal, default, default_regex, boolean, boolean_regex, boolean_equal))]
    fn te_query(
        &self,
        py: Python<'_>,
        ruletypes: Vec<String>,
        source: Option<String>,
        source_regex: bool,
        source_indirect: bool,
        target: Option<String>,
        target_regex: bool,
        target_indirect: bool,
        tclass: Option<String>,
        tclass_regex: bool,
        perms: Option<String>,
        perms_equal: bool,
        perms_subset: bool,
        xperms: Option<String>,
        xperms_equal: bool,
        default: Option<String>,
        default_regex: bool,
        boolean: Option<String>,
        boolean_regex: bool,
        boolean_equal: bool,
    ) -> PyResult<te::TeResults> {
        let args = te::Criteria {
            ruletypes,
            source,
            source_regex,
            source_indirect,
            target,
            target_regex,
            target_indirect,
            tclass,
            tclass_regex,
            perms,
            perms_equal,
            perms_subset,
            xperms,
            xperms_equal,
            default,
            default_regex,
            boolean,
            boolean_regex,
            boolean_equal,
        };
        let model = &self.model;
        py.detach(|| te::query(model, &args))
            .map_err(pyo3::exceptions::PyValueError::new_err)
    }

    /// Pickles as the path it was read from, else as the image.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (Py<PyAny>,))> {
        let py = slf.py();
        let cls = py.get_type::<PolicyDb>().into_any();
        let me = slf.get();
        let arg = match &me.path {
            Some(p) => p.clone().into_pyobject(py)?.into_any().unbind(),
            None => me.image(py)?.into_any().unbind(),
        };
        Ok((cls, (arg,)))
    }
}
