//! The kernel's access checks over a domain, as pure functions of the domain and the objects
//! met on a walk (no filesystem access here; `walk.rs` produces the walks).
//!
//! Masks are kept per layer (`need[layer]` = the rights that layer still denies), the
//! transposed form of the kernel's per-right `layer_masks`; the two carry the same bits and
//! give the same verdicts (the kernel itself moved to this form after 6.18).

use crate::access::{fs, make_right_for_mode, AccessFs, AccessNet};
use crate::domain::{RuleLayers, Rules, MAX_LAYERS};
use crate::errno::Errno;
use crate::object::ObjectId;

/// For each layer, the rights it still denies: 16 lanes of 16 bits in four words, so that
/// "every layer is satisfied" is four ANDs instead of sixteen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LayerMasks {
    words: [u64; 4],
}

/// `mask` repeated in the four 16-bit lanes of a word.
#[inline]
fn lanes(mask: AccessFs) -> u64 {
    u64::from(mask) * 0x0001_0001_0001_0001
}

impl LayerMasks {
    /// Rights layer `layer` still denies.
    #[inline]
    pub fn denied_by(&self, layer: usize) -> AccessFs {
        (self.words[layer >> 2] >> ((layer & 3) * 16)) as AccessFs
    }

    #[inline]
    fn set(&mut self, layer: usize, rights: AccessFs) {
        let shift = (layer & 3) * 16;
        let w = &mut self.words[layer >> 2];
        *w = (*w & !(0xffff << shift)) | (u64::from(rights) << shift);
    }

    #[inline]
    fn clear(&mut self, layer: usize, rights: AccessFs) {
        self.words[layer >> 2] &= !(u64::from(rights) << ((layer & 3) * 16));
    }

    /// `(layer, rights)` for every layer that denies something.
    pub fn denials(&self) -> Vec<(usize, AccessFs)> {
        (0..MAX_LAYERS)
            .filter(|&l| self.denied_by(l) != 0)
            .map(|l| (l, self.denied_by(l)))
            .collect()
    }

    /// Union of the denied rights over all layers.
    pub fn union(&self) -> AccessFs {
        let w = self.words.iter().fold(0, |a, b| a | b);
        (w | (w >> 16) | (w >> 32) | (w >> 48)) as AccessFs
    }

    #[inline]
    fn is_empty_for(&self, request: AccessFs) -> bool {
        let r = lanes(request);
        (self.words[0] | self.words[1] | self.words[2] | self.words[3]) & r == 0
    }
}

/// Whether the fs hooks apply at all: some layer handles an fs right
/// (`landlock_get_applicable_subject` with `any_fs`).
pub fn fs_applies<R: Rules + ?Sized>(dom: &R) -> bool {
    (0..dom.num_layers()).any(|l| dom.layer(l).fs != 0)
}

/// `landlock_init_layer_masks` for fs: every layer handles REFER here, net-only ones too.
/// Returns the requested rights some layer handles, and the masks.
pub fn init_fs<R: Rules + ?Sized>(dom: &R, request: AccessFs) -> (AccessFs, LayerMasks) {
    let mut m = LayerMasks::default();
    let mut handled = 0;
    for l in 0..dom.num_layers() {
        let n = request & (dom.layer(l).fs | fs::REFER);
        m.set(l, n);
        handled |= n;
    }
    (handled, m)
}

/// `landlock_unmask_layers`: clears the rights `rule` grants; true once every layer has
/// granted every requested right. No rule never completes a request.
#[inline]
pub fn unmask(rule: RuleLayers<'_>, request: AccessFs, m: &mut LayerMasks) -> bool {
    if request == 0 {
        return true;
    }
    for e in rule.iter() {
        let granted = e.access() & request;
        // An entry that grants nothing requested changes nothing, and the masks were not
        // empty before it (or an earlier call would have returned true).
        if granted == 0 {
            continue;
        }
        m.clear(e.layer(), granted);
        if m.is_empty_for(request) {
            return true;
        }
    }
    false
}

/// A simple path request (`is_access_to_paths_allowed` with one path): `walk` lists the
/// objects from the checked dentry up to the namespace root (None = no rule possible).
/// Returns the residual masks on denial.
pub fn check_walk<R: Rules + ?Sized>(
    dom: &R,
    walk: &[Option<ObjectId>],
    request: AccessFs,
) -> Result<(), LayerMasks> {
    let (req, mut m) = init_fs(dom, request);
    walk_masks(dom, walk, req, &mut m)
}

fn walk_masks<R: Rules + ?Sized>(
    dom: &R,
    walk: &[Option<ObjectId>],
    req: AccessFs,
    m: &mut LayerMasks,
) -> Result<(), LayerMasks> {
    if req == 0 {
        return Ok(());
    }
    for obj in walk {
        let rule = obj.map_or(RuleLayers::none(), |o| dom.find_fs(o));
        if unmask(rule, req, m) {
            return Ok(());
        }
    }
    Err(*m)
}

/// The outcome of `hook_file_open`: rights kept on the file for later checks, and the
/// residual masks when a mandatory right is missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenCheck {
    /// `file->allowed_access`: requested ∪ optional rights that no layer vetoed (rights no
    /// layer handles count as allowed).
    pub allowed_access: AccessFs,
    /// Residual masks if the open itself fails with EACCES.
    pub denied: Option<LayerMasks>,
}

/// `hook_file_open`: `request` is READ_FILE/READ_DIR/WRITE_FILE/EXECUTE as the open mode
/// implies; TRUNCATE and (for devices) IOCTL_DEV are evaluated on the side.
pub fn check_open<R: Rules + ?Sized>(
    dom: &R,
    walk: &[Option<ObjectId>],
    request: AccessFs,
    is_device: bool,
) -> OpenCheck {
    if !fs_applies(dom) {
        return OpenCheck {
            allowed_access: fs::ALL,
            denied: None,
        };
    }
    let optional = fs::TRUNCATE | if is_device { fs::IOCTL_DEV } else { 0 };
    let full = request | optional;
    let (req, mut m) = init_fs(dom, full);
    let allowed_access = match walk_masks(dom, walk, req, &mut m) {
        Ok(()) => full,
        Err(m) => full & !m.union(),
    };
    let denied = if allowed_access & request == request {
        None
    } else {
        Some(m)
    };
    OpenCheck {
        allowed_access,
        denied,
    }
}

/// A link or rename, as `current_check_refer_path` sees it.
#[derive(Clone, Copy, Debug)]
pub struct ReferQuery<'a> {
    /// The source object's rule object and `st_mode`.
    pub old: (Option<ObjectId>, u32),
    /// The existing destination object, if any.
    pub new: Option<(Option<ObjectId>, u32)>,
    /// Source and destination are in the same directory (no REFER needed).
    pub same_dir: bool,
    /// From the source's parent up to the common mount root, inclusive.
    pub old_parent_walk: &'a [Option<ObjectId>],
    /// From the destination directory up to the namespace root.
    pub new_dir_walk: &'a [Option<ObjectId>],
    /// Index of the common mount root in `new_dir_walk`.
    pub mount_root: usize,
    /// rename (true) or link (false).
    pub removable: bool,
    /// RENAME_EXCHANGE.
    pub exchange: bool,
}

/// Why a link or rename is denied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReferDenial {
    /// EACCES (a MAKE_*/REMOVE_* is missing) or EXDEV (REFER missing, or a right gained).
    pub errno: Errno,
    /// Rights requested on the source side and their residual masks.
    pub source: (AccessFs, LayerMasks),
    /// Rights requested on the destination side and their residual masks.
    pub destination: (AccessFs, LayerMasks),
}

fn is_dir(mode: u32) -> bool {
    mode & 0o170000 == 0o040000
}

fn remove_right(mode: u32) -> AccessFs {
    if is_dir(mode) {
        fs::REMOVE_DIR
    } else {
        fs::REMOVE_FILE
    }
}

/// `collect_domain_accesses`: all handled rights, unmasked from `walk[0]` up to its end.
fn collect<R: Rules + ?Sized>(dom: &R, walk: &[Option<ObjectId>]) -> (LayerMasks, bool) {
    let (handled, mut m) = init_fs(dom, fs::ALL);
    for obj in walk {
        let rule = obj.map_or(RuleLayers::none(), |o| dom.find_fs(o));
        if unmask(rule, handled, &mut m) {
            return (m, true);
        }
    }
    (m, false)
}

fn child_masks<R: Rules + ?Sized>(dom: &R, obj: Option<ObjectId>) -> LayerMasks {
    let (handled, mut m) = init_fs(dom, fs::ALL);
    let rule = obj.map_or(RuleLayers::none(), |o| dom.find_fs(o));
    unmask(rule, handled, &mut m);
    m
}

/// `no_more_access`: the moved child gains no right in any layer at the destination (and,
/// for an exchange, the other child none at the source). Files compare file rights only.
fn no_more_access(
    m1: &LayerMasks,
    c1: &LayerMasks,
    dir1: bool,
    m2: &LayerMasks,
    c2: Option<(&LayerMasks, bool)>,
) -> bool {
    let mask1 = if dir1 { fs::ALL } else { fs::FILE };
    for l in 0..MAX_LAYERS {
        if m1.denied_by(l) & c1.denied_by(l) & !m2.denied_by(l) & mask1 != 0 {
            return false;
        }
        if let Some((c2, dir2)) = c2 {
            let mask2 = if dir2 { fs::ALL } else { fs::FILE };
            if m2.denied_by(l) & c2.denied_by(l) & !m1.denied_by(l) & mask2 != 0 {
                return false;
            }
        }
    }
    true
}

fn scope_to_request(request: AccessFs, m: &mut LayerMasks) -> bool {
    for w in m.words.iter_mut() {
        *w &= lanes(request);
    }
    m.is_empty_for(fs::ALL)
}

fn is_eacces(m: &LayerMasks, request: AccessFs) -> bool {
    let check = request & !fs::REFER;
    !m.is_empty_for(check)
}

/// `current_check_refer_path`: Ok, or EACCES / EXDEV with the residual masks.
pub fn check_refer<R: Rules + ?Sized>(dom: &R, q: &ReferQuery<'_>) -> Result<(), ReferDenial> {
    if !fs_applies(dom) {
        return Ok(());
    }
    let mut req1 = match (q.exchange, q.new) {
        (true, Some((_, mode))) => make_right_for_mode(mode),
        _ => 0,
    };
    let mut req2 = make_right_for_mode(q.old.1);
    if q.removable {
        req1 |= remove_right(q.old.1);
        req2 |= q.new.map_or(0, |(_, mode)| remove_right(mode));
    }
    if q.same_dir {
        let (req, mut m) = init_fs(dom, req1 | req2);
        return walk_masks(dom, q.new_dir_walk, req, &mut m).map_err(|m| ReferDenial {
            errno: Errno::EACCES,
            source: (req1, m),
            destination: (req2, m),
        });
    }
    req1 |= fs::REFER;
    req2 |= fs::REFER;
    let (mut m1, allow1) = collect(dom, q.old_parent_walk);
    let (mut m2, allow2) = collect(dom, &q.new_dir_walk[..=q.mount_root]);
    if allow1 && allow2 {
        return Ok(());
    }
    let mut allowed1 = m1.is_empty_for(fs::ALL);
    let mut allowed2 = m2.is_empty_for(fs::ALL);
    let union = (0..dom.num_layers()).fold(0, |a, l| a | dom.layer(l).fs);
    let (mut masked1, mut masked2) = (union, union);
    let mut dom_check = true;
    let c1 = child_masks(dom, q.old.0);
    let c2 = if q.exchange {
        q.new.map(|(o, mode)| (child_masks(dom, o), is_dir(mode)))
    } else {
        None
    };
    for obj in &q.new_dir_walk[q.mount_root..] {
        if dom_check
            && no_more_access(
                &m1,
                &c1,
                is_dir(q.old.1),
                &m2,
                c2.as_ref().map(|(m, d)| (m, *d)),
            )
        {
            dom_check = false;
            masked1 = req1;
            masked2 = req2;
            allowed1 = allowed1 || scope_to_request(masked1, &mut m1);
            allowed2 = allowed2 || scope_to_request(masked2, &mut m2);
            if allowed1 && allowed2 {
                break;
            }
        }
        let rule = obj.map_or(RuleLayers::none(), |o| dom.find_fs(o));
        allowed1 = allowed1 || unmask(rule, masked1, &mut m1);
        allowed2 = allowed2 || unmask(rule, masked2, &mut m2);
        if allowed1 && allowed2 {
            break;
        }
    }
    if allowed1 && allowed2 {
        return Ok(());
    }
    let errno = if is_eacces(&m1, req1) || is_eacces(&m2, req2) {
        Errno::EACCES
    } else {
        Errno::EXDEV
    };
    Err(ReferDenial {
        errno,
        source: (req1, m1),
        destination: (req2, m2),
    })
}

/// TCP bind/connect (`current_check_access_socket`): Ok, or the residual masks (EACCES).
pub fn check_net<R: Rules + ?Sized>(
    dom: &R,
    port: u16,
    right: AccessNet,
) -> Result<(), LayerMasks> {
    let mut m = LayerMasks::default();
    let mut handled = false;
    for l in 0..dom.num_layers() {
        let n = right & dom.layer(l).net;
        m.set(l, AccessFs::from(n));
        handled |= n != 0;
    }
    if !handled || unmask(dom.find_net(port), AccessFs::from(right), &mut m) {
        Ok(())
    } else {
        Err(m)
    }
}

/// Mount, umount, remount, move_mount, pivot_root: EPERM whenever any layer handles an fs
/// right (`hook_sb_mount` and friends).
pub fn check_mount<R: Rules + ?Sized>(dom: &R) -> Result<(), Errno> {
    if fs_applies(dom) {
        Err(Errno::EPERM)
    } else {
        Ok(())
    }
}

/// Where a rule granted rights on a walk: for explanations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    /// Index of the step on the walk (0 = the checked object).
    pub step: usize,
    /// Layer (0-based).
    pub layer: usize,
    /// Requested rights this rule grants in this layer.
    pub rights: AccessFs,
}

/// Every grant of a requested, handled right on the walk (the whole walk, no early stop).
pub fn grants<R: Rules + ?Sized>(
    dom: &R,
    walk: &[Option<ObjectId>],
    request: AccessFs,
) -> Vec<Grant> {
    let mut out = Vec::new();
    for (step, obj) in walk.iter().enumerate() {
        let Some(o) = obj else { continue };
        for e in dom.find_fs(*o).iter() {
            let handled = dom.layer(e.layer()).fs | fs::REFER;
            let rights = e.access() & request & handled;
            if rights != 0 {
                out.push(Grant {
                    step,
                    layer: e.layer(),
                    rights,
                });
            }
        }
    }
    out
}
