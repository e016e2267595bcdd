//! Labeling of new objects: the kernel's `security_compute_sid` for type_transition
//! (create), type_change (relabel) and type_member (member), including filename
//! transitions, role and range transitions and the class `default_*` rules; and
//! `validatetrans`.

use crate::constraint;
use crate::state::Snapshot;
use arbiter_policy::avtab::AvtabKind;
use arbiter_policy::mls::{Context, MlsRange};
use arbiter_policy::symbols::{DefaultRange, DefaultSide};
use arbiter_policy::{ClassId, RoleId};

/// Which computation: the rule kind consulted and the defaults that apply.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum LabelKind {
    /// `type_transition`: a new object or process (`security_transition_sid`).
    Create,
    /// `type_change`: relabel (`security_change_sid`).
    Relabel,
    /// `type_member`: a polyinstantiated member (`security_member_sid`).
    Member,
}

impl LabelKind {
    fn avtab_kind(self) -> AvtabKind {
        match self {
            LabelKind::Create => AvtabKind::Transition,
            LabelKind::Relabel => AvtabKind::Change,
            LabelKind::Member => AvtabKind::Member,
        }
    }
}

/// Whose behaviour to reproduce where the kernel and libsepol 3.4 differ.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Semantics {
    /// The Linux kernel: socket classes take the creating process's role, type and range,
    /// like the `process` class (since Linux 4.x, `security_is_socket_class`).
    #[default]
    Kernel,
    /// libsepol 3.4's `sepol_compute_sid`, which has no socket special case.
    Libsepol,
}

/// Whether the kernel treats a class as a socket for labeling: the kernel's generated
/// `security_is_socket_class` lists exactly its classes whose name ends in "socket".
pub fn is_socket_class(name: &str) -> bool {
    name.ends_with("socket")
}

/// The context a new object gets, or `None` when the range computation fails (glblub of
/// disjoint ranges): the kernel refuses the operation then. Validity of the result is the
/// caller's to check.
pub fn compute_label(
    snap: &Snapshot,
    s: &Context,
    t: &Context,
    class: ClassId,
    kind: LabelKind,
    name: Option<&str>,
    semantics: Semantics,
) -> Option<Context> {
    let p = &*snap.policy;
    let idx = snap.index();
    let cls = p.classes.get(class.index());
    let sock = semantics == Semantics::Kernel && cls.is_some_and(|c| is_socket_class(&c.name));
    let process_like = Some(class) == idx.process_class || sock;
    let default_user = cls.map(|c| c.default_user).unwrap_or_default();
    let default_role = cls.map(|c| c.default_role).unwrap_or_default();
    let default_type = cls.map(|c| c.default_type).unwrap_or_default();
    let default_range = cls.map(|c| c.default_range).unwrap_or_default();

    let user = match kind {
        LabelKind::Create | LabelKind::Relabel => {
            if default_user == DefaultSide::Target {
                t.user
            } else {
                s.user
            }
        }
        LabelKind::Member => t.user,
    };

    let mut role = match default_role {
        DefaultSide::Source => s.role,
        DefaultSide::Target => t.role,
        DefaultSide::None if process_like => s.role,
        DefaultSide::None => RoleId::new(1).expect("1 is non-zero"), // object_r
    };

    let mut ty = match default_type {
        DefaultSide::Source => s.ty,
        DefaultSide::Target => t.ty,
        DefaultSide::None if process_like => s.ty,
        DefaultSide::None => t.ty,
    };

    if let Some(slot) = idx.type_rule(s.ty, t.ty, class, kind.avtab_kind()) {
        let rule = slot.unconditional.or_else(|| {
            slot.conditional
                .iter()
                .find(|(tag, _)| snap.cond_enabled(*tag))
                .map(|&(_, t)| t)
        });
        if let Some(new) = rule {
            ty = new;
        }
    }

    if let Some(name) = name {
        if let Some(outcomes) = idx.filename_trans.get(&(t.ty, class, Box::from(name))) {
            if let Some((_, new)) = outcomes
                .iter()
                .find(|(src, _)| src.contains(s.ty.value() as u32 - 1))
            {
                ty = *new;
            }
        }
    }

    if kind == LabelKind::Create {
        if let Some(&r) = idx.role_trans.get(&(s.role, t.ty, class)) {
            role = r;
        }
    }

    let range = if p.mls {
        mls_compute(snap, s, t, class, kind, process_like, default_range)?
    } else {
        // Non-MLS policies carry an empty range; keep the source's for equality.
        s.range.clone()
    };

    Some(Context {
        user,
        role,
        ty,
        range,
    })
}

fn low_only(r: &MlsRange) -> MlsRange {
    MlsRange {
        low: r.low.clone(),
        high: r.low.clone(),
    }
}

fn high_only(r: &MlsRange) -> MlsRange {
    MlsRange {
        low: r.high.clone(),
        high: r.high.clone(),
    }
}

/// The kernel's `mls_compute_sid`.
fn mls_compute(
    snap: &Snapshot,
    s: &Context,
    t: &Context,
    class: ClassId,
    kind: LabelKind,
    process_like: bool,
    default_range: DefaultRange,
) -> Option<MlsRange> {
    match kind {
        LabelKind::Create => {
            if let Some(r) = snap.index().range_trans.get(&(s.ty, t.ty, class)) {
                return Some(r.clone());
            }
            match default_range {
                DefaultRange::SourceLow => return Some(low_only(&s.range)),
                DefaultRange::SourceHigh => return Some(high_only(&s.range)),
                DefaultRange::SourceLowHigh => return Some(s.range.clone()),
                DefaultRange::TargetLow => return Some(low_only(&t.range)),
                DefaultRange::TargetHigh => return Some(high_only(&t.range)),
                DefaultRange::TargetLowHigh => return Some(t.range.clone()),
                DefaultRange::Glblub => return glblub(&s.range, &t.range),
                DefaultRange::None => {}
            }
            Some(if process_like {
                s.range.clone()
            } else {
                low_only(&s.range)
            })
        }
        LabelKind::Relabel => Some(if process_like {
            s.range.clone()
        } else {
            low_only(&s.range)
        }),
        LabelKind::Member => Some(low_only(&s.range)),
    }
}

/// Greatest lower bound of two ranges (`default_range glblub`); `None` when they share no
/// sensitivity.
fn glblub(r1: &MlsRange, r2: &MlsRange) -> Option<MlsRange> {
    if r1.high.sens < r2.low.sens || r2.high.sens < r1.low.sens {
        return None;
    }
    Some(MlsRange {
        low: arbiter_policy::mls::MlsLevel {
            sens: r1.low.sens.max(r2.low.sens),
            cats: r1.low.cats.intersection(&r2.low.cats),
        },
        high: arbiter_policy::mls::MlsLevel {
            sens: r1.high.sens.min(r2.high.sens),
            cats: r1.high.cats.intersection(&r2.high.cats),
        },
    })
}

/// `security_validate_transition`: whether relabeling an object of `class` from `old` to
/// `new` by a task in `task` satisfies every validatetrans rule of the class.
pub fn validate_transition(
    snap: &Snapshot,
    old: &Context,
    new: &Context,
    task: &Context,
    class: ClassId,
) -> bool {
    let p = &*snap.policy;
    let Some(cls) = p.classes.get(class.index()) else {
        return false;
    };
    cls.validatetrans
        .iter()
        .all(|c| constraint::eval(p, &c.expr, old, new, Some(task), None))
}
