//! Python `re` patterns (as setools compiles them for sesearch's `-rs`, `-rt`, `-rc`,
//! `-rb`, `-rd`) translated into the `regex` crate's syntax, so that a pattern means what
//! it means to sesearch.
//!
//! The translator parses a pattern as CPython 3.11's `sre_parse` does (str patterns,
//! default flags) and writes every construct out explicitly: literals as hex escapes,
//! character classes item by item, Python's `\w` `\d` `\s` as Unicode properties, every
//! group non-capturing. Where the dialects differ the Python reading wins: `[[:alpha:]]`
//! is a set of `[`, `:`, `a`, `l`, `p`, `h` followed by a literal `]`; `\Z` is the end of
//! the string; `{,3}` is `{0,3}` and `{,}` is `*`; a `{` that does not start a valid
//! repeat is a literal; `(?P<n>…)` is a group; in verbose mode whitespace inside a set is
//! kept. What Python rejects is rejected with Python's message and position. What the
//! `regex` engine cannot do (backreferences, lookaround, conditionals, atomic groups,
//! possessive repeats, `\N{…}`) is refused with a message saying so, never approximated.
//!
//! Exact for every subject that is not empty and has no newline (no policy symbol name is
//! empty or has one): Python's `$` also matches before a final newline, the engine's only
//! at the end, and Python's `\B` never matches in an empty string. Unicode: `\w` is
//! `[\p{L}\p{N}_]` (`str.isalnum()` plus `_`), `\d` is `\p{Nd}`, `\s` is the engine's
//! White_Space plus U+001C–U+001F (`str.isspace()`). `\b` and `\B` use the engine's
//! Unicode word characters, which differ from Python's on numbers that are not digits
//! (`½`, `²`), combining marks and connector punctuation other than `_`; no translation
//! without lookaround exists for those, and symbol names do not use them. Under `(?a)` all
//! of these are ASCII.

/// Why a pattern is not used: Python rejects it, or it has no translation for the engine.
/// The texts are Python's `re.error` messages (with the character position), which
/// sesearch prints, so a refused pattern reads as it does there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// Python's `re` rejects the pattern: its message and the character position.
    #[error("{message} at position {at}")]
    Python {
        /// Python's message.
        message: String,
        /// The position (in characters) Python reports.
        at: usize,
    },
    /// A repetition count at or past Python's `MAXREPEAT` (Python's `OverflowError`).
    #[error("the repetition number is too large")]
    RepeatTooLarge,
    /// Valid in Python, but a construct the engine lacks; never approximated.
    #[error("{construct} at position {at} cannot be translated to arbiter's regex engine (no backreferences, lookaround, conditionals, atomic groups or possessive repeats)")]
    Untranslatable {
        /// The construct, as the message names it (`the backreference \\1`).
        construct: String,
        /// Its position in characters.
        at: usize,
    },
    /// The translation compiles past the engine's size limit.
    #[error(
        "the pattern compiles to more than arbiter's {limit}-byte limit for a regular expression"
    )]
    TooBig {
        /// The engine's limit in bytes.
        limit: usize,
    },
    /// The engine refuses the translation (a translator bug if it ever happens).
    #[error("the translated pattern is refused by the regex engine: {0}")]
    Engine(String),
}

/// Translates a Python `re` pattern into an equivalent `regex` crate pattern, or says why
/// it cannot: Python's own error message and position, or that no translation exists.
pub fn translate(pattern: &str) -> Result<String, PatternError> {
    let mut p = Parser {
        s: pattern.chars().collect(),
        i: 0,
        groups: 1,
        open: Vec::new(),
        names: Vec::new(),
        global: String::new(),
    };
    let mut body = String::new();
    p.alternation(&mut body, Mode::default(), 0)?;
    if p.i < p.s.len() {
        // Only a ')' ends the top level early.
        return Parser::fail("unbalanced parenthesis", p.i);
    }
    let keep = engine_flags(&p.global);
    Ok(if keep.is_empty() {
        body
    } else {
        format!("(?{keep}){body}")
    })
}

/// The flags among `letters` the engine applies (`i`, `m`, `s`), each once: Python accepts
/// a letter repeated (`(?i)(?i)`, `(?ii:…)`), the engine does not.
fn engine_flags(letters: &str) -> String {
    "ims".chars().filter(|c| letters.contains(*c)).collect()
}

/// Python's MAXREPEAT (64-bit builds): repeat counts must stay below it.
const MAXREPEAT: u64 = 4_294_967_295;

/// The flags the translator applies itself (`i`, `m`, `s` are handed to the engine).
#[derive(Clone, Copy, Default)]
struct Mode {
    verbose: bool,
    ascii: bool,
}

/// What the last item of a sequence was, for Python's repeat checks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Last {
    Nothing,
    Anchor,
    Repeat,
    Atom,
}

struct Parser {
    s: Vec<char>,
    i: usize,
    /// Groups opened so far plus one (Python's `state.groups`).
    groups: usize,
    /// Numbers of the groups still open.
    open: Vec<usize>,
    names: Vec<String>,
    /// Global flag letters (`(?aimsux)` at the start).
    global: String,
}

/// A character as a pattern literal: itself when plainly safe, else a hex escape (valid
/// in and out of classes, and case-folded by `(?i)` like any literal).
fn lit(out: &mut String, c: char) {
    if c.is_ascii_alphanumeric() || (!c.is_ascii() && !c.is_control() && !c.is_whitespace()) {
        out.push(c);
    } else {
        out.push_str(&format!("\\x{{{:X}}}", c as u32));
    }
}

/// A class escape's set items (to go inside `[...]`), or a nested negated class.
fn class_items(c: char, mode: Mode) -> &'static str {
    match (c, mode.ascii) {
        ('d', false) => r"\p{Nd}",
        ('D', false) => r"[^\p{Nd}]",
        ('w', false) => r"\p{L}\p{N}_",
        ('W', false) => r"[^\p{L}\p{N}_]",
        ('s', false) => r"\s\x{1C}-\x{1F}",
        ('S', false) => r"[^\s\x{1C}-\x{1F}]",
        ('d', true) => "0-9",
        ('D', true) => "[^0-9]",
        ('w', true) => "0-9A-Za-z_",
        ('W', true) => "[^0-9A-Za-z_]",
        ('s', true) => r"\x{9}-\x{D}\x{20}",
        _ => r"[^\x{9}-\x{D}\x{20}]",
    }
}

/// A code point that a Rust string cannot hold (a surrogate) matches nothing here.
const NOTHING: &str = r"[^\s\S]";

enum ClassItem {
    Char(char),
    /// A surrogate code point: only a literal, never in a name.
    Surrogate(u32),
    Set(char),
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn fail<T>(msg: impl std::fmt::Display, at: usize) -> Result<T, PatternError> {
        Err(PatternError::Python {
            message: msg.to_string(),
            at,
        })
    }

    fn refuse<T>(what: &str, at: usize) -> Result<T, PatternError> {
        Err(PatternError::Untranslatable {
            construct: what.to_string(),
            at,
        })
    }

    /// The global flags the translator itself applies (`x`, `a`) set on `mode`.
    fn apply_global(&self, mode: &mut Mode) {
        mode.verbose |= self.global.contains('x');
        mode.ascii |= self.global.contains('a');
    }

    /// Branches separated by `|`, up to a `)` or the end.
    fn alternation(
        &mut self,
        out: &mut String,
        mode: Mode,
        depth: usize,
    ) -> Result<(), PatternError> {
        let mut branch = 0;
        loop {
            let mut mode = mode;
            if depth == 0 {
                self.apply_global(&mut mode);
            }
            self.sequence(out, &mut mode, depth == 0 && branch == 0)?;
            if self.eat('|') {
                out.push('|');
                branch += 1;
            } else {
                return Ok(());
            }
        }
    }

    /// One branch. `global_ok`: `(?flags)` may still set global flags here.
    fn sequence(
        &mut self,
        out: &mut String,
        mode: &mut Mode,
        global_ok: bool,
    ) -> Result<(), PatternError> {
        let mut last = Last::Nothing;
        // Where the last item's text starts in `out`, to wrap it in a repeat.
        let mut item_at = out.len();
        let mut items = 0usize;
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            if mode.verbose {
                if " \t\n\r\x0b\x0c".contains(c) {
                    self.i += 1;
                    continue;
                }
                if c == '#' {
                    while let Some(c) = self.peek() {
                        self.i += 1;
                        if c == '\n' {
                            break;
                        }
                    }
                    continue;
                }
            }
            let start = self.i;
            match c {
                '*' | '+' | '?' | '{' => {
                    let Some((min, max)) = self.repeat()? else {
                        // A '{' that starts no repeat: a literal.
                        item_at = out.len();
                        lit(out, '{');
                        last = Last::Atom;
                        items += 1;
                        continue;
                    };
                    match last {
                        Last::Nothing | Last::Anchor => {
                            return Self::fail("nothing to repeat", start)
                        }
                        Last::Repeat => return Self::fail("multiple repeat", start),
                        Last::Atom => {}
                    }
                    let lazy = self.eat('?');
                    if !lazy && self.peek() == Some('+') {
                        return Self::refuse("a possessive repeat", start);
                    }
                    let atom = out.split_off(item_at);
                    out.push_str("(?:");
                    out.push_str(&atom);
                    out.push(')');
                    match (min, max) {
                        (0, None) => out.push('*'),
                        (1, None) => out.push('+'),
                        (0, Some(1)) => out.push('?'),
                        (m, None) => out.push_str(&format!("{{{m},}}")),
                        (m, Some(n)) => out.push_str(&format!("{{{m},{n}}}")),
                    }
                    if lazy {
                        out.push('?');
                    }
                    last = Last::Repeat;
                    continue;
                }
                _ => {}
            }
            item_at = out.len();
            self.i += 1;
            last = match c {
                '\\' => self.escape(out, *mode, start)?,
                '[' => {
                    self.class(out, *mode, start)?;
                    Last::Atom
                }
                '.' => {
                    out.push('.');
                    Last::Atom
                }
                '^' => {
                    out.push('^');
                    Last::Anchor
                }
                '$' => {
                    out.push('$');
                    Last::Anchor
                }
                '(' => match self.group(out, mode, start, global_ok && items == 0)? {
                    // A comment or global flags: no item (a repeat after it applies to
                    // the item before, as in Python).
                    None => {
                        item_at = out.len();
                        continue;
                    }
                    Some(()) => Last::Atom,
                },
                c => {
                    lit(out, c);
                    Last::Atom
                }
            };
            items += 1;
        }
        Ok(())
    }

    /// After `*`, `+`, `?` or `{`: the repeat's bounds, or `None` for a literal `{`.
    fn repeat(&mut self) -> Result<Option<(u64, Option<u64>)>, PatternError> {
        let c = self.s[self.i];
        self.i += 1;
        Ok(Some(match c {
            '*' => (0, None),
            '+' => (1, None),
            '?' => (0, Some(1)),
            _ => {
                let here = self.i;
                if self.peek() == Some('}') {
                    return Ok(None);
                }
                let digits = |p: &mut Parser| {
                    let from = p.i;
                    while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                        p.i += 1;
                    }
                    p.s[from..p.i].iter().collect::<String>()
                };
                let lo = digits(self);
                let hi = if self.eat(',') {
                    digits(self)
                } else {
                    lo.clone()
                };
                if !self.eat('}') {
                    self.i = here;
                    return Ok(None);
                }
                let num = |t: &str| -> Result<u64, PatternError> {
                    match t.parse::<u64>() {
                        Ok(n) if n < MAXREPEAT => Ok(n),
                        _ => Err(PatternError::RepeatTooLarge),
                    }
                };
                let min = if lo.is_empty() { 0 } else { num(&lo)? };
                let max = if hi.is_empty() { None } else { Some(num(&hi)?) };
                if max.is_some_and(|m| m < min) {
                    return Self::fail("min repeat greater than max repeat", here);
                }
                (min, max)
            }
        }))
    }

    /// `\` at `start` outside a class (the backslash consumed).
    fn escape(&mut self, out: &mut String, mode: Mode, start: usize) -> Result<Last, PatternError> {
        let Some(c) = self.peek() else {
            return Self::fail("bad escape (end of pattern)", start);
        };
        self.i += 1;
        let anchor = |out: &mut String, s: &str| {
            out.push_str(s);
            Ok(Last::Anchor)
        };
        match c {
            'A' => return anchor(out, r"\A"),
            'Z' => return anchor(out, r"\z"),
            'b' if mode.ascii => return anchor(out, r"(?-u:\b)"),
            'B' if mode.ascii => return anchor(out, r"(?-u:\B)"),
            'b' => return anchor(out, r"\b"),
            'B' => return anchor(out, r"\B"),
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => {
                let items = class_items(c, mode);
                if items.starts_with("[^") {
                    out.push_str(items);
                } else {
                    out.push('[');
                    out.push_str(items);
                    out.push(']');
                }
                return Ok(Last::Atom);
            }
            '1'..='9' => {
                let mut digits = c.to_string();
                if let Some(d) = self.peek().filter(|d| d.is_ascii_digit()) {
                    self.i += 1;
                    digits.push(d);
                    let octal = |x: char| ('0'..='7').contains(&x);
                    if octal(c) && octal(d) && self.peek().is_some_and(octal) {
                        digits.push(self.s[self.i]);
                        self.i += 1;
                        return self.octal_literal(out, &digits, start).map(|_| Last::Atom);
                    }
                }
                let group: usize = digits.parse().unwrap_or(usize::MAX);
                if group < self.groups {
                    if self.open.contains(&group) {
                        return Self::fail("cannot refer to an open group", start);
                    }
                    return Self::refuse(&format!("the backreference \\{digits}"), start);
                }
                return Self::fail(format!("invalid group reference {group}"), start + 1);
            }
            _ => {}
        }
        match self.common_escape(c, start)? {
            ClassItem::Char(ch) => lit(out, ch),
            ClassItem::Surrogate(_) => out.push_str(NOTHING),
            ClassItem::Set(_) => unreachable!("class escapes are handled above"),
        }
        Ok(Last::Atom)
    }

    fn octal_literal(
        &self,
        out: &mut String,
        digits: &str,
        start: usize,
    ) -> Result<(), PatternError> {
        let v = u32::from_str_radix(digits, 8).unwrap_or(u32::MAX);
        if v > 0o377 {
            return Self::fail(
                format!("octal escape value \\{digits} outside of range 0-0o377"),
                start,
            );
        }
        lit(out, char::from_u32(v).unwrap_or('\0'));
        Ok(())
    }

    /// Escapes that mean the same in and out of a set: control letters, `\x`, `\u`,
    /// `\U`, `\0`, `\N` (refused), escaped punctuation. `c` is consumed.
    fn common_escape(&mut self, c: char, start: usize) -> Result<ClassItem, PatternError> {
        let hex = |p: &mut Parser, n: usize| -> Result<u32, PatternError> {
            let from = p.i;
            let mut v = 0u32;
            for _ in 0..n {
                match p.peek().and_then(|d| d.to_digit(16)) {
                    Some(d) => {
                        v = v * 16 + d;
                        p.i += 1;
                    }
                    None => {
                        let seen: String = p.s[start..p.i].iter().collect();
                        return Self::fail(format!("incomplete escape {seen}"), start);
                    }
                }
            }
            let _ = from;
            Ok(v)
        };
        let code = match c {
            'a' => 7,
            'f' => 12,
            'n' => 10,
            'r' => 13,
            't' => 9,
            'v' => 11,
            'x' => hex(self, 2)?,
            'u' => hex(self, 4)?,
            'U' => {
                let v = hex(self, 8)?;
                if v > 0x10_FFFF {
                    let seen: String = self.s[start..self.i].iter().collect();
                    return Self::fail(format!("bad escape {seen}"), start);
                }
                v
            }
            '0' => {
                let mut v = 0u32;
                for _ in 0..2 {
                    match self.peek().filter(|d| ('0'..='7').contains(d)) {
                        Some(d) => {
                            v = v * 8 + d.to_digit(8).unwrap_or(0);
                            self.i += 1;
                        }
                        None => break,
                    }
                }
                v
            }
            'N' => return Self::refuse("a named character \\N{...}", start),
            c if c.is_ascii_alphabetic() || c.is_ascii_digit() => {
                return Self::fail(format!("bad escape \\{c}"), start)
            }
            c => c as u32,
        };
        Ok(match char::from_u32(code) {
            Some(ch) => ClassItem::Char(ch),
            None => ClassItem::Surrogate(code),
        })
    }

    /// A set, from after its `[` at `start`.
    fn class(&mut self, out: &mut String, mode: Mode, start: usize) -> Result<(), PatternError> {
        let negate = self.eat('^');
        let mut items: Vec<String> = Vec::new();
        let unterminated = || Self::fail("unterminated character set", start);
        loop {
            let at = self.i;
            let Some(c) = self.peek() else {
                return unterminated();
            };
            self.i += 1;
            if c == ']' && !items.is_empty() {
                break;
            }
            let first = if c == '\\' {
                self.class_escape(at)?
            } else {
                ClassItem::Char(c)
            };
            if self.eat('-') {
                let that_at = self.i;
                let Some(that) = self.peek() else {
                    return unterminated();
                };
                self.i += 1;
                if that == ']' {
                    items.push(self.item_text(&first, mode));
                    items.push(r"\x{2D}".to_string());
                    break;
                }
                let second = if that == '\\' {
                    self.class_escape(that_at)?
                } else {
                    ClassItem::Char(that)
                };
                let code = |x: &ClassItem| match x {
                    ClassItem::Char(c) => Some(*c as u32),
                    ClassItem::Surrogate(v) => Some(*v),
                    ClassItem::Set(_) => None,
                };
                let range: String = self.s[at..self.i].iter().collect();
                match (code(&first), code(&second)) {
                    (Some(lo), Some(hi)) if lo <= hi => {
                        // Surrogates cannot occur in a name: clip them out of the range.
                        let lo_c = char::from_u32(lo).or_else(|| char::from_u32(0xE000));
                        let hi_c = char::from_u32(hi).or_else(|| char::from_u32(0xD7FF));
                        if let (Some(l), Some(h)) = (lo_c, hi_c) {
                            if l <= h {
                                let mut t = String::new();
                                lit(&mut t, l);
                                t.push('-');
                                lit(&mut t, h);
                                items.push(t);
                            } else {
                                items.push(NOTHING.to_string());
                            }
                        } else {
                            items.push(NOTHING.to_string());
                        }
                    }
                    _ => return Self::fail(format!("bad character range {range}"), at),
                }
            } else {
                items.push(self.item_text(&first, mode));
            }
        }
        out.push('[');
        if negate {
            out.push('^');
        }
        for it in &items {
            out.push_str(it);
        }
        out.push(']');
        Ok(())
    }

    fn item_text(&self, item: &ClassItem, mode: Mode) -> String {
        let mut t = String::new();
        match item {
            ClassItem::Char(c) => lit(&mut t, *c),
            ClassItem::Surrogate(_) => t.push_str(NOTHING),
            ClassItem::Set(c) => t.push_str(class_items(*c, mode)),
        }
        t
    }

    /// `\` at `start` inside a set (the backslash consumed).
    fn class_escape(&mut self, start: usize) -> Result<ClassItem, PatternError> {
        let Some(c) = self.peek() else {
            return Self::fail("unterminated character set", start);
        };
        self.i += 1;
        match c {
            'b' => Ok(ClassItem::Char('\u{8}')),
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => Ok(ClassItem::Set(c)),
            '1'..='7' => {
                let mut digits = c.to_string();
                for _ in 0..2 {
                    match self.peek().filter(|d| ('0'..='7').contains(d)) {
                        Some(d) => {
                            digits.push(d);
                            self.i += 1;
                        }
                        None => break,
                    }
                }
                let v = u32::from_str_radix(&digits, 8).unwrap_or(u32::MAX);
                if v > 0o377 {
                    return Self::fail(
                        format!("octal escape value \\{digits} outside of range 0-0o377"),
                        start,
                    );
                }
                Ok(ClassItem::Char(char::from_u32(v).unwrap_or('\0')))
            }
            c => self.common_escape(c, start),
        }
    }

    /// A group from after its `(` at `start`: `Some(())` when it is an item, `None` for
    /// a comment or global flags.
    fn group(
        &mut self,
        out: &mut String,
        mode: &mut Mode,
        start: usize,
        global_ok: bool,
    ) -> Result<Option<()>, PatternError> {
        let mut inner = *mode;
        let mut capture = None;
        let mut flags = String::new();
        if self.eat('?') {
            let Some(c) = self.peek() else {
                return Self::fail("unexpected end of pattern", self.i);
            };
            self.i += 1;
            match c {
                ':' => {}
                'P' => {
                    if self.eat('<') {
                        let from = self.i;
                        while self.peek().is_some_and(|c| c != '>') {
                            self.i += 1;
                        }
                        let name: String = self.s[from..self.i].iter().collect();
                        if !self.eat('>') {
                            return Self::fail("missing >, unterminated name", from);
                        }
                        if name.is_empty() {
                            return Self::fail("missing group name", from);
                        }
                        let mut cs = name.chars();
                        let ok = cs.next().is_some_and(|c| c == '_' || c.is_alphabetic())
                            && cs.all(|c| c == '_' || c.is_alphanumeric());
                        if !ok {
                            return Self::fail(
                                format!("bad character in group name '{name}'"),
                                from,
                            );
                        }
                        if self.names.contains(&name) {
                            return Self::fail(
                                format!("redefinition of group name '{name}'"),
                                from,
                            );
                        }
                        self.names.push(name);
                        capture = Some(());
                    } else if self.eat('=') {
                        return Self::refuse("the backreference (?P=...)", start);
                    } else {
                        let got: String = self.peek().map(String::from).unwrap_or_default();
                        return Self::fail(format!("unknown extension ?P{got}"), start + 1);
                    }
                }
                '#' => {
                    while let Some(c) = self.peek() {
                        self.i += 1;
                        if c == ')' {
                            return Ok(None);
                        }
                    }
                    return Self::fail("missing ), unterminated comment", start);
                }
                '=' | '!' => return Self::refuse("a lookahead assertion", start),
                '<' if matches!(self.peek(), Some('=' | '!')) => {
                    return Self::refuse("a lookbehind assertion", start)
                }
                '(' => return Self::refuse("a conditional group", start),
                '>' => return Self::refuse("an atomic group", start),
                c if "aiLmsux-".contains(c) => {
                    self.i -= 1;
                    match self.flags(start)? {
                        None => {
                            if !global_ok {
                                return Self::fail(
                                    "global flags not at the start of the expression",
                                    start,
                                );
                            }
                            self.apply_global(mode);
                            return Ok(None);
                        }
                        Some((on, off)) => {
                            for f in on.chars() {
                                match f {
                                    'x' => inner.verbose = true,
                                    'a' => inner.ascii = true,
                                    'u' => inner.ascii = false,
                                    _ => {}
                                }
                            }
                            if off.contains('x') {
                                inner.verbose = false;
                            }
                            let (on, off) = (engine_flags(&on), engine_flags(&off));
                            if !on.is_empty() || !off.is_empty() {
                                flags = if off.is_empty() {
                                    on
                                } else {
                                    format!("{on}-{off}")
                                };
                            }
                        }
                    }
                }
                c => return Self::fail(format!("unknown extension ?{c}"), start + 1),
            }
        } else {
            capture = Some(());
        }
        let number = capture.map(|_| {
            let n = self.groups;
            self.groups += 1;
            self.open.push(n);
            n
        });
        out.push_str("(?");
        out.push_str(&flags);
        out.push(':');
        self.alternation(out, inner, 1)?;
        if !self.eat(')') {
            return Self::fail("missing ), unterminated subpattern", start);
        }
        out.push(')');
        if let Some(n) = number {
            self.open.retain(|&g| g != n);
        }
        Ok(Some(()))
    }

    /// Flag letters after `(?` (at `start`): `None` for global flags `(?aimsux)` (recorded
    /// in `self.global` and applied to the mode that follows), else the letters turned on
    /// and off for a scoped `(?on-off:...)` whose `:` is consumed.
    fn flags(&mut self, start: usize) -> Result<Option<(String, String)>, PatternError> {
        let mut on = String::new();
        while let Some(c) = self.peek().filter(|c| "aiLmsux".contains(*c)) {
            on.push(c);
            self.i += 1;
        }
        let check_type = |letters: &str, at: usize| -> Result<(), PatternError> {
            if letters.contains('L') {
                return Self::fail(
                    "bad inline flags: cannot use 'L' flag with a str pattern",
                    at,
                );
            }
            let n = ['a', 'u'].iter().filter(|c| letters.contains(**c)).count();
            if n > 1 {
                return Self::fail(
                    "bad inline flags: flags 'a', 'u' and 'L' are incompatible",
                    at,
                );
            }
            Ok(())
        };
        check_type(&on, self.i)?;
        if self.eat(')') {
            let mut all = self.global.clone();
            all.push_str(&on);
            check_type(&all, self.i)?;
            self.global = all;
            return Ok(None);
        }
        let mut off = String::new();
        if self.eat('-') {
            while let Some(c) = self.peek().filter(|c| c.is_ascii_alphabetic()) {
                if !"imsx".contains(c) {
                    if "aLu".contains(c) {
                        return Self::fail(
                            "bad inline flags: cannot turn off flags 'a', 'u' and 'L'",
                            self.i,
                        );
                    }
                    return Self::fail("unknown flag", self.i);
                }
                off.push(c);
                self.i += 1;
            }
            if off.is_empty() {
                return Self::fail("missing flag", self.i);
            }
            if on.chars().any(|c| off.contains(c)) {
                return Self::fail("bad inline flags: flag turned on and off", self.i);
            }
        }
        if !self.eat(':') {
            return match self.peek() {
                None => Self::fail("missing -, : or )", self.i),
                Some(c) if c.is_ascii_alphabetic() => Self::fail("unknown flag", self.i),
                Some(_) if off.is_empty() => Self::fail("missing -, : or )", self.i),
                Some(_) => Self::fail("missing :", self.i),
            };
        }
        let _ = start;
        Ok(Some((on, off)))
    }
}

#[cfg(test)]
mod tests {
    use super::translate;

    #[test]
    fn posix_looking_classes_are_sets_followed_by_a_bracket() {
        let re = regex::Regex::new(&translate("[[:alpha:]]").expect("valid")).expect("engine");
        assert!(re.is_match("a]") && re.is_match("[]") && !re.is_match("a"));
    }

    #[test]
    fn python_repeat_forms_and_literal_braces() {
        let m = |p: &str, s: &str| {
            regex::Regex::new(&translate(p).expect("valid"))
                .expect("engine")
                .is_match(s)
        };
        assert!(m("^a{,2}$", "") && m("^a{,2}$", "aa") && !m("^a{,2}$", "aaa"));
        assert!(m("^x{,}$", "xxxx"));
        assert!(m("a{", "a{") && m("{x", "{x") && m("x{1,2", "x{1,2"));
        assert!(m("_t\\Z", "httpd_t") && !m("_t\\Z", "httpd_t_x"));
    }

    #[test]
    fn what_python_rejects_is_rejected_with_its_message() {
        let err = |p: &str| translate(p).expect_err(p).to_string();
        assert_eq!(
            err("foo("),
            "missing ), unterminated subpattern at position 3"
        );
        assert_eq!(err("foo)"), "unbalanced parenthesis at position 3");
        assert_eq!(err("[abc"), "unterminated character set at position 0");
        assert_eq!(err("*x"), "nothing to repeat at position 0");
        assert_eq!(err("a**"), "multiple repeat at position 2");
        assert_eq!(err("\\q"), "bad escape \\q at position 0");
        assert_eq!(
            err("é("),
            "missing ), unterminated subpattern at position 1"
        );
        assert_eq!(
            err("a(?i)b"),
            "global flags not at the start of the expression at position 1"
        );
    }

    #[test]
    fn constructs_the_engine_lacks_are_refused_by_name() {
        for p in [
            "(a)\\1",
            "(?=a)",
            "(?<!a)b",
            "(?>a)",
            "a*+",
            "(?P<n>a)(?P=n)",
        ] {
            let e = translate(p).expect_err(p);
            assert!(
                matches!(e, super::PatternError::Untranslatable { .. }),
                "{p}"
            );
            assert!(e.to_string().contains("cannot be translated"), "{p}");
        }
    }

    /// What the `search_regex` fuzz target checks, on generated patterns: every accepted
    /// pattern is valid engine syntax.
    #[test]
    fn every_accepted_pattern_is_valid_engine_syntax() {
        const ALPHABET: &[&str] = &[
            "a", "_", "[", "]", "^", "-", "\\", "(", ")", "?", "*", "+", "{", "}", ",", "3", "|",
            "$", ".", ":", "P", "<", ">", "=", "!", "#", " ", "i", "x", "s", "u", "d", "w", "Z",
            "A", "b", "0", "7", "é", "&", "~", "\n",
        ];
        let mut seed: u64 = 0x1234_5678_9abc_def1;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut accepted = 0;
        for _ in 0..20_000 {
            let len = 1 + next() % 10;
            let p: String = (0..len)
                .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize])
                .collect();
            if let Ok(t) = translate(&p) {
                accepted += 1;
                match regex::RegexBuilder::new(&t).size_limit(1 << 20).build() {
                    Ok(_) | Err(regex::Error::CompiledTooBig(_)) => {}
                    Err(e) => panic!("{p:?} -> {t:?}: {e}"),
                }
            }
        }
        assert!(accepted > 1000, "{accepted}");
    }
}
