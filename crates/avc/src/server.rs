//! The security server (`arbiter-decide`) as the access vector cache's decision source.
//!
//! The cache calls into the server only on misses, from any thread. Each thread keeps the
//! snapshot it last used in a thread-local slot and swaps it only when the published
//! sequence number moved, so a miss costs the computation and one atomic load — no lock,
//! no shared reference count — exactly like a [`Query`](arbiter_decide::security::Query).

use crate::source::{
    CreateDecision, Decision, DecisionSource, SourceError, XpermBase, XpermBitmaps, XpermDecision,
    XpermRule,
};
use arbiter_decide::av::{self, XpermBase as DXpermBase};
use arbiter_decide::labeling::{self, LabelKind};
use arbiter_decide::security::SecurityServer;
use arbiter_decide::server::Snapshot;
use arbiter_decide::sidtab::Sid;
use arbiter_policy::mls::Context;
use arbiter_policy::ClassId;
use std::cell::RefCell;
use std::sync::Arc;

/// Adapts a [`SecurityServer`] to [`DecisionSource`].
pub struct ServerSource<'a> {
    pub server: &'a SecurityServer,
}

thread_local! {
    /// (server address, snapshot) last used on this thread.
    static SNAPSHOT: RefCell<Option<(usize, Arc<Snapshot>)>> = const { RefCell::new(None) };
}

impl ServerSource<'_> {
    fn with_snapshot<R>(&self, f: impl FnOnce(&Snapshot) -> R) -> R {
        let id = self.server as *const SecurityServer as usize;
        let publisher = self.server.publisher();
        let seqno = publisher.seqno();
        SNAPSHOT.with(|slot| {
            let mut slot = slot.borrow_mut();
            let fresh = matches!(&*slot, Some((i, s)) if *i == id && s.seqno == seqno);
            if !fresh {
                *slot = Some((id, publisher.snapshot()));
            }
            let (_, snap) = slot.as_ref().expect("just filled");
            f(snap)
        })
    }

    fn pair(
        &self,
        ssid: u32,
        tsid: u32,
        tclass: u16,
    ) -> Result<(&Context, &Context, ClassId), SourceError> {
        let ctx = |sid: u32| {
            Sid::new(sid)
                .and_then(|s| self.server.sidtab().context(s))
                .ok_or(SourceError::UnknownSid(sid))
        };
        let class = ClassId::new(tclass)
            .filter(|c| c.index() < self.server.policy().classes.len())
            .ok_or(SourceError::UnknownClass(tclass))?;
        Ok((ctx(ssid)?, ctx(tsid)?, class))
    }
}

impl DecisionSource for ServerSource<'_> {
    fn compute_av(&self, ssid: u32, tsid: u32, tclass: u16) -> Result<Decision, SourceError> {
        let (s, t, class) = self.pair(ssid, tsid, tclass)?;
        Ok(self.with_snapshot(|snap| {
            let d = av::compute_av(snap, s, t, class);
            Decision {
                allowed: d.allowed,
                auditallow: d.auditallow,
                auditdeny: d.auditdeny,
                seqno: d.seqno,
                flags: d.flags,
            }
        }))
    }

    fn seqno(&self) -> u64 {
        self.server.publisher().seqno()
    }

    fn compute_xperms(
        &self,
        ssid: u32,
        tsid: u32,
        tclass: u16,
        base: XpermBase,
        driver: u8,
    ) -> Result<XpermDecision, SourceError> {
        let (s, t, class) = self.pair(ssid, tsid, tclass)?;
        let dbase = match base {
            XpermBase::Ioctl => DXpermBase::Ioctl,
            XpermBase::Nlmsg => DXpermBase::Nlmsg,
        };
        Ok(self.with_snapshot(|snap| {
            let drivers = av::xperm_drivers(snap, s, t, class);
            let set = match base {
                XpermBase::Ioctl => drivers.ioctl,
                XpermBase::Nlmsg => drivers.nlmsg,
            };
            let rule = if set.iter().all(|w| *w == 0) {
                XpermRule::Unrestricted
            } else if !drivers.has(dbase, driver) {
                XpermRule::DriverNotListed
            } else {
                let x = av::compute_xperms(snap, s, t, class, dbase, driver);
                XpermRule::Driver(XpermBitmaps {
                    used: x.used,
                    allowed: x.allowed,
                    auditallow: x.auditallow,
                    dontaudit: x.dontaudit,
                })
            };
            XpermDecision {
                rule,
                seqno: snap.seqno,
            }
        }))
    }

    fn compute_create(
        &self,
        ssid: u32,
        tsid: u32,
        tclass: u16,
    ) -> Result<CreateDecision, SourceError> {
        let (s, t, class) = self.pair(ssid, tsid, tclass)?;
        let semantics = self.server.semantics();
        let (ctx, seqno) = self.with_snapshot(|snap| {
            (
                labeling::compute_label(snap, s, t, class, LabelKind::Create, None, semantics),
                snap.seqno,
            )
        });
        let ctx = ctx.ok_or_else(|| {
            SourceError::Other("no valid label (glblub of disjoint ranges)".into())
        })?;
        self.server
            .policy()
            .context_is_valid(&ctx)
            .map_err(|reason| SourceError::Other(format!("computed label is invalid: {reason}")))?;
        let sid = self
            .server
            .context_struct_to_sid(ctx)
            .map_err(|e| SourceError::Other(e.to_string()))?;
        Ok(CreateDecision {
            sid: sid.get(),
            seqno,
        })
    }

    fn sid_to_context(&self, sid: u32) -> Option<String> {
        Sid::new(sid).and_then(|s| self.server.sid_to_context(s).ok())
    }

    fn class_name(&self, tclass: u16) -> Option<String> {
        ClassId::new(tclass)
            .and_then(|c| self.server.names().class_name(c))
            .map(String::from)
    }

    fn perm_name(&self, tclass: u16, bit: u32) -> Option<String> {
        let c = ClassId::new(tclass)?;
        self.server.names().perm_name(c, bit).map(String::from)
    }
}
