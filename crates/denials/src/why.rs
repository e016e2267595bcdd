//! The audit2why report of one denial, byte for byte as `audit2why` (audit2allow `-w`,
//! policycoreutils 3.4) prints it.

use crate::booldesc::BoolDescriptions;
use crate::engine::Verdict;
use std::fmt::Write as _;

/// The fields of a context as `sepolgen` splits it: user, role, type, and the rest (the
/// level) re-joined, `None` when there is none.
///
/// `ctx.splitn(4, ':')`, found by bytes: audit2allow's generator splits two contexts per
/// denial, and a fleet's final step adds hundreds of thousands of them on its serial end,
/// where the `char` searcher took 245 M of the 821 M instructions of adding an
/// 80,000-line fleet's 206,437 distinct denials.
pub fn split_context(ctx: &str) -> (&str, &str, &str, Option<&str>) {
    // `rest` after the next ':' (a byte that is never inside a UTF-8 sequence, so every
    // cut is a char boundary), or `None` when there is none.
    fn field(rest: &str) -> (&str, Option<&str>) {
        match rest.bytes().position(|b| b == b':') {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        }
    }
    let (user, rest) = field(ctx);
    let Some(rest) = rest else {
        return (user, "", "", None);
    };
    let (role, rest) = field(rest);
    let Some(rest) = rest else {
        return (user, role, "", None);
    };
    let (ty, level) = field(rest);
    (user, role, ty, level)
}

/// The "Possible cause" pairs sepolgen adds to a constraint verdict: user, role (unless the
/// target's is `object_r`) and level, when they differ between the two contexts.
pub fn constraint_causes(scontext: &str, tcontext: &str) -> Vec<(String, String)> {
    let (su, sr, _, sl) = split_context(scontext);
    let (tu, tr, _, tl) = split_context(tcontext);
    let mut out = Vec::new();
    if su != tu {
        out.push((format!("user ({su})"), format!("user ({tu})")));
    }
    if sr != tr && tr != "object_r" {
        out.push((format!("role ({sr})"), format!("role ({tr})")));
    }
    if sl != tl {
        let show = |l: Option<&str>| l.unwrap_or("None").to_string();
        out.push((
            format!("level ({})", show(sl)),
            format!("level ({})", show(tl)),
        ));
    }
    out
}

/// Appends audit2why's report for one record: `raw` is the line as read, with its line
/// terminator (normalised to `\n`) when it had one.
pub fn write_report(
    out: &mut String,
    raw: &str,
    verdict: &Verdict,
    scontext: &str,
    tcontext: &str,
    descriptions: &BoolDescriptions,
) {
    let _ = write!(out, "{raw}\n\tWas caused by:\n");
    const MISMATCH: &str = "\t\tPossible mismatch between this policy and the one under which the audit message was generated.\n\n\t\tPossible mismatch between current in-memory boolean settings vs. permanent ones.\n\n";
    match verdict {
        Verdict::Allow => {
            out.push_str("\t\tUnknown - would be allowed by active policy\n");
            out.push_str(MISMATCH);
        }
        Verdict::DontAudit => {
            out.push_str("\t\tUnknown - should be dontaudit'd by active policy\n");
            out.push_str(MISMATCH);
        }
        Verdict::Boolean(fixes) => {
            if fixes.len() > 1 {
                out.push_str("\tOne of the following booleans was set incorrectly.\n");
            } else if let Some(f) = fixes.first() {
                let _ = writeln!(out, "\tThe boolean {} was set incorrectly. ", f.name);
            }
            for f in fixes {
                let _ = write!(
                    out,
                    "\tDescription:\n\t{}\n\n\tAllow access by executing:\n\t# setsebool -P {} {}\n",
                    descriptions.describe(&f.name),
                    f.name,
                    u8::from(f.value)
                );
            }
        }
        Verdict::TeRule => out.push_str(
            "\t\tMissing type enforcement (TE) allow rule.\n\n\t\tYou can use audit2allow to generate a loadable module to allow this access.\n\n",
        ),
        Verdict::Constraint(buf) => {
            let _ = write!(out, "\n#Constraint rule:\n\n#\t{buf}\n");
            for (a, b) in constraint_causes(scontext, tcontext) {
                let _ = write!(
                    out,
                    "#\tPossible cause is the source {a} and target {b} are different.\n\n"
                );
            }
        }
        Verdict::Rbac => out.push_str(
            "\t\tMissing role allow rule.\n\n\t\tAdd an allow rule for the role pair.\n\n",
        ),
        Verdict::Bounds => out.push_str(
            "\t\tTypebounds violation.\n\n\t\tAdd an allow rule for the parent type.\n\n",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::BoolFix;

    #[test]
    fn split_context_splits_as_splitn_four() {
        for ctx in [
            "",
            ":",
            ":::",
            "::::::",
            "u",
            "u:r",
            "u:r:",
            "u:r:t",
            "u:r:t:",
            "u:r:t:s0",
            "system_u:system_r:init_t:s0-s15:c0.c1023",
            "ü:ŕ:ť:š0:ç",
        ] {
            let mut it = ctx.splitn(4, ':');
            let want = (
                it.next().unwrap_or(""),
                it.next().unwrap_or(""),
                it.next().unwrap_or(""),
                it.next(),
            );
            assert_eq!(split_context(ctx), want, "{ctx:?}");
        }
    }

    #[test]
    fn constraint_causes_skip_object_r_and_equal_fields() {
        let c = constraint_causes("user_u:user_r:user_t:s0", "system_u:object_r:file_t:s0");
        assert_eq!(
            c,
            [("user (user_u)".to_string(), "user (system_u)".to_string())]
        );
        let c = constraint_causes("a:r1:t", "a:r2:t:s0");
        assert_eq!(c[0].0, "role (r1)");
        assert_eq!(c[1], ("level (None)".to_string(), "level (s0)".to_string()));
    }

    #[test]
    fn single_boolean_report_has_trailing_space_after_incorrectly() {
        let mut s = String::new();
        let v = Verdict::Boolean(vec![BoolFix {
            name: "a_b".into(),
            value: true,
        }]);
        write_report(
            &mut s,
            "L\n",
            &v,
            "u:r:t",
            "u:r:t",
            &BoolDescriptions::none(),
        );
        assert_eq!(
            s,
            "L\n\n\tWas caused by:\n\tThe boolean a_b was set incorrectly. \n\tDescription:\n\tAllow a to b\n\n\tAllow access by executing:\n\t# setsebool -P a_b 1\n"
        );
    }
}
