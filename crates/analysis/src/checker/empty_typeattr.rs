//! `empty_typeattr`: an attribute must have no member types (or, with `missing_ok`, may
//! be absent from the policy).

use super::options::{bool_value, Ctx};
use super::{CheckOutput, CheckerError, Getter};
use arbiter_policy::TypeId;
use arbiter_query::Index;

/// The options `empty_typeattr` takes besides the global ones.
pub const OPTIONS: &[&str] = &["attr", "missing_ok"];

/// A validated `empty_typeattr` check.
#[derive(Debug, Clone)]
pub struct EmptyTypeattr {
    /// The attribute, or its name when it is missing and `missing_ok` was set.
    pub attr: Result<TypeId, String>,
}

impl EmptyTypeattr {
    /// Reads `missing_ok`, then `attr` (setools' order).
    pub fn build(
        ctx: &Ctx<'_, '_>,
        get: &Getter<'_>,
        line: usize,
    ) -> Result<EmptyTypeattr, CheckerError> {
        let missing_ok = bool_value(&get("missing_ok")?);
        let invalid = |line: usize, message: String| {
            CheckerError::InvalidValue(Box::new(super::ValueError {
                path: ctx.path.to_string(),
                check: ctx.check.to_string(),
                option: "attr".to_string(),
                line,
                message,
                logged: None,
            }))
        };
        let Some((value, attr_line)) = get("attr")?.filter(|(v, _)| !v.is_empty()) else {
            return Err(invalid(
                line,
                format!("{}: \"attr\" setting is missing.", ctx.check),
            ));
        };
        // `lookup_typeattr` takes the value as it is (configparser already stripped it).
        match ctx
            .index
            .type_or_attr(&value)
            .filter(|&t| ctx.index.is_attribute(t))
        {
            Some(t) => Ok(EmptyTypeattr { attr: Ok(t) }),
            None if missing_ok => Ok(EmptyTypeattr { attr: Err(value) }),
            None => Err(invalid(
                attr_line,
                format!(
                    "{}: attr setting error: {value} is not a valid type attribute",
                    ctx.check
                ),
            )),
        }
    }

    /// Lists the member types, sorted by name, each a failure.
    pub fn run(&self, index: &Index<'_>) -> CheckOutput {
        let mut out = CheckOutput::default();
        match &self.attr {
            Err(name) => {
                out.text.push_str(&format!("    {name} does not exist.\n"));
            }
            Ok(a) => {
                out.text
                    .push_str(&format!("Member types of {}:\n", index.type_name(*a)));
                let mut names: Vec<&str> = index
                    .expand(*a)
                    .iter()
                    .map(|&t| index.type_name(t))
                    .collect();
                names.sort_unstable();
                for n in names {
                    out.fail(n.to_string());
                }
            }
        }
        out
    }
}
