//! Python's `textwrap.wrap` (3.11) with the defaults sepolgen uses for `audit2allow -e`:
//! tabs expanded to 8 columns, whitespace turned into spaces, words split at hyphens the
//! way `TextWrapper.wordsep_re` splits them, over-long words broken (after a hyphen when
//! one fits), whitespace dropped at line ends.
//!
//! Lengths count Unicode scalar values, as Python counts code points. `\w` and `\d` follow
//! Python's definitions exactly for ASCII; beyond ASCII they use Rust's alphanumeric and
//! numeric classes, which differ from Python's in rare code points.

/// The characters `textwrap` treats as whitespace when splitting and replacing.
fn is_wrap_space(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\x0b' | '\x0c' | '\r' | ' ')
}

/// Python's `str.isspace` (used by `str.strip`).
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Python's `\w`.
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Python's `\d`.
fn is_digit(c: char) -> bool {
    c.is_ascii_digit() || (!c.is_ascii() && c.is_numeric())
}

/// textwrap's `letter`: `[^\d\W]`.
fn is_letter(c: char) -> bool {
    is_word(c) && !is_digit(c)
}

/// textwrap's `word_punct`: `[\w!"'&.,?]`.
fn is_word_punct(c: char) -> bool {
    is_word(c) || matches!(c, '!' | '"' | '\'' | '&' | '.' | ',' | '?')
}

/// `expandtabs(8)` then every textwrap whitespace character to a space.
fn munge(text: &str) -> Vec<char> {
    let mut out = Vec::with_capacity(text.len());
    let mut col = 0usize;
    for c in text.chars() {
        match c {
            '\t' => {
                let n = 8 - col % 8;
                out.extend(std::iter::repeat_n(' ', n));
                col += n;
            }
            '\n' | '\r' => {
                out.push(' ');
                col = 0;
            }
            c if is_wrap_space(c) => {
                out.push(' ');
                col += 1;
            }
            c => {
                out.push(c);
                col += 1;
            }
        }
    }
    out
}

/// The length of `-` characters from `i`.
fn hyphens_at(t: &[char], i: usize) -> usize {
    t[i.min(t.len())..]
        .iter()
        .take_while(|&&c| c == '-')
        .count()
}

/// `(?=-{2,}\w)` at `i`.
fn em_dash_ahead(t: &[char], i: usize) -> bool {
    let n = hyphens_at(t, i);
    n >= 2 && t.get(i + n).is_some_and(|&c| is_word(c))
}

/// Where the match of `wordsep_re` starting at `i` ends (every position matches one of
/// its alternatives).
fn chunk_end(t: &[char], i: usize) -> usize {
    let at = |k: isize| -> Option<char> {
        if k < 0 {
            None
        } else {
            t.get(k as usize).copied()
        }
    };
    let is = |k: isize, f: fn(char) -> bool| at(k).is_some_and(f);
    // Whitespace run.
    if is_wrap_space(t[i]) {
        return i + t[i..].iter().take_while(|&&c| is_wrap_space(c)).count();
    }
    // Em-dash between words: (?<=word_punct) -{2,} (?=\w).
    if i > 0 && is_word_punct(t[i - 1]) && em_dash_ahead(t, i) {
        return i + hyphens_at(t, i);
    }
    // A word, shortest first: nws+? then a hyphen break, the word's end, or an em-dash.
    let mut j = i + 1;
    loop {
        let ji = j as isize;
        // -(?: (?<=lt{2}-) | (?<=lt-lt-) ) (?= lt -? lt)
        if at(ji) == Some('-') {
            let behind = (is(ji - 2, is_letter) && is(ji - 1, is_letter))
                || (is(ji - 3, is_letter) && at(ji - 2) == Some('-') && is(ji - 1, is_letter));
            let ahead = is(ji + 1, is_letter)
                && (is(ji + 2, is_letter) || (at(ji + 2) == Some('-') && is(ji + 3, is_letter)));
            if behind && ahead {
                return j + 1;
            }
        }
        // (?=ws|\Z)
        if j == t.len() || is_wrap_space(t[j]) {
            return j;
        }
        // (?<=word_punct) (?=-{2,}\w)
        if is_word_punct(t[j - 1]) && em_dash_ahead(t, j) {
            return j;
        }
        j += 1;
    }
}

/// `wordsep_re.split` with the empty pieces removed.
fn chunks(t: &[char]) -> Vec<Vec<char>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < t.len() {
        let e = chunk_end(t, i);
        out.push(t[i..e].to_vec());
        i = e;
    }
    out
}

fn is_blank(chunk: &[char]) -> bool {
    chunk.iter().all(|&c| is_py_space(c))
}

/// `textwrap.wrap(text, width, initial_indent=initial, subsequent_indent=subsequent)`.
/// `width` must exceed both indents' lengths (as it does for sepolgen).
pub fn wrap(text: &str, width: usize, initial: &str, subsequent: &str) -> Vec<String> {
    let mut stack = chunks(&munge(text));
    stack.reverse();
    let mut lines: Vec<String> = Vec::new();
    while !stack.is_empty() {
        let indent = if lines.is_empty() {
            initial
        } else {
            subsequent
        };
        let width = width.saturating_sub(indent.chars().count()).max(1);
        if !lines.is_empty() && stack.last().is_some_and(|c| is_blank(c)) {
            stack.pop();
        }
        let mut line: Vec<Vec<char>> = Vec::new();
        let mut len = 0;
        while let Some(c) = stack.last() {
            if len + c.len() > width {
                break;
            }
            len += c.len();
            line.extend(stack.pop());
        }
        if let Some(chunk) = stack.last_mut() {
            if chunk.len() > width {
                // _handle_long_word: break it, after the last hyphen that fits when one does.
                let space_left = width - len;
                let mut end = space_left;
                if chunk.len() > space_left {
                    if let Some(h) = chunk[..space_left].iter().rposition(|&c| c == '-') {
                        if h > 0 && chunk[..h].iter().any(|&c| c != '-') {
                            end = h + 1;
                        }
                    }
                }
                let rest = chunk.split_off(end);
                line.push(std::mem::replace(chunk, rest));
            }
        }
        if line.last().is_some_and(|c| is_blank(c)) {
            line.pop();
        }
        if !line.is_empty() {
            let mut s = String::from(indent);
            for c in &line {
                s.extend(c.iter());
            }
            lines.push(s);
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Vec<String> {
        chunks(&munge(s))
            .into_iter()
            .map(|c| c.into_iter().collect())
            .collect()
    }

    #[test]
    fn chunks_split_at_hyphens_as_wordsep_re_does() {
        // The example of textwrap's own documentation.
        assert_eq!(
            split("Look, goof-ball -- use the -b option!"),
            [
                "Look,", " ", "goof-", "ball", " ", "--", " ", "use", " ", "the", " ", "-b", " ",
                "option!"
            ]
        );
        assert_eq!(split("s0-s0:c0.c1023"), ["s0-s0:c0.c1023"]);
        assert_eq!(split("dbus-daemon"), ["dbus-", "daemon"]);
        assert_eq!(split("a-b-c"), ["a-b-c"]);
        assert_eq!(split("ab--cd"), ["ab", "--", "cd"]);
    }

    #[test]
    fn tabs_expand_to_columns_and_newlines_become_spaces() {
        assert_eq!(
            munge("a\tb\n\tc").into_iter().collect::<String>(),
            "a       b         c"
        );
    }

    #[test]
    fn long_words_break_at_the_width_or_after_a_fitting_hyphen() {
        assert_eq!(wrap("abcdefghij", 6, "", ""), ["abcdef", "ghij"]);
        assert_eq!(wrap("ab-cdefghij", 6, "", ""), ["ab-cde", "fghij"]);
        assert_eq!(wrap("abc-12345678", 6, "", ""), ["abc-", "123456", "78"]);
        assert_eq!(
            wrap("xx abcdefgh-ijklmnop", 10, "", ""),
            ["xx", "abcdefgh-", "ijklmnop"]
        );
        assert_eq!(
            wrap("one two three", 8, "  ", "   "),
            ["  one", "   two", "   three"]
        );
    }
}
