//! The type rule sections: type_transition (with filename transitions), type_change,
//! type_member.
//!
//! sediff expands each rule to (source type, target type, class, conditional expression
//! and branch, file name) keys; a key on one side only is an added or removed rule, a key
//! on both with different new types a modified one. Where several rules expand to one key
//! the first setools lists is the one compared and printed (see [`super::expand`]).

use super::expand::{each_key, finish, Expanded, TeSide};
use super::Section;
use crate::index::Index;
use arbiter_policy::avtab::AvtabKind;

/// The section keys this module answers.
pub(super) const KEYS: &[&str] = &["type_trans", "type_change", "type_member"];

/// The section for `key`, or `None` when `key` is not one of [`KEYS`].
pub(super) fn section(key: &str, left: &Index<'_>, right: &Index<'_>) -> Option<Section> {
    Some(match key {
        "type_trans" => type_section(left, right, AvtabKind::Transition, "Type_transition Rules"),
        "type_change" => type_section(left, right, AvtabKind::Change, "Type_change Rules"),
        "type_member" => type_section(left, right, AvtabKind::Member, "Type_member Rules"),
        _ => return None,
    })
}

/// setools' `TERule.statement()` / `FileNameTERule.statement()` (the file name unquoted).
fn statement(kw: &str, src: &str, rule: &Expanded<'_>, default: &str) -> String {
    let mut s = format!("{kw} {src} {}:{} {default}", rule.target, rule.class);
    if let Some(name) = rule.name {
        s.push(' ');
        s.push_str(name);
    }
    s.push(';');
    if let Some((cond, branch)) = rule.cond {
        s.push_str(&format!(
            " [ {cond} ]:{}",
            if branch { "True" } else { "False" }
        ));
    }
    s
}

/// sediff's line for a modified rule: `+new -old`, then the file name, `;`, and the
/// expression without its branch.
fn modified_line(kw: &str, src: &str, rule: &Expanded<'_>, new: &str, old: &str) -> String {
    let mut s = format!("{kw} {src} {}:{} +{new} -{old}", rule.target, rule.class);
    if let Some(name) = rule.name {
        s.push(' ');
        s.push_str(name);
    }
    s.push(';');
    if let Some((cond, _)) = rule.cond {
        s.push_str(&format!(" [ {cond} ]"));
    }
    s
}

fn type_section(
    left: &Index<'_>,
    right: &Index<'_>,
    kind: AvtabKind,
    title: &'static str,
) -> Section {
    let (l, r) = (TeSide::new(left, kind), TeSide::new(right, kind));
    let kw = kind.name();
    let mut s = Section {
        title,
        noun: title,
        has_modified: true,
        ..Section::default()
    };
    let mut modified: Vec<(String, String)> = Vec::new();
    each_key(&l, &r, |src, a, b| match (a, b) {
        (Some(a), None) => {
            let old = l.default_type(a[0].stored);
            s.removed.push(statement(kw, src, &a[0], old));
        }
        (None, Some(b)) => {
            let new = r.default_type(b[0].stored);
            s.added.push(statement(kw, src, &b[0], new));
        }
        (Some(a), Some(b)) => {
            let (old, new) = (l.default_type(a[0].stored), r.default_type(b[0].stored));
            if old != new {
                modified.push((
                    statement(kw, src, &a[0], old),
                    modified_line(kw, src, &a[0], new, old),
                ));
            }
        }
        (None, None) => {}
    });
    finish(s, modified)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::expand::Stored;

    fn rule<'a>(cond: Option<(&'a str, bool)>, name: Option<&'a str>) -> Expanded<'a> {
        Expanded {
            target: "tmp_t",
            class: "file",
            cond,
            name,
            stored: Stored::Avtab(0),
            rank: 0,
        }
    }

    #[test]
    fn statement_puts_the_file_name_unquoted_before_the_semicolon() {
        let r = rule(None, Some("app.log"));
        assert_eq!(
            statement("type_transition", "staff_t", &r, "log_t"),
            "type_transition staff_t tmp_t:file log_t app.log;"
        );
    }

    #[test]
    fn statement_of_a_conditional_rule_names_its_branch() {
        let r = rule(Some(("! b && a", false)), None);
        assert_eq!(
            statement("type_change", "staff_t", &r, "log_t"),
            "type_change staff_t tmp_t:file log_t; [ ! b && a ]:False"
        );
    }

    #[test]
    fn modified_line_drops_the_branch_and_keeps_the_file_name() {
        let r = rule(Some(("a", true)), None);
        assert_eq!(
            modified_line("type_member", "s_t", &r, "new_t", "old_t"),
            "type_member s_t tmp_t:file +new_t -old_t; [ a ]"
        );
        let r = rule(None, Some("x"));
        assert_eq!(
            modified_line("type_transition", "s_t", &r, "new_t", "old_t"),
            "type_transition s_t tmp_t:file +new_t -old_t x;"
        );
    }
}
