//! MLS tables for `arbiter.setools`: sensitivities, categories and their level
//! declarations in libsepol's symbol-table order (setools' iteration order), users' levels
//! and ranges, and the range_transition rules in the order of libsepol's `range_tr` hash
//! table. Levels cross as `(sensitivity value, [category values])`, ranges as
//! `(low, high)`; the Python half (`_mls.py`) builds setools' objects over them.

use super::{hashtab_positions, PolicyDb};
use arbiter_policy::mls::{MlsLevel, MlsRange};
use arbiter_policy::Policy as Model;
use pyo3::prelude::*;
use std::collections::HashSet;

/// libsepol's initial sizes of the level and category symbol tables (`symtab_sizes`).
const LEVELS_SLOTS: usize = 16;
const CATS_SLOTS: usize = 16;
/// libsepol's initial size of the `range_tr` hash table (`policydb_init`).
const RANGE_TR_SLOTS: usize = 256;

/// A level as it crosses into Python: sensitivity value and category values (1-based).
pub(super) type LevelRow = (u32, Vec<u32>);
/// A range as it crosses into Python.
pub(super) type RangeRow = (LevelRow, LevelRow);

pub(super) fn level_row(l: &MlsLevel) -> LevelRow {
    (l.sens, l.cats.iter().map(|b| b + 1).collect())
}

pub(super) fn range_row(r: &MlsRange) -> RangeRow {
    (level_row(&r.low), level_row(&r.high))
}

/// The aliases of each symbol (by value), in the table's order.
fn aliases_by_value(
    aliases: &[arbiter_policy::symbols::MlsAlias],
    count: usize,
    entries: usize,
    slots: usize,
) -> Vec<Vec<String>> {
    let mut by: Vec<Vec<&str>> = vec![Vec::new(); count + 1];
    for a in aliases {
        if let Some(v) = by.get_mut(a.value as usize) {
            v.push(&a.name);
        }
    }
    by.into_iter()
        .map(|mut v| {
            arbiter_query::info::hashtab_order(&mut v, entries, slots);
            v.into_iter().map(str::to_string).collect()
        })
        .collect()
}

/// Whether an alias of `primary` comes after it in the symbol table's order. setools maps
/// values to datums by walking the whole table, aliases included, so the last of them
/// wins: the symbols it then makes from bitmaps (levels' categories and sensitivities)
/// are the alias's datum, a different object from the one the iterators and lookups give.
fn alias_wins(primary: &str, aliases: &[String], entries: usize, slots: usize) -> bool {
    let mut all: Vec<&str> = aliases.iter().map(String::as_str).collect();
    all.push(primary);
    arbiter_query::info::hashtab_order(&mut all, entries, slots);
    all.last().is_some_and(|last| *last != primary)
}

/// Sensitivities in setools' order: `(value, name, aliases, level declaration's category
/// values, whether an alias wins the value's datum (see [`alias_wins`]))`.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn sensitivity_table(db: &PolicyDb) -> Vec<(u32, String, Vec<String>, Vec<u32>, bool)> {
    let p: &Model = &db.model;
    // Slots without a name (values an alias took in some compilers) are not symbols.
    let named: Vec<usize> = (0..p.sensitivities.len())
        .filter(|&i| !p.sensitivities[i].name.is_empty())
        .collect();
    let names: Vec<&str> = named.iter().map(|&i| &*p.sensitivities[i].name).collect();
    let entries = names.len() + p.sensitivity_aliases.len();
    let aliases = aliases_by_value(
        &p.sensitivity_aliases,
        p.sensitivities.len(),
        entries,
        LEVELS_SLOTS,
    );
    hashtab_positions(&names, entries, LEVELS_SLOTS)
        .into_iter()
        .map(|k| {
            let s = &p.sensitivities[named[k]];
            let al = aliases
                .get(s.level.sens as usize)
                .cloned()
                .unwrap_or_default();
            let wins = alias_wins(&s.name, &al, entries, LEVELS_SLOTS);
            (
                s.level.sens,
                s.name.to_string(),
                al,
                level_row(&s.level).1,
                wins,
            )
        })
        .collect()
}

/// The named categories' slots in setools' order, with each slot's aliases (by value) and
/// the symbol table's entry count.
fn category_order(p: &Model) -> (Vec<usize>, Vec<Vec<String>>, usize) {
    let named: Vec<usize> = (0..p.categories.len())
        .filter(|&i| !p.categories[i].name.is_empty())
        .collect();
    let names: Vec<&str> = named.iter().map(|&i| &*p.categories[i].name).collect();
    let entries = names.len() + p.category_aliases.len();
    let aliases = aliases_by_value(&p.category_aliases, p.categories.len(), entries, CATS_SLOTS);
    let order = hashtab_positions(&names, entries, CATS_SLOTS)
        .into_iter()
        .map(|k| named[k])
        .collect();
    (order, aliases, entries)
}

/// Categories in setools' order: `(value, name, aliases, whether an alias wins the value's
/// datum (see [`alias_wins`]))`; with `values`, only the rows of those values. The whole
/// table is 1,024 rows on a distribution policy, tuples of four that CPython keeps on its
/// free list once dropped (about 70 kB): the query that makes only the categories a
/// regex names asks for their rows alone.
#[pyfunction]
#[pyo3(signature = (db, values=None))]
pub fn category_table(
    db: &PolicyDb,
    values: Option<HashSet<u32>>,
) -> Vec<(u32, String, Vec<String>, bool)> {
    let p: &Model = &db.model;
    let (order, aliases, entries) = category_order(p);
    order
        .into_iter()
        .filter(|&i| {
            values
                .as_ref()
                .map_or(true, |v| v.contains(&(i as u32 + 1)))
        })
        .map(|i| {
            let name = &p.categories[i].name;
            let wins = alias_wins(name, &aliases[i + 1], entries, CATS_SLOTS);
            (i as u32 + 1, name.to_string(), aliases[i + 1].clone(), wins)
        })
        .collect()
}

/// The categories' values and names in setools' order, two lists (the native name
/// index's columns: no row per category, see [`category_table`]).
#[pyfunction]
pub fn category_names(db: &PolicyDb) -> (Vec<u32>, Vec<String>) {
    let p: &Model = &db.model;
    let (order, _, _) = category_order(p);
    let values = order.iter().map(|&i| i as u32 + 1).collect();
    let names = order
        .iter()
        .map(|&i| p.categories[i].name.to_string())
        .collect();
    (values, names)
}

/// The values of the categories whose datum an alias wins (see [`alias_wins`]), in
/// setools' order.
#[pyfunction]
pub fn category_alias_wins(db: &PolicyDb) -> Vec<u32> {
    let p: &Model = &db.model;
    let (order, aliases, entries) = category_order(p);
    order
        .into_iter()
        .filter(|&i| alias_wins(&p.categories[i].name, &aliases[i + 1], entries, CATS_SLOTS))
        .map(|i| i as u32 + 1)
        .collect()
}

/// Every user's default level and range, by user value (empty without MLS).
#[pyfunction]
pub fn user_levels(db: &PolicyDb) -> Vec<(u32, LevelRow, RangeRow)> {
    let p: &Model = &db.model;
    if !p.mls {
        return Vec::new();
    }
    p.users
        .iter()
        .enumerate()
        .map(|(i, u)| {
            (
                i as u32 + 1,
                level_row(&u.default_level),
                range_row(&u.range),
            )
        })
        .collect()
}

/// range_transition rules in setools' order: `(source, target, class, range)` values.
///
/// setools walks libsepol's `range_tr` hash table: bucket `(source + (target << 3) +
/// (class << 5)) & (size - 1)` (`rangetr_hash`) of a table that starts at 256 slots and
/// doubles while it holds as many rules as slots, keys ascending within a bucket
/// (`rangetr_cmp`).
#[pyfunction]
pub fn range_transitions(db: &PolicyDb) -> Vec<(u32, u32, u32, RangeRow)> {
    let p: &Model = &db.model;
    let mut size = RANGE_TR_SLOTS;
    while size <= p.range_trans.len().saturating_sub(1) && size < (1 << 30) {
        size *= 2;
    }
    let mut rows: Vec<(u32, u32, u32, RangeRow)> = p
        .range_trans
        .iter()
        .map(|r| {
            (
                r.source.index() as u32 + 1,
                r.target.index() as u32 + 1,
                r.class.index() as u32 + 1,
                range_row(&r.range),
            )
        })
        .collect();
    let bucket = |s: u32, t: u32, c: u32| {
        (s.wrapping_add(t.wrapping_shl(3))
            .wrapping_add(c.wrapping_shl(5))) as usize
            & (size - 1)
    };
    rows.sort_by_key(|&(s, t, c, _)| (bucket(s, t, c), s, t, c));
    rows
}
