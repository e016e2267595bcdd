//! The security server's front door: SIDs, names and decisions in one place.
//!
//! [`SecurityServer`] owns the policy, its name tables, the SID table and the snapshot
//! publisher. Queries go through a [`Query`] handle, one per thread: it holds that thread's
//! snapshot, so the hot path does one atomic load to notice a boolean commit and touches no
//! shared reference count.

use crate::av::{self, AvDecision, XpermBase, XpermDrivers, XpermsDecision};
use crate::context::{format_context, parse_context};
use crate::labeling::{self, LabelKind, Semantics};
use crate::names::Names;
use crate::server::{Publisher, Reader, Snapshot};
use crate::sidtab::{Sid, SidTable};
use crate::{DecideError, Result};
use arbiter_policy::mls::Context;
use arbiter_policy::{ClassId, HandleUnknown, Policy};
use std::sync::Arc;

/// A class as a caller named it: defined by the policy, or not (then `handle_unknown`
/// decides).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ClassRef {
    Known(ClassId),
    /// Not defined by the policy, which allows unknown classes (all permissions granted).
    UnknownAllowed,
    /// Not defined by the policy, which denies unknown classes (nothing granted).
    UnknownDenied,
}

/// Permissions as a caller named them, resolved against a class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PermRequest {
    pub class: ClassRef,
    /// Bits of the permissions the class defines.
    pub bits: u32,
    /// Permissions the class does not define, granted (`handle_unknown allow`) or denied.
    pub unknown: Vec<String>,
    pub unknown_allowed: bool,
}

/// The security server.
pub struct SecurityServer {
    publisher: Publisher,
    names: Names,
    sidtab: SidTable,
    semantics: Semantics,
}

impl SecurityServer {
    /// Builds the server (indexes, name tables, initial SIDs) for a loaded policy.
    pub fn new(policy: Policy) -> SecurityServer {
        let names = Names::new(&policy);
        let sidtab = SidTable::new(&policy);
        SecurityServer {
            publisher: Publisher::new(Arc::new(policy)),
            names,
            sidtab,
            semantics: Semantics::Kernel,
        }
    }

    /// Reproduce libsepol's labeling where it differs from the kernel (for differential
    /// tests against libsepol).
    pub fn with_semantics(mut self, semantics: Semantics) -> SecurityServer {
        self.semantics = semantics;
        self
    }

    pub fn policy(&self) -> &Arc<Policy> {
        self.publisher.policy()
    }

    pub fn names(&self) -> &Names {
        &self.names
    }

    pub fn sidtab(&self) -> &SidTable {
        &self.sidtab
    }

    pub fn publisher(&self) -> &Publisher {
        &self.publisher
    }

    /// The SID of a context string: a string seen before costs one hash probe; a new one is
    /// parsed, validated against the policy, and interned.
    pub fn context_to_sid(&self, s: &str) -> Result<Sid> {
        if let Some(sid) = self.sidtab.sid_for_str(s) {
            return Ok(sid);
        }
        let ctx = parse_context(self.policy(), &self.names, s)?;
        let sid = self.sidtab.insert(ctx)?;
        self.sidtab.insert_str(s.to_string(), sid)
    }

    /// The SID of an already-valid context (e.g. a computed label).
    pub fn context_struct_to_sid(&self, ctx: Context) -> Result<Sid> {
        self.sidtab.insert(ctx)
    }

    pub fn context(&self, sid: Sid) -> Result<&Context> {
        self.sidtab
            .context(sid)
            .ok_or(DecideError::UnknownSid(sid.get()))
    }

    /// The canonical string of a SID's context, as the kernel prints it.
    pub fn sid_to_context(&self, sid: Sid) -> Result<String> {
        Ok(format_context(&self.names, self.context(sid)?))
    }

    /// Resolves a class name, applying `handle_unknown` to names the policy lacks.
    pub fn class(&self, name: &str) -> Result<ClassRef> {
        if let Some(c) = self.names.class(name) {
            return Ok(ClassRef::Known(c));
        }
        match self.policy().handle_unknown {
            HandleUnknown::Allow => Ok(ClassRef::UnknownAllowed),
            HandleUnknown::Deny => Ok(ClassRef::UnknownDenied),
            HandleUnknown::Reject => Err(DecideError::RejectedUnknown(format!("class {name:?}"))),
        }
    }

    /// Resolves a class name that must exist (no `handle_unknown`).
    pub fn known_class(&self, name: &str) -> Result<ClassId> {
        self.names
            .class(name)
            .ok_or_else(|| DecideError::UnknownClass(name.to_string()))
    }

    /// Resolves permission names for a class. Names the class does not define follow
    /// `handle_unknown` as the kernel's class mapping does: allow grants them, deny denies
    /// them (fail closed, and the caller is told which names were unknown), reject is an
    /// error.
    pub fn perms(&self, class: &str, perms: &[&str]) -> Result<PermRequest> {
        let cref = self.class(class)?;
        let hu = self.policy().handle_unknown;
        let mut req = PermRequest {
            class: cref,
            bits: 0,
            unknown: Vec::new(),
            unknown_allowed: hu == HandleUnknown::Allow,
        };
        for p in perms {
            match cref {
                ClassRef::Known(c) => match self.names.perm(c, p) {
                    Some(bit) => req.bits |= bit,
                    None => {
                        if hu == HandleUnknown::Reject {
                            return Err(DecideError::RejectedUnknown(format!(
                                "permission {p:?} of class {class:?}"
                            )));
                        }
                        req.unknown.push(p.to_string());
                    }
                },
                _ => req.unknown.push(p.to_string()),
            }
        }
        Ok(req)
    }

    /// A per-thread query handle.
    pub fn query(&self) -> Query<'_> {
        Query {
            server: self,
            reader: self.publisher.reader(),
        }
    }

    pub fn semantics(&self) -> Semantics {
        self.semantics
    }
}

/// A thread's query handle: see the module documentation.
pub struct Query<'a> {
    server: &'a SecurityServer,
    reader: Reader<'a>,
}

impl<'a> Query<'a> {
    /// The snapshot this query answers from (refreshed if a commit happened).
    #[inline]
    pub fn snapshot(&mut self) -> &Arc<Snapshot> {
        self.reader.snapshot()
    }

    fn contexts(&self, a: Sid, b: Sid) -> Result<(&'a Context, &'a Context)> {
        Ok((self.server.context(a)?, self.server.context(b)?))
    }

    /// `security_compute_av` for SIDs and a defined class.
    #[inline]
    pub fn compute_av(&mut self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<AvDecision> {
        let (s, t) = self.contexts(ssid, tsid)?;
        if class.index() >= self.server.policy().classes.len() {
            return Err(DecideError::UnknownClass(format!(
                "class value {}",
                class.value()
            )));
        }
        Ok(av::compute_av(self.reader.snapshot(), s, t, class))
    }

    /// The decision for a class reference (unknown classes per `handle_unknown`).
    pub fn compute_av_ref(&mut self, ssid: Sid, tsid: Sid, class: ClassRef) -> Result<AvDecision> {
        match class {
            ClassRef::Known(c) => self.compute_av(ssid, tsid, c),
            ClassRef::UnknownAllowed | ClassRef::UnknownDenied => {
                let (s, _) = self.contexts(ssid, tsid)?;
                let snap = self.reader.snapshot();
                let mut d = AvDecision::deny_all(snap.seqno);
                if class == ClassRef::UnknownAllowed {
                    d.allowed = u32::MAX;
                }
                if snap.policy.permissive.contains(s.ty.value() as u32) {
                    d.flags |= av::AVD_FLAGS_PERMISSIVE;
                }
                if snap.policy.neveraudit.contains(s.ty.value() as u32) {
                    d.flags |= av::AVD_FLAGS_NEVERAUDIT;
                    d.auditdeny = 0;
                }
                Ok(d)
            }
        }
    }

    /// The label of a new object (`Create`), relabeled object (`Relabel`) or member
    /// (`Member`). `name` applies filename transitions (create only). A result that is not
    /// a valid context is an error, as the kernel refuses the operation in enforcing mode.
    pub fn compute_label(
        &mut self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        kind: LabelKind,
        name: Option<&str>,
    ) -> Result<Sid> {
        let ctx = self.compute_label_context(ssid, tsid, class, kind, name)?;
        self.server.context_struct_to_sid(ctx)
    }

    /// Like [`Query::compute_label`] but returns the context without interning it.
    pub fn compute_label_context(
        &mut self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        kind: LabelKind,
        name: Option<&str>,
    ) -> Result<Context> {
        let (s, t) = self.contexts(ssid, tsid)?;
        let semantics = self.server.semantics;
        let name = if kind == LabelKind::Create {
            name
        } else {
            None
        };
        let snap = self.reader.snapshot();
        let ctx =
            labeling::compute_label(snap, s, t, class, kind, name, semantics).ok_or_else(|| {
                DecideError::InvalidComputedContext {
                    context: "(no common sensitivity for glblub)".into(),
                    reason: "default_range glblub of disjoint ranges".into(),
                }
            })?;
        if let Err(reason) = snap.policy.context_is_valid(&ctx) {
            return Err(DecideError::InvalidComputedContext {
                context: format_context(&self.server.names, &ctx),
                reason,
            });
        }
        Ok(ctx)
    }

    /// `security_validate_transition`.
    pub fn validate_transition(
        &mut self,
        old: Sid,
        new: Sid,
        task: Sid,
        class: ClassId,
    ) -> Result<bool> {
        let (o, n) = self.contexts(old, new)?;
        let t = self.server.context(task)?;
        Ok(labeling::validate_transition(
            self.reader.snapshot(),
            o,
            n,
            t,
            class,
        ))
    }

    /// Extended permissions for one driver.
    pub fn compute_xperms(
        &mut self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        base: XpermBase,
        driver: u8,
    ) -> Result<XpermsDecision> {
        let (s, t) = self.contexts(ssid, tsid)?;
        Ok(av::compute_xperms(
            self.reader.snapshot(),
            s,
            t,
            class,
            base,
            driver,
        ))
    }

    /// Which drivers have extended-permission rules.
    pub fn xperm_drivers(&mut self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<XpermDrivers> {
        let (s, t) = self.contexts(ssid, tsid)?;
        Ok(av::xperm_drivers(self.reader.snapshot(), s, t, class))
    }
}
