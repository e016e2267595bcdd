//! Verification before the rules are entered (libsepol's `cil_verify`): users have
//! levels and ranges, ranges are well-formed, contexts agree with user roles, role types
//! and user ranges.

use super::*;

/// The lines secilc adds when verification fails.
const VERIFY_FAILED: &str = "Failed to verify cil database\nFailed to verify cil database\nPost process failed\nFailed to compile cildb: -1";

/// Every named context is verified, used or not; the first failure in statement order
/// is reported.
pub(super) fn users_and_contexts(l: &mut L<'_>, p: &Parts) -> Result<(), Fail> {
    let ast = l.ast;
    for &s in &p.named_contexts {
        l.cur_stmt.set(s);
        l.context(l.args(s)[2])?;
    }
    for (ui, &d) in l.users.iter().enumerate() {
        let s = ast.decls[d as usize].stmt;
        if p.user_level[ui].is_none() {
            return Err(err(format!(
                "User {} does not have a default level\nInvalid user at {}\n{VERIFY_FAILED}",
                l.name(d),
                l.here(s)
            )));
        }
        match &p.user_range[ui] {
            None => {
                return Err(err(format!(
                    "User {} does not have a level range\nInvalid user at {}\n{VERIFY_FAILED}",
                    l.name(d),
                    l.here(s)
                )))
            }
            Some(rg) => verify_range(l, rg, &p.sens_cats).map_err(|m| {
                err(format!(
                    "{m}\nInvalid user at {}\n{VERIFY_FAILED}",
                    l.here(s)
                ))
            })?,
        }
    }
    let mut ctx_log = l.ctx_log.take();
    ctx_log.sort_by_key(|&(s, _)| s);
    for (s, c) in ctx_log {
        let kw = ast.stmts[s as usize].kw;
        let what = if kw == Kw::Context {
            "named context"
        } else {
            kw.text()
        };
        let fail = |m: String| {
            err(format!(
                "{m}\nInvalid context\nInvalid {what} at {}\n{VERIFY_FAILED}",
                l.here(s)
            ))
        };
        let rv = l.role_val[c.role as usize];
        if !p.user_roles[c.user as usize].contains(&rv) {
            return Err(fail(format!(
                "Role {} is invalid for user {}",
                l.name(l.roles[c.role as usize]),
                l.name(l.users[c.user as usize])
            )));
        }
        if !p.role_types[c.role as usize].get(c.ty as usize) {
            return Err(fail(format!(
                "Type {} is invalid for role {}",
                l.name(l.types[c.ty as usize]),
                l.name(l.roles[c.role as usize])
            )));
        }
        verify_range(l, &c.range, &p.sens_cats).map_err(fail)?;
        if let Some((ul, uh)) = &p.user_range[c.user as usize] {
            if c.range.0.sens < ul.sens || c.range.1.sens > uh.sens {
                return Err(fail(format!(
                    "Range is invalid for user {}",
                    l.name(l.users[c.user as usize])
                )));
            }
        }
    }
    Ok(())
}
