//! Byte-level formatting helpers matching the C `printf` conversions praudit uses.

/// Appends `v` in decimal (`%u`).
///
/// Digits are pushed one by one: for the short numbers of audit records this beats
/// formatting into a buffer and copying it (a `memmove` call per number).
#[inline]
pub fn dec(out: &mut Vec<u8>, v: u64) {
    if v < 10 {
        out.push(b'0' + v as u8);
        return;
    }
    let mut div = 10u64;
    while v / div >= 10 {
        div *= 10;
    }
    while div > 0 {
        out.push(b'0' + (v / div % 10) as u8);
        div /= 10;
    }
}

/// Appends `v` in signed decimal (`%d`, `%lld`).
#[inline]
pub fn sdec(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
        dec(out, v.unsigned_abs());
    } else {
        dec(out, v as u64);
    }
}

/// Appends `v` in lowercase hexadecimal (`%x`).
#[inline]
pub fn hex(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 16];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b"0123456789abcdef"[(v & 15) as usize];
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// `%#x`: `0x` and hex, except zero, which prints as `0`.
#[inline]
pub fn alt_hex(out: &mut Vec<u8>, v: u64) {
    if v != 0 {
        out.extend_from_slice(b"0x");
    }
    hex(out, v);
}

/// Appends `v` in octal (`%o`).
pub fn oct(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 22];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v & 7) as u8;
        v >>= 3;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Two hex digits (`%02x`).
#[inline]
pub fn hex2(out: &mut Vec<u8>, b: u8) {
    out.push(b"0123456789abcdef"[(b >> 4) as usize]);
    out.push(b"0123456789abcdef"[(b & 15) as usize]);
}

/// A dotted quad (`inet_ntoa`).
#[inline]
pub fn ipv4(out: &mut Vec<u8>, a: &[u8; 4]) {
    dec(out, a[0] as u64);
    out.push(b'.');
    dec(out, a[1] as u64);
    out.push(b'.');
    dec(out, a[2] as u64);
    out.push(b'.');
    dec(out, a[3] as u64);
}

/// An IPv6 address by glibc's `inet_ntop` rules: the first longest run of two or more
/// zero words becomes `::`; `::a.b.c.d` and `::ffff:a.b.c.d` keep the IPv4 tail dotted.
pub fn ipv6(out: &mut Vec<u8>, a: &[u8; 16]) {
    let mut w = [0u16; 8];
    for (i, word) in w.iter_mut().enumerate() {
        *word = u16::from_be_bytes([a[2 * i], a[2 * i + 1]]);
    }
    let (mut best_base, mut best_len) = (usize::MAX, 0usize);
    let (mut cur_base, mut cur_len) = (usize::MAX, 0usize);
    for (i, &word) in w.iter().enumerate() {
        if word == 0 {
            if cur_base == usize::MAX {
                cur_base = i;
                cur_len = 1;
            } else {
                cur_len += 1;
            }
        } else if cur_base != usize::MAX {
            if best_base == usize::MAX || cur_len > best_len {
                best_base = cur_base;
                best_len = cur_len;
            }
            cur_base = usize::MAX;
        }
    }
    if cur_base != usize::MAX && (best_base == usize::MAX || cur_len > best_len) {
        best_base = cur_base;
        best_len = cur_len;
    }
    if best_base != usize::MAX && best_len < 2 {
        best_base = usize::MAX;
    }
    let mut i = 0;
    while i < 8 {
        if best_base != usize::MAX && i >= best_base && i < best_base + best_len {
            if i == best_base {
                out.push(b':');
            }
            i += 1;
            continue;
        }
        if i != 0 {
            out.push(b':');
        }
        if i == 6 && best_base == 0 && (best_len == 6 || (best_len == 5 && w[5] == 0xffff)) {
            ipv4(out, &[a[12], a[13], a[14], a[15]]);
            return;
        }
        hex(out, w[i] as u64);
        i += 1;
    }
    if best_base != usize::MAX && best_base + best_len == 8 {
        out.push(b':');
    }
}

/// `print_string`: the bytes, skipping NULs.
#[inline]
pub fn string(out: &mut Vec<u8>, s: &[u8]) {
    if !s.contains(&0) {
        out.extend_from_slice(s);
    } else {
        out.extend(s.iter().copied().filter(|&b| b != 0));
    }
}

/// Bytes up to the first NUL (`strlen`).
#[inline]
pub fn cstr(s: &[u8]) -> &[u8] {
    match s.iter().position(|&b| b == 0) {
        Some(p) => &s[..p],
        None => s,
    }
}

/// `print_xml_string`: stops at NUL; escapes `& < > " '`; everything else through the
/// 4.4BSD `vis(VIS_CSTYLE)` encoding.
pub fn xml_string(out: &mut Vec<u8>, s: &[u8]) {
    for &c in s {
        match c {
            0 => return,
            b'&' => out.extend_from_slice(b"&amp;"),
            b'<' => out.extend_from_slice(b"&lt;"),
            b'>' => out.extend_from_slice(b"&gt;"),
            b'"' => out.extend_from_slice(b"&quot;"),
            b'\'' => out.extend_from_slice(b"&apos;"),
            _ => vis_cstyle(out, c),
        }
    }
}

/// `vis(dst, c, VIS_CSTYLE, 0)` of the 4.4BSD C library.
pub fn vis_cstyle(out: &mut Vec<u8>, c: u8) {
    if (c.is_ascii_graphic()) || c == b' ' || c == b'\t' || c == b'\n' {
        out.push(c);
        if c == b'\\' {
            out.push(b'\\');
        }
        return;
    }
    let cstyle = match c {
        b'\n' => Some(b'n'),
        b'\r' => Some(b'r'),
        0x08 => Some(b'b'),
        0x07 => Some(b'a'),
        0x0b => Some(b'v'),
        b'\t' => Some(b't'),
        0x0c => Some(b'f'),
        b' ' => Some(b's'),
        0 => Some(b'0'),
        _ => None,
    };
    if let Some(e) = cstyle {
        out.push(b'\\');
        out.push(e);
        return;
    }
    if (c & 0x7f) == b' ' {
        out.push(b'\\');
        out.push(b'0' + ((c >> 6) & 7));
        out.push(b'0' + ((c >> 3) & 7));
        out.push(b'0' + (c & 7));
        return;
    }
    out.push(b'\\');
    let mut c = c;
    if c & 0x80 != 0 {
        c &= 0x7f;
        out.push(b'M');
    }
    if c.is_ascii_control() {
        out.push(b'^');
        out.push(if c == 0x7f { b'?' } else { c + b'@' });
    } else {
        out.push(b'-');
        out.push(c);
    }
}

const DAYS: [&[u8; 3]; 7] = [b"Thu", b"Fri", b"Sat", b"Sun", b"Mon", b"Tue", b"Wed"];
const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// Civil date of a day count since 1970-01-01 (proleptic Gregorian).
pub fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Days since 1970-01-01 of a civil date (month may be out of 1..=12 or day 0: normalised
/// the way `mktime` does).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = y + (m - 1).div_euclid(12);
    let m = (m - 1).rem_euclid(12) + 1;
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `ctime` in UTC without the newline: `Fri Jan  1 00:00:00 2021`.
pub fn ctime_utc(out: &mut Vec<u8>, secs: i64) {
    ctime_utc_cached(out, secs, &mut DayCache::default());
}

/// The date parts of the last day formatted, so consecutive records of one day format
/// only the time of day.
#[derive(Clone, Debug, Default)]
pub struct DayCache {
    day: Option<i64>,
    prefix: Vec<u8>,
    year: Vec<u8>,
}

/// [`ctime_utc`] with a [`DayCache`].
#[inline]
pub fn ctime_utc_cached(out: &mut Vec<u8>, secs: i64, cache: &mut DayCache) {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    if cache.day != Some(days) {
        cache.prefix.clear();
        cache.year.clear();
        let (y, m, d) = civil(days);
        cache
            .prefix
            .extend_from_slice(DAYS[days.rem_euclid(7) as usize]);
        cache.prefix.push(b' ');
        cache.prefix.extend_from_slice(MONTHS[m as usize - 1]);
        cache.prefix.push(b' ');
        if d < 10 {
            cache.prefix.push(b' ');
        }
        dec(&mut cache.prefix, d as u64);
        cache.prefix.push(b' ');
        cache.year.push(b' ');
        sdec(&mut cache.year, y);
        cache.day = Some(days);
    }
    out.extend_from_slice(&cache.prefix);
    two(out, (rem / 3600) as u32);
    out.push(b':');
    two(out, (rem / 60 % 60) as u32);
    out.push(b':');
    two(out, (rem % 60) as u32);
    out.extend_from_slice(&cache.year);
}

#[inline]
fn two(out: &mut Vec<u8>, v: u32) {
    out.push(b'0' + (v / 10) as u8);
    out.push(b'0' + (v % 10) as u8);
}
