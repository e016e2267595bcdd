//! The operations an evaluation answers, parsed from the command line's words.

use std::fmt;
use std::path::PathBuf;

/// How a file is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct OpenFlags {
    /// FMODE_READ.
    pub read: bool,
    /// FMODE_WRITE.
    pub write: bool,
    /// O_TRUNC.
    pub trunc: bool,
    /// O_CREAT.
    pub creat: bool,
}

/// The kind of node `mknod` makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// Regular file.
    Reg,
    /// Named pipe.
    Fifo,
    /// UNIX socket node.
    Sock,
    /// Character device.
    Char,
    /// Block device.
    Block,
}

impl NodeKind {
    /// The `S_IFMT` bits.
    pub fn mode(self) -> u32 {
        match self {
            NodeKind::Reg => 0o100000,
            NodeKind::Fifo => 0o010000,
            NodeKind::Sock => 0o140000,
            NodeKind::Char => 0o020000,
            NodeKind::Block => 0o060000,
        }
    }
    fn name(self) -> &'static str {
        match self {
            NodeKind::Reg => "reg",
            NodeKind::Fifo => "fifo",
            NodeKind::Sock => "sock",
            NodeKind::Char => "char",
            NodeKind::Block => "block",
        }
    }
}

/// One operation whose Landlock verdict is asked.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Op {
    Open { path: PathBuf, flags: OpenFlags },
    Readdir(PathBuf),
    Exec(PathBuf),
    Mkdir(PathBuf),
    Mknod(PathBuf, NodeKind),
    Symlink(PathBuf),
    Unlink(PathBuf),
    Rmdir(PathBuf),
    Truncate(PathBuf),
    Ioctl(PathBuf, u32),
    Rename(PathBuf, PathBuf),
    Exchange(PathBuf, PathBuf),
    Link(PathBuf, PathBuf),
    Mount(PathBuf),
    BindTcp(u16),
    ConnectTcp(u16),
}

/// A malformed operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpParseError {
    /// No operation word.
    #[error("no operation given")]
    Empty,
    /// Unknown operation word.
    #[error("unknown operation `{}`", arbiter_io::prefix(.0))]
    Unknown(String),
    /// Wrong argument count.
    #[error("`{op}` takes {want} argument(s), got {got}")]
    Arity {
        /// The operation.
        op: String,
        /// Expected count.
        want: usize,
        /// Given count.
        got: usize,
    },
    /// A bad argument.
    #[error("`{op}`: bad {what} `{}`", arbiter_io::prefix(value))]
    Bad {
        /// The operation.
        op: String,
        /// What the argument is.
        what: &'static str,
        /// The value given.
        value: String,
    },
}

/// ioctl command names understood by `ioctl PATH CMD` (x86_64/aarch64 numbers).
pub const IOCTL_NAMES: [(&str, u32); 12] = [
    ("FIOCLEX", 0x5451),
    ("FIONCLEX", 0x5450),
    ("FIONBIO", 0x5421),
    ("FIOASYNC", 0x5452),
    ("FIOQSIZE", 0x5460),
    ("FIONREAD", 0x541B),
    ("FIGETBSZ", 2),
    ("TCGETS", 0x5401),
    ("FS_IOC_GETFLAGS", 0x8008_6601),
    ("FS_IOC_FIEMAP", 0xC020_660B),
    ("FS_IOC_GETFSUUID", 0x8011_1500),
    ("FIBMAP", 1),
];

fn parse_ioctl(op: &str, s: &str) -> Result<u32, OpParseError> {
    if let Some((_, v)) = IOCTL_NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(s)) {
        return Ok(*v);
    }
    let parsed = if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u32::from_str_radix(hex, 16).ok()
    } else {
        s.parse().ok()
    };
    parsed.ok_or_else(|| OpParseError::Bad {
        op: op.into(),
        what: "ioctl command",
        value: s.into(),
    })
}

fn parse_flags(op: &str, s: &str) -> Result<OpenFlags, OpParseError> {
    let mut f = OpenFlags {
        read: true,
        ..OpenFlags::default()
    };
    for w in s.split(',') {
        match w {
            "rdonly" => (f.read, f.write) = (true, false),
            "wronly" => (f.read, f.write) = (false, true),
            "rdwr" => (f.read, f.write) = (true, true),
            "trunc" => f.trunc = true,
            "creat" => f.creat = true,
            _ => {
                return Err(OpParseError::Bad {
                    op: op.into(),
                    what: "open flag (rdonly,wronly,rdwr,trunc,creat)",
                    value: w.into(),
                })
            }
        }
    }
    Ok(f)
}

impl Op {
    /// Parses `OP ARGS...`.
    pub fn parse<S: AsRef<str>>(words: &[S]) -> Result<Op, OpParseError> {
        let w: Vec<&str> = words.iter().map(|s| s.as_ref()).collect();
        let (&op, args) = w.split_first().ok_or(OpParseError::Empty)?;
        let want = match op {
            "open" | "mknod" | "ioctl" | "rename" | "exchange" | "link" => 2,
            "read" | "write" | "readwrite" | "readdir" | "exec" | "mkdir" | "symlink"
            | "unlink" | "rmdir" | "truncate" | "mount" | "bind-tcp" | "connect-tcp" => 1,
            _ => return Err(OpParseError::Unknown(op.into())),
        };
        if args.len() != want {
            return Err(OpParseError::Arity {
                op: op.into(),
                want,
                got: args.len(),
            });
        }
        let p = |i: usize| PathBuf::from(args[i]);
        let port = |s: &str| {
            s.parse::<u16>().map_err(|_| OpParseError::Bad {
                op: op.into(),
                what: "TCP port",
                value: s.into(),
            })
        };
        let open = |read, write| Op::Open {
            path: p(0),
            flags: OpenFlags {
                read,
                write,
                ..OpenFlags::default()
            },
        };
        Ok(match op {
            "read" => open(true, false),
            "write" => open(false, true),
            "readwrite" => open(true, true),
            "open" => Op::Open {
                path: p(0),
                flags: parse_flags(op, args[1])?,
            },
            "readdir" => Op::Readdir(p(0)),
            "exec" => Op::Exec(p(0)),
            "mkdir" => Op::Mkdir(p(0)),
            "mknod" => {
                let kind = match args[1] {
                    "reg" => NodeKind::Reg,
                    "fifo" => NodeKind::Fifo,
                    "sock" => NodeKind::Sock,
                    "char" => NodeKind::Char,
                    "block" => NodeKind::Block,
                    v => {
                        return Err(OpParseError::Bad {
                            op: op.into(),
                            what: "node type (reg|fifo|sock|char|block)",
                            value: v.into(),
                        })
                    }
                };
                Op::Mknod(p(0), kind)
            }
            "symlink" => Op::Symlink(p(0)),
            "unlink" => Op::Unlink(p(0)),
            "rmdir" => Op::Rmdir(p(0)),
            "truncate" => Op::Truncate(p(0)),
            "ioctl" => Op::Ioctl(p(0), parse_ioctl(op, args[1])?),
            "rename" => Op::Rename(p(0), p(1)),
            "exchange" => Op::Exchange(p(0), p(1)),
            "link" => Op::Link(p(0), p(1)),
            "mount" => Op::Mount(p(0)),
            "bind-tcp" => Op::BindTcp(port(args[0])?),
            _ => Op::ConnectTcp(port(args[0])?),
        })
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Open { path, flags } => {
                let mut v = vec![match (flags.read, flags.write) {
                    (true, true) => "rdwr",
                    (false, true) => "wronly",
                    _ => "rdonly",
                }];
                if flags.trunc {
                    v.push("trunc");
                }
                if flags.creat {
                    v.push("creat");
                }
                write!(f, "open {} {}", path.display(), v.join(","))
            }
            Op::Readdir(p) => write!(f, "readdir {}", p.display()),
            Op::Exec(p) => write!(f, "exec {}", p.display()),
            Op::Mkdir(p) => write!(f, "mkdir {}", p.display()),
            Op::Mknod(p, k) => write!(f, "mknod {} {}", p.display(), k.name()),
            Op::Symlink(p) => write!(f, "symlink {}", p.display()),
            Op::Unlink(p) => write!(f, "unlink {}", p.display()),
            Op::Rmdir(p) => write!(f, "rmdir {}", p.display()),
            Op::Truncate(p) => write!(f, "truncate {}", p.display()),
            Op::Ioctl(p, c) => write!(f, "ioctl {} {c:#x}", p.display()),
            Op::Rename(a, b) => write!(f, "rename {} {}", a.display(), b.display()),
            Op::Exchange(a, b) => write!(f, "exchange {} {}", a.display(), b.display()),
            Op::Link(a, b) => write!(f, "link {} {}", a.display(), b.display()),
            Op::Mount(p) => write!(f, "mount {}", p.display()),
            Op::BindTcp(p) => write!(f, "bind-tcp {p}"),
            Op::ConnectTcp(p) => write!(f, "connect-tcp {p}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_parse_and_print_back() {
        for line in [
            "open /a rdwr,trunc,creat",
            "mknod /a fifo",
            "rename /a /b",
            "bind-tcp 80",
            "ioctl /dev/null 0x5401",
        ] {
            let words: Vec<&str> = line.split(' ').collect();
            assert_eq!(Op::parse(&words).unwrap().to_string(), line);
        }
        assert_eq!(
            Op::parse(&["read", "/x"]).unwrap(),
            Op::Open {
                path: "/x".into(),
                flags: OpenFlags {
                    read: true,
                    ..OpenFlags::default()
                }
            }
        );
    }

    #[test]
    fn bad_ops_name_the_problem() {
        assert_eq!(Op::parse::<&str>(&[]).unwrap_err(), OpParseError::Empty);
        assert!(matches!(
            Op::parse(&["fly", "x"]),
            Err(OpParseError::Unknown(_))
        ));
        assert!(matches!(
            Op::parse(&["rename", "x"]),
            Err(OpParseError::Arity { .. })
        ));
        assert!(matches!(
            Op::parse(&["bind-tcp", "70000"]),
            Err(OpParseError::Bad { .. })
        ));
        assert!(matches!(
            Op::parse(&["open", "/x", "rw"]),
            Err(OpParseError::Bad { .. })
        ));
    }
}
