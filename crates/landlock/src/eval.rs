//! Evaluates an [`Op`] on this machine's filesystem under a domain: the VFS checks that come
//! before Landlock (missing names, existing names, cross-mount renames, wrong file types),
//! then the hook the kernel runs, with its errno and an explanation.

use crate::access::{fs, fs_names, net, net_names, AccessFs};
use crate::check::{self, LayerMasks, ReferQuery};
use crate::domain::Domain;
use crate::errno::Errno;
use crate::mounts::MountTable;
use crate::object::{ObjectId, ObjectRegistry};
use crate::ops::{Op, OpenFlags};
use crate::walk::{self, Location};
use std::path::Path;

/// The verdict for one operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Landlock allows it (the operation may still fail later for other reasons, e.g.
    /// ENOTEMPTY, which are not modelled).
    Allowed,
    /// Landlock denies it with this errno (EACCES, EXDEV or EPERM).
    Denied(Errno),
    /// The operation fails for a reason other than Landlock: before Landlock is asked
    /// (ENOENT, EEXIST, cross-mount EXDEV, …) or, where modelled, after it allowed the
    /// operation (EPERM for a hard link to a directory).
    Fails(Errno),
}

impl Outcome {
    /// The first line of `arbiter landlock check`: `allowed`, `denied EACCES`, `fails ENOENT`.
    pub fn line(&self) -> String {
        match self {
            Outcome::Allowed => "allowed".into(),
            Outcome::Denied(e) => format!("denied {e}"),
            Outcome::Fails(e) => format!("fails {e}"),
        }
    }

    /// The errno the operation returns as far as modelled (0 when allowed).
    pub fn errno(&self) -> i32 {
        match self {
            Outcome::Allowed => 0,
            Outcome::Denied(e) | Outcome::Fails(e) => e.code(),
        }
    }
}

/// An outcome with the reasons behind it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluation {
    /// The verdict.
    pub outcome: Outcome,
    /// Human-readable lines: what was requested where, which layers denied what, which rules
    /// granted the rest.
    pub explanation: Vec<String>,
}

/// A domain (or none: an unsandboxed process) with the object registry its rules use.
#[derive(Clone, Debug, Default)]
pub struct Sandbox {
    /// Inode identities of every rule's object.
    pub registry: ObjectRegistry,
    /// The domain, None when no layer is applied.
    pub domain: Option<Domain>,
}

/// The always-allowed ioctl commands on devices (`is_masked_device_ioctl`).
pub const ALWAYS_ALLOWED_IOCTLS: [u32; 14] = [
    0x5451,      // FIOCLEX
    0x5450,      // FIONCLEX
    0x5421,      // FIONBIO
    0x5452,      // FIOASYNC
    0x5460,      // FIOQSIZE
    0xC004_5877, // FIFREEZE
    0xC004_5878, // FITHAW
    0xC020_660B, // FS_IOC_FIEMAP
    2,           // FIGETBSZ
    0x4004_9409, // FICLONE
    0x4020_940D, // FICLONERANGE
    0xC018_9436, // FIDEDUPERANGE
    0x8011_1500, // FS_IOC_GETFSUUID
    0x8080_1501, // FS_IOC_GETFSSYSFSPATH
];

const S_IFMT: u32 = 0o170000;

fn file_type(mode: u32) -> u32 {
    mode & S_IFMT
}

fn is_device(mode: u32) -> bool {
    matches!(file_type(mode), 0o020000 | 0o060000)
}

struct Explainer<'a> {
    dom: &'a Domain,
    lines: Vec<String>,
}

impl Explainer<'_> {
    fn layers(&mut self, side: &str, request: AccessFs, m: &LayerMasks) {
        for (l, rights) in m.denials() {
            let r = rights & request;
            if r != 0 {
                self.lines
                    .push(format!("{side}layer {} denies {}", l + 1, fs_names(r)));
            }
        }
    }

    fn grants(&mut self, loc: &Location, walk: &[Option<ObjectId>], request: AccessFs) {
        let paths: Vec<&Path> = loc.path.ancestors().collect();
        for g in check::grants(self.dom, walk, request) {
            let at = paths
                .get(g.step)
                .map_or("?".into(), |p| p.display().to_string());
            self.lines.push(format!(
                "layer {} grants {} by the rule on {at}",
                g.layer + 1,
                fs_names(g.rights)
            ));
        }
    }
}

fn fails(e: Errno, why: impl Into<String>) -> Evaluation {
    Evaluation {
        outcome: Outcome::Fails(e),
        explanation: vec![why.into()],
    }
}

fn allowed(why: impl Into<String>) -> Evaluation {
    Evaluation {
        outcome: Outcome::Allowed,
        explanation: vec![why.into()],
    }
}

impl Sandbox {
    /// The verdict for `op` now, on this machine.
    pub fn evaluate(&self, op: &Op) -> Evaluation {
        match self.evaluate_inner(op) {
            Ok(e) => e,
            Err(e) => fails(e, "path lookup fails before Landlock is asked"),
        }
    }

    fn path_check(
        &self,
        loc: &Location,
        walk: &[Option<ObjectId>],
        request: AccessFs,
        what: &str,
    ) -> Evaluation {
        let Some(dom) = &self.domain else {
            return allowed("no Landlock domain");
        };
        let mut x = Explainer {
            dom,
            lines: vec![format!(
                "{what}: {} on {}",
                fs_names(request),
                loc.path.display()
            )],
        };
        if !check::fs_applies(dom) {
            x.lines.push("no layer handles a filesystem right".into());
            return Evaluation {
                outcome: Outcome::Allowed,
                explanation: x.lines,
            };
        }
        let r = check::check_walk(dom, walk, request);
        if let Err(m) = &r {
            x.layers("", request, m);
        }
        x.grants(loc, walk, request);
        Evaluation {
            outcome: if r.is_ok() {
                Outcome::Allowed
            } else {
                Outcome::Denied(Errno::EACCES)
            },
            explanation: x.lines,
        }
    }

    fn open_check(
        &self,
        loc: &Location,
        walk: &[Option<ObjectId>],
        request: AccessFs,
        mode: u32,
    ) -> (Evaluation, AccessFs) {
        let Some(dom) = &self.domain else {
            return (allowed("no Landlock domain"), fs::ALL);
        };
        let mut x = Explainer {
            dom,
            lines: vec![format!(
                "open: {} on {}",
                fs_names(request),
                loc.path.display()
            )],
        };
        let r = check::check_open(dom, walk, request, is_device(mode));
        if let Some(m) = &r.denied {
            x.layers("", request, m);
        }
        x.grants(loc, walk, request | fs::TRUNCATE | fs::IOCTL_DEV);
        if r.denied.is_none() {
            x.lines.push(format!(
                "rights kept on the open file: {}",
                fs_names(r.allowed_access & (fs::TRUNCATE | fs::IOCTL_DEV))
            ));
        }
        let outcome = if r.denied.is_some() {
            Outcome::Denied(Errno::EACCES)
        } else {
            Outcome::Allowed
        };
        (
            Evaluation {
                outcome,
                explanation: x.lines,
            },
            r.allowed_access,
        )
    }

    /// open(2) with O_NONBLOCK semantics for FIFOs; returns the evaluation and, when the open
    /// itself is allowed, the file's `allowed_access` and mode.
    fn open(
        &self,
        path: &Path,
        flags: OpenFlags,
    ) -> Result<(Evaluation, Option<(AccessFs, u32)>), Errno> {
        if walk::is_nouser_magic_link(path) {
            return Ok((
                allowed("a pipe or socket of an internal filesystem (SB_NOUSER): never checked"),
                Some((fs::ALL, 0o010000)),
            ));
        }
        let mut request = 0;
        if flags.read {
            request |= fs::READ_FILE;
        }
        if flags.write {
            request |= fs::WRITE_FILE;
        }
        let e = walk::entry(path)?;
        let target = match e.existing {
            Some(st) if file_type(st.mode) == 0o120000 => match walk::resolve(path, true) {
                Ok(l) => Some(l),
                Err(Errno::ENOENT) if flags.creat => {
                    return Ok((
                        fails(
                            Errno::ENOENT,
                            "O_CREAT through a dangling symlink is not modelled",
                        ),
                        None,
                    ))
                }
                Err(err) => return Err(err),
            },
            Some(_) => Some(walk::resolve(path, false)?),
            None => None,
        };
        let Some(loc) = target else {
            if !flags.creat {
                return Err(Errno::ENOENT);
            }
            // O_CREAT of a new name: MAKE_REG on the parent, then the open of the new inode
            // (no rule can be on it); O_TRUNC is not checked on a created file.
            let dir_walk = e.dir.objects(&self.registry);
            let mk = self.path_check(&e.dir, &dir_walk, fs::MAKE_REG, "create (O_CREAT)");
            if mk.outcome != Outcome::Allowed {
                return Ok((mk, None));
            }
            let mut walk = vec![None];
            walk.extend(dir_walk);
            let (mut ev, access) = self.open_check(&e.dir, &walk, request, 0o100000);
            let mut lines = mk.explanation;
            lines.append(&mut ev.explanation);
            if ev.outcome != Outcome::Allowed {
                lines.push("the file is created even though the open is denied".into());
            }
            ev.explanation = lines;
            return Ok((ev, Some((access, 0o100000))));
        };
        let mode = loc.stat().mode;
        if is_device(mode)
            && MountTable::current()
                .get(loc.stat().mnt_id)
                .is_some_and(|m| m.nodev)
        {
            return Ok((
                fails(
                    Errno::EACCES,
                    "a device on a nodev mount (VFS, before Landlock)",
                ),
                None,
            ));
        }
        if file_type(mode) == 0o040000 {
            if flags.write || flags.trunc || flags.creat {
                return Ok((
                    fails(Errno::EISDIR, "opening a directory for writing"),
                    None,
                ));
            }
            request = if flags.read { fs::READ_DIR } else { 0 };
        }
        let walk = loc.objects(&self.registry);
        let (mut ev, access) = self.open_check(&loc, &walk, request, mode);
        if ev.outcome == Outcome::Allowed && file_type(mode) == 0o140000 {
            ev.outcome = Outcome::Fails(Errno::ENXIO);
            ev.explanation
                .push("Landlock allows it; a socket cannot be opened (ENXIO)".into());
            return Ok((ev, None));
        }
        if ev.outcome == Outcome::Allowed
            && flags.trunc
            && file_type(mode) == 0o100000
            && access & fs::TRUNCATE == 0
        {
            ev.outcome = Outcome::Denied(Errno::EACCES);
            ev.explanation
                .push("O_TRUNC needs truncate, denied at open time".into());
        }
        let kept = (ev.outcome == Outcome::Allowed).then_some((access, mode));
        Ok((ev, kept))
    }

    fn evaluate_inner(&self, op: &Op) -> Result<Evaluation, Errno> {
        match op {
            Op::Open { path, flags } => Ok(self.open(path, *flags)?.0),
            Op::Readdir(p) => {
                let loc = walk::resolve(p, true)?;
                if !loc.is_dir() {
                    return Ok(fails(Errno::ENOTDIR, "O_DIRECTORY on a non-directory"));
                }
                let walk = loc.objects(&self.registry);
                Ok(self
                    .open_check(&loc, &walk, fs::READ_DIR, loc.stat().mode)
                    .0)
            }
            Op::Exec(p) => {
                let loc = walk::resolve(p, true)?;
                let mode = loc.stat().mode;
                if file_type(mode) != 0o100000 || mode & 0o111 == 0 {
                    return Ok(fails(
                        Errno::EACCES,
                        "not an executable regular file (VFS, before Landlock)",
                    ));
                }
                if MountTable::current()
                    .get(loc.stat().mnt_id)
                    .is_some_and(|m| m.noexec)
                {
                    return Ok(fails(
                        Errno::EACCES,
                        "the file's mount is noexec (VFS, before Landlock)",
                    ));
                }
                let walk = loc.objects(&self.registry);
                Ok(self
                    .open_check(&loc, &walk, fs::EXECUTE | fs::READ_FILE, mode)
                    .0)
            }
            Op::Mkdir(p) => self.create(p, fs::MAKE_DIR),
            Op::Mknod(p, kind) => self.create(p, crate::access::make_right_for_mode(kind.mode())),
            Op::Symlink(p) => self.create(p, fs::MAKE_SYM),
            Op::Unlink(p) | Op::Rmdir(p) => {
                if matches!(op, Op::Unlink(_)) && p.as_os_str().as_encoded_bytes().ends_with(b"/") {
                    // do_unlinkat refuses a trailing slash before any security hook.
                    let e = match walk::resolve(p, true) {
                        Ok(l) if l.is_dir() => Errno::EISDIR,
                        Ok(_) => Errno::ENOTDIR,
                        Err(e) => e,
                    };
                    return Ok(fails(e, "unlink with a trailing slash"));
                }
                let e = walk::entry(p)?;
                if e.existing.is_none() {
                    return Err(Errno::ENOENT);
                }
                let right = if matches!(op, Op::Unlink(_)) {
                    fs::REMOVE_FILE
                } else {
                    fs::REMOVE_DIR
                };
                let walk = e.dir.objects(&self.registry);
                Ok(self.path_check(&e.dir, &walk, right, "remove (checked on the parent)"))
            }
            Op::Truncate(p) => {
                let loc = walk::resolve(p, true)?;
                match file_type(loc.stat().mode) {
                    0o040000 => return Ok(fails(Errno::EISDIR, "truncate of a directory")),
                    0o100000 => {}
                    _ => return Ok(fails(Errno::EINVAL, "truncate of a non-regular file")),
                }
                let walk = loc.objects(&self.registry);
                Ok(self.path_check(&loc, &walk, fs::TRUNCATE, "truncate"))
            }
            Op::Ioctl(p, cmd) => {
                let flags = OpenFlags {
                    read: true,
                    ..OpenFlags::default()
                };
                let (mut ev, kept) = self.open(p, flags)?;
                if let Some((access, mode)) = kept {
                    if is_device(mode)
                        && access & fs::IOCTL_DEV == 0
                        && !ALWAYS_ALLOWED_IOCTLS.contains(cmd)
                    {
                        ev.outcome = Outcome::Denied(Errno::EACCES);
                        ev.explanation.push(format!(
                            "ioctl {cmd:#x} on a device needs ioctl_dev, denied at open time"
                        ));
                    }
                }
                Ok(ev)
            }
            Op::Rename(a, b) => self.refer(a, b, true, false),
            Op::Exchange(a, b) => self.refer(a, b, true, true),
            Op::Link(a, b) => self.refer(a, b, false, false),
            Op::Mount(p) => {
                walk::resolve(p, true)?;
                Ok(match &self.domain {
                    Some(d) if check::check_mount(d).is_err() => Evaluation {
                        outcome: Outcome::Denied(Errno::EPERM),
                        explanation: vec![
                            "mount: a layer handles filesystem rights, so mounts are denied".into(),
                        ],
                    },
                    _ => allowed("mount: no layer handles filesystem rights"),
                })
            }
            Op::BindTcp(port) => Ok(self.net(*port, net::BIND_TCP)),
            Op::ConnectTcp(port) => Ok(self.net(*port, net::CONNECT_TCP)),
        }
    }

    fn net(&self, port: u16, right: u8) -> Evaluation {
        let Some(dom) = &self.domain else {
            return allowed("no Landlock domain");
        };
        let mut lines = vec![format!("{} on TCP port {port}", net_names(right))];
        let r = check::check_net(dom, port, right);
        if let Err(m) = &r {
            for (l, _) in m.denials() {
                lines.push(format!(
                    "layer {} denies {} (no rule for port {port})",
                    l + 1,
                    net_names(right)
                ));
            }
        }
        Evaluation {
            outcome: if r.is_ok() {
                Outcome::Allowed
            } else {
                Outcome::Denied(Errno::EACCES)
            },
            explanation: lines,
        }
    }

    fn create(&self, p: &Path, right: AccessFs) -> Result<Evaluation, Errno> {
        let e = walk::entry(p)?;
        if e.existing.is_some() {
            return Err(Errno::EEXIST);
        }
        let walk = e.dir.objects(&self.registry);
        Ok(self.path_check(&e.dir, &walk, right, "create (checked on the parent)"))
    }

    fn refer(
        &self,
        a: &Path,
        b: &Path,
        removable: bool,
        exchange: bool,
    ) -> Result<Evaluation, Errno> {
        let link = !removable;
        let old = walk::entry(a)?;
        let new = walk::entry(b)?;
        let old_st = old.existing;
        if link {
            // do_linkat: the old object, then the new name, then the mounts.
            let old_st = old_st.ok_or(Errno::ENOENT)?;
            if new.existing.is_some() {
                return Err(Errno::EEXIST);
            }
            if old_st.mnt_id != new.dir.stat().mnt_id {
                return Ok(fails(Errno::EXDEV, "link across mounts"));
            }
        } else {
            if old.dir.stat().mnt_id != new.dir.stat().mnt_id {
                return Ok(fails(Errno::EXDEV, "rename across mounts"));
            }
            if old_st.is_none() || (exchange && new.existing.is_none()) {
                return Err(Errno::ENOENT);
            }
            if old.dir.path != new.dir.path {
                let (op, np) = (old.path(), new.path());
                if new.dir.path.starts_with(&op) {
                    return Ok(fails(Errno::EINVAL, "moving a directory into itself"));
                }
                if old.dir.path.starts_with(&np) {
                    let e = if exchange {
                        Errno::EINVAL
                    } else {
                        Errno::ENOTEMPTY
                    };
                    return Ok(fails(e, "the target is an ancestor of the source"));
                }
            }
        }
        let old_st = old_st.ok_or(Errno::ENOENT)?;
        let Some(dom) = &self.domain else {
            if link && old_st.mode & S_IFMT == 0o040000 {
                return Ok(fails(Errno::EPERM, "hard link to a directory"));
            }
            return Ok(allowed("no Landlock domain"));
        };
        let old_walk = old.dir.objects(&self.registry);
        let new_walk = new.dir.objects(&self.registry);
        let root = new.dir.mount_root();
        let old_root = old.dir.mount_root();
        // A name that is a mount point stands, in the VFS's rename, for the covered dentry,
        // whose inode is hidden under the mount: it is taken to carry no rule.
        let child = |st: crate::sys::Stat, dir: &Location| {
            if st.mnt_id == dir.stat().mnt_id {
                self.registry.get(st.key)
            } else {
                None
            }
        };
        let q = ReferQuery {
            old: (child(old_st, &old.dir), old_st.mode),
            new: new.existing.map(|s| (child(s, &new.dir), s.mode)),
            same_dir: old.dir.path == new.dir.path,
            old_parent_walk: &old_walk[..=old_root],
            new_dir_walk: &new_walk,
            mount_root: root,
            removable,
            exchange,
        };
        let kind = if link {
            "link"
        } else if exchange {
            "exchange"
        } else {
            "rename"
        };
        let mut x = Explainer {
            dom,
            lines: vec![format!(
                "{kind}: {} -> {}{}",
                old.path().display(),
                new.path().display(),
                if q.same_dir {
                    " (same directory: no refer needed)"
                } else {
                    ""
                }
            )],
        };
        let outcome = match check::check_refer(dom, &q) {
            Ok(()) if link && old_st.mode & S_IFMT == 0o040000 => {
                x.lines
                    .push("Landlock allows it; the VFS refuses hard links to directories".into());
                Outcome::Fails(Errno::EPERM)
            }
            Ok(()) => Outcome::Allowed,
            Err(d) => {
                x.lines
                    .push(format!("source side requests {}", fs_names(d.source.0)));
                x.layers("source side: ", d.source.0, &d.source.1);
                x.lines.push(format!(
                    "destination side requests {}",
                    fs_names(d.destination.0)
                ));
                x.layers("destination side: ", d.destination.0, &d.destination.1);
                if d.errno == Errno::EXDEV {
                    x.lines.push(
                        "EXDEV: refer is missing, or the moved object would gain a right in some layer".into(),
                    );
                }
                Outcome::Denied(d.errno)
            }
        };
        Ok(Evaluation {
            outcome,
            explanation: x.lines,
        })
    }
}
