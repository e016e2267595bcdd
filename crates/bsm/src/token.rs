//! BSM tokens: the typed, zero-copy view of one token and its decoder.
//!
//! Every multi-byte integer is big-endian; addresses and ports are kept in network order as
//! raw bytes. Decoding follows libbsm's `au_fetch_tok` exactly (what it accepts, what it
//! rejects, how many bytes each token takes), because the printer and the selector must
//! agree with praudit and auditreduce on where one token ends and the next begins.

use crate::error::{DecodeError, DecodeErrorKind};

/// Token identifiers (`sys/bsm/audit_record.h`).
pub mod id {
    /// `AUT_OTHER_FILE32`: file token (a record on its own in a trail).
    pub const FILE: u8 = 0x11;
    /// `AUT_TRAILER`.
    pub const TRAILER: u8 = 0x13;
    /// `AUT_HEADER32`.
    pub const HEADER32: u8 = 0x14;
    /// `AUT_HEADER32_EX`.
    pub const HEADER32_EX: u8 = 0x15;
    /// `AUT_DATA`: arbitrary data.
    pub const DATA: u8 = 0x21;
    /// `AUT_IPC`.
    pub const IPC: u8 = 0x22;
    /// `AUT_PATH`.
    pub const PATH: u8 = 0x23;
    /// `AUT_SUBJECT32`.
    pub const SUBJECT32: u8 = 0x24;
    /// `AUT_PROCESS32`.
    pub const PROCESS32: u8 = 0x26;
    /// `AUT_RETURN32`.
    pub const RETURN32: u8 = 0x27;
    /// `AUT_TEXT`.
    pub const TEXT: u8 = 0x28;
    /// `AUT_OPAQUE`.
    pub const OPAQUE: u8 = 0x29;
    /// `AUT_IN_ADDR`.
    pub const IN_ADDR: u8 = 0x2a;
    /// `AUT_IP`.
    pub const IP: u8 = 0x2b;
    /// `AUT_IPORT`.
    pub const IPORT: u8 = 0x2c;
    /// `AUT_ARG32`.
    pub const ARG32: u8 = 0x2d;
    /// `AUT_SOCKET`.
    pub const SOCKET: u8 = 0x2e;
    /// `AUT_SEQ`.
    pub const SEQ: u8 = 0x2f;
    /// `AUT_IPC_PERM`.
    pub const IPC_PERM: u8 = 0x32;
    /// `AUT_PRIV`: privilege set.
    pub const PRIV: u8 = 0x38;
    /// `AUT_UPRIV`: use of privilege.
    pub const UPRIV: u8 = 0x39;
    /// `AUT_NEWGROUPS`.
    pub const NEWGROUPS: u8 = 0x3b;
    /// `AUT_EXEC_ARGS`.
    pub const EXEC_ARGS: u8 = 0x3c;
    /// `AUT_EXEC_ENV`.
    pub const EXEC_ENV: u8 = 0x3d;
    /// `AUT_ATTR32`.
    pub const ATTR32: u8 = 0x3e;
    /// `AUT_EXIT`.
    pub const EXIT: u8 = 0x52;
    /// `AUT_ZONENAME`.
    pub const ZONENAME: u8 = 0x60;
    /// `AUT_ARG64`.
    pub const ARG64: u8 = 0x71;
    /// `AUT_RETURN64`.
    pub const RETURN64: u8 = 0x72;
    /// `AUT_ATTR64`.
    pub const ATTR64: u8 = 0x73;
    /// `AUT_HEADER64`.
    pub const HEADER64: u8 = 0x74;
    /// `AUT_SUBJECT64`.
    pub const SUBJECT64: u8 = 0x75;
    /// `AUT_PROCESS64`.
    pub const PROCESS64: u8 = 0x77;
    /// `AUT_HEADER64_EX`.
    pub const HEADER64_EX: u8 = 0x79;
    /// `AUT_SUBJECT32_EX`.
    pub const SUBJECT32_EX: u8 = 0x7a;
    /// `AUT_PROCESS32_EX`.
    pub const PROCESS32_EX: u8 = 0x7b;
    /// `AUT_SUBJECT64_EX`.
    pub const SUBJECT64_EX: u8 = 0x7c;
    /// `AUT_PROCESS64_EX`.
    pub const PROCESS64_EX: u8 = 0x7d;
    /// `AUT_IN_ADDR_EX`.
    pub const IN_ADDR_EX: u8 = 0x7e;
    /// `AUT_SOCKET_EX`.
    pub const SOCKET_EX: u8 = 0x7f;
    /// `AUT_SOCKINET32`.
    pub const SOCKINET32: u8 = 0x80;
    /// `AUT_SOCKINET128`.
    pub const SOCKINET128: u8 = 0x81;
    /// `AUT_SOCKUNIX`.
    pub const SOCKUNIX: u8 = 0x82;
    /// `AUT_ARG_UUID`.
    pub const ARG_UUID: u8 = 0x84;
    /// `AUT_RETURN_UUID`.
    pub const RETURN_UUID: u8 = 0x85;
}

/// Size of the trailer token, which an unknown token leaves in place at the record's end.
pub const TRAILER_SIZE: usize = 7;
/// Exec argument/environment strings praudit prints at most (`AUDIT_MAX_ARGS`).
pub const MAX_EXEC_STRINGS: u32 = 128;
/// Group ids a group token is clamped to (`AUDIT_MAX_GROUPS`).
pub const MAX_GROUPS: u16 = 16;
/// Size of libbsm's unix socket path buffer (`AU_UNIX_PATH_MAX`).
pub const UNIX_PATH_MAX: usize = 108;

/// An address whose family is given by a type word (4 = IPv4, 16 = IPv6), as in the `_ex`
/// tokens. Bytes are in network order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Addr {
    /// `AU_IPv4`.
    V4([u8; 4]),
    /// `AU_IPv6`.
    V6([u8; 16]),
    /// Another type word; only header_ex tokens carry one (praudit prints `invalid`).
    Invalid(u32),
}

impl Addr {
    /// The address type word as written on disk.
    pub fn type_word(&self) -> u32 {
        match self {
            Addr::V4(_) => 4,
            Addr::V6(_) => 16,
            Addr::Invalid(t) => *t,
        }
    }
}

/// Which of the eight subject/process layouts a [`Subject`] came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubjectForm {
    /// Process token (0x26 family) rather than subject token (0x24 family).
    pub process: bool,
    /// 64-bit terminal port.
    pub wide: bool,
    /// `_ex` form with an address type word.
    pub ex: bool,
}

/// A subject or process token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Subject {
    /// Layout it was read from.
    pub form: SubjectForm,
    /// Audit user id.
    pub auid: u32,
    /// Effective user id.
    pub euid: u32,
    /// Effective group id.
    pub egid: u32,
    /// Real user id.
    pub ruid: u32,
    /// Real group id.
    pub rgid: u32,
    /// Process id.
    pub pid: u32,
    /// Audit session id.
    pub sid: u32,
    /// Terminal port (32 or 64 bits on disk).
    pub port: u64,
    /// Terminal address (always [`Addr::V4`] for the plain forms).
    pub addr: Addr,
}

/// A header token (any of the four forms).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Token id: 0x14, 0x15, 0x74 or 0x79.
    pub id: u8,
    /// Record size, header and trailer included.
    pub size: u32,
    /// Format version (11 for OpenBSM, 10 older, 2 Solaris).
    pub version: u8,
    /// Event number.
    pub event: u16,
    /// Event modifier.
    pub modifier: u16,
    /// Host address (`_ex` forms only).
    pub host: Option<Addr>,
    /// Seconds (32 or 64 bits on disk).
    pub sec: u64,
    /// Milliseconds (32 or 64 bits on disk).
    pub msec: u64,
}

/// An `attr32` / `attr64` token: a file's attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attr {
    /// The 64-bit device form (`attr64`).
    pub wide: bool,
    /// File mode.
    pub mode: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// File system id.
    pub fsid: u32,
    /// Inode number.
    pub nodeid: u64,
    /// Device (32 bits on disk unless `wide`).
    pub dev: u64,
}

/// An `IPC perm` token: the permissions of a System V IPC object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpcPerm {
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Creator.
    pub cuid: u32,
    /// Creator's group.
    pub cgid: u32,
    /// Access mode.
    pub mode: u32,
    /// Slot usage sequence number.
    pub seq: u32,
    /// Key.
    pub key: u32,
}

/// Exec arguments or environment: `count` NUL-terminated strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecStrings<'a> {
    /// The count word as written.
    pub count: u32,
    /// The strings' bytes, NULs included.
    pub data: &'a [u8],
}

impl<'a> ExecStrings<'a> {
    /// The strings (without their NULs), in order.
    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let data = self.data;
        data.split(|&b| b == 0).take(self.count as usize)
    }
}

/// One decoded token, borrowing its variable-length fields from the trail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // field names follow libbsm's token structures
pub enum Token<'a> {
    /// File token: time and name of the next/previous trail.
    File { sec: u32, msec: u32, name: &'a [u8] },
    /// Record trailer (magic and count are not checked, as in libbsm).
    Trailer { magic: u16, count: u32 },
    /// Record header.
    Header(Header),
    /// Arbitrary data: print style, unit code, unit count, raw items.
    Arbitrary {
        how: u8,
        unit: u8,
        count: u8,
        data: &'a [u8],
    },
    /// System V IPC object.
    Ipc { kind: u8, id: u32 },
    /// Path name.
    Path(&'a [u8]),
    /// Subject or process.
    Subject(Subject),
    /// 32-bit return.
    Return32 { status: u8, value: u32 },
    /// 64-bit return.
    Return64 { status: u8, value: u64 },
    /// Text.
    Text(&'a [u8]),
    /// Zone (jail) name.
    Zonename(&'a [u8]),
    /// Opaque bytes.
    Opaque(&'a [u8]),
    /// IPv4 address.
    InAddr([u8; 4]),
    /// IPv4 or IPv6 address.
    InAddrEx(Addr),
    /// Raw 20-byte IPv4 header.
    Ip([u8; 20]),
    /// IP port (network order bytes).
    Iport([u8; 2]),
    /// 32-bit argument.
    Arg32 { no: u8, value: u32, text: &'a [u8] },
    /// 64-bit argument.
    Arg64 { no: u8, value: u64, text: &'a [u8] },
    /// IPv4 socket.
    Socket {
        stype: u16,
        lport: [u8; 2],
        laddr: [u8; 4],
        rport: [u8; 2],
        raddr: [u8; 4],
    },
    /// Extended socket (IPv4 or IPv6 by address type).
    SocketEx {
        domain: u16,
        stype: u16,
        lport: [u8; 2],
        laddr: Addr,
        rport: [u8; 2],
        raddr: Addr,
    },
    /// `sockaddr_in`.
    SockInet32 {
        family: u16,
        port: [u8; 2],
        addr: [u8; 4],
    },
    /// `sockaddr_in6`.
    SockInet128 {
        family: u16,
        port: [u8; 2],
        addr: [u8; 16],
    },
    /// `sockaddr_un`: `taken` is what the token occupies (path bytes and NUL).
    SockUnix {
        family: u16,
        path: &'a [u8],
        taken: &'a [u8],
    },
    /// Sequence number.
    Seq(u32),
    /// IPC permissions.
    IpcPerm(IpcPerm),
    /// Group list: `count` as written, `list` the big-endian ids read (at most
    /// [`MAX_GROUPS`]; libbsm clamps and decodes whatever follows as further tokens).
    Groups { count: u16, list: &'a [u8] },
    /// Exec arguments.
    ExecArgs(ExecStrings<'a>),
    /// Exec environment.
    ExecEnv(ExecStrings<'a>),
    /// File attributes.
    Attr(Attr),
    /// Process exit.
    Exit { status: u32, ret: u32 },
    /// Argument UUID.
    ArgUuid {
        no: u8,
        uuid: [u8; 16],
        text: &'a [u8],
    },
    /// Return UUID.
    RetUuid {
        no: u8,
        uuid: [u8; 16],
        text: &'a [u8],
    },
    /// Use of privilege.
    Upriv { sorf: u8, name: &'a [u8] },
    /// Privilege set.
    Privset { set: &'a [u8], privs: &'a [u8] },
    /// A token id libbsm cannot decode: it takes everything up to the last
    /// [`TRAILER_SIZE`] bytes of the record.
    Unknown { id: u8, data: &'a [u8] },
}

/// A little cursor over one token's bytes; every read is bounds-checked.
struct Cur<'a> {
    buf: &'a [u8],
    pos: usize,
    id: u8,
}

impl<'a> Cur<'a> {
    fn fail(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError {
            offset: 0,
            token: self.id,
            kind,
        }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        match self.buf.get(self.pos..self.pos.wrapping_add(n)) {
            Some(s) if self.pos.checked_add(n).is_some() => {
                self.pos += n;
                Ok(s)
            }
            _ => Err(self.fail(DecodeErrorKind::Truncated {
                at: self.pos,
                need: n,
            })),
        }
    }
    fn arr<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.arr()?))
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.arr()?))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(self.arr()?))
    }
    fn lstr16(&mut self) -> Result<&'a [u8], DecodeError> {
        let n = self.u16()? as usize;
        self.take(n)
    }
    /// An address of type `t` for the tokens that reject anything but 4 and 16.
    fn addr_strict(&mut self, t: u32) -> Result<Addr, DecodeError> {
        match t {
            4 => Ok(Addr::V4(self.arr()?)),
            16 => Ok(Addr::V6(self.arr()?)),
            other => Err(self.fail(DecodeErrorKind::AddressType(other))),
        }
    }
    /// An address of type `t` in a header_ex: other types read no bytes.
    fn addr_lenient(&mut self, t: u32) -> Result<Addr, DecodeError> {
        match t {
            4 | 16 => self.addr_strict(t),
            other => Ok(Addr::Invalid(other)),
        }
    }
}

/// Decodes the token at the start of `buf`, which holds the rest of its record (the
/// unknown-token rule needs the record's end). Returns the token and the bytes it took.
///
/// Errors carry offsets relative to `buf`; [`crate::records`] rebases them onto the trail.
pub fn decode(buf: &[u8]) -> Result<(Token<'_>, usize), DecodeError> {
    let Some(&tid) = buf.first() else {
        return Err(DecodeError {
            offset: 0,
            token: 0,
            kind: DecodeErrorKind::Truncated { at: 0, need: 1 },
        });
    };
    let mut c = Cur {
        buf,
        pos: 1,
        id: tid,
    };
    let t = match tid {
        id::HEADER32 | id::HEADER64 | id::HEADER32_EX | id::HEADER64_EX => c.header()?,
        id::TRAILER => Token::Trailer {
            magic: c.u16()?,
            count: c.u32()?,
        },
        id::FILE => Token::File {
            sec: c.u32()?,
            msec: c.u32()?,
            name: c.lstr16()?,
        },
        id::DATA => c.arbitrary()?,
        id::IPC => Token::Ipc {
            kind: c.u8()?,
            id: c.u32()?,
        },
        id::PATH => Token::Path(c.lstr16()?),
        id::TEXT => Token::Text(c.lstr16()?),
        id::ZONENAME => Token::Zonename(c.lstr16()?),
        id::OPAQUE => Token::Opaque(c.lstr16()?),
        id::SUBJECT32
        | id::PROCESS32
        | id::SUBJECT64
        | id::PROCESS64
        | id::SUBJECT32_EX
        | id::PROCESS32_EX
        | id::SUBJECT64_EX
        | id::PROCESS64_EX => c.subject()?,
        id::RETURN32 => Token::Return32 {
            status: c.u8()?,
            value: c.u32()?,
        },
        id::RETURN64 => Token::Return64 {
            status: c.u8()?,
            value: c.u64()?,
        },
        id::IN_ADDR => Token::InAddr(c.arr()?),
        id::IN_ADDR_EX => {
            let t = c.u32()?;
            Token::InAddrEx(c.addr_strict(t)?)
        }
        id::IP => Token::Ip(c.arr()?),
        id::IPORT => Token::Iport(c.arr()?),
        id::ARG32 => Token::Arg32 {
            no: c.u8()?,
            value: c.u32()?,
            text: c.lstr16()?,
        },
        id::ARG64 => Token::Arg64 {
            no: c.u8()?,
            value: c.u64()?,
            text: c.lstr16()?,
        },
        id::SOCKET => Token::Socket {
            stype: c.u16()?,
            lport: c.arr()?,
            laddr: c.arr()?,
            rport: c.arr()?,
            raddr: c.arr()?,
        },
        id::SOCKET_EX => c.socket_ex()?,
        id::SOCKINET32 => Token::SockInet32 {
            family: c.u16()?,
            port: c.arr()?,
            addr: c.arr()?,
        },
        id::SOCKINET128 => Token::SockInet128 {
            family: c.u16()?,
            port: c.arr()?,
            addr: c.arr()?,
        },
        id::SOCKUNIX => c.sock_unix()?,
        id::SEQ => Token::Seq(c.u32()?),
        id::IPC_PERM => Token::IpcPerm(IpcPerm {
            uid: c.u32()?,
            gid: c.u32()?,
            cuid: c.u32()?,
            cgid: c.u32()?,
            mode: c.u32()?,
            seq: c.u32()?,
            key: c.u32()?,
        }),
        id::NEWGROUPS => {
            let count = c.u16()?;
            Token::Groups {
                count,
                list: c.take(4 * count.min(MAX_GROUPS) as usize)?,
            }
        }
        id::EXEC_ARGS | id::EXEC_ENV => c.exec_strings()?,
        id::ATTR32 | id::ATTR64 => c.attr()?,
        id::EXIT => Token::Exit {
            status: c.u32()?,
            ret: c.u32()?,
        },
        id::ARG_UUID | id::RETURN_UUID => c.uuid_arg()?,
        id::UPRIV => Token::Upriv {
            sorf: c.u8()?,
            name: c.lstr16()?,
        },
        id::PRIV => Token::Privset {
            set: c.lstr16()?,
            privs: c.lstr16()?,
        },
        _ => c.unknown()?,
    };
    Ok((t, c.pos))
}

/// The bodies of the tokens whose layout depends on their id or needs more than reading
/// fields in order; the cursor stands after the token id, `self.id`.
impl<'a> Cur<'a> {
    /// `header32`/`header64` and their `_ex` forms (with the host address).
    fn header(&mut self) -> Result<Token<'a>, DecodeError> {
        let tid = self.id;
        let size = self.u32()?;
        let version = self.u8()?;
        let event = self.u16()?;
        let modifier = self.u16()?;
        let ex = tid == id::HEADER32_EX || tid == id::HEADER64_EX;
        let host = if ex {
            let t = self.u32()?;
            Some(self.addr_lenient(t)?)
        } else {
            None
        };
        let (sec, msec) = if tid == id::HEADER32 || tid == id::HEADER32_EX {
            (self.u32()? as u64, self.u32()? as u64)
        } else {
            (self.u64()?, self.u64()?)
        };
        Ok(Token::Header(Header {
            id: tid,
            size,
            version,
            event,
            modifier,
            host,
            sec,
            msec,
        }))
    }

    /// `arbitrary data`: `count` units of 1, 2, 4 or 8 bytes; any other unit is an error.
    fn arbitrary(&mut self) -> Result<Token<'a>, DecodeError> {
        let how = self.u8()?;
        let unit = self.u8()?;
        let count = self.u8()?;
        let size = match unit {
            0 => 1,
            1 => 2,
            2 => 4,
            3 => 8,
            other => return Err(self.fail(DecodeErrorKind::ArbitraryUnit(other))),
        };
        let data = self.take(size * count as usize)?;
        Ok(Token::Arbitrary {
            how,
            unit,
            count,
            data,
        })
    }

    /// `subject` and `process`, 32- or 64-bit port, with or without the address type.
    fn subject(&mut self) -> Result<Token<'a>, DecodeError> {
        let form = subject_form(self.id);
        let auid = self.u32()?;
        let euid = self.u32()?;
        let egid = self.u32()?;
        let ruid = self.u32()?;
        let rgid = self.u32()?;
        let pid = self.u32()?;
        let sid = self.u32()?;
        let port = if form.wide {
            self.u64()?
        } else {
            self.u32()? as u64
        };
        let addr = if form.ex {
            let t = self.u32()?;
            self.addr_strict(t)?
        } else {
            Addr::V4(self.arr()?)
        };
        Ok(Token::Subject(Subject {
            form,
            auid,
            euid,
            egid,
            ruid,
            rgid,
            pid,
            sid,
            port,
            addr,
        }))
    }

    /// `socket_ex`: one address type (4 or 16) for both ends.
    fn socket_ex(&mut self) -> Result<Token<'a>, DecodeError> {
        let domain = self.u16()?;
        let stype = self.u16()?;
        let atype = self.u16()? as u32;
        if atype != 4 && atype != 16 {
            return Err(self.fail(DecodeErrorKind::AddressType(atype)));
        }
        let lport = self.arr()?;
        let laddr = self.addr_strict(atype)?;
        let rport = self.arr()?;
        let raddr = self.addr_strict(atype)?;
        Ok(Token::SocketEx {
            domain,
            stype,
            lport,
            laddr,
            rport,
            raddr,
        })
    }

    /// `sockunix`: a path up to its NUL, at most [`UNIX_PATH_MAX`] bytes as libbsm reads it.
    fn sock_unix(&mut self) -> Result<Token<'a>, DecodeError> {
        let family = self.u16()?;
        let rest = &self.buf[self.pos..];
        let search = rest.len().min(UNIX_PATH_MAX);
        let (take, path_len) = match rest[..search].iter().position(|&b| b == 0) {
            Some(p) => (p + 1, p),
            None => (search, search.min(UNIX_PATH_MAX - 1)),
        };
        let taken = self.take(take)?;
        // libbsm copies into a 108-byte buffer and forces its last byte to NUL.
        let path = &taken[..path_len];
        Ok(Token::SockUnix {
            family,
            path,
            taken,
        })
    }

    /// `exec args` / `exec env`: `count` NUL-terminated strings, each inside the record.
    fn exec_strings(&mut self) -> Result<Token<'a>, DecodeError> {
        let buf = self.buf;
        let count = self.u32()?;
        let start = self.pos;
        for _ in 0..count {
            if self.pos >= buf.len() {
                return Err(self.fail(DecodeErrorKind::ExecStrings { count }));
            }
            match buf[self.pos..].iter().position(|&b| b == 0) {
                Some(p) => self.pos += p + 1,
                None => return Err(self.fail(DecodeErrorKind::ExecStrings { count })),
            }
        }
        let s = ExecStrings {
            count,
            data: &buf[start..self.pos],
        };
        Ok(if self.id == id::EXEC_ARGS {
            Token::ExecArgs(s)
        } else {
            Token::ExecEnv(s)
        })
    }

    /// `attr32` / `attr64`: the device number is 32 or 64 bits wide.
    fn attr(&mut self) -> Result<Token<'a>, DecodeError> {
        let wide = self.id == id::ATTR64;
        Ok(Token::Attr(Attr {
            wide,
            mode: self.u32()?,
            uid: self.u32()?,
            gid: self.u32()?,
            fsid: self.u32()?,
            nodeid: self.u64()?,
            dev: if wide {
                self.u64()?
            } else {
                self.u32()? as u64
            },
        }))
    }

    /// `arg_uuid` / `ret_uuid`: an argument number, a UUID and a text.
    fn uuid_arg(&mut self) -> Result<Token<'a>, DecodeError> {
        let no = self.u8()?;
        let uuid = self.arr()?;
        let text = self.lstr16()?;
        Ok(if self.id == id::ARG_UUID {
            Token::ArgUuid { no, uuid, text }
        } else {
            Token::RetUuid { no, uuid, text }
        })
    }

    /// A token id libbsm does not know: it takes the rest of the record up to the
    /// trailer, and is an error when nothing is left before the trailer.
    fn unknown(&mut self) -> Result<Token<'a>, DecodeError> {
        let keep = self.buf.len() as isize - (1 + TRAILER_SIZE) as isize;
        if keep <= 0 {
            return Err(self.fail(DecodeErrorKind::UnknownAtEnd));
        }
        Ok(Token::Unknown {
            id: self.id,
            data: self.take(keep as usize)?,
        })
    }
}

fn subject_form(tid: u8) -> SubjectForm {
    match tid {
        id::SUBJECT32 => SubjectForm {
            process: false,
            wide: false,
            ex: false,
        },
        id::PROCESS32 => SubjectForm {
            process: true,
            wide: false,
            ex: false,
        },
        id::SUBJECT64 => SubjectForm {
            process: false,
            wide: true,
            ex: false,
        },
        id::PROCESS64 => SubjectForm {
            process: true,
            wide: true,
            ex: false,
        },
        id::SUBJECT32_EX => SubjectForm {
            process: false,
            wide: false,
            ex: true,
        },
        id::PROCESS32_EX => SubjectForm {
            process: true,
            wide: false,
            ex: true,
        },
        id::SUBJECT64_EX => SubjectForm {
            process: false,
            wide: true,
            ex: true,
        },
        _ => SubjectForm {
            process: true,
            wide: true,
            ex: true,
        },
    }
}

impl SubjectForm {
    /// The token id of this layout.
    pub fn token_id(&self) -> u8 {
        match (self.process, self.wide, self.ex) {
            (false, false, false) => id::SUBJECT32,
            (true, false, false) => id::PROCESS32,
            (false, true, false) => id::SUBJECT64,
            (true, true, false) => id::PROCESS64,
            (false, false, true) => id::SUBJECT32_EX,
            (true, false, true) => id::PROCESS32_EX,
            (false, true, true) => id::SUBJECT64_EX,
            (true, true, true) => id::PROCESS64_EX,
        }
    }
}

impl Token<'_> {
    /// The token's id byte.
    pub fn id(&self) -> u8 {
        match self {
            Token::File { .. } => id::FILE,
            Token::Trailer { .. } => id::TRAILER,
            Token::Header(h) => h.id,
            Token::Arbitrary { .. } => id::DATA,
            Token::Ipc { .. } => id::IPC,
            Token::Path(_) => id::PATH,
            Token::Subject(s) => s.form.token_id(),
            Token::Return32 { .. } => id::RETURN32,
            Token::Return64 { .. } => id::RETURN64,
            Token::Text(_) => id::TEXT,
            Token::Opaque(_) => id::OPAQUE,
            Token::InAddr(_) => id::IN_ADDR,
            Token::InAddrEx(_) => id::IN_ADDR_EX,
            Token::Ip(_) => id::IP,
            Token::Iport(_) => id::IPORT,
            Token::Arg32 { .. } => id::ARG32,
            Token::Arg64 { .. } => id::ARG64,
            Token::Socket { .. } => id::SOCKET,
            Token::SocketEx { .. } => id::SOCKET_EX,
            Token::SockInet32 { .. } => id::SOCKINET32,
            Token::SockInet128 { .. } => id::SOCKINET128,
            Token::SockUnix { .. } => id::SOCKUNIX,
            Token::Seq(_) => id::SEQ,
            Token::IpcPerm { .. } => id::IPC_PERM,
            Token::Groups { .. } => id::NEWGROUPS,
            Token::ExecArgs(_) => id::EXEC_ARGS,
            Token::ExecEnv(_) => id::EXEC_ENV,
            Token::Attr(Attr { wide: false, .. }) => id::ATTR32,
            Token::Attr(Attr { wide: true, .. }) => id::ATTR64,
            Token::Exit { .. } => id::EXIT,
            Token::ArgUuid { .. } => id::ARG_UUID,
            Token::RetUuid { .. } => id::RETURN_UUID,
            Token::Upriv { .. } => id::UPRIV,
            Token::Privset { .. } => id::PRIV,
            Token::Zonename(_) => id::ZONENAME,
            Token::Unknown { id, .. } => *id,
        }
    }
}
