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
    // One table lookup a byte (every declaration's name is checked: 26,000 names on
    // Debian's store, where four comparisons a byte cost 7 M instructions).
    let allowed = NAME_BYTE | if qualified { QUALIFIED_DOT } else { 0 };
    b.iter().all(|&c| NAME_BYTES[c as usize] & allowed != 0)
}

/// What `cil_verify_name` logs for a name [`verify_name`] refuses, in libsepol 3.4's
/// words and order: the reason (the length, the first character, the first byte not
/// allowed), then `Invalid name`. libsepol's length message has no newline, so it shares
/// its line with `Invalid name`.
pub(crate) fn invalid_name_lines(int: &Interner, sym: Sym, qualified: bool) -> Vec<String> {
    let b = int.bytes(sym);
    let name = String::from_utf8_lossy(b);
    if b.len() >= 2048 {
        return vec!["Name length greater than max name length of 2048Invalid name".into()];
    }
    let allowed = NAME_BYTE | if qualified { QUALIFIED_DOT } else { 0 };
    let reason = if b.first().is_none_or(|c| !c.is_ascii_alphabetic()) {
        format!("First character in {name} is not a letter")
    } else {
        match b.iter().find(|&&c| NAME_BYTES[c as usize] & allowed == 0) {
            Some(&c) => format!(
                "Invalid character \"{}\" in {name}",
                String::from_utf8_lossy(&[c])
            ),
            None => return vec!["Invalid name".into()],
        }
    };
    vec![reason, "Invalid name".into()]
}

/// [`NAME_BYTES`] bit of a byte allowed anywhere in a name (letters, digits, `_`, `-`).
const NAME_BYTE: u8 = 1;
/// [`NAME_BYTES`] bit of `.`, allowed with `-Q` (qualified names).
const QUALIFIED_DOT: u8 = 2;

/// The bytes `cil_verify_name` accepts after a name's first letter.
const NAME_BYTES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
            t[c] = NAME_BYTE;
        }
        c += 1;
    }
    t[b'.' as usize] = QUALIFIED_DOT;
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte table accepts exactly what `cil_verify_name`'s test accepts: letters,
    /// digits, `_` and `-` after a leading letter, and `.` only for qualified names.
    #[test]
    fn name_byte_table_is_cil_verify_name() {
        let mut int = Interner::default();
        for c in 0..=255u8 {
            let sym = int.intern(&[b'a', c, b'z']);
            for qualified in [false, true] {
                let reference =
                    c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || (qualified && c == b'.');
                assert_eq!(
                    verify_name(&int, sym, qualified),
                    reference,
                    "byte {c:#04x}, qualified {qualified}"
                );
            }
        }
        let lead = int.intern(b"_a");
        assert!(
            !verify_name(&int, lead, true),
            "a name starts with a letter"
        );
    }
}
