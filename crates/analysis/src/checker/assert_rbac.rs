//! `assert_rbac`: the role-allow counterpart of `assert_te` (roles stand for themselves).

use super::options::Ctx;
use super::{CheckOutput, CheckerError, Getter};
use arbiter_policy::RoleId;
use arbiter_query::Index;

/// The options `assert_rbac` takes besides the global ones.
pub const OPTIONS: &[&str] = &[
    "source",
    "target",
    "exempt_source",
    "exempt_target",
    "expect_source",
    "expect_target",
];

/// A validated `assert_rbac` check.
#[derive(Debug, Clone)]
pub struct AssertRbac {
    /// Rule source role.
    pub source: Option<RoleId>,
    /// Rule target role.
    pub target: Option<RoleId>,
    /// Source roles a rule may have (forgiving lookup).
    pub exempt_source: Vec<RoleId>,
    /// Target roles a rule may have.
    pub exempt_target: Vec<RoleId>,
    /// Source roles that must appear (strict lookup).
    pub expect_source: Vec<RoleId>,
    /// Target roles that must appear.
    pub expect_target: Vec<RoleId>,
}

impl AssertRbac {
    /// Reads the options in setools' order.
    pub fn build(
        ctx: &Ctx<'_, '_>,
        get: &Getter<'_>,
        line: usize,
    ) -> Result<AssertRbac, CheckerError> {
        let source = ctx.single_role("source", &get("source")?)?;
        let target = ctx.single_role("target", &get("target")?)?;
        let exempt_source = ctx.role_set("exempt_source", &get("exempt_source")?, false)?;
        let exempt_target = ctx.role_set("exempt_target", &get("exempt_target")?, false)?;
        let expect_source = ctx.role_set("expect_source", &get("expect_source")?, true)?;
        let expect_target = ctx.role_set("expect_target", &get("expect_target")?, true)?;
        if source.is_none() && target.is_none() {
            return Err(CheckerError::InvalidValue(Box::new(super::ValueError {
                path: ctx.path.to_string(),
                check: ctx.check.to_string(),
                option: String::new(),
                line,
                message: "At least one of source or target options must be set.".to_string(),
                logged: None,
            })));
        }
        for (side, expect, exempt) in [
            ("source", &expect_source, &exempt_source),
            ("target", &expect_target, &exempt_target),
        ] {
            let both = expect.iter().filter(|r| exempt.contains(r));
            ctx.note_overlap(side, both.map(|&r| ctx.index.role_name(r)).collect());
        }
        Ok(AssertRbac {
            source,
            target,
            exempt_source,
            exempt_target,
            expect_source,
            expect_target,
        })
    }

    /// Runs the check over the role allow rules, sorted by text.
    pub fn run(&self, index: &Index<'_>) -> CheckOutput {
        let mut rules: Vec<(String, RoleId, RoleId)> = index
            .policy()
            .role_allow
            .iter()
            .filter(|ra| self.source.is_none_or(|s| s == ra.role))
            .filter(|ra| self.target.is_none_or(|t| t == ra.new_role))
            .map(|ra| {
                let text = format!(
                    "allow {} {};",
                    index.role_name(ra.role),
                    index.role_name(ra.new_role)
                );
                (text, ra.role, ra.new_role)
            })
            .collect();
        rules.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out = CheckOutput {
            rule_queries: 1,
            ..CheckOutput::default()
        };
        let mut unseen_source = self.expect_source.clone();
        let mut unseen_target = self.expect_target.clone();
        for (text, s, t) in rules {
            unseen_source.retain(|&r| r != s);
            unseen_target.retain(|&r| r != t);
            let s_loose = !self.expect_source.contains(&s) && !self.exempt_source.contains(&s);
            let t_loose = !self.expect_target.contains(&t) && !self.exempt_target.contains(&t);
            if s_loose && t_loose {
                out.fail(text);
            }
        }
        for (set, side) in [(&unseen_source, "source"), (&unseen_target, "target")] {
            let mut names: Vec<&str> = set.iter().map(|&r| index.role_name(r)).collect();
            names.sort_unstable();
            for n in names {
                out.fail(format!("Expected rule with {side} \"{n}\" not found."));
            }
        }
        out
    }
}
