//! Python's string primitives as sechecker's messages depend on them: `str.strip()` and
//! `\s` (Unicode whitespace, which includes the ASCII separators 0x1c–0x1f that Rust's
//! `char::is_whitespace` leaves out) and `repr()` of a string (how configparser quotes file
//! names and lines in its errors).

/// Python's `str.isspace()` for one character.
pub fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `str.strip()`.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

/// The character index of the first non-space character (0 when there is none), which is
/// how configparser measures a line's indentation.
pub fn py_trim_start_len(s: &str) -> usize {
    s.chars().position(|c| !is_py_space(c)).unwrap_or(0)
}

/// Whether `repr()` prints `c` as itself (Python's `str.isprintable()`), for the
/// characters policy files and paths can hold: controls, separators other than the
/// space, and the common invisible format characters are escaped.
fn printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    !(c.is_control()
        || is_py_space(c)
        || matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{feff}'))
}

/// Python's `repr(str)`.
pub fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if printable(c) => out.push(c),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push(quote);
    out
}
