//! Token and record writer: the inverse of [`crate::token::decode`].
//!
//! [`encode`] writes any [`Token`] in its on-disk layout; [`RecordWriter`] frames a record
//! (header with the final size, tokens, trailer with magic 0xb105 and the size).

use crate::token::{id, Addr, Header, Token};

fn addr(out: &mut Vec<u8>, a: &Addr) {
    match a {
        Addr::V4(b) => out.extend_from_slice(b),
        Addr::V6(b) => out.extend_from_slice(b),
        Addr::Invalid(_) => {}
    }
}

fn lstr16(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len().min(u16::MAX as usize) as u16).to_be_bytes());
    out.extend_from_slice(&s[..s.len().min(u16::MAX as usize)]);
}

/// Appends the on-disk bytes of `t` to `out`.
///
/// Lengths that do not fit their field are truncated (a `u16` length covers at most 65,535
/// bytes); groups beyond the clamped count are not written.
pub fn encode(t: &Token<'_>, out: &mut Vec<u8>) {
    out.push(t.id());
    match *t {
        Token::Header(ref h) => {
            out.extend_from_slice(&h.size.to_be_bytes());
            out.push(h.version);
            out.extend_from_slice(&h.event.to_be_bytes());
            out.extend_from_slice(&h.modifier.to_be_bytes());
            if let Some(a) = &h.host {
                out.extend_from_slice(&a.type_word().to_be_bytes());
                addr(out, a);
            }
            if h.id == id::HEADER32 || h.id == id::HEADER32_EX {
                out.extend_from_slice(&(h.sec as u32).to_be_bytes());
                out.extend_from_slice(&(h.msec as u32).to_be_bytes());
            } else {
                out.extend_from_slice(&h.sec.to_be_bytes());
                out.extend_from_slice(&h.msec.to_be_bytes());
            }
        }
        Token::Trailer { magic, count } => {
            out.extend_from_slice(&magic.to_be_bytes());
            out.extend_from_slice(&count.to_be_bytes());
        }
        Token::File { sec, msec, name } => {
            out.extend_from_slice(&sec.to_be_bytes());
            out.extend_from_slice(&msec.to_be_bytes());
            lstr16(out, name);
        }
        Token::Arbitrary {
            how,
            unit,
            count,
            data,
        } => {
            out.extend_from_slice(&[how, unit, count]);
            out.extend_from_slice(data);
        }
        Token::Ipc { kind, id } => {
            out.push(kind);
            out.extend_from_slice(&id.to_be_bytes());
        }
        Token::Path(s) | Token::Text(s) | Token::Zonename(s) | Token::Opaque(s) => lstr16(out, s),
        Token::Subject(ref s) => {
            for v in [s.auid, s.euid, s.egid, s.ruid, s.rgid, s.pid, s.sid] {
                out.extend_from_slice(&v.to_be_bytes());
            }
            if s.form.wide {
                out.extend_from_slice(&s.port.to_be_bytes());
            } else {
                out.extend_from_slice(&(s.port as u32).to_be_bytes());
            }
            if s.form.ex {
                out.extend_from_slice(&s.addr.type_word().to_be_bytes());
            }
            addr(out, &s.addr);
        }
        Token::Return32 { status, value } => {
            out.push(status);
            out.extend_from_slice(&value.to_be_bytes());
        }
        Token::Return64 { status, value } => {
            out.push(status);
            out.extend_from_slice(&value.to_be_bytes());
        }
        Token::InAddr(a) => out.extend_from_slice(&a),
        Token::InAddrEx(ref a) => {
            out.extend_from_slice(&a.type_word().to_be_bytes());
            addr(out, a);
        }
        Token::Ip(ref ip) => out.extend_from_slice(ip),
        Token::Iport(p) => out.extend_from_slice(&p),
        Token::Arg32 { no, value, text } => {
            out.push(no);
            out.extend_from_slice(&value.to_be_bytes());
            lstr16(out, text);
        }
        Token::Arg64 { no, value, text } => {
            out.push(no);
            out.extend_from_slice(&value.to_be_bytes());
            lstr16(out, text);
        }
        Token::Socket {
            stype,
            lport,
            laddr,
            rport,
            raddr,
        } => {
            out.extend_from_slice(&stype.to_be_bytes());
            out.extend_from_slice(&lport);
            out.extend_from_slice(&laddr);
            out.extend_from_slice(&rport);
            out.extend_from_slice(&raddr);
        }
        Token::SocketEx {
            domain,
            stype,
            lport,
            ref laddr,
            rport,
            ref raddr,
        } => {
            out.extend_from_slice(&domain.to_be_bytes());
            out.extend_from_slice(&stype.to_be_bytes());
            out.extend_from_slice(&(laddr.type_word() as u16).to_be_bytes());
            out.extend_from_slice(&lport);
            addr(out, laddr);
            out.extend_from_slice(&rport);
            addr(out, raddr);
        }
        Token::SockInet32 { family, port, addr } => {
            out.extend_from_slice(&family.to_be_bytes());
            out.extend_from_slice(&port);
            out.extend_from_slice(&addr);
        }
        Token::SockInet128 { family, port, addr } => {
            out.extend_from_slice(&family.to_be_bytes());
            out.extend_from_slice(&port);
            out.extend_from_slice(&addr);
        }
        Token::SockUnix { family, taken, .. } => {
            out.extend_from_slice(&family.to_be_bytes());
            out.extend_from_slice(taken);
        }
        Token::Seq(n) => out.extend_from_slice(&n.to_be_bytes()),
        Token::IpcPerm(p) => {
            for v in [p.uid, p.gid, p.cuid, p.cgid, p.mode, p.seq, p.key] {
                out.extend_from_slice(&v.to_be_bytes());
            }
        }
        Token::Groups { count, list } => {
            out.extend_from_slice(&count.to_be_bytes());
            out.extend_from_slice(list);
        }
        Token::ExecArgs(ref s) | Token::ExecEnv(ref s) => {
            out.extend_from_slice(&s.count.to_be_bytes());
            out.extend_from_slice(s.data);
        }
        Token::Attr(a) => {
            for v in [a.mode, a.uid, a.gid, a.fsid] {
                out.extend_from_slice(&v.to_be_bytes());
            }
            out.extend_from_slice(&a.nodeid.to_be_bytes());
            if a.wide {
                out.extend_from_slice(&a.dev.to_be_bytes());
            } else {
                out.extend_from_slice(&(a.dev as u32).to_be_bytes());
            }
        }
        Token::Exit { status, ret } => {
            out.extend_from_slice(&status.to_be_bytes());
            out.extend_from_slice(&ret.to_be_bytes());
        }
        Token::ArgUuid { no, uuid, text } | Token::RetUuid { no, uuid, text } => {
            out.push(no);
            out.extend_from_slice(&uuid);
            lstr16(out, text);
        }
        Token::Upriv { sorf, name } => {
            out.push(sorf);
            lstr16(out, name);
        }
        Token::Privset { set, privs } => {
            lstr16(out, set);
            lstr16(out, privs);
        }
        Token::Unknown { data, .. } => out.extend_from_slice(data),
    }
}

/// Builds records into a trail buffer.
#[derive(Debug, Default)]
pub struct RecordWriter {
    buf: Vec<u8>,
    start: Option<usize>,
}

impl RecordWriter {
    /// An empty trail.
    pub fn new() -> RecordWriter {
        RecordWriter::default()
    }

    /// Starts a record with header `h` (its `size` is filled in by [`RecordWriter::end`]).
    pub fn begin(&mut self, h: Header) {
        self.start = Some(self.buf.len());
        encode(&Token::Header(h), &mut self.buf);
    }

    /// Appends a token to the open record.
    pub fn token(&mut self, t: &Token<'_>) {
        encode(t, &mut self.buf);
    }

    /// Closes the record: appends the trailer and patches the header's size.
    pub fn end(&mut self) {
        if let Some(s) = self.start.take() {
            let size = (self.buf.len() + crate::token::TRAILER_SIZE - s) as u32;
            encode(
                &Token::Trailer {
                    magic: 0xb105,
                    count: size,
                },
                &mut self.buf,
            );
            self.buf[s + 1..s + 5].copy_from_slice(&size.to_be_bytes());
        }
    }

    /// Appends a file token (a record on its own).
    pub fn file(&mut self, sec: u32, msec: u32, name: &[u8]) {
        encode(&Token::File { sec, msec, name }, &mut self.buf);
    }

    /// The trail so far.
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The trail.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}
