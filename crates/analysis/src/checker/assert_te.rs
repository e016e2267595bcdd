//! `assert_te`: no allow rule matching the criteria may exist unless, on one of its sides,
//! every type it stands for is exempt or expected; each expected type must appear in some
//! matching rule.

use super::options::{Ctx, TypeSet};
use super::{CheckOutput, CheckerError, Getter};
use arbiter_policy::avtab::AvtabKind;
use arbiter_policy::{ClassId, TypeId};
use arbiter_query::search::{search_te, SearchArgs};
use arbiter_query::Index;

/// The options `assert_te` takes besides the global ones.
pub const OPTIONS: &[&str] = &[
    "source",
    "target",
    "tclass",
    "perms",
    "exempt_source",
    "exempt_target",
    "expect_source",
    "expect_target",
];

/// A validated `assert_te` check.
#[derive(Debug, Clone)]
pub struct AssertTe {
    /// Rule source criterion (a type or attribute; matches rules whose source shares a type).
    pub source: Option<TypeId>,
    /// Rule target criterion.
    pub target: Option<TypeId>,
    /// Classes (any of).
    pub tclass: Vec<ClassId>,
    /// Permissions (rules granting any of them).
    pub perms: Vec<String>,
    /// Source types a rule may have (forgiving lookup, expanded).
    pub exempt_source: TypeSet,
    /// Target types a rule may have.
    pub exempt_target: TypeSet,
    /// Source types that must appear (strict lookup, expanded).
    pub expect_source: TypeSet,
    /// Target types that must appear.
    pub expect_target: TypeSet,
}

impl AssertTe {
    /// Reads the options in setools' order.
    pub fn build(
        ctx: &Ctx<'_, '_>,
        get: &Getter<'_>,
        line: usize,
    ) -> Result<AssertTe, CheckerError> {
        let source = ctx.single_type("source", &get("source")?)?;
        let target = ctx.single_type("target", &get("target")?)?;
        let tclass = ctx.class_set("tclass", &get("tclass")?)?;
        let perms = ctx.perms("perms", &get("perms")?, &tclass)?;
        let exempt_source = ctx.type_set("exempt_source", &get("exempt_source")?, false)?;
        let exempt_target = ctx.type_set("exempt_target", &get("exempt_target")?, false)?;
        let expect_source = ctx.type_set("expect_source", &get("expect_source")?, true)?;
        let expect_target = ctx.type_set("expect_target", &get("expect_target")?, true)?;
        if source.is_none() && target.is_none() && tclass.is_empty() && perms.is_empty() {
            return Err(CheckerError::InvalidValue(Box::new(super::ValueError {
                path: ctx.path.to_string(),
                check: ctx.check.to_string(),
                option: String::new(),
                line,
                message: "At least one of source, target, tclass, or perms options must be set."
                    .to_string(),
                logged: None,
            })));
        }
        for (side, expect, exempt) in [
            ("source", &expect_source, &exempt_source),
            ("target", &expect_target, &exempt_target),
        ] {
            let both = expect.members().filter(|&t| exempt.contains(t));
            ctx.note_overlap(side, both.map(|t| ctx.index.type_name(t)).collect());
        }
        Ok(AssertTe {
            source,
            target,
            tclass,
            perms,
            exempt_source,
            exempt_target,
            expect_source,
            expect_target,
        })
    }

    /// Runs the check: matching rules sorted by text, then the expected types never seen
    /// (sorted by name; setools lists them in Python set order, which varies per run).
    pub fn run(&self, index: &Index<'_>) -> Result<CheckOutput, String> {
        let args = SearchArgs {
            te: vec![AvtabKind::Allowed],
            source: self.source.map(|t| index.type_name(t).to_string()),
            target: self.target.map(|t| index.type_name(t).to_string()),
            tclass: join(self.tclass.iter().map(|&c| index.class_name(c))),
            perms: join(self.perms.iter().map(String::as_str)),
            ..SearchArgs::default()
        };
        let hits = search_te(index, &args).map_err(|e| e.0)?;
        let mut out = CheckOutput {
            rule_queries: 1,
            ..CheckOutput::default()
        };
        let mut unseen_source = self.expect_source.clone();
        let mut unseen_target = self.expect_target.clone();
        for (text, hit) in hits {
            let srcs = index.expand(hit.source);
            let tgts = index.expand(hit.target);
            for &s in srcs {
                if let Some(b) = unseen_source.0.get_mut(s.index()) {
                    *b = false;
                }
            }
            for &t in tgts {
                if let Some(b) = unseen_target.0.get_mut(t.index()) {
                    *b = false;
                }
            }
            let loose = |set: &[TypeId], expect: &TypeSet, exempt: &TypeSet| {
                set.iter()
                    .any(|&x| !expect.contains(x) && !exempt.contains(x))
            };
            if loose(srcs, &self.expect_source, &self.exempt_source)
                && loose(tgts, &self.expect_target, &self.exempt_target)
            {
                out.fail(text);
            }
        }
        for (set, side) in [(&unseen_source, "source"), (&unseen_target, "target")] {
            let mut names: Vec<&str> = set.members().map(|t| index.type_name(t)).collect();
            names.sort_unstable();
            for n in names {
                out.fail(format!("Expected rule with {side} \"{n}\" not found."));
            }
        }
        Ok(out)
    }
}

/// Names joined with commas (the rule search's list syntax), `None` when there are none.
pub(crate) fn join<'a>(names: impl Iterator<Item = &'a str>) -> Option<String> {
    let v: Vec<&str> = names.collect();
    (!v.is_empty()).then(|| v.join(","))
}
