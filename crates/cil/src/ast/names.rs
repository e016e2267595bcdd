//! Name checks of declarations (`cil_verify_name`, reserved words) and locations
//! for messages.

use super::*;

/// Where a node is, for messages: `file:line`.
pub fn loc(tree: &Tree, names: &[String], file: u32, node: u32) -> String {
    format!("{}:{}", names[file as usize], tree.node(node).line())
}

/// `__cil_is_reserved_name`: words expressions use may not name what expressions name.
pub(super) fn reserved_name(kind: DeclKind, name: Sym) -> bool {
    use DeclKind as D;
    let is = |k: Kw| name == k.sym();
    let special = match kind {
        D::Bool | D::Tunable => is(Kw::Eq) || is(Kw::Neq),
        D::User | D::UserAttribute | D::Role | D::RoleAttribute => is(Kw::All),
        D::Type | D::TypeAttribute | D::TypeAlias => is(Kw::All) || is(Kw::SelfKw),
        D::Cat | D::CatAlias | D::CatSet | D::PermissionX => is(Kw::All) || is(Kw::Range),
        _ => return false,
    };
    special || is(Kw::And) || is(Kw::Or) || is(Kw::Not) || is(Kw::Xor)
}

/// Checks a declared name as `cil_verify_name` does.
pub(crate) fn verify_name(int: &Interner, sym: Sym, qualified: bool) -> bool {
    let b = int.bytes(sym);
    if b.is_empty() || b.len() >= 2048 || !b[0].is_ascii_alphabetic() {
        return false;
    }
    b.iter()
        .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || (qualified && c == b'.'))
}
