//! The text files semodule derives from the compiler's outputs: the `file_contexts` /
//! `homedir_template` split (`semanage_split_fc`) and the `seusers` / `users_extra` readers
//! genhomedircon needs.

/// Splits the compiler's file_contexts text as libsemanage 3.4's `semanage_split_fc`: read
/// with `fgets` into a `PATH_MAX` buffer (so a line longer than 4095 bytes is judged in
/// pieces), each piece cut at a NUL as `strlen` would; a piece starting `HOME_DIR` or
/// `HOME_ROOT`, or containing `ROLE` or `USER`, goes to the template.
pub fn split_fc(text: &[u8]) -> (Vec<u8>, Vec<u8>) {
    const PIECE: usize = 4095;
    let (mut fc, mut tmpl) = (Vec::with_capacity(text.len()), Vec::new());
    let mut rest = text;
    while !rest.is_empty() {
        let limit = rest.len().min(PIECE);
        let end = rest[..limit]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(limit, |p| p + 1);
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        let piece = match piece.iter().position(|&c| c == 0) {
            Some(nul) => &piece[..nul],
            None => piece,
        };
        let template = piece.starts_with(b"HOME_DIR")
            || piece.starts_with(b"HOME_ROOT")
            || contains(piece, b"ROLE")
            || contains(piece, b"USER");
        if template { &mut tmpl } else { &mut fc }.extend_from_slice(piece);
    }
    (fc, tmpl)
}

pub(crate) fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// One `seusers` line: a Linux login (or `%group`) mapped to an SELinux user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seuser {
    pub name: String,
    pub sename: String,
    pub range: Option<String>,
}

/// Parses `seusers` text (`name:sename[:range]`, `#` comments).
pub fn parse_seusers(text: &str) -> Result<Vec<Seuser>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let mut parts = l.splitn(3, ':');
        let name = parts.next().unwrap_or("");
        let Some(sename) = parts.next().filter(|s| !s.is_empty() && !name.is_empty()) else {
            return Err(format!(
                "seusers:{}: expected name:seuser[:range], found `{l}`",
                i + 1
            ));
        };
        out.push(Seuser {
            name: name.to_string(),
            sename: sename.to_string(),
            range: parts.next().map(str::to_string),
        });
    }
    Ok(out)
}

/// Parses `users_extra` text (`user NAME prefix PREFIX;`) into (name, prefix) pairs.
pub fn parse_users_extra(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = l.trim_end_matches(';').split_whitespace().collect();
        match words.as_slice() {
            ["user", name, "prefix", prefix] => out.push((name.to_string(), prefix.to_string())),
            _ => {
                return Err(format!(
                    "users_extra:{}: expected `user NAME prefix PREFIX;`, found `{l}`",
                    i + 1
                ))
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_lines_go_to_homedir_template_in_order() {
        let (fc, t) = split_fc(b"/a\tx\nHOME_DIR/b\ty\n/c/USER\tz\n/d\tw\n");
        assert_eq!(fc, b"/a\tx\n/d\tw\n");
        assert_eq!(t, b"HOME_DIR/b\ty\n/c/USER\tz\n");
    }

    #[test]
    fn users_extra_and_seusers_parse() {
        assert_eq!(
            parse_users_extra("user user_u prefix user;\n").unwrap(),
            vec![("user_u".to_string(), "user".to_string())]
        );
        let s = parse_seusers("root:unconfined_u:s0-s0:c0.c1023\n").unwrap();
        assert_eq!(s[0].range.as_deref(), Some("s0-s0:c0.c1023"));
    }
}
