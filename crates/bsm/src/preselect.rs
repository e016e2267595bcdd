//! `au_preselect` and the process masks it is asked about.

use crate::classmap::{ClassMap, FlatMap};
use crate::config::{Config, EventDb};
use crate::error::MaskError;
use crate::mask::Mask;

/// Which outcome is being asked about (`AU_PRS_SUCCESS`, `AU_PRS_FAILURE`, `AU_PRS_BOTH`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The event succeeded.
    Success,
    /// The event failed.
    Failure,
    /// Either (the kernel's check at system call entry).
    Both,
}

/// The answer to "does this mask select this event?".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Selection {
    /// The event's class bits (as the preselection map has them).
    pub class: u32,
    /// Class bits that selected it (empty if not selected).
    pub matched: u32,
}

impl Selection {
    /// True if any class bit matched.
    pub fn selected(&self) -> bool {
        self.matched != 0
    }
}

/// Event → class for preselection: the enumerated `audit_event` entries with the last
/// duplicate winning, in a flat lock-free map.
pub struct Preselector {
    map: FlatMap,
    known: Box<[bool]>,
}

impl Preselector {
    /// Builds the map from an event database.
    pub fn new(events: &EventDb) -> Preselector {
        let map = FlatMap::default();
        let mut known = vec![false; 65536].into_boxed_slice();
        for (e, c) in events.class_map() {
            map.insert(e, c);
            known[e as usize] = true;
        }
        Preselector { map, known }
    }

    /// The class of `event`, or `None` if `audit_event` does not list it.
    #[inline]
    pub fn class_of(&self, event: u16) -> Option<u32> {
        if self.known[event as usize] {
            Some(self.map.class_of(event))
        } else {
            None
        }
    }

    /// `au_preselect(event, mask, sorf)`: `None` for an unknown event (libbsm's -1);
    /// otherwise which class bits of the chosen half (or halves) of `mask` match.
    #[inline]
    pub fn preselect(&self, event: u16, mask: &Mask, outcome: Outcome) -> Option<Selection> {
        let class = self.class_of(event)?;
        let s = if matches!(outcome, Outcome::Success | Outcome::Both) {
            mask.success & class
        } else {
            0
        };
        let f = if matches!(outcome, Outcome::Failure | Outcome::Both) {
            mask.failure & class
        } else {
            0
        };
        Some(Selection {
            class,
            matched: s | f,
        })
    }
}

/// `au_user_mask`: the mask a login of `user` gets — `flags` from `audit_control` plus the
/// user's `always`, minus the user's `never`; just `flags` for users not in `audit_user`.
pub fn user_mask(config: &Config, user: &str) -> Result<Mask, MaskError> {
    let mut m = config.control.flags_mask(&config.classes)?;
    if let Some(u) = config.users.get(user) {
        m.success = (m.success | u.always.success) & !u.never.success;
        m.failure = (m.failure | u.always.failure) & !u.never.failure;
    }
    Ok(m)
}

/// The kernel's mask choice: a process whose audit uid is unset (`AU_DEFAUDITID`, -1) is
/// checked against `naflags`, any other against its own mask.
pub fn effective_mask(config: &Config, auid: u32, process_mask: Mask) -> Result<Mask, MaskError> {
    if auid == u32::MAX {
        config.control.naflags_mask(&config.classes)
    } else {
        Ok(process_mask)
    }
}
