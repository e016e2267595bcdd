//! `file_contexts.homedirs`: libsemanage 3.4's genhomedircon (`genhomedircon.c`), which
//! expands `homedir_template` for the home roots and the login users found in `seusers` and
//! the host's account database.
//!
//! Like libsemanage, it reads the *host's* accounts (`/etc/passwd`, `/etc/group`,
//! `/etc/shells`, `/etc/login.defs`, `/etc/default/useradd`, `/etc/libuser.conf`,
//! `/export/home`), not the root's: [`HostAccounts::from_system`] reads the files directly
//! (no NSS modules such as LDAP are consulted — a difference only where such modules
//! provide users). Each generated line is kept only if its context is valid in the built
//! policy, as `sepol_context_check` decides (here the kernel's rule via
//! `arbiter_decide::parse_context`).

use arbiter_decide::{format_context, parse_context, Names};
use arbiter_policy::mls::{Context, MlsRange};
use arbiter_policy::{Policy, RoleId, TypeId, UserId};

use crate::fc::Seuser;

const HEADER: &str = "#\n#\n# User-specific file contexts, generated via libsemanage\n# use semanage command to manage system users to change the file_context\n#\n#\n";
const FALLBACK_SENAME: &str = "user_u";
const FALLBACK_NAME: &str = "[^/]+";
const FALLBACK_UIDGID: &str = "[0-9]+";
const DEFAULT_LOGIN: &str = "__default__";

/// One `/etc/passwd` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Passwd {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    pub dir: String,
    pub shell: String,
}

/// One `/etc/group` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub name: String,
    pub gid: u32,
    pub members: Vec<String>,
}

/// The host files genhomedircon consults, read once.
#[derive(Clone, Debug, Default)]
pub struct HostAccounts {
    pub passwd: Vec<Passwd>,
    pub groups: Vec<Group>,
    /// `/etc/shells` lines (None: the file is missing, libsemanage's built-in list applies).
    pub shells: Option<Vec<String>>,
    pub useradd: Option<String>,
    pub libuser: Option<String>,
    pub login_defs: Option<String>,
    pub export_home_is_dir: bool,
}

impl HostAccounts {
    /// Reads the host's files (missing files count as empty/absent, as in libsemanage).
    pub fn from_system() -> HostAccounts {
        let read = |p: &str| {
            std::fs::read(p)
                .ok()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
        };
        HostAccounts {
            passwd: read("/etc/passwd")
                .map(|t| parse_passwd(&t))
                .unwrap_or_default(),
            groups: read("/etc/group")
                .map(|t| parse_group(&t))
                .unwrap_or_default(),
            shells: read("/etc/shells").map(|t| t.lines().map(str::to_string).collect()),
            useradd: read("/etc/default/useradd"),
            libuser: read("/etc/libuser.conf"),
            login_defs: read("/etc/login.defs"),
            export_home_is_dir: std::path::Path::new("/export/home").is_dir(),
        }
    }

    fn getpwnam(&self, name: &str) -> Option<&Passwd> {
        self.passwd.iter().find(|p| p.name == name)
    }
}

/// Parses `/etc/passwd` text; malformed lines are skipped, as glibc's files module does.
pub fn parse_passwd(text: &str) -> Vec<Passwd> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            if f.len() < 7 || l.starts_with('#') {
                return None;
            }
            Some(Passwd {
                name: f[0].to_string(),
                uid: f[2].parse().ok()?,
                gid: f[3].parse().ok()?,
                dir: f[5].to_string(),
                shell: f[6].to_string(),
            })
        })
        .collect()
}

/// Parses `/etc/group` text.
pub fn parse_group(text: &str) -> Vec<Group> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            if f.len() < 4 || l.starts_with('#') {
                return None;
            }
            Some(Group {
                name: f[0].to_string(),
                gid: f[2].parse().ok()?,
                members: f[3]
                    .split(',')
                    .filter(|m| !m.is_empty())
                    .map(str::to_string)
                    .collect(),
            })
        })
        .collect()
}

/// libsemanage's `semanage_findval`: the first line starting with `var`, the text after
/// `delim` (or after the first word when `delim` is None), cut at its last newline.
fn findval(text: Option<&str>, var: &str, delim: Option<&str>) -> Option<String> {
    let text = text?;
    let line = text.split_inclusive('\n').find(|l| l.starts_with(var))?;
    let mut v = match delim {
        Some(d) => line[line.find(d)? + d.len()..].to_string(),
        None => {
            let seps: &[char] = &['\x0c', '\n', '\r', '\t', '\x0b', ' '];
            let a = line.trim_start_matches(seps);
            let b = a.trim_start_matches(|c: char| !seps.contains(&c));
            b.trim_start_matches(seps).to_string()
        }
    };
    if let Some(p) = v.rfind('\n') {
        v.truncate(p);
    }
    Some(v)
}

fn atoi(s: &str) -> i64 {
    let s = s.trim_start();
    let (neg, d) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let end = d.find(|c: char| !c.is_ascii_digit()).unwrap_or(d.len());
    let v = d[..end].parse::<i64>().unwrap_or(0);
    if neg {
        -v
    } else {
        v
    }
}

/// A user the template is expanded for (`genhomedircon_user_entry_t`).
#[derive(Clone, Debug)]
struct UserEntry {
    name: String,
    uid: String,
    sename: String,
    prefix: String,
    home: String,
    level: String,
    login: String,
    homedir_role: Option<String>,
}

/// An SELinux user as libsemanage's user database sees it: the policy's user joined with
/// its `users_extra` prefix (`user` when it has none).
struct SeUser {
    name: String,
    prefix: String,
    level: Option<String>,
    roles: Vec<String>,
}

/// What genhomedircon needs from the build.
pub struct Inputs<'a> {
    pub policy: &'a Policy,
    pub homedir_template: &'a [u8],
    /// The file contexts genhomedircon checks candidate home roots against (the store's
    /// `file_contexts`: libsemanage's policy fcontext database, without the local ones).
    pub file_contexts: &'a [u8],
    pub seusers: &'a [Seuser],
    pub users_extra: &'a [(String, String)],
    pub usepasswd: bool,
    pub ignoredirs: Option<&'a str>,
}

/// The generated text plus libsemanage's warnings (`libsemanage.add_user: …`).
pub struct Generated {
    pub text: Vec<u8>,
    pub warnings: Vec<String>,
}

struct Gen<'a> {
    inp: &'a Inputs<'a>,
    host: &'a HostAccounts,
    names: Names,
    ignore: Vec<String>,
    out: String,
    warnings: Vec<String>,
}

/// Runs genhomedircon.
pub fn genhomedircon(inp: &Inputs<'_>, host: &HostAccounts) -> Result<Generated, String> {
    let names = Names::new(inp.policy);
    // ignore_setup pushes each `;` token in front: the list is searched newest first, which
    // only matters for equality tests, so order is irrelevant here.
    let ignore = inp
        .ignoredirs
        .map(|s| {
            s.split(';')
                .filter(|t| !t.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let mut g = Gen {
        inp,
        host,
        names,
        ignore,
        out: String::new(),
        warnings: Vec::new(),
    };
    g.write_context_file()?;
    Ok(Generated {
        text: g.out.into_bytes(),
        warnings: g.warnings,
    })
}

/// `semanage_str_replace` with `lim` 0 (all) or 1.
fn replace(src: &str, search: &str, with: &str, lim1: bool) -> String {
    if lim1 {
        src.replacen(search, with, 1)
    } else {
        src.replace(search, with)
    }
}

/// `extract_context`: the last whitespace-separated field (to the end of the line).
fn extract_context(line: &str) -> Option<&str> {
    let trimmed = line.trim_end_matches(|c: char| c.is_ascii_whitespace());
    if trimmed.len() <= 1 && trimmed.chars().all(|c| c.is_ascii_whitespace()) {
        return None;
    }
    let start = trimmed
        .rfind(|c: char| c.is_ascii_whitespace())
        .map_or(0, |p| p + 1);
    if start == 0 {
        // libsemanage's loop stops at offset 0 and reports no field.
        return None;
    }
    Some(&line[start..])
}

impl Gen<'_> {
    fn template(&self, pred: fn(&str) -> bool) -> Vec<String> {
        String::from_utf8_lossy(self.inp.homedir_template)
            .split_inclusive('\n')
            .filter(|l| pred(l))
            .map(|l| match l.rfind('\n') {
                Some(p) => l[..p].to_string(),
                None => l.to_string(),
            })
            .collect()
    }

    /// `check_line`: the context field parses and is valid in the policy.
    /// `sepol_context_from_string` turns `<<none>>` into no context, which passes.
    fn check_line(&self, line: &str) -> bool {
        extract_context(line).is_some_and(|c| {
            c == "<<none>>" || parse_context(self.inp.policy, &self.names, c).is_ok()
        })
    }

    fn emit(&mut self, line: &str) {
        self.out.push_str(line);
        self.out.push('\n');
    }

    fn write_replacements(&mut self, tpl: &[String], repl: &[(&str, &str)]) {
        for t in tpl {
            let mut line = t.clone();
            for (s, w) in repl {
                line = replace(&line, s, w, false);
            }
            if self.check_line(&line) {
                self.emit(&line);
            }
        }
    }

    fn write_contexts(
        &mut self,
        tpl: &[String],
        repl: &[(&str, &str)],
        user: &UserEntry,
    ) -> Result<(), String> {
        for t in tpl {
            let mut line = t.clone();
            for (s, w) in repl {
                line = replace(&line, s, w, false);
            }
            let Some(old) = extract_context(&line).map(str::to_string) else {
                return Err(format!(
                    "genhomedircon: no context in template line `{line}`"
                ));
            };
            if old == "<<none>>" {
                if self.check_line(&line) {
                    self.emit(&line);
                }
                continue;
            }
            let mut parts = old.splitn(4, ':');
            let (Some(_), Some(role), Some(ty)) = (parts.next(), parts.next(), parts.next()) else {
                return Err(format!(
                    "genhomedircon: invalid context `{old}` in homedir_template"
                ));
            };
            let mls = parts.next();
            let role = user.homedir_role.as_deref().unwrap_or(role);
            let mls = if self.inp.policy.mls {
                Some(user.level.as_str())
            } else {
                mls
            };
            let new = match mls {
                Some(m) => format!("{}:{role}:{ty}:{m}", user.sename),
                None => format!("{}:{role}:{ty}", user.sename),
            };
            let line = replace(&line, &old, &new, true);
            if self.check_line(&line) {
                self.emit(&line);
            }
        }
        Ok(())
    }

    fn write_home_dir_context(&mut self, tpl: &[String], user: &UserEntry) -> Result<(), String> {
        let shown = if user.name == FALLBACK_NAME {
            FALLBACK_SENAME
        } else {
            &user.name
        };
        self.out
            .push_str(&format!("\n\n#\n# Home Context for user {shown}\n#\n\n"));
        self.write_contexts(
            tpl,
            &[("HOME_DIR", &user.home), ("ROLE", &user.prefix)],
            user,
        )
    }

    fn write_username_context(&mut self, tpl: &[String], user: &UserEntry) -> Result<(), String> {
        self.write_contexts(
            tpl,
            &[
                ("%{USERNAME}", &user.name),
                ("%{USERID}", &user.uid),
                ("ROLE", &user.prefix),
            ],
            user,
        )
    }

    fn write_user_context(&mut self, tpl: &[String], user: &UserEntry) -> Result<(), String> {
        self.write_contexts(tpl, &[("USER", &user.name), ("ROLE", &user.prefix)], user)
    }

    /// libsemanage's user database: policy users joined with users_extra, sorted by name.
    fn se_users(&self) -> Vec<SeUser> {
        let p = self.inp.policy;
        let mut users: Vec<SeUser> = p
            .users
            .iter()
            .enumerate()
            .map(|(i, u)| {
                let prefix = self
                    .inp
                    .users_extra
                    .iter()
                    .find(|(n, _)| **n == *u.name)
                    .map_or("user".to_string(), |(_, pre)| pre.clone());
                let level = p.mls.then(|| {
                    let ctx = Context {
                        user: UserId::from_index(i).expect("user index"),
                        role: RoleId::from_index(0).expect("role index"),
                        ty: TypeId::from_index(0).expect("type index"),
                        range: MlsRange {
                            low: u.default_level.clone(),
                            high: u.default_level.clone(),
                        },
                    };
                    let s = format_context(&self.names, &ctx);
                    s.splitn(4, ':').nth(3).unwrap_or("").to_string()
                });
                let roles = u
                    .roles
                    .iter()
                    .filter_map(|r| p.roles.get(r as usize).map(|r| r.name.to_string()))
                    .collect();
                SeUser {
                    name: u.name.to_string(),
                    prefix,
                    level,
                    roles,
                }
            })
            .collect();
        for (n, pre) in self.inp.users_extra {
            if !users.iter().any(|u| u.name == *n) {
                users.push(SeUser {
                    name: n.clone(),
                    prefix: pre.clone(),
                    level: None,
                    roles: Vec::new(),
                });
            }
        }
        users.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        users
    }

    fn entry_for(&self, user: Option<&SeUser>, name: &str) -> (String, String, Option<String>) {
        let (prefix, level) = match user {
            Some(u) => (
                u.prefix.clone(),
                u.level.clone().unwrap_or_else(|| "s0".into()),
            ),
            None => (name.to_string(), "s0".to_string()),
        };
        let role = (prefix == "object_r" || user.is_some_and(|u| u.roles.contains(&prefix)))
            .then(|| prefix.clone());
        (prefix, level, role)
    }

    fn setup_fallback(&self, users: &[SeUser]) -> UserEntry {
        let mut fb = UserEntry {
            name: FALLBACK_NAME.into(),
            uid: String::new(),
            sename: FALLBACK_SENAME.into(),
            prefix: "user".into(),
            home: String::new(),
            level: "s0".into(),
            login: FALLBACK_NAME.into(),
            homedir_role: None,
        };
        if let Some(d) = self.inp.seusers.iter().find(|s| s.name == DEFAULT_LOGIN) {
            let u = users.iter().find(|u| u.name == d.sename);
            let (prefix, level, role) = self.entry_for(u, DEFAULT_LOGIN);
            fb = UserEntry {
                name: FALLBACK_NAME.into(),
                uid: FALLBACK_UIDGID.into(),
                sename: d.sename.clone(),
                prefix,
                home: String::new(),
                level,
                login: FALLBACK_NAME.into(),
                homedir_role: role,
            };
        }
        fb
    }

    fn ignored(&self, dir: &str) -> bool {
        self.ignore.iter().any(|d| d == dir)
    }

    /// `get_home_dirs`.
    fn home_dirs(&mut self) -> Result<Vec<String>, String> {
        let h = self.host;
        let mut list: Vec<String> = Vec::new();
        let push = |list: &mut Vec<String>, s: String| {
            if !list.contains(&s) {
                list.insert(0, s);
            }
        };
        if let Some(p) = findval(h.useradd.as_deref(), "HOME", Some("=")).filter(|p| !p.is_empty())
        {
            push(&mut list, p);
        }
        if let Some(p) =
            findval(h.libuser.as_deref(), "LU_HOMEDIRECTORY", Some("=")).filter(|p| !p.is_empty())
        {
            push(&mut list, p);
        }
        if list.is_empty() {
            push(&mut list, "/home".into());
        }
        if h.export_home_is_dir {
            push(&mut list, "/export/home".into());
        }
        if !self.inp.usepasswd {
            return Ok(list);
        }
        let shells: Vec<String> = match &h.shells {
            Some(lines) => lines
                .iter()
                .filter(|l| *l != "/sbin/nologin")
                .cloned()
                .collect(),
            None => [
                "/bin/csh",
                "/bin/tcsh",
                "/bin/ksh",
                "/bin/bsh",
                "/bin/ash",
                "/usr/bin/ksh",
                "/usr/bin/pdksh",
                "/bin/zsh",
                "/bin/sh",
                "/bin/bash",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        };
        let (mut minuid, mut maxuid, mut minuid_set) = (500i64, 60000i64, false);
        if let Some(p) = findval(h.login_defs.as_deref(), "UID_MIN", None).filter(|p| !p.is_empty())
        {
            minuid = atoi(&p) as u32 as i64;
            minuid_set = true;
        }
        if let Some(p) = findval(h.login_defs.as_deref(), "UID_MAX", None).filter(|p| !p.is_empty())
        {
            maxuid = atoi(&p) as u32 as i64;
        }
        if let Some(p) =
            findval(h.libuser.as_deref(), "LU_UIDNUMBER", Some("=")).filter(|p| !p.is_empty())
        {
            let t = atoi(&p) as u32 as i64;
            if !minuid_set || t < minuid {
                minuid = t;
            }
        }
        let fcs = self.dir_patterns();
        for pw in &h.passwd {
            let uid = pw.uid as i64;
            if uid < minuid || uid > maxuid || !shells.contains(&pw.shell) {
                continue;
            }
            let dir = strip_trailing_slashes(&pw.dir);
            if dir == "/" || self.ignored(&dir) || dir.matches('/').count() <= 1 {
                continue;
            }
            let parent = match dir.rfind('/') {
                Some(p) => dir[..p].to_string(),
                None => dir.clone(),
            };
            if list.contains(&parent) {
                continue;
            }
            if fcs.iter().any(|re| re.is_match(&parent)) {
                self.warnings.push(format!(
                    "libsemanage.get_home_dirs: {} homedir {} or its parent directory conflicts with a file context already specified in the policy.  This usually indicates an incorrectly defined system account.  If it is a system account please make sure its uid is less than {} or greater than {} or its login shell is /sbin/nologin.",
                    pw.name, dir, minuid as u32, maxuid as u32
                ));
            } else {
                push(&mut list, parent);
            }
        }
        list.sort();
        Ok(list)
    }

    /// `fcontext_matches`' patterns: every all-files or directory entry, its trailing
    /// `.+`, `.*`, `(/.*)?` and `/` stripped, anchored, trailing slashes allowed. POSIX
    /// extended regexes are compiled with the `regex` crate, each only when a candidate
    /// home root could match it (see [`DirPattern`]); one that does not compile is
    /// skipped, as `regcomp` failing is in libsemanage.
    fn dir_patterns(&self) -> Vec<DirPattern> {
        let text = String::from_utf8_lossy(self.inp.file_contexts);
        let mut out = Vec::new();
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.is_empty() || f[0].starts_with('#') {
                continue;
            }
            let ty = if f.len() >= 3 { f[1] } else { "" };
            if !(ty.is_empty() || ty == "-d") {
                continue;
            }
            let mut e = f[0];
            for suffix in [".+", ".*", "(/.*)?", "/"] {
                if let Some(s) = e.strip_suffix(suffix) {
                    e = s;
                }
            }
            out.push(DirPattern {
                literal: literal_prefix(e).to_string(),
                source: format!("^(?:{e})/*$"),
                compiled: std::cell::OnceCell::new(),
            });
        }
        out
    }

    fn add_user(
        &mut self,
        head: &mut Vec<UserEntry>,
        user: Option<&SeUser>,
        name: &str,
        sename: &str,
        selogin: &str,
    ) -> Result<(), String> {
        if let Some(group) = selogin.strip_prefix('%') {
            if let Some(orig) = head.iter().find(|e| e.name == name) {
                if let Some(orig_group) = orig.login.strip_prefix('%') {
                    return Err(format!(
                        "User {name} is already mapped to group {orig_group}, but also belongs to group {group}. Add an explicit mapping for this user to override group mappings."
                    ));
                }
                return Ok(());
            }
        }
        let (prefix, level, role) = self.entry_for(user, name);
        let Some(pw) = self.host.getpwnam(name) else {
            self.warnings.push(format!(
                "libsemanage.add_user: user {name} not in password file"
            ));
            return Ok(());
        };
        let dir = strip_trailing_slashes(&pw.dir);
        if dir == "/" || self.ignored(&dir) {
            return Ok(());
        }
        // push_user_entry puts each new entry in front of the list.
        head.insert(
            0,
            UserEntry {
                name: name.to_string(),
                uid: pw.uid.to_string(),
                sename: sename.to_string(),
                prefix,
                home: dir,
                level,
                login: selogin.to_string(),
                homedir_role: role,
            },
        );
        Ok(())
    }

    fn users(&mut self, users: &[SeUser]) -> Result<Vec<UserEntry>, String> {
        let mut seusers: Vec<&Seuser> = self.inp.seusers.iter().collect();
        seusers.sort_by(
            |a, b| match (a.name.starts_with('%'), b.name.starts_with('%')) {
                (true, true) => std::cmp::Ordering::Equal,
                (true, false) => std::cmp::Ordering::Greater,
                (false, true) => std::cmp::Ordering::Less,
                _ => a.name.as_bytes().cmp(b.name.as_bytes()),
            },
        );
        let mut head = Vec::new();
        for s in seusers {
            if s.name == DEFAULT_LOGIN {
                continue;
            }
            let Some(u) = users.iter().find(|u| u.name == s.sename) else {
                return Err(format!(
                    "seusers maps {} to {}, which is not an SELinux user of the policy",
                    s.name, s.sename
                ));
            };
            if let Some(grname) = s.name.strip_prefix('%') {
                let Some(group) = self.host.groups.iter().find(|g| g.name == grname).cloned()
                else {
                    return Err(format!(
                        "libsemanage.get_group_users: Can't find group named {grname}"
                    ));
                };
                for m in &group.members {
                    self.add_user(&mut head, Some(u), m, &s.sename, &s.name)?;
                }
                let primaries: Vec<String> = self
                    .host
                    .passwd
                    .iter()
                    .filter(|p| p.gid == group.gid && !group.members.contains(&p.name))
                    .map(|p| p.name.clone())
                    .collect();
                for n in primaries {
                    self.add_user(&mut head, Some(u), &n, &s.sename, &s.name)?;
                }
            } else {
                self.add_user(&mut head, Some(u), &s.name, &s.sename, &s.name)?;
            }
        }
        Ok(head)
    }

    fn write_context_file(&mut self) -> Result<(), String> {
        let homedir_tpl = self.template(|l| l.starts_with("HOME_DIR"));
        let homeroot_tpl = self.template(|l| l.starts_with("HOME_ROOT"));
        let username_tpl = self.template(|l| l.contains("%{USERNAME}") || l.contains("%{USERID}"));
        let user_tpl = self.template(|l| {
            !(l.contains("%{USERNAME}") || l.contains("%{USERID}")) && l.contains("USER")
        });
        if homedir_tpl.is_empty()
            && homeroot_tpl.is_empty()
            && username_tpl.is_empty()
            && user_tpl.is_empty()
        {
            return Ok(());
        }
        self.out.push_str(HEADER);
        let users = self.se_users();
        let mut fallback = self.setup_fallback(&users);
        if !homedir_tpl.is_empty() || !homeroot_tpl.is_empty() {
            let dirs = self.home_dirs()?;
            if dirs.is_empty() {
                self.warnings.push("libsemanage.write_context_file: no home directories were available, exiting without writing".into());
                return Ok(());
            }
            for h in dirs {
                fallback.home = format!("{h}/{FALLBACK_NAME}");
                self.write_home_dir_context(&homedir_tpl, &fallback)?;
                self.write_replacements(&homeroot_tpl, &[("HOME_ROOT", &h)]);
            }
            fallback.home = String::new();
        }
        if !user_tpl.is_empty() || !username_tpl.is_empty() {
            self.write_username_context(&username_tpl, &fallback)?;
            self.write_user_context(&user_tpl, &fallback)?;
            for u in self.users(&users)? {
                self.write_home_dir_context(&homedir_tpl, &u)?;
                self.write_username_context(&username_tpl, &u)?;
                self.write_user_context(&user_tpl, &u)?;
            }
        }
        Ok(())
    }
}

fn strip_trailing_slashes(d: &str) -> String {
    let mut s = d.to_string();
    while s.len() > 1 && s.ends_with('/') {
        s.pop();
    }
    s
}

/// One of `fcontext_matches`' patterns. Debian's file_contexts has 1,411 of them
/// and compiling them all cost genhomedircon most of its time, on the path to `setfiles
/// -c`; a pattern is compiled only when a path starts with its literal prefix (the
/// anchored pattern can match nothing else), so a store whose candidate home roots are
/// already listed compiles none.
struct DirPattern {
    /// The text every match starts with (possibly empty).
    literal: String,
    source: String,
    /// `None` inside: the pattern did not compile, and matches nothing.
    compiled: std::cell::OnceCell<Option<regex::Regex>>,
}

impl DirPattern {
    fn is_match(&self, path: &str) -> bool {
        path.starts_with(&self.literal)
            && self
                .compiled
                .get_or_init(|| regex::Regex::new(&self.source).ok())
                .as_ref()
                .is_some_and(|re| re.is_match(path))
    }
}

/// The literal characters a regex starts with, up to its first special character; a
/// character that a following `*`, `?` or `{` may repeat zero times is left out, and an
/// alternation anywhere (which may end the prefix's scope) gives the empty prefix.
fn literal_prefix(re: &str) -> &str {
    if re.contains('|') {
        return "";
    }
    let Some(special) = re.find(|c| ".[]()*+?{}^$\\".contains(c)) else {
        return re;
    };
    let mut lit = &re[..special];
    if matches!(re[special..].chars().next(), Some('*' | '?' | '{')) {
        if let Some((i, _)) = lit.char_indices().next_back() {
            lit = &lit[..i];
        }
    }
    lit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_prefix_stops_where_the_regex_may_vary() {
        assert_eq!(literal_prefix("/usr/lib/foo"), "/usr/lib/foo");
        assert_eq!(literal_prefix("/home/[^/]+"), "/home/");
        assert_eq!(literal_prefix("/var/lib/xy*"), "/var/lib/x");
        assert_eq!(literal_prefix("/var/lib/xy?z"), "/var/lib/x");
        assert_eq!(literal_prefix("/var/lib/xy{0,2}"), "/var/lib/x");
        assert_eq!(literal_prefix("/var/lib/xy+"), "/var/lib/xy");
        assert_eq!(literal_prefix("/a\\.b"), "/a");
        assert_eq!(literal_prefix("/a|/b"), "");
        assert_eq!(literal_prefix("(/a)?/b"), "");
    }

    #[test]
    fn a_dir_pattern_matches_exactly_what_its_regex_matches() {
        let patterns = [
            "/home",
            "/home/[^/]+",
            "/var/lib/xy*",
            "/opt/(a|b)",
            "/srv/x?y",
            "/a\\.b",
            "/u{1,2}",
            "/bad[",
        ];
        let paths = [
            "/home",
            "/home/",
            "/home/u",
            "/var/lib/x",
            "/var/lib/xyy",
            "/opt/a",
            "/opt/c",
            "/srv/y",
            "/srv/xy",
            "/a.b",
            "/aXb",
            "/u",
            "/uu",
            "/",
            "",
        ];
        for p in patterns {
            let d = DirPattern {
                literal: literal_prefix(p).to_string(),
                source: format!("^(?:{p})/*$"),
                compiled: std::cell::OnceCell::new(),
            };
            let re = regex::Regex::new(&d.source).ok();
            for path in paths {
                let want = re.as_ref().is_some_and(|r| r.is_match(path));
                assert_eq!(d.is_match(path), want, "{p} on {path:?}");
            }
        }
    }
}
