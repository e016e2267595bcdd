//! JSON output, with the key names of setools' own JSON encoder (its MCP server):
//! `statement`, `ruletype`, `source`, `target`, `tclass`, `perms`, `xperm_type`, `default`,
//! `filename`, `conditional`, `conditional_block`, plus `enabled` under the booleans'
//! default values (or the overrides given).

use crate::error::QueryError;
use crate::expand;
use crate::index::Index;
use crate::render;
use crate::search::{self, SearchArgs, TeBody};
use arbiter_policy::TypeId;
use serde_json::{json, Map, Value};

/// The results of a `sesearch` query as `{"count", "result": [rule...]}`.
pub fn search(index: &Index<'_>, args: &SearchArgs) -> Result<Value, QueryError> {
    let policy = index.policy();
    let mut values: Vec<bool> = policy.bools.iter().map(|b| b.state).collect();
    for (name, v) in &args.bool_values {
        let i = index.boolean(name).ok_or_else(|| {
            QueryError::from(crate::error::QueryErrorKind::NotValid {
                kind: crate::error::SymbolKind::Boolean,
                name: name.to_string(),
            })
        })?;
        values[i as usize] = *v;
    }
    let mut result = Vec::new();
    if !args.te.is_empty() {
        let mut hits = Vec::new();
        for (statement, h) in search::search_te(index, args)? {
            if args.expand {
                for e in expand::te(index, &h) {
                    hits.push((search::te_statement(index, &e)?, e));
                }
            } else {
                hits.push((statement, h));
            }
        }
        for (statement, h) in hits {
            let mut m = Map::new();
            m.insert("statement".into(), json!(statement));
            m.insert("ruletype".into(), json!(h.kind.name()));
            m.insert("source".into(), json!(index.type_name(h.source)));
            m.insert("target".into(), json!(index.type_name(h.target)));
            m.insert("tclass".into(), json!(index.class_name(h.class)));
            match &h.body {
                TeBody::Perms(p) => {
                    m.insert("perms".into(), json!(p));
                }
                TeBody::Xperms(kind, v) => {
                    m.insert("perms".into(), json!(v));
                    m.insert("xperm_type".into(), json!(kind));
                }
                TeBody::Default(t) => {
                    m.insert("default".into(), json!(index.type_name(*t)));
                }
                TeBody::Filename(t, name) => {
                    m.insert("default".into(), json!(index.type_name(*t)));
                    m.insert("filename".into(), json!(name));
                }
            }
            let enabled = match h.cond {
                Some((n, block)) => {
                    let expr = policy.cond_nodes.get(n).map_or(&[][..], |c| &c.expr);
                    m.insert("conditional".into(), json!(render::cond_expr(policy, expr)));
                    m.insert("conditional_block".into(), json!(block));
                    render::cond_eval(expr, |b| values.get(b).copied().unwrap_or(false)) == block
                }
                None => {
                    m.insert("conditional".into(), Value::Null);
                    m.insert("conditional_block".into(), Value::Null);
                    true
                }
            };
            m.insert("enabled".into(), json!(enabled));
            result.push(Value::Object(m));
        }
    }
    if args.role_allow || args.role_trans {
        let mut hits = Vec::new();
        for (statement, h) in search::search_rbac(index, args)? {
            if args.expand {
                for e in expand::rbac(index, &h) {
                    hits.push((search::rbac_statement(index, &e), e));
                }
            } else {
                hits.push((statement, h));
            }
        }
        for (statement, h) in hits {
            let v = match h {
                search::RbacHit::Allow(a, b) => json!({
                    "statement": statement, "ruletype": "allow",
                    "source": index.role_name(a), "target": index.role_name(b),
                }),
                search::RbacHit::Trans(r, t, c, n) => json!({
                    "statement": statement, "ruletype": "role_transition",
                    "source": index.role_name(r), "target": index.type_name(t),
                    "tclass": index.class_name(c), "default": index.role_name(n),
                }),
            };
            result.push(v);
        }
    }
    if args.range_trans {
        for (statement, h) in search::search_mls(index, args)? {
            let Some(rt) = policy.range_trans.get(h.0) else {
                continue;
            };
            let pairs: Vec<(TypeId, TypeId)> = if args.expand {
                expand::type_pairs(index, rt.source, rt.target).collect()
            } else {
                vec![(rt.source, rt.target)]
            };
            for (s, t) in pairs {
                let statement = if args.expand {
                    search::mls_statement(index, &rt.range, s, t, rt.class)
                } else {
                    statement.clone()
                };
                result.push(json!({
                    "statement": statement, "ruletype": "range_transition",
                    "source": index.type_name(s), "target": index.type_name(t),
                    "tclass": index.class_name(rt.class),
                    "default": render::range(policy, &rt.range),
                }));
            }
        }
    }
    Ok(json!({ "count": result.len(), "result": result }))
}
