//! praudit-compatible printing: the default, `-l`, `-r`, `-s`, `-x`, `-n` and `-d` forms,
//! byte for byte as OpenBSM's `praudit` writes them on Linux with `TZ=UTC`, quirks included
//! (header32_ex in XML, subject32's `tid` space, raw NULs from arbitrary data, unescaped
//! XML text).
//!
//! Times print in UTC. Without `-n`/`-r`, user and group ids are resolved through
//! `/etc/passwd` and `/etc/group` (read once).

use crate::config::EventDb;
use crate::errno_text::RETURN_TEXT;
use crate::error::{FramingError, StreamError};
use crate::fmt::{
    alt_hex, cstr, ctime_utc, ctime_utc_cached, dec, hex, hex2, ipv4, ipv6, oct, sdec, string,
    xml_string,
};
use crate::stream::RecordStream;
use crate::token::{Addr, Header, Subject, Token, MAX_EXEC_STRINGS};
use crate::trail::Record;
use std::collections::HashMap;
use std::io::{Read, Write};

/// One named field and the function that writes its value.
type Field<'f> = (&'f str, &'f dyn Fn(&mut Vec<u8>));

/// praudit's options.
#[derive(Clone, Debug)]
pub struct PrintOptions {
    /// `-l`: one record per line.
    pub oneline: bool,
    /// `-r`: raw numbers.
    pub raw: bool,
    /// `-s`: short event names.
    pub short: bool,
    /// `-x`: XML.
    pub xml: bool,
    /// `-n`: do not resolve uids and gids to names.
    pub noresolve: bool,
    /// `-d DEL`: field delimiter (default `,`).
    pub delim: Vec<u8>,
    /// JSON lines instead of praudit's layout (one object per record; tokens in the text
    /// form the other options select).
    pub json: bool,
    /// After a framing error, resume at the next plausible record instead of stopping (as
    /// praudit does).
    pub resync: bool,
}

impl Default for PrintOptions {
    fn default() -> Self {
        PrintOptions {
            oneline: false,
            raw: false,
            short: false,
            xml: false,
            noresolve: false,
            delim: b",".to_vec(),
            json: false,
            resync: false,
        }
    }
}

/// What printing a trail found.
#[derive(Clone, Debug, Default)]
pub struct PrintSummary {
    /// Records printed (file tokens included).
    pub records: u64,
    /// Records whose tokens stopped decoding before the end (offset of the bad token).
    pub bad_tokens: Vec<crate::error::DecodeError>,
    /// Where framing stopped before the end of the input (with `resync`, every place it
    /// did, each followed by a jump to the next plausible record).
    pub framing: Vec<FramingError>,
    /// Bytes skipped by resynchronisation.
    pub skipped: usize,
}

/// uid/gid → name tables from `/etc/passwd` and `/etc/group`.
#[derive(Debug, Default)]
struct Names {
    users: HashMap<u32, Vec<u8>>,
    groups: HashMap<u32, Vec<u8>>,
}

impl Names {
    fn load() -> Names {
        fn table(path: &str) -> HashMap<u32, Vec<u8>> {
            let mut m = HashMap::new();
            if let Ok(d) = std::fs::read(path) {
                for line in d.split(|&b| b == b'\n') {
                    let f: Vec<&[u8]> = line.split(|&b| b == b':').collect();
                    if f.len() >= 3 {
                        if let Some(id) = std::str::from_utf8(f[2])
                            .ok()
                            .and_then(|s| s.parse::<u32>().ok())
                        {
                            m.entry(id).or_insert_with(|| f[0].to_vec());
                        }
                    }
                }
            }
            m
        }
        Names {
            users: table("/etc/passwd"),
            groups: table("/etc/group"),
        }
    }
}

/// A praudit printer bound to an event table and options.
pub struct Printer<'e> {
    opts: PrintOptions,
    events: &'e EventDb,
    names: Option<Names>,
    day: std::cell::RefCell<crate::fmt::DayCache>,
}

impl<'e> Printer<'e> {
    /// A printer using `events` for event names and descriptions.
    pub fn new(events: &'e EventDb, opts: PrintOptions) -> Printer<'e> {
        let names = if opts.raw || opts.noresolve {
            None
        } else {
            Some(Names::load())
        };
        Printer {
            opts,
            events,
            names,
            day: Default::default(),
        }
    }

    /// The XML prologue (`-x`), once before the first file.
    pub fn xml_header(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"<?xml version='1.0' ?>\n<audit>\n");
    }

    /// The XML epilogue, after the last file (praudit omits it when reading stdin).
    pub fn xml_footer(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"</audit>\n");
    }

    /// Prints every record of `data` to `w`, as praudit's `print_tokens` does for one file.
    /// The same loop as [`Printer::print_stream`], over a trail already in memory.
    pub fn print_trail<W: Write>(&self, data: &[u8], w: &mut W) -> std::io::Result<PrintSummary> {
        self.print_stream(data, w).map_err(|e| match e {
            StreamError::Read(e) | StreamError::Write(e) => e,
        })
    }

    /// Prints every record read from `src` to `w` as the records arrive, holding one
    /// record and 64 KiB of output at a time.
    pub fn print_stream<R: Read, W: Write>(
        &self,
        src: R,
        w: &mut W,
    ) -> Result<PrintSummary, StreamError> {
        let mut out = Vec::with_capacity(1 << 17);
        let mut sum = PrintSummary::default();
        let mut it = RecordStream::new(src);
        while let Some(r) = it.next_record().map_err(StreamError::Read)? {
            match r {
                Ok(rec) => {
                    let bad = if self.opts.json {
                        self.print_json_record(&rec, &mut out)
                    } else {
                        self.print_record(&rec, &mut out)
                    };
                    if let Some(e) = bad {
                        sum.bad_tokens.push(e);
                    }
                    sum.records += 1;
                    if out.len() >= 1 << 16 {
                        w.write_all(&out).map_err(StreamError::Write)?;
                        out.clear();
                    }
                }
                Err(e) => {
                    sum.framing.push(e);
                    if self.opts.resync {
                        if let Some(at) = it.resync().map_err(StreamError::Read)? {
                            sum.skipped += at - e.offset();
                        }
                    }
                }
            }
        }
        w.write_all(&out).map_err(StreamError::Write)?;
        for e in &mut sum.framing {
            *e = it.resolve(*e).map_err(StreamError::Read)?;
        }
        Ok(sum)
    }

    /// Prints one record; returns the decoding error that cut it short, if any.
    pub fn print_record(
        &self,
        rec: &Record<'_>,
        out: &mut Vec<u8>,
    ) -> Option<crate::error::DecodeError> {
        let mut bad = None;
        for t in rec.tokens() {
            match t {
                Ok(t) => {
                    self.print_token(&t, out);
                    if self.opts.oneline {
                        if !self.opts.xml {
                            self.del(out);
                        }
                    } else {
                        out.push(b'\n');
                    }
                }
                Err(e) => {
                    bad = Some(e);
                    break;
                }
            }
        }
        if self.opts.oneline {
            out.push(b'\n');
        }
        bad
    }

    /// Prints one record as a JSON object on one line: its trail offset, its tokens in
    /// this printer's text form (one string each; bytes that are not UTF-8 become U+FFFD),
    /// and the decoding error that cut it short, if any.
    pub fn print_json_record(
        &self,
        rec: &Record<'_>,
        out: &mut Vec<u8>,
    ) -> Option<crate::error::DecodeError> {
        out.extend_from_slice(b"{\"offset\":");
        dec(out, rec.offset as u64);
        out.extend_from_slice(b",\"tokens\":[");
        let mut text = Vec::new();
        let mut error = None;
        for (i, t) in rec.tokens().enumerate() {
            match t {
                Ok(t) => {
                    if i > 0 {
                        out.push(b',');
                    }
                    text.clear();
                    self.print_token(&t, &mut text);
                    json_string(out, &String::from_utf8_lossy(&text));
                }
                Err(e) => error = Some(e),
            }
        }
        out.push(b']');
        if let Some(e) = error {
            out.extend_from_slice(b",\"error\":");
            json_string(out, &e.to_string());
        }
        out.extend_from_slice(b"}\n");
        error
    }

    #[inline(always)]
    fn del(&self, out: &mut Vec<u8>) {
        match self.opts.delim.as_slice() {
            [b] => out.push(*b),
            d => out.extend_from_slice(d),
        }
    }

    #[inline(always)]
    fn open(&self, out: &mut Vec<u8>, name: &str) {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"=\"");
    }

    #[inline(always)]
    fn close(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"\" ");
    }

    /// Token name (plain), id (raw) or XML opening.
    #[inline(always)]
    fn kind(&self, out: &mut Vec<u8>, id: u8, name: &str, xml_open: &str) {
        if self.opts.xml {
            out.extend_from_slice(xml_open.as_bytes());
        } else if self.opts.raw {
            dec(out, id as u64);
        } else {
            out.extend_from_slice(name.as_bytes());
        }
    }

    fn user(&self, out: &mut Vec<u8>, id: u32) {
        match self.names.as_ref().and_then(|n| n.users.get(&id)) {
            Some(name) => out.extend_from_slice(name),
            None => sdec(out, id as i32 as i64),
        }
    }

    fn group(&self, out: &mut Vec<u8>, id: u32) {
        match self.names.as_ref().and_then(|n| n.groups.get(&id)) {
            Some(name) => out.extend_from_slice(name),
            None => sdec(out, id as i32 as i64),
        }
    }

    fn event(&self, out: &mut Vec<u8>, ev: u16) {
        match self.events.by_number(ev) {
            None => dec(out, ev as u64),
            Some(_) if self.opts.raw => dec(out, ev as u64),
            Some(e) if self.opts.short => out.extend_from_slice(&e.name),
            Some(e) => out.extend_from_slice(&e.desc),
        }
    }

    fn sec(&self, out: &mut Vec<u8>, s: u64) {
        if self.opts.raw {
            dec(out, s as u32 as u64);
        } else {
            match self.day.try_borrow_mut() {
                Ok(mut c) => ctime_utc_cached(out, s as i64, &mut c),
                Err(_) => ctime_utc(out, s as i64),
            }
        }
    }

    fn msec(&self, out: &mut Vec<u8>, ms: u64) {
        if self.opts.raw {
            dec(out, ms as u32 as u64);
        } else {
            out.extend_from_slice(b" + ");
            dec(out, ms as u32 as u64);
            out.extend_from_slice(b" msec");
        }
    }

    fn retval(&self, out: &mut Vec<u8>, status: u8) {
        if self.opts.raw {
            dec(out, status as u64);
        } else {
            match RETURN_TEXT[status as usize] {
                Some(t) => out.extend_from_slice(t.as_bytes()),
                None => {
                    out.extend_from_slice(b"failure: Unknown error: ");
                    dec(out, status as u64);
                }
            }
        }
    }

    fn ex_addr(&self, out: &mut Vec<u8>, a: &Addr) {
        match a {
            Addr::V4(b) => ipv4(out, b),
            Addr::V6(b) => ipv6(out, b),
            Addr::Invalid(_) => out.extend_from_slice(b"invalid"),
        }
    }

    fn mem(&self, out: &mut Vec<u8>, data: &[u8]) {
        if !data.is_empty() {
            out.extend_from_slice(b"0x");
            for &b in data {
                hex2(out, b);
            }
        }
    }

    fn header(&self, out: &mut Vec<u8>, h: &Header) {
        let ex = h.host.is_some();
        self.kind(
            out,
            h.id,
            if ex { "header_ex" } else { "header" },
            "<record ",
        );
        // libbsm's header32_ex printer tests the raw flag where it means the XML flag.
        let attr_form = if h.id == crate::token::id::HEADER32_EX {
            self.opts.raw
        } else {
            self.opts.xml
        };
        if attr_form {
            self.open(out, "version");
            dec(out, h.version as u64);
            self.close(out);
            self.open(out, "event");
            self.event(out, h.event);
            self.close(out);
            self.open(out, "modifier");
            dec(out, h.modifier as u64);
            self.close(out);
            if let Some(a) = &h.host {
                self.open(out, "host");
                self.ex_addr(out, a);
                self.close(out);
            }
            self.open(out, "time");
            self.sec(out, h.sec);
            self.close(out);
            self.open(out, "msec");
            self.msec(out, h.msec);
            self.close(out);
            out.push(b'>');
        } else {
            self.del(out);
            dec(out, h.size as u64);
            self.del(out);
            dec(out, h.version as u64);
            self.del(out);
            self.event(out, h.event);
            self.del(out);
            dec(out, h.modifier as u64);
            if let Some(a) = &h.host {
                self.del(out);
                self.ex_addr(out, a);
            }
            self.del(out);
            self.sec(out, h.sec);
            self.del(out);
            self.msec(out, h.msec);
        }
    }

    fn subject(&self, out: &mut Vec<u8>, s: &Subject) {
        let name = match (s.form.process, s.form.ex) {
            (false, false) => "subject",
            (true, false) => "process",
            (false, true) => "subject_ex",
            (true, true) => "process_ex",
        };
        self.kind(
            out,
            s.form.token_id(),
            name,
            if s.form.process {
                "<process "
            } else {
                "<subject "
            },
        );
        let addr = |out: &mut Vec<u8>| match &s.addr {
            a @ (Addr::V6(_) | Addr::Invalid(_)) => self.ex_addr(out, a),
            Addr::V4(b) => ipv4(out, b),
        };
        if self.opts.xml {
            self.open(out, "audit-uid");
            self.user(out, s.auid);
            self.close(out);
            self.open(out, "uid");
            self.user(out, s.euid);
            self.close(out);
            self.open(out, "gid");
            self.group(out, s.egid);
            self.close(out);
            self.open(out, "ruid");
            self.user(out, s.ruid);
            self.close(out);
            self.open(out, "rgid");
            self.group(out, s.rgid);
            self.close(out);
            self.open(out, "pid");
            dec(out, s.pid as u64);
            self.close(out);
            self.open(out, "sid");
            dec(out, s.sid as u64);
            self.close(out);
            self.open(out, "tid");
            dec(out, s.port);
            // Only subject32 separates port and address with a space.
            if !s.form.process && !s.form.wide && !s.form.ex {
                out.push(b' ');
            }
            addr(out);
            self.close(out);
            out.extend_from_slice(b"/>");
        } else {
            self.del(out);
            self.user(out, s.auid);
            self.del(out);
            self.user(out, s.euid);
            self.del(out);
            self.group(out, s.egid);
            self.del(out);
            self.user(out, s.ruid);
            self.del(out);
            self.group(out, s.rgid);
            self.del(out);
            dec(out, s.pid as u64);
            self.del(out);
            dec(out, s.sid as u64);
            self.del(out);
            dec(out, s.port);
            self.del(out);
            addr(out);
        }
    }

    fn arbitrary(&self, out: &mut Vec<u8>, how: u8, unit: u8, count: u8, data: &[u8]) {
        self.kind(out, crate::token::id::DATA, "arbitrary", "<arbitrary ");
        if !self.opts.xml {
            self.del(out);
        }
        let how_name = match how {
            0 => "binary",
            1 => "octal",
            2 => "decimal",
            3 => "hex",
            4 => "string",
            _ => return,
        };
        let (unit_name, size) = match unit {
            0 => ("byte", 1usize),
            1 => ("short", 2),
            2 => ("int", 4),
            _ => ("int64", 8),
        };
        if self.opts.xml {
            self.open(out, "print");
            out.extend_from_slice(how_name.as_bytes());
            self.close(out);
            self.open(out, "type");
            dec(out, size as u64);
            self.close(out);
            self.open(out, "count");
            dec(out, count as u64);
            self.close(out);
            out.push(b'>');
        } else {
            out.extend_from_slice(how_name.as_bytes());
            self.del(out);
            out.extend_from_slice(unit_name.as_bytes());
            self.del(out);
            dec(out, count as u64);
            self.del(out);
        }
        for item in data.chunks_exact(size).take(count as usize) {
            // praudit reads items in host (little-endian) order and passes them to a
            // conversion that reads an int: the low 32 bits.
            let mut v: u64 = 0;
            for (i, &b) in item.iter().enumerate() {
                v |= (b as u64) << (8 * i);
            }
            let v32 = v as u32;
            match how {
                0 => {
                    out.push(b' ');
                    out.push(v32 as u8);
                }
                1 => {
                    out.push(b' ');
                    oct(out, v32 as u64);
                }
                2 => {
                    out.push(b' ');
                    sdec(out, v32 as i32 as i64);
                }
                3 => {
                    out.push(b' ');
                    hex(out, v32 as u64);
                }
                _ => out.push(v32 as u8),
            }
        }
        if self.opts.xml {
            out.extend_from_slice(b"</arbitrary>");
        }
    }

    fn exec(&self, out: &mut Vec<u8>, id: u8, s: &crate::token::ExecStrings<'_>, env: bool) {
        let (name, open, item, close, end) = if env {
            ("exec env", "<exec_env>", "<env>", "</env>", "</exec_env>")
        } else {
            ("exec arg", "<exec_args>", "<arg>", "</arg>", "</exec_args>")
        };
        self.kind(out, id, name, open);
        for a in s.iter().take(MAX_EXEC_STRINGS as usize) {
            if self.opts.xml {
                out.extend_from_slice(item.as_bytes());
                xml_string(out, a);
                out.extend_from_slice(close.as_bytes());
            } else {
                self.del(out);
                out.extend_from_slice(a);
            }
        }
        if self.opts.xml {
            out.extend_from_slice(end.as_bytes());
        }
    }

    fn uuid(&self, out: &mut Vec<u8>, u: &[u8; 16]) {
        for (i, &b) in u.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                out.push(b'-');
            }
            hex2(out, b);
        }
    }

    /// Prints one token (without the separator that follows it).
    pub fn print_token(&self, t: &Token<'_>, out: &mut Vec<u8>) {
        use crate::token::id;
        match *t {
            Token::Header(ref h) => self.header(out, h),
            Token::Trailer { count, .. } => self.trailer(out, count),
            Token::File { sec, msec, name } => self.file(out, sec, msec, name),
            Token::Arg32 { no, value, text } => self.arg(out, id::ARG32, no, value as u64, text),
            Token::Arg64 { no, value, text } => self.arg(out, id::ARG64, no, value, text),
            Token::ArgUuid { no, ref uuid, text } => {
                self.uuid_tok(out, id::ARG_UUID, "arg_uuid", no, uuid, text)
            }
            Token::RetUuid { no, ref uuid, text } => {
                self.uuid_tok(out, id::RETURN_UUID, "ret_uuid", no, uuid, text)
            }
            Token::Arbitrary {
                how,
                unit,
                count,
                data,
            } => self.arbitrary(out, how, unit, count, data),
            Token::Attr(ref a) => self.attr(out, a),
            Token::Exit { status, ret } => self.exit(out, status, ret),
            Token::ExecArgs(ref s) => self.exec(out, id::EXEC_ARGS, s, false),
            Token::ExecEnv(ref s) => self.exec(out, id::EXEC_ENV, s, true),
            Token::Groups { list, .. } => self.groups(out, list),
            Token::InAddr(ref a) => self.element(
                out,
                id::IN_ADDR,
                "ip addr",
                "<ip_address>",
                "</ip_address>",
                |o| ipv4(o, a),
            ),
            Token::InAddrEx(ref a) => self.element(
                out,
                id::IN_ADDR_EX,
                "ip addr ex",
                "<ip_address>",
                "</ip_address>",
                |o| self.ex_addr(o, a),
            ),
            Token::Ip(ref ip) => self.ip(out, ip),
            Token::Ipc { kind, id: ipc_id } => self.ipc(out, kind, ipc_id),
            Token::IpcPerm(ref p) => self.ipc_perm(out, p),
            Token::Iport(p) => {
                self.element(out, id::IPORT, "ip port", "<ip_port>", "</ip_port>", |o| {
                    alt_hex(o, u16::from_be_bytes(p) as u64)
                })
            }
            Token::Opaque(d) => self.opaque(out, d),
            Token::Path(p) => {
                self.element(out, id::PATH, "path", "<path>", "</path>", |o| string(o, p))
            }
            Token::Text(p) => {
                self.element(out, id::TEXT, "text", "<text>", "</text>", |o| string(o, p))
            }
            Token::Zonename(z) => {
                self.kind(out, id::ZONENAME, "zone", "<zone ");
                self.fields(out, &[("name", &|o| string(o, z))]);
            }
            Token::Subject(ref s) => self.subject(out, s),
            Token::Return32 { status, value } => {
                self.ret(out, id::RETURN32, status, |o| dec(o, value as u64))
            }
            Token::Return64 { status, value } => {
                self.ret(out, id::RETURN64, status, |o| sdec(o, value as i64))
            }
            Token::Seq(n) => {
                self.kind(out, id::SEQ, "sequence", "<sequence ");
                self.fields(out, &[("seq-num", &|o| dec(o, n as u64))]);
            }
            Token::Socket {
                stype,
                lport,
                laddr,
                rport,
                raddr,
            } => self.socket(out, stype, lport, laddr, rport, raddr),
            Token::SocketEx {
                domain,
                stype,
                lport,
                ref laddr,
                rport,
                ref raddr,
            } => self.socket_ex(out, domain, stype, lport, laddr, rport, raddr),
            Token::SockInet32 { family, port, addr } => {
                self.kind(out, id::SOCKINET32, "socket-inet", "<socket-inet ");
                self.sock_inet(out, family, port, &|o| ipv4(o, &addr));
            }
            Token::SockInet128 { family, port, addr } => {
                self.kind(out, id::SOCKINET128, "socket-inet6", "<socket-inet6 ");
                self.sock_inet(out, family, port, &|o| ipv6(o, &addr));
            }
            Token::SockUnix { family, path, .. } => self.sock_unix(out, family, path),
            Token::Upriv { sorf, name } => {
                self.kind(out, id::UPRIV, "use of privilege", "");
                let status: &[u8] = if sorf != 0 {
                    b"successful use of priv"
                } else {
                    b"failed use of priv"
                };
                self.open_fields(
                    out,
                    &[
                        ("status", &|o| o.extend_from_slice(status)),
                        ("name", &|o| string(o, name)),
                    ],
                );
            }
            Token::Privset { set, privs } => {
                self.kind(out, id::PRIV, "privilege", "");
                self.open_fields(
                    out,
                    &[
                        ("type", &|o| string(o, set)),
                        ("priv", &|o| string(o, privs)),
                    ],
                );
            }
            Token::Unknown { id: tid, data } => {
                // praudit's XML has no element for a token it does not know.
                if !self.opts.xml {
                    self.kind(out, tid, "unknown", "");
                    self.del(out);
                    self.mem(out, data);
                }
            }
        }
    }

    fn trailer(&self, out: &mut Vec<u8>, count: u32) {
        self.kind(out, crate::token::id::TRAILER, "trailer", "</record>");
        if !self.opts.xml {
            self.del(out);
            dec(out, count as u64);
        }
    }

    /// The `file` token: time and milliseconds as attributes, the name as the content.
    fn file(&self, out: &mut Vec<u8>, sec: u32, msec: u32, name: &[u8]) {
        self.kind(out, crate::token::id::FILE, "file", "<file ");
        self.open_fields(
            out,
            &[
                ("time", &|o| self.sec(o, sec as u64)),
                ("msec", &|o| self.msec(o, msec as u64)),
            ],
        );
        if self.opts.xml {
            out.push(b'>');
            string(out, name);
            out.extend_from_slice(b"</file>");
        } else {
            self.del(out);
            string(out, name);
        }
    }

    fn attr(&self, out: &mut Vec<u8>, a: &crate::token::Attr) {
        use crate::token::id;
        let crate::token::Attr {
            wide,
            mode,
            uid,
            gid,
            fsid,
            nodeid,
            dev,
        } = *a;
        self.kind(
            out,
            if wide { id::ATTR64 } else { id::ATTR32 },
            "attribute",
            "<attribute ",
        );
        let dev = if wide { dev } else { dev as u32 as u64 };
        let fields: [Field<'_>; 6] = [
            ("mode", &|o| oct(o, mode as u64)),
            ("uid", &|o| self.user(o, uid)),
            ("gid", &|o| self.group(o, gid)),
            ("fsid", &|o| dec(o, fsid as u64)),
            ("nodeid", &|o| sdec(o, nodeid as i64)),
            ("device", &|o| dec(o, dev)),
        ];
        self.fields(out, &fields);
    }

    fn exit(&self, out: &mut Vec<u8>, status: u32, ret: u32) {
        self.kind(out, crate::token::id::EXIT, "exit", "<exit ");
        let fields: [Field<'_>; 2] = [
            ("errval", &|o| {
                o.extend_from_slice(b"Error ");
                dec(o, status as u64)
            }),
            ("retval", &|o| dec(o, ret as u64)),
        ];
        self.fields(out, &fields);
    }

    /// The `newgroups` token: one `<gid>` element (XML) or field per group id.
    fn groups(&self, out: &mut Vec<u8>, list: &[u8]) {
        self.kind(out, crate::token::id::NEWGROUPS, "group", "<group>");
        for g in list.chunks_exact(4) {
            let g = u32::from_be_bytes([g[0], g[1], g[2], g[3]]);
            if self.opts.xml {
                out.extend_from_slice(b"<gid>");
                self.group(out, g);
                out.extend_from_slice(b"</gid></group>");
            } else {
                self.del(out);
                self.group(out, g);
            }
        }
    }

    /// The IPC object type by name (`-r`: as a number) and its id.
    fn ipc(&self, out: &mut Vec<u8>, kind: u8, ipc_id: u32) {
        self.kind(out, crate::token::id::IPC, "IPC", "<IPC");
        let ty = |out: &mut Vec<u8>| {
            if self.opts.raw {
                dec(out, kind as u64)
            } else {
                match kind {
                    1 => out.extend_from_slice(b"Message IPC"),
                    2 => out.extend_from_slice(b"Semaphore IPC"),
                    3 => out.extend_from_slice(b"Shared Memory IPC"),
                    k => dec(out, k as u64),
                }
            }
        };
        let fields: [Field<'_>; 2] = [("ipc-type", &ty), ("ipc-id", &|o| dec(o, ipc_id as u64))];
        self.fields(out, &fields);
    }

    fn ipc_perm(&self, out: &mut Vec<u8>, p: &crate::token::IpcPerm) {
        self.kind(out, crate::token::id::IPC_PERM, "IPC perm", "<IPC_perm ");
        let fields: [Field<'_>; 7] = [
            ("uid", &|o| self.user(o, p.uid)),
            ("gid", &|o| self.group(o, p.gid)),
            ("creator-uid", &|o| self.user(o, p.cuid)),
            ("creator-gid", &|o| self.group(o, p.cgid)),
            ("mode", &|o| oct(o, p.mode as u64)),
            ("seq", &|o| dec(o, p.seq as u64)),
            ("key", &|o| dec(o, p.key as u64)),
        ];
        self.fields(out, &fields);
    }

    /// The `opaque` token: its bytes in hex, preceded by their count outside XML.
    fn opaque(&self, out: &mut Vec<u8>, d: &[u8]) {
        self.kind(out, crate::token::id::OPAQUE, "opaque", "<opaque>");
        if self.opts.xml {
            self.mem(out, d);
            out.extend_from_slice(b"</opaque>");
        } else {
            self.del(out);
            dec(out, d.len() as u64);
            self.del(out);
            self.mem(out, d);
        }
    }

    fn socket(
        &self,
        out: &mut Vec<u8>,
        stype: u16,
        lport: [u8; 2],
        laddr: [u8; 4],
        rport: [u8; 2],
        raddr: [u8; 4],
    ) {
        self.kind(out, crate::token::id::SOCKET, "socket", "<socket ");
        let fields: [Field<'_>; 5] = [
            ("sock_type", &|o| dec(o, stype as u64)),
            ("lport", &|o| dec(o, u16::from_be_bytes(lport) as u64)),
            ("laddr", &|o| ipv4(o, &laddr)),
            ("fport", &|o| dec(o, u16::from_be_bytes(rport) as u64)),
            ("faddr", &|o| ipv4(o, &raddr)),
        ];
        self.fields(out, &fields);
    }

    /// The `socket_ex` token, in hex; praudit orders the remote end's fields differently
    /// in XML (address, then port) and in text (port, then address).
    #[allow(clippy::too_many_arguments)] // one parameter per field of the token
    fn socket_ex(
        &self,
        out: &mut Vec<u8>,
        domain: u16,
        stype: u16,
        lport: [u8; 2],
        laddr: &Addr,
        rport: [u8; 2],
        raddr: &Addr,
    ) {
        self.kind(out, crate::token::id::SOCKET_EX, "socket", "<socket ");
        let lp = u16::from_be_bytes(lport) as u64;
        let rp = u16::from_be_bytes(rport) as u64;
        if self.opts.xml {
            let fields: [Field<'_>; 6] = [
                ("sock_dom", &|o| alt_hex(o, domain as u64)),
                ("sock_type", &|o| alt_hex(o, stype as u64)),
                ("lport", &|o| alt_hex(o, lp)),
                ("laddr", &|o| self.ex_addr(o, laddr)),
                ("faddr", &|o| self.ex_addr(o, raddr)),
                ("fport", &|o| alt_hex(o, rp)),
            ];
            self.fields(out, &fields);
        } else {
            let fields: [Field<'_>; 6] = [
                ("", &|o| alt_hex(o, domain as u64)),
                ("", &|o| alt_hex(o, stype as u64)),
                ("", &|o| alt_hex(o, lp)),
                ("", &|o| self.ex_addr(o, laddr)),
                ("", &|o| alt_hex(o, rp)),
                ("", &|o| self.ex_addr(o, raddr)),
            ];
            self.fields(out, &fields);
        }
    }

    /// The fields of `socket-inet` and `socket-inet6` (after the token's name).
    fn sock_inet(
        &self,
        out: &mut Vec<u8>,
        family: u16,
        port: [u8; 2],
        addr: &dyn Fn(&mut Vec<u8>),
    ) {
        let fields: [Field<'_>; 3] = [
            ("type", &|o| dec(o, family as u64)),
            ("port", &|o| dec(o, u16::from_be_bytes(port) as u64)),
            ("addr", addr),
        ];
        self.fields(out, &fields);
    }

    /// The `socket-unix` token; XML has an empty port attribute, text has no port field.
    fn sock_unix(&self, out: &mut Vec<u8>, family: u16, path: &[u8]) {
        self.kind(
            out,
            crate::token::id::SOCKUNIX,
            "socket-unix",
            "<socket-unix ",
        );
        if self.opts.xml {
            let fields: [Field<'_>; 3] = [
                ("type", &|o| dec(o, family as u64)),
                ("port", &|_| {}),
                ("addr", &|o| string(o, cstr(path))),
            ];
            self.fields(out, &fields);
        } else {
            let fields: [Field<'_>; 2] = [
                ("type", &|o| dec(o, family as u64)),
                ("addr", &|o| string(o, cstr(path))),
            ];
            self.fields(out, &fields);
        }
    }

    /// A token printed as one element with content (XML) or one field: `ip addr`,
    /// `ip port`, `path`, `text`.
    fn element(
        &self,
        out: &mut Vec<u8>,
        id: u8,
        name: &str,
        open: &str,
        close: &str,
        value: impl FnOnce(&mut Vec<u8>),
    ) {
        self.kind(out, id, name, open);
        if self.opts.xml {
            value(out);
            out.extend_from_slice(close.as_bytes());
        } else {
            self.del(out);
            value(out);
        }
    }

    /// Attribute form (XML, closing `/>`) or delimited form of simple fields.
    fn fields(&self, out: &mut Vec<u8>, fields: &[Field<'_>]) {
        self.open_fields(out, fields);
        if self.opts.xml {
            out.extend_from_slice(b"/>");
        }
    }

    /// [`Printer::fields`] without the closing `/>`: the element goes on (content, or
    /// praudit leaves it open).
    fn open_fields(&self, out: &mut Vec<u8>, fields: &[Field<'_>]) {
        if self.opts.xml {
            for (name, f) in fields {
                self.open(out, name);
                f(out);
                self.close(out);
            }
        } else {
            for (_, f) in fields {
                self.del(out);
                f(out);
            }
        }
    }

    fn arg(&self, out: &mut Vec<u8>, id: u8, no: u8, value: u64, text: &[u8]) {
        self.kind(out, id, "argument", "<argument ");
        let fields: [Field<'_>; 3] = [
            ("arg-num", &|o| dec(o, no as u64)),
            ("value", &|o| {
                o.extend_from_slice(b"0x");
                hex(o, value)
            }),
            ("desc", &|o| string(o, text)),
        ];
        self.fields(out, &fields);
    }

    fn uuid_tok(
        &self,
        out: &mut Vec<u8>,
        id: u8,
        name: &str,
        no: u8,
        uuid: &[u8; 16],
        text: &[u8],
    ) {
        self.kind(out, id, name, "");
        if self.opts.xml {
            self.open(
                out,
                if id == crate::token::id::ARG_UUID {
                    "arg_uuid-num"
                } else {
                    "ret_uuid-num"
                },
            );
            dec(out, no as u64);
            self.close(out);
            self.open(out, "uuid");
            self.uuid(out, uuid);
            self.close(out);
            self.open(out, "desc");
            string(out, text);
            self.close(out);
        } else {
            self.del(out);
            dec(out, no as u64);
            self.del(out);
            self.uuid(out, uuid);
            self.del(out);
            string(out, text);
        }
    }

    fn ret(&self, out: &mut Vec<u8>, id: u8, status: u8, value: impl Fn(&mut Vec<u8>)) {
        self.kind(out, id, "return", "<return ");
        let fields: [Field<'_>; 2] = [("errval", &|o| self.retval(o, status)), ("retval", &value)];
        self.fields(out, &fields);
    }

    fn ip(&self, out: &mut Vec<u8>, ip: &[u8; 20]) {
        self.kind(out, crate::token::id::IP, "ip", "<ip ");
        let be = |i: usize| u16::from_be_bytes([ip[i], ip[i + 1]]) as u64;
        let fields: [Field<'_>; 10] = [
            ("version", &|o| self.mem(o, &ip[0..1])),
            ("service_type", &|o| self.mem(o, &ip[1..2])),
            ("len", &|o| dec(o, be(2))),
            ("id", &|o| dec(o, be(4))),
            ("offset", &|o| dec(o, be(6))),
            ("time_to_live", &|o| self.mem(o, &ip[8..9])),
            ("protocol", &|o| self.mem(o, &ip[9..10])),
            ("cksum", &|o| dec(o, be(10))),
            ("src_addr", &|o| ipv4(o, &[ip[12], ip[13], ip[14], ip[15]])),
            ("dest_addr", &|o| ipv4(o, &[ip[16], ip[17], ip[18], ip[19]])),
        ];
        self.fields(out, &fields);
    }
}

/// A JSON string literal.
fn json_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            c if (c as u32) < 0x20 => {
                out.extend_from_slice(b"\\u00");
                hex2(out, c as u8);
            }
            c => {
                let mut b = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
        }
    }
    out.push(b'"');
}
