//! One log line to one record, by the token scan `sepolgen` (what `audit2why` and
//! `audit2allow` use) performs, so that every line those tools understand means the same
//! thing here.
//!
//! The scan matches no fixed layout: the line is split on whitespace and the first token
//! that names an SELinux record (`avc:`, `msg='avc:` for USER_AVC, `security_compute_sid:`,
//! policy loads, ...) decides what the line is. That is why audit.log, `ausearch -i`,
//! journal, dmesg and Android logcat lines all parse alike. Beyond `sepolgen`, quoted
//! `scontext`/`tcontext`/`tclass` values and the closing `'` of a USER_AVC message are
//! unquoted ([`AvcRecord::normalized`] says when that happened).

use crate::error::Malformed;

/// Whether `c` separates tokens: Python's `str.split()` set (Unicode White_Space plus the
/// four ASCII separators `\x1c`–`\x1f`).
#[inline]
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// The whitespace-separated tokens of a line, as Python's `str.split()` yields them.
pub fn tokens(line: &str) -> Tokens<'_> {
    Tokens { line, pos: 0 }
}

/// The iterator of [`tokens`]: a cursor over the line, cloned to look ahead, so that a
/// line is scanned in place (collecting its tokens into a vector was a tenth of a fleet
/// digest's time). ASCII bytes are classified directly; a non-ASCII character is decoded
/// and classified by [`is_py_space`], so the split is Python's for any text.
#[derive(Clone, Debug)]
pub struct Tokens<'a> {
    line: &'a str,
    pos: usize,
}

/// The ASCII separators of Python's `str.split()` (`\t`..`\r`, `\x1c`..`\x1f`, space) as
/// bits of a mask over the bytes below 64.
const ASCII_SPACES: u64 = (0x1f << 9) | (0x1f << 28);

#[inline]
fn is_ascii_space(b: u8) -> bool {
    b < 64 && (ASCII_SPACES >> b) & 1 != 0
}

impl Tokens<'_> {
    /// The length of the non-ASCII separator at byte `i` (a char boundary), 0 when the
    /// character there does not separate.
    #[cold]
    #[inline(never)]
    fn unicode_space_at(&self, i: usize) -> usize {
        match self.line[i..].chars().next() {
            Some(c) if is_py_space(c) => c.len_utf8(),
            _ => 0,
        }
    }
}

/// The length of the UTF-8 character that starts with byte `b`.
#[inline]
fn char_len(b: u8) -> usize {
    match b {
        0..=0x7f => 1,
        0xf0.. => 4,
        0xe0.. => 3,
        _ => 2,
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let b = self.line.as_bytes();
        let mut i = self.pos;
        while i < b.len() {
            let c = b[i];
            if c < 0x80 {
                if !is_ascii_space(c) {
                    break;
                }
                i += 1;
            } else {
                match self.unicode_space_at(i) {
                    0 => break,
                    n => i += n,
                }
            }
        }
        if i >= b.len() {
            self.pos = b.len();
            return None;
        }
        let start = i;
        while i < b.len() {
            let c = b[i];
            if c < 0x80 {
                if is_ascii_space(c) {
                    break;
                }
                i += 1;
            } else {
                if self.unicode_space_at(i) != 0 {
                    break;
                }
                i += char_len(c);
            }
        }
        self.pos = i;
        Some(&self.line[start..i])
    }
}

/// Which audit record an access-vector line came from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AvcSource {
    /// The kernel's `avc:` record (AVC / type=1400, dmesg, journal, logcat).
    Kernel,
    /// A userspace object manager's USER_AVC record (`msg='avc: ...'`).
    User,
}

/// One AVC record: what was asked, by whom, of what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AvcRecord<'a> {
    /// Kernel AVC or USER_AVC.
    pub source: AvcSource,
    /// `false` for `avc: granted` records (audited grants).
    pub denied: bool,
    /// The permissions between `{` and `}`, in log order (duplicates kept).
    pub perms: Vec<&'a str>,
    /// Source context (the subject).
    pub scontext: &'a str,
    /// Target context (the object).
    pub tcontext: &'a str,
    /// Object class.
    pub tclass: &'a str,
    /// `permissive=0/1` when the record carries it.
    pub permissive: Option<bool>,
    /// `ioctlcmd=` parsed as hexadecimal (as `int(x, 16)` does), when present and valid.
    pub ioctlcmd: Option<i64>,
    /// `comm=`, `exe=` and `name=` with their quotes stripped, when present.
    pub comm: Option<&'a str>,
    /// `exe=` without quotes.
    pub exe: Option<&'a str>,
    /// `name=` without quotes.
    pub name: Option<&'a str>,
    /// Whether a quoted context or class had to be unquoted: `sepolgen` would have read the
    /// quotes as part of the value (and then rejected or misread the record).
    pub normalized: bool,
}

/// A `security_compute_sid: invalid context` record: a role lacks a type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComputeSid<'a> {
    /// The role of the invalid context.
    pub role: &'a str,
    /// The type the role lacks.
    pub ty: &'a str,
    /// The type of `scontext=`.
    pub stype: &'a str,
    /// The type of `tcontext=`.
    pub ttype: &'a str,
}

/// What a line is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// No SELinux record: ignored silently (audit logs hold many other records).
    Other,
    /// An access-vector record.
    Avc(AvcRecord<'a>),
    /// An invalid-context record (audit2allow turns it into `role R types T;`).
    ComputeSid(ComputeSid<'a>),
    /// A policy load, auditd start or AVC_PATH record: SELinux, but nothing to explain.
    Notice,
    /// An SELinux record that cannot be read.
    Malformed(Malformed),
}

/// The record kind a token announces, by `sepolgen`'s list.
enum Trigger {
    Avc(AvcSource),
    ComputeSid,
    Notice,
}

fn trigger(tok: &str) -> Option<Trigger> {
    Some(match tok {
        "avc:" | "message=avc:" => Trigger::Avc(AvcSource::Kernel),
        "msg='avc:" => Trigger::Avc(AvcSource::User),
        "security_compute_sid:" => Trigger::ComputeSid,
        "type=MAC_POLICY_LOAD" | "type=1403" | "type=AVC_PATH" | "type=DAEMON_START" => {
            Trigger::Notice
        }
        _ => return None,
    })
}

/// Whether `tok` announces an SELinux record (sepolgen's list: `avc:`, `msg='avc:`,
/// `security_compute_sid:`, `type=MAC_POLICY_LOAD`, ...).
pub fn is_record_token(tok: &str) -> bool {
    trigger(tok).is_some()
}

/// Parses one line (without or with its line terminator).
pub fn parse_line(line: &str) -> Line<'_> {
    let toks = tokens(line);
    for tok in toks.clone() {
        match trigger(tok) {
            None => continue,
            Some(Trigger::Avc(source)) => {
                return match parse_avc(toks, source) {
                    Ok(Some(r)) => Line::Avc(r),
                    Ok(None) => Line::Notice,
                    Err(m) => Line::Malformed(m),
                }
            }
            Some(Trigger::ComputeSid) => {
                return match parse_compute_sid(toks) {
                    Some(c) => Line::ComputeSid(c),
                    None => Line::Malformed(Malformed::ComputeSid),
                }
            }
            Some(Trigger::Notice) => return Line::Notice,
        }
    }
    Line::Other
}

/// Whether sepolgen's `-l` (`--lastreload`) parser forgets everything read so far at this
/// line: its first record token announces a policy load (`type=MAC_POLICY_LOAD`,
/// `type=1403`), or an auditd start (`type=DAEMON_START`) with an `auditd` token.
pub fn starts_over(line: &str) -> bool {
    match tokens(line).find(|t| trigger(t).is_some()) {
        Some("type=MAC_POLICY_LOAD" | "type=1403") => true,
        Some("type=DAEMON_START") => tokens(line).any(|t| t == "auditd"),
        _ => false,
    }
}

/// sepolgen's record header, which ties an `AVC_PATH` record to its AVC records: the value
/// of the first `msg=` field, or the first `audit(...` token not of the `key=value` shape,
/// whichever comes first; empty when neither occurs.
pub fn header(line: &str) -> &str {
    for tok in tokens(line) {
        match field(tok) {
            Some(("msg", v)) => return v,
            Some(_) => {}
            None if tok.starts_with("audit(") => return tok,
            None => {}
        }
    }
    ""
}

/// The path of an `AVC_PATH` record (its first record token is `type=AVC_PATH`): the first
/// `path=` value without its first and last character, empty when there is none.
pub fn avc_path(line: &str) -> Option<&str> {
    if tokens(line).find(|t| trigger(t).is_some()) != Some("type=AVC_PATH") {
        return None;
    }
    Some(
        tokens(line)
            .find_map(|t| match field(t) {
                Some(("path", v)) => Some(strip_ends(v)),
                _ => None,
            })
            .unwrap_or(""),
    )
}

/// Splits `key=value` the way `sepolgen` does: exactly one `=`, else not a field.
#[inline]
fn field(tok: &str) -> Option<(&str, &str)> {
    // `=` is ASCII, so byte positions are char boundaries.
    let b = tok.as_bytes();
    let at = b.iter().position(|&c| c == b'=')?;
    (!b[at + 1..].contains(&b'=')).then(|| (&tok[..at], &tok[at + 1..]))
}

/// `sepolgen` requires user:role:type at least.
#[inline]
fn context_shaped(v: &str) -> bool {
    v.bytes().filter(|&b| b == b':').nth(1).is_some()
}

/// Python's `s[1:-1]` on a quoted value.
fn strip_ends(v: &str) -> &str {
    let mut it = v.chars();
    it.next();
    it.next_back();
    it.as_str()
}

/// Removes a pair of surrounding quotes, or the lone closing `'` of a USER_AVC message.
fn unquote(v: &str) -> &str {
    let b = v.as_bytes();
    if b.len() >= 2 && (b[0] == b'"' || b[0] == b'\'') && b[b.len() - 1] == b[0] {
        return &v[1..v.len() - 1];
    }
    if b.len() >= 2 && b[b.len() - 1] == b'\'' && b[0] != b'\'' {
        return &v[..v.len() - 1];
    }
    v
}

/// `Ok(None)`: an `avc:` notice that asks about no access (`received policyload notice`,
/// `op=setenforce`): no permission list and no contexts. sepolgen drops it as invalid.
fn parse_avc(toks: Tokens<'_>, source: AvcSource) -> Result<Option<AvcRecord<'_>>, Malformed> {
    let mut rec = AvcRecord {
        source,
        denied: true,
        perms: Vec::new(),
        scontext: "",
        tcontext: "",
        tclass: "",
        permissive: None,
        ioctlcmd: None,
        comm: None,
        exe: None,
        name: None,
        normalized: false,
    };
    let (mut src, mut tgt, mut class, mut access) = (false, false, false, false);
    // Every token is examined, those inside the braces too, as sepolgen's loop does.
    let mut it = toks;
    while let Some(tok) = it.next() {
        if tok == "{" {
            // sepolgen refuses an open brace as the second-to-last token, and one never
            // closed.
            let mut ahead = it.clone();
            if ahead.next().is_some() && ahead.next().is_none() {
                return Err(Malformed::UnclosedBrace);
            }
            let mut closed = false;
            for t in it.clone() {
                if t == "}" {
                    closed = true;
                    break;
                }
                rec.perms.push(t);
            }
            if !closed {
                return Err(Malformed::UnclosedBrace);
            }
            access = true;
            continue;
        }
        if tok == "granted" {
            rec.denied = false;
        }
        let Some((k, v)) = field(tok) else { continue };
        match k {
            "scontext" | "tcontext" => {
                let u = unquote(v);
                if !context_shaped(u) {
                    return Err(Malformed::Context(if k == "scontext" {
                        "scontext"
                    } else {
                        "tcontext"
                    }));
                }
                rec.normalized |= u.len() != v.len();
                if k == "scontext" {
                    rec.scontext = u;
                    src = true;
                } else {
                    rec.tcontext = u;
                    tgt = true;
                }
            }
            "tclass" => {
                let u = unquote(v);
                rec.normalized |= u.len() != v.len();
                rec.tclass = u;
                class = true;
            }
            "comm" => rec.comm = Some(strip_ends(v)),
            "exe" => rec.exe = Some(strip_ends(v)),
            "name" => rec.name = Some(strip_ends(v)),
            "permissive" => match unquote(v) {
                "0" => rec.permissive = Some(false),
                "1" => rec.permissive = Some(true),
                _ => {}
            },
            "ioctlcmd" => {
                if let Some(n) = python_hex(v) {
                    rec.ioctlcmd = Some(n);
                }
            }
            _ => {}
        }
    }
    if !src && !tgt && !access {
        return Ok(None);
    }
    if !src {
        return Err(Malformed::Missing("scontext"));
    }
    if !tgt {
        return Err(Malformed::Missing("tcontext"));
    }
    if !class {
        return Err(Malformed::Missing("tclass"));
    }
    if !access {
        return Err(Malformed::Missing("permissions"));
    }
    if rec.perms.is_empty() {
        return Err(Malformed::NoPermissions);
    }
    Ok(Some(rec))
}

fn parse_compute_sid<'a>(mut it: Tokens<'a>) -> Option<ComputeSid<'a>> {
    // The record's first ten tokens (fewer: not a record sepolgen reads).
    let mut toks = [""; 10];
    for t in &mut toks {
        *t = it.next()?;
    }
    let value = |t: &'a str| t.split('=').nth(1);
    let mut invalid = toks[5].split(':');
    let (_user, role, ty) = (invalid.next()?, invalid.next()?, invalid.next()?);
    let mut types = ["", ""];
    for (t, ty) in toks[7..9].iter().zip(&mut types) {
        let ctx = value(t)?;
        if !context_shaped(ctx) {
            return None;
        }
        *ty = ctx.split(':').nth(2)?;
    }
    value(toks[9])?;
    Some(ComputeSid {
        role,
        ty,
        stype: types[0],
        ttype: types[1],
    })
}

/// `int(s, 16)` for the forms an ioctl command takes: optional sign, optional `0x`,
/// hexadecimal digits with single `_` separators. `None` where Python raises.
fn python_hex(s: &str) -> Option<i64> {
    let (neg, rest) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let rest = match rest.get(..2) {
        Some("0x") | Some("0X") => rest[2..].strip_prefix('_').unwrap_or(&rest[2..]),
        _ => rest,
    };
    if rest.is_empty() || rest.starts_with('_') || rest.ends_with('_') || rest.contains("__") {
        return None;
    }
    let mut n: i64 = 0;
    for c in rest.chars().filter(|&c| c != '_') {
        n = n.checked_mul(16)?.checked_add(c.to_digit(16)? as i64)?;
    }
    Some(if neg { -n } else { n })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn avc(line: &str) -> AvcRecord<'_> {
        match parse_line(line) {
            Line::Avc(r) => r,
            other => panic!("not an AVC record: {other:?}"),
        }
    }

    const AUDIT: &str = "type=AVC msg=audit(1155568085.407:10877): avc:  denied  { search write } for  pid=677 comm=\"python\" name=\"modules\" dev=dm-0 ino=13716388 scontext=user_u:system_r:setroubleshootd_t:s0 tcontext=system_u:object_r:modules_object_t:s0 tclass=dir permissive=0\n";

    #[test]
    fn audit_log_line_yields_every_field() {
        let r = avc(AUDIT);
        assert_eq!(r.perms, ["search", "write"]);
        assert_eq!(r.scontext, "user_u:system_r:setroubleshootd_t:s0");
        assert_eq!(r.tcontext, "system_u:object_r:modules_object_t:s0");
        assert_eq!(r.tclass, "dir");
        assert_eq!(r.comm, Some("python"));
        assert_eq!(r.permissive, Some(false));
        assert!(r.denied && !r.normalized);
        assert_eq!(r.source, AvcSource::Kernel);
    }

    #[test]
    fn token_order_does_not_matter() {
        let r = avc("tclass=file tcontext=a:b:c { read } scontext=x:y:z avc: denied");
        assert_eq!(
            (r.scontext, r.tcontext, r.tclass),
            ("x:y:z", "a:b:c", "file")
        );
    }

    #[test]
    fn user_avc_closing_quote_is_removed_from_the_class() {
        let r = avc("type=USER_AVC msg=audit(1.2:3): pid=1 uid=81 msg='avc:  denied  { send_msg } for msgtype=method_return scontext=system_u:system_r:a_t:s0 tcontext=system_u:system_r:b_t:s0 tclass=dbus'");
        assert_eq!(r.source, AvcSource::User);
        assert_eq!(r.tclass, "dbus");
        assert!(r.normalized);
    }

    #[test]
    fn quoted_contexts_are_unquoted() {
        let r = avc("avc: denied { read } scontext=\"a:b:c:s0\" tcontext='d:e:f' tclass=file");
        assert_eq!((r.scontext, r.tcontext), ("a:b:c:s0", "d:e:f"));
        assert!(r.normalized);
    }

    #[test]
    fn granted_records_are_not_denials() {
        assert!(
            !avc("avc:  granted  { setenforce } for scontext=a:b:c tcontext=a:b:c tclass=security")
                .denied
        );
    }

    #[test]
    fn missing_close_brace_is_malformed() {
        assert_eq!(
            parse_line("avc: denied { read scontext=a:b:c tcontext=a:b:c tclass=file"),
            Line::Malformed(Malformed::UnclosedBrace)
        );
        // sepolgen also refuses an open brace as the second-to-last token.
        assert_eq!(
            parse_line("avc: scontext=a:b:c tcontext=a:b:c tclass=file { }"),
            Line::Malformed(Malformed::UnclosedBrace)
        );
    }

    #[test]
    fn each_missing_field_is_named() {
        assert_eq!(
            parse_line("avc: denied { read } tcontext=a:b:c tclass=file"),
            Line::Malformed(Malformed::Missing("scontext"))
        );
        assert_eq!(
            parse_line("avc: denied { read } scontext=a:b:c tcontext=a:b:c"),
            Line::Malformed(Malformed::Missing("tclass"))
        );
        assert_eq!(
            parse_line("avc: denied { read } scontext=a:b tcontext=a:b:c tclass=file"),
            Line::Malformed(Malformed::Context("scontext"))
        );
    }

    #[test]
    fn lines_without_selinux_tokens_are_other() {
        assert_eq!(
            parse_line("type=SYSCALL msg=audit(1:2): arch=c000003e"),
            Line::Other
        );
        assert_eq!(parse_line("----"), Line::Other);
        assert_eq!(
            parse_line("type=MAC_POLICY_LOAD msg=audit(1:2): policy loaded"),
            Line::Notice
        );
    }

    #[test]
    fn policy_loads_and_auditd_starts_start_over_for_last_reload() {
        assert!(starts_over(
            "type=MAC_POLICY_LOAD msg=audit(1:2): policy loaded"
        ));
        assert!(starts_over("audit(1:2): type=1403 x"));
        assert!(starts_over(
            "type=DAEMON_START msg=audit(1:2): auditd start, ver=2"
        ));
        assert!(!starts_over("type=DAEMON_START msg=audit(1:2): op=start"));
        // The first record token decides: an AVC record naming a policy load is an AVC.
        assert!(!starts_over(
            "avc: denied { read } type=MAC_POLICY_LOAD scontext=a:b:c tcontext=a:b:c tclass=file"
        ));
        assert!(!starts_over("type=AVC_PATH msg=audit(1:2): path=\"/x\""));
    }

    #[test]
    fn headers_and_avc_paths_are_found_as_sepolgen_finds_them() {
        assert_eq!(header(AUDIT), "audit(1155568085.407:10877):");
        assert_eq!(header("x audit(1:2): msg=audit(3:4):"), "audit(1:2):");
        assert_eq!(header("avc: denied"), "");
        let p = "type=AVC_PATH msg=audit(1:2): path=\"/etc/shadow\"";
        assert_eq!(avc_path(p), Some("/etc/shadow"));
        assert_eq!(avc_path("type=AVC_PATH msg=audit(1:2):"), Some(""));
        assert_eq!(avc_path(AUDIT), None);
    }

    #[test]
    fn avc_notices_without_access_are_not_malformed() {
        let l = "type=USER_AVC msg=audit(1.0:2): pid=1 uid=0 msg='avc:  received policyload notice (seqno=2)  exe=\"/usr/lib/systemd/systemd\" sauid=0 hostname=? addr=? terminal=?'";
        assert_eq!(parse_line(l), Line::Notice);
    }

    #[test]
    fn empty_permission_list_is_malformed_not_fatal() {
        assert_eq!(
            parse_line("avc: denied { } for scontext=a:b:c tcontext=a:b:c tclass=file"),
            Line::Malformed(Malformed::NoPermissions)
        );
    }

    #[test]
    fn tokens_split_as_str_split_with_python_whitespace() {
        let pieces = [
            "a", "avc:", " ", "\t", "\u{a0}", "\u{85}", "\u{2003}", "\u{3000}", "\x1c", "\x1f",
            "é", "€", "{", "}", "=", "\r", "\x0b", "\u{200b}", "x=y",
        ];
        let mut x: u32 = 7;
        for len in 0..12 {
            for _ in 0..200 {
                let line: String = (0..len)
                    .map(|_| {
                        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                        pieces[(x >> 16) as usize % pieces.len()]
                    })
                    .collect();
                let want: Vec<&str> = line.split(is_py_space).filter(|t| !t.is_empty()).collect();
                assert_eq!(tokens(&line).collect::<Vec<_>>(), want, "{line:?}");
            }
        }
    }

    #[test]
    fn python_whitespace_separates_tokens() {
        let r = avc("avc:\x1cdenied\u{a0}{ read }\tscontext=a:b:c\x1ftcontext=a:b:c tclass=file");
        assert_eq!(r.perms, ["read"]);
    }

    #[test]
    fn ioctlcmd_parses_as_python_int_base_16() {
        assert_eq!(python_hex("0x5401"), Some(0x5401));
        assert_eq!(python_hex("54_01"), Some(0x5401));
        assert_eq!(python_hex("-1f"), Some(-0x1f));
        assert_eq!(python_hex("0x"), None);
        assert_eq!(python_hex("zz"), None);
        assert_eq!(python_hex("1__2"), None);
    }

    #[test]
    fn compute_sid_record_names_role_and_type() {
        let l = "type=SELINUX_ERR msg=audit(1.2:3): security_compute_sid:  invalid context user_u:user_r:foo_t:s0 for scontext=user_u:user_r:user_t:s0 tcontext=system_u:object_r:foo_exec_t:s0 tclass=process";
        assert_eq!(
            parse_line(l),
            Line::ComputeSid(ComputeSid {
                role: "user_r",
                ty: "foo_t",
                stype: "user_t",
                ttype: "foo_exec_t",
            })
        );
    }
}
