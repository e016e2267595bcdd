//! auditreduce-compatible record selection.
//!
//! Compatible mode reproduces OpenBSM's `auditreduce` exactly: only header32, subject32,
//! process32, IPC, path, return32 and zonename tokens are examined; a record is kept only if
//! every requested option was checked by one of them and passed; after the first record
//! with an undecodable token, every later record of that file is suppressed (or, with `-v`,
//! printed). [`ReduceOptions::extended`] lifts both losses: the 64-bit and `_ex` headers,
//! subjects, processes and return64 are examined too, and a bad record only affects itself.

use crate::config::Config;
use crate::error::StreamError;
use crate::fmt::{cstr, days_from_civil};
use crate::mask::Mask;
use crate::preselect::{Outcome, Preselector};
use crate::stream::RecordStream;
use crate::token::Token;
use std::io::{Read, Write};

const OPT_A_TIME: u32 = 0x1; // OPT_a
const OPT_B_TIME: u32 = 0x2; // OPT_b
const OPT_C: u32 = 0x4;
const OPT_E: u32 = 0x10;
const OPT_F: u32 = 0x20;
const OPT_G: u32 = 0x40;
const OPT_J: u32 = 0x80;
const OPT_M: u32 = 0x100;
const OPT_OF: u32 = 0x200;
const OPT_OM: u32 = 0x400;
const OPT_OP: u32 = 0x800;
const OPT_OSE: u32 = 0x1000;
const OPT_OSH: u32 = 0x2000;
const OPT_OSO: u32 = 0x4000;
const OPT_R: u32 = 0x8000;
const OPT_U: u32 = 0x10000;
const OPT_ALL: u32 = 0x20000;
const OPT_V: u32 = 0x40000;
const OPT_Z: u32 = 0x80000;

/// A command line auditreduce rejects (its exit status 64, `EX_USAGE`) or cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ReduceError {
    /// Usage error (exit 64).
    #[error("usage: {0}")]
    Usage(String),
    /// A regular expression that does not compile (exit 1).
    #[error("regcomp: {0}")]
    Regex(String),
}

/// One `-o file=` expression.
#[derive(Clone, Debug)]
struct FileRe {
    negate: bool,
    re: regex::bytes::Regex,
}

/// auditreduce's selection options.
#[derive(Clone, Debug, Default)]
pub struct ReduceOptions {
    opttochk: u32,
    after: i64,
    before: i64,
    mask: Mask,
    events: Vec<u16>,
    euid: i32,
    egid: i32,
    rgid: i32,
    ruid: i32,
    auid: i32,
    subject_pid: i32,
    pid_obj: u32,
    msgq: u32,
    sem: u32,
    shm: u32,
    files: Vec<FileRe>,
    zone: Vec<u8>,
    /// Examine every header/subject/process/return form and never let one bad record
    /// suppress the rest of the file.
    pub extended: bool,
}

/// C `strtol(s, &end, 10)`: the value (saturated) and whether the whole string was used.
fn strtol(s: &str) -> (i64, bool) {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && (b[i] == b' ' || (b'\t'..=b'\r').contains(&b[i])) {
        i += 1;
    }
    let mut neg = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        neg = b[i] == b'-';
        i += 1;
    }
    let start = i;
    let mut v: i64 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        v = v.saturating_mul(10).saturating_add((b[i] - b'0') as i64);
        i += 1;
    }
    if i == start {
        // No digits: strtol leaves the end pointer at the start of the string.
        return (0, b.is_empty());
    }
    (if neg { -v } else { v }, i == b.len())
}

/// `strptime(arg, fmt)` into a zeroed `struct tm` (fields `%Y%m%d%H%M%S`, as many as the
/// prefix allows), then `mktime` in UTC.
fn parse_time(arg: &str, fields: usize) -> (i64, [i64; 6]) {
    let b = arg.as_bytes();
    let mut tm = [0i64; 6]; // year-1900, mon (0-based), mday, hour, min, sec
    let widths = [4usize, 2, 2, 2, 2, 2];
    let ranges = [(0, 9999), (1, 12), (1, 31), (0, 23), (0, 59), (0, 61)];
    let mut pos = 0;
    for f in 0..fields {
        while pos < b.len() && b[pos] == b' ' {
            pos += 1;
        }
        let start = pos;
        let mut v = 0i64;
        while pos < b.len() && pos - start < widths[f] && b[pos].is_ascii_digit() {
            v = v * 10 + (b[pos] - b'0') as i64;
            pos += 1;
        }
        if pos == start || v < ranges[f].0 || v > ranges[f].1 {
            break;
        }
        tm[f] = match f {
            0 => v - 1900,
            1 => v - 1,
            _ => v,
        };
    }
    (mktime_utc(&tm), tm)
}

fn mktime_utc(tm: &[i64; 6]) -> i64 {
    days_from_civil(tm[0] + 1900, tm[1] + 1, tm[2]) * 86_400 + tm[3] * 3600 + tm[4] * 60 + tm[5]
}

/// `fnmatch(pattern, s, FNM_PATHNAME)`.
pub fn fnmatch_pathname(p: &[u8], s: &[u8]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some((b'*', rest)) => {
            let mut rest = rest;
            while let Some((b'*', r)) = rest.split_first() {
                rest = r;
            }
            for i in 0..=s.len() {
                if fnmatch_pathname(rest, &s[i..]) {
                    return true;
                }
                if i < s.len() && s[i] == b'/' {
                    break;
                }
            }
            false
        }
        Some((b'?', rest)) => match s.split_first() {
            Some((&c, srest)) if c != b'/' => fnmatch_pathname(rest, srest),
            _ => false,
        },
        Some((b'[', rest)) => {
            let Some((&c, srest)) = s.split_first() else {
                return false;
            };
            if c == b'/' {
                return false;
            }
            let (neg, mut r) = match rest.split_first() {
                Some((b'!' | b'^', r)) => (true, r),
                _ => (false, rest),
            };
            let mut matched = false;
            let mut first = true;
            loop {
                let Some((&pc, r2)) = r.split_first() else {
                    // No closing bracket: '[' is an ordinary character.
                    return c == b'[' && fnmatch_pathname(rest, srest);
                };
                if pc == b']' && !first {
                    r = r2;
                    break;
                }
                first = false;
                if r2.len() >= 2 && r2[0] == b'-' && r2[1] != b']' {
                    if pc <= c && c <= r2[1] {
                        matched = true;
                    }
                    r = &r2[2..];
                } else {
                    if pc == c {
                        matched = true;
                    }
                    r = r2;
                }
            }
            matched != neg && fnmatch_pathname(r, srest)
        }
        Some((b'\\', rest)) if !rest.is_empty() => match s.split_first() {
            Some((&c, srest)) if c == rest[0] => fnmatch_pathname(&rest[1..], srest),
            _ => false,
        },
        Some((&pc, rest)) => match s.split_first() {
            Some((&c, srest)) if c == pc => fnmatch_pathname(rest, srest),
            _ => false,
        },
    }
}

/// Splits `-o file=` values the way auditreduce does: `\,` is a literal comma (with its
/// C quirk: the character after an escaped comma is not examined), a leading `~` negates.
fn parse_file_res(val: &str) -> Result<Vec<FileRe>, ReduceError> {
    let mut c = val.as_bytes().to_vec();
    let len = c.len();
    let mut i = 0;
    while i < len {
        if i < c.len() && c[i] == b',' && i > 0 {
            if c[i - 1] == b'\\' {
                c.remove(i - 1);
            } else {
                c[i] = 0;
            }
        }
        i += 1;
    }
    let mut out = Vec::new();
    for piece in c.split(|&b| b == 0) {
        let (negate, pat) = match piece.split_first() {
            Some((b'~', r)) => (true, r),
            _ => (false, piece),
        };
        let pat = String::from_utf8_lossy(pat);
        let re = regex::bytes::Regex::new(&pat).map_err(|e| ReduceError::Regex(e.to_string()))?;
        out.push(FileRe { negate, re });
    }
    Ok(out)
}

fn lookup_id(file: &str, name: &str) -> Option<i32> {
    let d = std::fs::read(file).ok()?;
    for line in d.split(|&b| b == b'\n') {
        let f: Vec<&[u8]> = line.split(|&b| b == b':').collect();
        if f.len() >= 3 && f[0] == name.as_bytes() {
            return std::str::from_utf8(f[2])
                .ok()?
                .parse::<u32>()
                .ok()
                .map(|v| v as i32);
        }
    }
    None
}

impl ReduceOptions {
    /// Parses auditreduce's arguments (getopt `Aa:b:c:d:e:f:g:j:m:o:r:u:vz:`, plus
    /// `--extended`); returns the options and the trail files.
    pub fn parse(
        args: &[String],
        config: &Config,
    ) -> Result<(ReduceOptions, Vec<String>), ReduceError> {
        let mut o = ReduceOptions::default();
        let mut files = Vec::new();
        let mut i = 0;
        let usage = |m: &str| ReduceError::Usage(m.to_string());
        while i < args.len() {
            let a = &args[i];
            i += 1;
            if a == "--extended" {
                o.extended = true;
                continue;
            }
            if a == "--" {
                files.extend(args[i..].iter().cloned());
                break;
            }
            if !a.starts_with('-') || a.len() == 1 {
                files.push(a.clone());
                files.extend(args[i..].iter().cloned());
                break;
            }
            let bytes = a.as_bytes();
            let mut j = 1;
            while j < bytes.len() {
                let ch = bytes[j] as char;
                j += 1;
                let takes = "abcdefgjmoruz".contains(ch);
                let val = if takes {
                    if j < bytes.len() {
                        let v = a[j..].to_string();
                        j = bytes.len();
                        v
                    } else if i < args.len() {
                        i += 1;
                        args[i - 1].clone()
                    } else {
                        return Err(usage(&format!("option requires an argument -- '{ch}'")));
                    }
                } else {
                    String::new()
                };
                o.option(ch, &val, config)?;
            }
        }
        Ok((o, files))
    }

    fn option(&mut self, ch: char, val: &str, config: &Config) -> Result<(), ReduceError> {
        let usage = |m: &str| ReduceError::Usage(m.to_string());
        let idopt = |val: &str, file: &str| -> Option<i32> {
            let (v, full) = strtol(val);
            if full {
                Some(v as i32)
            } else {
                lookup_id(file, val)
            }
        };
        match ch {
            'A' => self.opttochk |= OPT_ALL,
            'a' | 'b' => {
                let bit = if ch == 'a' { OPT_A_TIME } else { OPT_B_TIME };
                if self.opttochk & bit != 0 {
                    return Err(usage("d is exclusive with a and b"));
                }
                self.opttochk |= bit;
                let (t, _) = parse_time(val, 6);
                if ch == 'a' {
                    self.after = t;
                } else {
                    self.before = t;
                }
            }
            'c' => {
                self.mask =
                    Mask::parse(val, &config.classes).map_err(|_| usage("Incorrect class"))?;
                self.opttochk |= OPT_C;
            }
            'd' => {
                if self.opttochk & (OPT_A_TIME | OPT_B_TIME) != 0 {
                    return Err(usage("'d' is exclusive with 'a' and 'b'"));
                }
                self.opttochk |= OPT_A_TIME | OPT_B_TIME;
                let (t, mut tm) = parse_time(val, 3);
                self.after = t;
                tm[3] = 23;
                tm[4] = 59;
                tm[5] = 59;
                self.before = mktime_utc(&tm);
            }
            'e' | 'f' | 'g' | 'r' | 'u' => {
                let file = if matches!(ch, 'f' | 'g') {
                    "/etc/group"
                } else {
                    "/etc/passwd"
                };
                // An unknown name silently drops the option, as auditreduce does.
                if let Some(v) = idopt(val, file) {
                    let (slot, bit) = match ch {
                        'e' => (&mut self.euid, OPT_E),
                        'f' => (&mut self.egid, OPT_F),
                        'g' => (&mut self.rgid, OPT_G),
                        'r' => (&mut self.ruid, OPT_R),
                        _ => (&mut self.auid, OPT_U),
                    };
                    *slot = v;
                    self.opttochk |= bit;
                }
            }
            'j' => {
                self.subject_pid = strtol(val).0 as i32;
                self.opttochk |= OPT_J;
            }
            'm' => {
                let mut ev = strtol(val).0 as u16;
                if ev == 0 {
                    ev = config
                        .events
                        .by_name(val.as_bytes())
                        .ok_or_else(|| usage("Incorrect event name"))?
                        .number;
                }
                self.events.push(ev);
                self.opttochk |= OPT_M;
            }
            'o' => {
                if let Some((name, v)) = val.split_once('=') {
                    let num = || strtol(v).0 as u32;
                    match name {
                        "file" => {
                            self.files = parse_file_res(v)?;
                            self.opttochk |= OPT_OF;
                        }
                        "msgqid" => {
                            self.msgq = num();
                            self.opttochk |= OPT_OM;
                        }
                        "pid" => {
                            self.pid_obj = num();
                            self.opttochk |= OPT_OP;
                        }
                        "semid" => {
                            self.sem = num();
                            self.opttochk |= OPT_OSE;
                        }
                        "shmid" => {
                            self.shm = num();
                            self.opttochk |= OPT_OSH;
                        }
                        "sock" => self.opttochk |= OPT_OSO,
                        _ => return Err(usage("unknown value for -o")),
                    }
                }
            }
            'v' => self.opttochk |= OPT_V,
            'z' => {
                self.zone = val.as_bytes().to_vec();
                self.opttochk |= OPT_Z;
            }
            other => return Err(usage(&format!("Unknown option -{other}"))),
        }
        Ok(())
    }

    fn set(&self, bit: u32) -> bool {
        self.opttochk & bit != 0
    }
}

/// What a reduction did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReduceSummary {
    /// Records read (file tokens included).
    pub records: u64,
    /// Records written.
    pub selected: u64,
    /// Records with a token that could not be decoded.
    pub undecodable: u64,
    /// Records auditreduce (compatible mode) would have suppressed only because an earlier
    /// record of the file had an undecodable token.
    pub suppressed_after_error: u64,
}

/// Applies [`ReduceOptions`] to trails.
pub struct Reducer {
    opts: ReduceOptions,
    pre: Preselector,
}

impl Reducer {
    /// A reducer with the event classes of `config`.
    pub fn new(opts: ReduceOptions, config: &Config) -> Reducer {
        Reducer {
            pre: Preselector::new(&config.events),
            opts,
        }
    }

    fn ids_match(&self, auid: u32, euid: u32, egid: u32, ruid: u32, rgid: u32) -> bool {
        let o = &self.opts;
        !(o.set(OPT_U) && auid as i32 != o.auid
            || o.set(OPT_E) && euid as i32 != o.euid
            || o.set(OPT_F) && egid as i32 != o.egid
            || o.set(OPT_G) && rgid as i32 != o.rgid
            || o.set(OPT_R) && ruid as i32 != o.ruid)
    }

    fn class_ok(&self, event: u16, outcome: Outcome) -> bool {
        self.pre
            .preselect(event, &self.opts.mask, outcome)
            .is_some_and(|s| s.selected())
    }

    /// Selects records of one trail file into `out`: the same loop as
    /// [`Reducer::reduce_stream`], over a trail already in memory.
    pub fn reduce_trail(&self, data: &[u8], out: &mut Vec<u8>) -> ReduceSummary {
        // Neither reading a slice nor writing a Vec can fail.
        self.reduce_stream(data, out).unwrap_or_default()
    }

    /// Selects records read from `src` as they arrive, writing them to `w` (64 KiB at a
    /// time). Stops, as auditreduce does, where the framing stops.
    pub fn reduce_stream<R: Read, W: Write>(
        &self,
        src: R,
        w: &mut W,
    ) -> Result<ReduceSummary, StreamError> {
        let o = &self.opts;
        let mut sum = ReduceSummary::default();
        let mut err = false;
        let mut hdr_event: u16 = 0;
        let mut out = Vec::with_capacity(1 << 17);
        let mut it = RecordStream::new(src);
        while let Some(rec) = it.next_record().map_err(StreamError::Read)? {
            let Ok(rec) = rec else { break };
            sum.records += 1;
            let mut chkd = 0u32;
            let mut selected = true;
            let mut rec_err = false;
            for t in rec.tokens() {
                if !selected {
                    break;
                }
                let t = match t {
                    Ok(t) => t,
                    Err(_) => {
                        rec_err = true;
                        break;
                    }
                };
                let ext = o.extended;
                match t {
                    Token::Header(h) if h.id == crate::token::id::HEADER32 || ext => {
                        chkd |= OPT_ALL | OPT_A_TIME | OPT_B_TIME | OPT_C | OPT_M | OPT_V;
                        hdr_event = h.event;
                        let sec = if h.id == crate::token::id::HEADER32
                            || h.id == crate::token::id::HEADER32_EX
                        {
                            h.sec as u32 as i64
                        } else {
                            h.sec as i64
                        };
                        // -A overrides -a, -b and -d.
                        let out_of_window = !o.set(OPT_ALL)
                            && (o.set(OPT_A_TIME) && sec < o.after
                                || o.set(OPT_B_TIME) && sec > o.before);
                        let class_miss = o.set(OPT_C) && !self.class_ok(h.event, Outcome::Both);
                        let event_miss = o.set(OPT_M) && !o.events.contains(&h.event);
                        selected = !(out_of_window || class_miss || event_miss);
                    }
                    Token::Subject(s)
                        if !s.form.process && ((!s.form.wide && !s.form.ex) || ext) =>
                    {
                        chkd |= OPT_U | OPT_E | OPT_F | OPT_G | OPT_R | OPT_J;
                        selected = self.ids_match(s.auid, s.euid, s.egid, s.ruid, s.rgid)
                            && !(o.set(OPT_J) && s.pid as i32 != o.subject_pid);
                    }
                    Token::Subject(s)
                        if s.form.process && ((!s.form.wide && !s.form.ex) || ext) =>
                    {
                        chkd |= OPT_U | OPT_E | OPT_F | OPT_G | OPT_R | OPT_OP;
                        selected = self.ids_match(s.auid, s.euid, s.egid, s.ruid, s.rgid)
                            && !(o.set(OPT_OP) && s.pid != o.pid_obj);
                    }
                    Token::Ipc { kind, id } => {
                        let (bit, want) = match kind {
                            1 => (OPT_OM, o.msgq),
                            2 => (OPT_OSE, o.sem),
                            3 => (OPT_OSH, o.shm),
                            _ => (0, 0),
                        };
                        if bit == 0 {
                            if o.set(OPT_OM | OPT_OSE | OPT_OSH) {
                                selected = false;
                            }
                        } else {
                            chkd |= bit;
                            if o.set(bit) && id != want {
                                selected = false;
                            }
                        }
                    }
                    Token::Path(p) => {
                        chkd |= OPT_OF;
                        if o.set(OPT_OF) {
                            let path = c_string_at(rec.bytes, p);
                            selected = o
                                .files
                                .iter()
                                .find(|f| f.re.is_match(path))
                                .is_some_and(|f| !f.negate);
                        }
                    }
                    Token::Return32 { status, .. } => {
                        chkd |= OPT_C;
                        let oc = if status == 0 {
                            Outcome::Success
                        } else {
                            Outcome::Failure
                        };
                        if o.set(OPT_C) && !self.class_ok(hdr_event, oc) {
                            selected = false;
                        }
                    }
                    Token::Return64 { status, .. } if ext => {
                        chkd |= OPT_C;
                        let oc = if status == 0 {
                            Outcome::Success
                        } else {
                            Outcome::Failure
                        };
                        if o.set(OPT_C) && !self.class_ok(hdr_event, oc) {
                            selected = false;
                        }
                    }
                    Token::Zonename(z) => {
                        chkd |= OPT_Z;
                        if o.set(OPT_Z) && !fnmatch_pathname(&o.zone, c_string_at(rec.bytes, z)) {
                            selected = false;
                        }
                    }
                    _ => {}
                }
            }
            if rec_err {
                sum.undecodable += 1;
            }
            let sticky = err && !rec_err;
            if rec_err {
                err = true;
            }
            let file_err = if o.extended { rec_err } else { err };
            let mut print = selected && !file_err && (o.opttochk & !chkd) == 0;
            if sticky && !o.extended && !o.set(OPT_V) && selected && (o.opttochk & !chkd) == 0 {
                sum.suppressed_after_error += 1;
            }
            if o.set(OPT_V) {
                print = !print;
            }
            if print {
                out.extend_from_slice(rec.bytes);
                sum.selected += 1;
                if out.len() >= 1 << 16 {
                    w.write_all(&out).map_err(StreamError::Write)?;
                    out.clear();
                }
            }
        }
        w.write_all(&out).map_err(StreamError::Write)?;
        Ok(sum)
    }
}

/// The C string starting where `field` starts inside `rec`, read up to a NUL (which may lie
/// beyond the field, as C's string functions read) or the end of the record.
fn c_string_at<'a>(rec: &'a [u8], field: &'a [u8]) -> &'a [u8] {
    let start = (field.as_ptr() as usize).wrapping_sub(rec.as_ptr() as usize);
    match rec.get(start..) {
        Some(tail) => cstr(tail),
        None => cstr(field),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnmatch_star_does_not_cross_slashes() {
        assert!(fnmatch_pathname(b"jail*", b"jail7"));
        assert!(!fnmatch_pathname(b"jail*", b"jail/7"));
        assert!(fnmatch_pathname(b"j?il[0-9]", b"jail5"));
        assert!(!fnmatch_pathname(b"j[!a]il", b"jail"));
    }

    #[test]
    fn time_prefixes_fill_missing_fields_with_zero() {
        assert_eq!(parse_time("20231201", 6).0, 1_701_388_800);
        assert_eq!(parse_time("20220630235959", 6).0, 1_656_633_599);
    }

    #[test]
    fn escaped_comma_is_literal_and_tilde_negates() {
        let r = parse_file_res("~^/etc/master,^/etc/,/tmp/a\\,b").expect("compiles");
        assert_eq!(r.len(), 3);
        assert!(r[0].negate && !r[1].negate && !r[2].negate);
        assert!(r[2].re.is_match(b"/tmp/a,b"));
    }
}
