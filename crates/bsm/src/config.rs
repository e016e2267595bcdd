//! The four configuration files (`audit_class`, `audit_event`, `audit_control`,
//! `audit_user`) read with libbsm's observable rules.
//!
//! Parsing keeps what libbsm keeps and reports what it rejects: a rejected line stops
//! libbsm's enumeration (`getauevent`, `getauclassent`, `getauuserent`), so everything
//! after it is invisible to preselection; lookups by number or name (`getauevnum`,
//! `getauevnam`) scan the whole file, comments included, and take the first match.
//! [`EventDb::diagnostics`] lists the rejections and, in strict mode, what libbsm accepts
//! silently (unknown classes, duplicate numbers, CR line ends, numbers that are not numbers).

use crate::error::ConfigError;
use crate::lines::{atoi_u16, chunks, fields, strtoul0_u32};
use crate::mask::Mask;
use std::collections::HashMap;
use std::path::Path;

/// `AU_CLASS_NAME_MAX`.
pub const CLASS_NAME_MAX: usize = 8;
/// `AU_CLASS_DESC_MAX`.
pub const CLASS_DESC_MAX: usize = 72;
/// `AU_EVENT_NAME_MAX`.
pub const EVENT_NAME_MAX: usize = 30;
/// `AU_EVENT_DESC_MAX`.
pub const EVENT_DESC_MAX: usize = 50;
/// `AU_USER_NAME_MAX`.
pub const USER_NAME_MAX: usize = 50;

/// The OpenBSM default files, embedded for machines without `/etc/security/audit_*`.
pub mod defaults {
    /// `audit_class`.
    pub const AUDIT_CLASS: &[u8] = include_bytes!("../etc/audit_class");
    /// `audit_event`.
    pub const AUDIT_EVENT: &[u8] = include_bytes!("../etc/audit_event");
    /// `audit_control`.
    pub const AUDIT_CONTROL: &[u8] = include_bytes!("../etc/audit_control");
    /// `audit_user`.
    pub const AUDIT_USER: &[u8] = include_bytes!("../etc/audit_user");
}

/// One `audit_class` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassEntry {
    /// Class bits.
    pub mask: u32,
    /// Short name (`lo`).
    pub name: Vec<u8>,
    /// Description.
    pub desc: Vec<u8>,
    /// Line in the file.
    pub line: usize,
}

/// A diagnostic about a configuration line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The error (file, line, message).
    pub error: ConfigError,
    /// True if libbsm rejects the line; false if it accepts it silently (strict mode only).
    pub rejected: bool,
}

fn diag(file: &str, line: usize, rejected: bool, message: String) -> Diagnostic {
    Diagnostic {
        error: ConfigError {
            file: file.to_string(),
            line,
            message,
        },
        rejected,
    }
}

/// `audit_class` as libbsm enumerates it.
#[derive(Clone, Debug, Default)]
pub struct ClassDb {
    entries: Vec<ClassEntry>,
    diagnostics: Vec<Diagnostic>,
}

impl ClassDb {
    /// Parses `audit_class` (`mask:name:description`). `file` names it in diagnostics.
    pub fn parse(data: &[u8], file: &str) -> ClassDb {
        let mut db = ClassDb::default();
        let mut stopped = false;
        for ch in chunks(data) {
            if ch.text.first() == Some(&b'#') {
                continue;
            }
            let f: Vec<&[u8]> = fields(ch.text, b':').take(3).collect();
            let reason = if f.len() < 3 {
                Some("fewer than three fields (mask:name:description)".to_string())
            } else if f[1].len() >= CLASS_NAME_MAX {
                Some(format!(
                    "class name longer than {} bytes",
                    CLASS_NAME_MAX - 1
                ))
            } else if f[2].len() >= CLASS_DESC_MAX {
                Some(format!(
                    "class description longer than {} bytes",
                    CLASS_DESC_MAX - 1
                ))
            } else {
                None
            };
            if let Some(r) = reason {
                let msg = if stopped {
                    r
                } else {
                    format!("{r}; libbsm stops reading audit_class here")
                };
                db.diagnostics.push(diag(file, ch.line, true, msg));
                stopped = true;
                continue;
            }
            if stopped {
                continue;
            }
            db.entries.push(ClassEntry {
                mask: strtoul0_u32(f[0]),
                name: f[1].to_vec(),
                desc: f[2].to_vec(),
                line: ch.line,
            });
        }
        db
    }

    /// The embedded OpenBSM defaults.
    pub fn builtin() -> ClassDb {
        ClassDb::parse(defaults::AUDIT_CLASS, "audit_class")
    }

    /// Entries in file order (up to the first rejected line).
    pub fn entries(&self) -> &[ClassEntry] {
        &self.entries
    }

    /// `getauclassnam`: the first entry with this exact (case-sensitive) name.
    pub fn by_name(&self, name: &[u8]) -> Option<u32> {
        self.entries.iter().find(|e| e.name == name).map(|e| e.mask)
    }

    /// Entries whose bits intersect `classes` (for explanations).
    pub fn names_of(&self, classes: u32) -> Vec<String> {
        self.entries
            .iter()
            .filter(|e| e.mask != 0 && e.mask != u32::MAX && e.mask & classes != 0)
            .map(|e| String::from_utf8_lossy(&e.name).into_owned())
            .collect()
    }

    /// Rejected lines.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }
}

/// One `audit_event` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventEntry {
    /// Event number (`atoi` truncated to 16 bits).
    pub number: u16,
    /// Name (`AUE_OPEN_R`).
    pub name: Vec<u8>,
    /// Description (`open(2) - read`), kept as written.
    pub desc: Vec<u8>,
    /// Class bits (0 if any class name is unknown).
    pub class: u32,
    /// Line in the file.
    pub line: usize,
    /// True for lines starting with `#` that still parse (lookups see them).
    pub comment: bool,
}

/// `audit_event` with both of libbsm's views: enumeration and lookup.
#[derive(Clone, Debug)]
pub struct EventDb {
    /// Every line that parses, comments included, in file order (what lookups scan).
    lookup: Vec<EventEntry>,
    /// How many of `lookup` are enumerated (non-comment, before the first bad line), by index.
    enumerated: Vec<u32>,
    /// Index into `lookup` of the first entry per number (`u32::MAX` if none).
    first_by_number: Box<[u32]>,
    diagnostics: Vec<Diagnostic>,
}

impl EventDb {
    /// Parses `audit_event` (`number:name:description:classes`), resolving class names with
    /// `classes`. `file` names it in diagnostics.
    pub fn parse(data: &[u8], classes: &ClassDb, file: &str) -> EventDb {
        let mut lookup = Vec::new();
        let mut enumerated = Vec::new();
        let mut diagnostics = Vec::new();
        let mut stopped = false;
        let mut seen: HashMap<u16, usize> = HashMap::new();
        for ch in chunks(data) {
            let comment = ch.text.first() == Some(&b'#');
            let mut it = fields(ch.text, b':');
            let (no, name, desc, cls) = (it.next(), it.next(), it.next(), it.next());
            let parsed = match (no, name) {
                (Some(no), Some(name)) => {
                    let desc = desc.unwrap_or(b"");
                    if name.len() >= EVENT_NAME_MAX {
                        Err(format!(
                            "event name longer than {} bytes",
                            EVENT_NAME_MAX - 1
                        ))
                    } else if desc.len() >= EVENT_DESC_MAX {
                        Err(format!(
                            "event description longer than {} bytes",
                            EVENT_DESC_MAX - 1
                        ))
                    } else {
                        let (class, unknown) = match cls {
                            Some(c) => match Mask::parse_bytes(c, classes) {
                                Ok(m) => (m.success, None),
                                Err(e) => (0, Some(e.to_string())),
                            },
                            None => (0, None),
                        };
                        Ok((
                            EventEntry {
                                number: atoi_u16(no),
                                name: name.to_vec(),
                                desc: desc.to_vec(),
                                class,
                                line: ch.line,
                                comment,
                            },
                            unknown,
                            no,
                        ))
                    }
                }
                _ => Err("fewer than two fields (number:name)".to_string()),
            };
            match parsed {
                Ok((e, unknown, no)) => {
                    if !comment {
                        if let Some(u) = unknown {
                            diagnostics.push(diag(
                                file,
                                ch.line,
                                false,
                                format!("{u}: event gets class 0"),
                            ));
                        }
                        if !no.iter().all(u8::is_ascii_digit)
                            || no.len() > 5
                            || no.iter().fold(0u64, |a, &d| a * 10 + (d - b'0') as u64) > 65535
                        {
                            diagnostics.push(diag(
                                file,
                                ch.line,
                                false,
                                format!(
                                    "event number {:?} is read as {}",
                                    String::from_utf8_lossy(no),
                                    e.number
                                ),
                            ));
                        }
                        if ch.text.last() == Some(&b'\r') {
                            diagnostics.push(diag(
                                file,
                                ch.line,
                                false,
                                "line ends with CR, kept in the last field".into(),
                            ));
                        }
                        if ch.split {
                            diagnostics.push(diag(
                                file,
                                ch.line,
                                false,
                                "line of 255 bytes or more is split".into(),
                            ));
                        }
                        if let Some(prev) = seen.get(&e.number) {
                            diagnostics.push(diag(
                                file,
                                ch.line,
                                false,
                                format!(
                                    "event number {} also on line {prev}: lookups use the first, preselection the last",
                                    e.number
                                ),
                            ));
                        } else {
                            seen.insert(e.number, ch.line);
                        }
                        if !stopped {
                            enumerated.push(lookup.len() as u32);
                        }
                    }
                    lookup.push(e);
                }
                Err(r) => {
                    if !comment {
                        let msg = if stopped {
                            r
                        } else {
                            format!("{r}; libbsm stops enumerating audit_event here")
                        };
                        diagnostics.push(diag(file, ch.line, true, msg));
                        stopped = true;
                    }
                }
            }
        }
        let mut first_by_number = vec![u32::MAX; 65536].into_boxed_slice();
        for (i, e) in lookup.iter().enumerate() {
            let slot = &mut first_by_number[e.number as usize];
            if *slot == u32::MAX {
                *slot = i as u32;
            }
        }
        EventDb {
            lookup,
            enumerated,
            first_by_number,
            diagnostics,
        }
    }

    /// The embedded OpenBSM defaults.
    pub fn builtin(classes: &ClassDb) -> EventDb {
        EventDb::parse(defaults::AUDIT_EVENT, classes, "audit_event")
    }

    /// `getauevnum`: the first line (comments included) with this number.
    #[inline]
    pub fn by_number(&self, number: u16) -> Option<&EventEntry> {
        let i = self.first_by_number[number as usize];
        self.lookup.get(i as usize)
    }

    /// `getauevnam`: the first line (comments included) with this exact name.
    pub fn by_name(&self, name: &[u8]) -> Option<&EventEntry> {
        self.lookup.iter().find(|e| e.name == name)
    }

    /// How many lines parse as events (comments included: lookups see them).
    pub fn parsed_lines(&self) -> usize {
        self.lookup.len()
    }

    /// `getauevent` enumeration: non-comment entries up to the first rejected line.
    pub fn enumerate(&self) -> impl Iterator<Item = &EventEntry> {
        self.enumerated
            .iter()
            .map(move |&i| &self.lookup[i as usize])
    }

    /// The event → class map preselection uses: enumerated entries, the last duplicate
    /// winning (libbsm's head-inserted cache, the kernel's replacing insert).
    pub fn class_map(&self) -> Vec<(u16, u32)> {
        let mut m: Vec<(u16, u32)> = Vec::new();
        let mut at: HashMap<u16, usize> = HashMap::new();
        for e in self.enumerate() {
            match at.get(&e.number) {
                Some(&i) => m[i].1 = e.class,
                None => {
                    at.insert(e.number, m.len());
                    m.push((e.number, e.class));
                }
            }
        }
        m
    }

    /// Rejected lines and, with `strict`, silently accepted oddities.
    pub fn diagnostics(&self, strict: bool) -> Vec<&Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|d| strict || d.rejected)
            .collect()
    }
}

/// `audit_control` values as libbsm's getters return them.
#[derive(Clone, Debug, Default)]
pub struct Control {
    entries: Vec<(Vec<u8>, Vec<u8>, usize)>,
}

impl Control {
    /// Parses `audit_control` (`key:value`; the value keeps leading spaces and colons;
    /// trailing space, tab and newline are stripped; `#` at column 0 is a comment).
    pub fn parse(data: &[u8]) -> Control {
        let mut entries = Vec::new();
        for ch in chunks(data) {
            if ch.text.first() == Some(&b'#') {
                continue;
            }
            let mut t = ch.text;
            while let Some((&last, rest)) = t.split_last() {
                if last == b' ' || last == b'\t' || last == b'\n' {
                    t = rest;
                } else {
                    break;
                }
            }
            let start = t.iter().position(|&b| b != b':').unwrap_or(t.len());
            let t2 = &t[start..];
            let (key, value) = match t2.iter().position(|&b| b == b':') {
                Some(p) => (&t2[..p], &t2[p + 1..]),
                None => (t2, &b""[..]),
            };
            if key.is_empty() {
                continue;
            }
            entries.push((key.to_vec(), value.to_vec(), ch.line));
        }
        Control { entries }
    }

    /// The embedded OpenBSM defaults.
    pub fn builtin() -> Control {
        Control::parse(defaults::AUDIT_CONTROL)
    }

    /// The first value for `key`, as written (`getstrfromtype`).
    pub fn get(&self, key: &str) -> Option<&[u8]> {
        self.entries
            .iter()
            .find(|(k, _, _)| k == key.as_bytes())
            .map(|(_, v, _)| v.as_slice())
    }

    /// `getacflg`: the `flags` value; absent reads as "" (libbsm's documented bug).
    pub fn flags(&self) -> &[u8] {
        self.get("flags").unwrap_or(b"")
    }

    /// `getacna`: the `naflags` value; absent reads as "".
    pub fn naflags(&self) -> &[u8] {
        self.get("naflags").unwrap_or(b"")
    }

    /// The `flags` mask (system-wide attributable events).
    pub fn flags_mask(&self, classes: &ClassDb) -> Result<Mask, crate::error::MaskError> {
        Mask::parse_bytes(self.flags(), classes)
    }

    /// The `naflags` mask (non-attributable events).
    pub fn naflags_mask(&self, classes: &ClassDb) -> Result<Mask, crate::error::MaskError> {
        Mask::parse_bytes(self.naflags(), classes)
    }
}

/// One `audit_user` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserEntry {
    /// Login name.
    pub name: Vec<u8>,
    /// Always-audit mask.
    pub always: Mask,
    /// Never-audit mask.
    pub never: Mask,
}

/// `audit_user` as libbsm enumerates it (up to the first rejected line).
#[derive(Clone, Debug, Default)]
pub struct UserDb {
    entries: Vec<UserEntry>,
    diagnostics: Vec<Diagnostic>,
}

impl UserDb {
    /// Parses `audit_user` (`user:always:never`, all three non-empty).
    pub fn parse(data: &[u8], classes: &ClassDb, file: &str) -> UserDb {
        let mut db = UserDb::default();
        let mut stopped = false;
        for ch in chunks(data) {
            if ch.text.first() == Some(&b'#') {
                continue;
            }
            let f: Vec<&[u8]> = fields(ch.text, b':').take(3).collect();
            let res = if f.len() < 3 {
                Err("fewer than three fields (user:always:never)".to_string())
            } else if f[0].len() >= USER_NAME_MAX {
                Err(format!("user name longer than {} bytes", USER_NAME_MAX - 1))
            } else {
                match (
                    Mask::parse_bytes(f[1], classes),
                    Mask::parse_bytes(f[2], classes),
                ) {
                    (Ok(a), Ok(n)) => Ok(UserEntry {
                        name: f[0].to_vec(),
                        always: a,
                        never: n,
                    }),
                    (Err(e), _) | (_, Err(e)) => Err(e.to_string()),
                }
            };
            match res {
                Ok(e) if !stopped => db.entries.push(e),
                Ok(_) => {}
                Err(r) => {
                    db.diagnostics.push(diag(file, ch.line, true, r));
                    stopped = true;
                }
            }
        }
        db
    }

    /// The embedded OpenBSM defaults.
    pub fn builtin(classes: &ClassDb) -> UserDb {
        UserDb::parse(defaults::AUDIT_USER, classes, "audit_user")
    }

    /// Entries in file order (up to the first rejected line).
    pub fn entries(&self) -> &[UserEntry] {
        &self.entries
    }

    /// `getauusernam`.
    pub fn get(&self, user: &str) -> Option<&UserEntry> {
        self.entries.iter().find(|e| e.name == user.as_bytes())
    }

    /// Rejected lines.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }
}

/// All four files, from a directory or the embedded defaults.
#[derive(Clone, Debug)]
pub struct Config {
    /// `audit_class`.
    pub classes: ClassDb,
    /// `audit_event`.
    pub events: EventDb,
    /// `audit_control`.
    pub control: Control,
    /// `audit_user`.
    pub users: UserDb,
}

impl Config {
    /// The embedded OpenBSM defaults.
    pub fn builtin() -> Config {
        let classes = ClassDb::builtin();
        let events = EventDb::builtin(&classes);
        let users = UserDb::builtin(&classes);
        Config {
            classes,
            events,
            control: Control::builtin(),
            users,
        }
    }

    /// Reads `dir/audit_{class,event,control,user}`; a missing control or user file reads
    /// as empty, a missing class or event file is an error.
    pub fn load(dir: &Path) -> Result<Config, crate::error::IoError> {
        let read = |name: &str, required: bool| -> Result<Vec<u8>, crate::error::IoError> {
            let p = dir.join(name);
            match std::fs::read(&p) {
                Ok(d) => Ok(d),
                Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
                Err(source) => Err(crate::error::IoError::File { path: p, source }),
            }
        };
        let cdata = read("audit_class", true)?;
        let edata = read("audit_event", true)?;
        let ctl = read("audit_control", false)?;
        let udata = read("audit_user", false)?;
        let fname = |n: &str| dir.join(n).display().to_string();
        let classes = ClassDb::parse(&cdata, &fname("audit_class"));
        let events = EventDb::parse(&edata, &classes, &fname("audit_event"));
        let users = UserDb::parse(&udata, &classes, &fname("audit_user"));
        Ok(Config {
            classes,
            events,
            control: Control::parse(&ctl),
            users,
        })
    }

    /// `--etc DIR` semantics: `dir` if given; else `/etc/security` if it holds
    /// `audit_event`; else the embedded defaults.
    pub fn locate(dir: Option<&Path>) -> Result<Config, crate::error::IoError> {
        match dir {
            Some(d) => Config::load(d),
            None => {
                let d = Path::new("/etc/security");
                if d.join("audit_event").exists() && d.join("audit_class").exists() {
                    Config::load(d)
                } else {
                    Ok(Config::builtin())
                }
            }
        }
    }
}
