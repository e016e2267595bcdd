//! libbsm's line reading: `fgets` into a 256-byte buffer, `strrchr` for the newline, and
//! `strtok` field splitting, reproduced over bytes.

/// `AU_LINE_MAX`: the fgets buffer size; a line of 255 bytes or more is split.
pub const LINE_MAX: usize = 256;

/// One fgets "line": its 1-based physical line number and bytes without the newline.
#[derive(Clone, Copy, Debug)]
pub struct Chunk<'a> {
    /// Physical line the chunk starts on.
    pub line: usize,
    /// Bytes, newline removed; CR is kept, as libbsm keeps it.
    pub text: &'a [u8],
    /// True if fgets split a longer physical line here.
    pub split: bool,
}

/// Splits `data` the way repeated `fgets(buf, 256, fp)` calls would.
pub fn chunks(data: &[u8]) -> Vec<Chunk<'_>> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut line = 1;
    while pos < data.len() {
        let rest = &data[pos..];
        let limit = rest.len().min(LINE_MAX - 1);
        let (len, has_nl) = match rest[..limit].iter().position(|&b| b == b'\n') {
            Some(p) => (p + 1, true),
            None => (limit, false),
        };
        let raw = &rest[..len];
        let text = if has_nl { &raw[..len - 1] } else { raw };
        // A NUL in the line ends it for every C string function that follows.
        let text = match text.iter().position(|&b| b == 0) {
            Some(p) => &text[..p],
            None => text,
        };
        out.push(Chunk {
            line,
            text,
            split: !has_nl && pos + len < data.len(),
        });
        if has_nl {
            line += 1;
        }
        pos += len;
    }
    out
}

/// `strtok(s, ":")` fields: consecutive delimiters collapse, empty fields vanish.
pub fn fields(text: &[u8], delim: u8) -> impl Iterator<Item = &[u8]> {
    text.split(move |&b| b == delim).filter(|f| !f.is_empty())
}

/// Where C's number parsers start reading `s`: past leading white space (`isspace`) and
/// one sign; with whether the sign was `-`.
fn number_start(s: &[u8]) -> (usize, bool) {
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        i += 1;
    }
    match s.get(i) {
        Some(b'-') => (i + 1, true),
        Some(b'+') => (i + 1, false),
        _ => (i, false),
    }
}

/// C `atoi` truncated to 16 bits (no error check, as libbsm).
pub fn atoi_u16(s: &[u8]) -> u16 {
    let (mut i, neg) = number_start(s);
    let mut v: i64 = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        v = v.wrapping_mul(10).wrapping_add((s[i] - b'0') as i64);
        i += 1;
    }
    if neg {
        v = v.wrapping_neg();
    }
    v as i32 as u16
}

/// C `strtoul(s, NULL, 0)` truncated to 32 bits.
pub fn strtoul0_u32(s: &[u8]) -> u32 {
    let (mut i, neg) = number_start(s);
    let mut base = 10u64;
    if i + 1 < s.len()
        && s[i] == b'0'
        && (s[i + 1] | 0x20) == b'x'
        && i + 2 < s.len()
        && s[i + 2].is_ascii_hexdigit()
    {
        base = 16;
        i += 2;
    } else if i < s.len() && s[i] == b'0' {
        base = 8;
    }
    let mut v: u64 = 0;
    let mut overflow = false;
    while i < s.len() {
        let d = match s[i] {
            b'0'..=b'9' => (s[i] - b'0') as u64,
            b'a'..=b'f' => (s[i] - b'a' + 10) as u64,
            b'A'..=b'F' => (s[i] - b'A' + 10) as u64,
            _ => break,
        };
        if d >= base {
            break;
        }
        match v.checked_mul(base).and_then(|x| x.checked_add(d)) {
            Some(x) => v = x,
            None => overflow = true,
        }
        i += 1;
    }
    if overflow {
        return u32::MAX;
    }
    if neg {
        v = v.wrapping_neg();
    }
    v as u32
}
