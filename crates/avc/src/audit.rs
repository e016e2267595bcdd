//! Audit decisions and the kernel's AVC record text.
//!
//! Which checks are audited follows `avc_audit_required` / `avc_xperms_audit_required`;
//! the record text follows `avc_audit_pre_callback`, the generic `common_lsm_audit` fields
//! and `avc_audit_post_callback`:
//!
//! ```text
//! avc:  denied  { read write } for  pid=123 comm="cat" scontext=… tcontext=… tclass=file permissive=0
//! ```
//!
//! The pre-callback prints `"avc:  %s "`, then `" {"`, `" %s"` per named permission,
//! `" 0x%x"` for unnamed bits, and `" } for "`; every generic field is printed with a
//! leading space (`" pid=%d comm="`…), so the kernel's records read `for  pid=` with two
//! spaces, and so do these. The post-callback appends `" scontext="` (or `" ssid=N"` when
//! the SID has no context), `" tcontext="` / `" tsid=N"`, `" tclass="` and, for denials
//! only, `" permissive=%u"` (1 when the check passed despite the denial).

use std::fmt::Write as _;

use arbiter_decide::{
    AccessVector, AvDecision, AvdFlags, ClassRef, DecisionSource, Sid, XpermsDecision,
};

/// How an [`AuditField`] value is printed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AuditValue<'a> {
    /// Printed as is (`dev=sda1`).
    Raw(&'a str),
    /// The kernel's `audit_log_untrustedstring`: `"value"` if it has no control character,
    /// space, double quote or byte above 0x7e, else uppercase hex of its bytes.
    Untrusted(&'a str),
    /// Decimal (`pid=123`, `ino=42`).
    Int(i64),
    /// `0x` and lowercase hex (`ioctlcmd=0x5401`).
    Hex(u64),
}

/// One caller-supplied `key=value` field, printed between `for ` and `scontext=` in the
/// order given. Built without allocating, so building them costs nothing when no record
/// is produced.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AuditField<'a> {
    /// The key (`pid`, `comm`, ...).
    pub key: &'a str,
    /// The value and how it prints.
    pub value: AuditValue<'a>,
}

impl<'a> AuditField<'a> {
    /// A value printed as is.
    pub fn raw(key: &'a str, value: &'a str) -> Self {
        AuditField {
            key,
            value: AuditValue::Raw(value),
        }
    }
    /// A caller-controlled string, quoted or hex-encoded as the kernel does.
    pub fn untrusted(key: &'a str, value: &'a str) -> Self {
        AuditField {
            key,
            value: AuditValue::Untrusted(value),
        }
    }
    /// A decimal integer.
    pub fn int(key: &'a str, value: i64) -> Self {
        AuditField {
            key,
            value: AuditValue::Int(value),
        }
    }
    /// A hexadecimal integer with `0x`.
    pub fn hex(key: &'a str, value: u64) -> Self {
        AuditField {
            key,
            value: AuditValue::Hex(value),
        }
    }
    /// `pid=N`.
    pub fn pid(pid: i64) -> Self {
        Self::int("pid", pid)
    }
    /// `comm="name"` (untrusted string).
    pub fn comm(comm: &'a str) -> Self {
        Self::untrusted("comm", comm)
    }
    /// `name="…"` (untrusted string).
    pub fn name(name: &'a str) -> Self {
        Self::untrusted("name", name)
    }
    /// `path="…"` (untrusted string).
    pub fn path(path: &'a str) -> Self {
        Self::untrusted("path", path)
    }
    /// `ioctlcmd=0x…`, as the kernel prints the command of an extended-permission check.
    pub fn ioctlcmd(cmd: u16) -> Self {
        Self::hex("ioctlcmd", cmd as u64)
    }

    fn write(&self, out: &mut String) {
        out.push_str(self.key);
        out.push('=');
        match self.value {
            AuditValue::Raw(v) => out.push_str(v),
            AuditValue::Untrusted(v) => write_untrusted(out, v),
            AuditValue::Int(v) => {
                let _ = write!(out, "{v}");
            }
            AuditValue::Hex(v) => {
                let _ = write!(out, "0x{v:x}");
            }
        }
    }
}

fn write_untrusted(out: &mut String, v: &str) {
    if v.bytes().any(|b| b == b'"' || !(0x21..=0x7e).contains(&b)) {
        for b in v.bytes() {
            let _ = write!(out, "{b:02X}");
        }
    } else {
        out.push('"');
        out.push_str(v);
        out.push('"');
    }
}

/// One audit event, delivered to the hook registered with
/// [`Avc::set_audit_hook`](crate::Avc::set_audit_hook).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditRecord {
    /// The subject.
    pub ssid: Sid,
    /// The object.
    pub tsid: Sid,
    /// The object's class.
    pub class: ClassRef,
    /// The permissions checked.
    pub requested: AccessVector,
    /// The permissions the record lists.
    pub audited: AccessVector,
    /// A denial record (else a grant record, from an `auditallow` rule).
    pub denied: bool,
    /// For denials: the check passed anyway (permissive mode or permissive domain).
    pub permissive: bool,
    /// The kernel's record text, without the `type=AVC msg=audit(…):` envelope.
    pub text: String,
}

/// The hook receiving audit records.
pub type AuditHook = Box<dyn Fn(&AuditRecord) + Send + Sync>;

/// The kernel's `avc_audit_required`: `(audited, denied)` bits for a check of `requested`
/// against `d` whose result was a failure (`failed`) or not.
#[inline]
pub fn audit_required(
    requested: AccessVector,
    d: &AvDecision,
    failed: bool,
) -> (AccessVector, AccessVector) {
    if d.flags.contains(AvdFlags::NEVERAUDIT) {
        return (AccessVector::NONE, AccessVector::NONE);
    }
    let denied = requested.without(d.allowed);
    if !denied.is_empty() {
        (denied & d.auditdeny, denied)
    } else if failed {
        (requested, requested)
    } else {
        (requested & d.auditallow, AccessVector::NONE)
    }
}

/// The kernel's `avc_xperms_audit_required`: like [`audit_required`], then a per-function
/// `dontauditxperm` silences a denial and a missing `auditallowxperm` silences a grant.
/// `xpd` is the driver's bitmaps when the policy has per-function rules for the driver.
pub fn xperm_audit_required(
    requested: AccessVector,
    d: &AvDecision,
    xpd: Option<&XpermsDecision>,
    func: u8,
    failed: bool,
) -> (AccessVector, AccessVector) {
    let (mut audited, denied) = audit_required(requested, d, failed);
    if let (false, Some(x)) = (audited.is_empty(), xpd) {
        if !d.allowed.contains(requested) {
            // A permission is missing: a dontauditxperm rule for the function silences it.
            if x.dont_audit(func) {
                audited = AccessVector::NONE;
            }
        } else if !failed && !x.audits_allow(func) {
            // Granted: only an auditallowxperm rule for the function keeps the record.
            audited = AccessVector::NONE;
        }
    }
    (audited, denied)
}

/// Formats the record text (see the module header) for the key (ssid, tsid, class).
pub fn format_record<S: DecisionSource + ?Sized>(
    source: &S,
    (ssid, tsid, class): (Sid, Sid, ClassRef),
    audited: AccessVector,
    denied: bool,
    permissive: bool,
    fields: &[AuditField<'_>],
) -> String {
    let mut s = String::with_capacity(192);
    s.push_str("avc:  ");
    s.push_str(if denied { "denied" } else { "granted" });
    s.push(' ');
    if audited.is_empty() {
        s.push_str(" null");
    } else {
        s.push_str(" {");
        let mut av = audited.0;
        for bit in 0..32 {
            let perm = 1u32 << bit;
            if av & perm != 0 {
                if let Some(name) = class.known().and_then(|c| source.perm_name(c, bit)) {
                    s.push(' ');
                    s.push_str(&name);
                    av &= !perm;
                }
            }
        }
        if av != 0 {
            let _ = write!(s, " 0x{av:x}");
        }
        s.push_str(" } for ");
    }
    for f in fields {
        s.push(' ');
        f.write(&mut s);
    }
    match source.sid_to_context(ssid) {
        Some(c) => {
            let _ = write!(s, " scontext={c}");
        }
        None => {
            let _ = write!(s, " ssid={ssid}");
        }
    }
    match source.sid_to_context(tsid) {
        Some(c) => {
            let _ = write!(s, " tcontext={c}");
        }
        None => {
            let _ = write!(s, " tsid={tsid}");
        }
    }
    match class {
        ClassRef::Known(c) => match source.class_name(c) {
            Some(n) => {
                let _ = write!(s, " tclass={n}");
            }
            None => {
                let _ = write!(s, " tclass={}", c.value());
            }
        },
        ClassRef::Unknown => s.push_str(" tclass=(unknown)"),
    }
    if denied {
        let _ = write!(s, " permissive={}", u32::from(permissive));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_decide::XpermsUsed;

    fn d(allowed: u32, auditallow: u32, auditdeny: u32) -> AvDecision {
        AvDecision {
            allowed: AccessVector(allowed),
            auditallow: AccessVector(auditallow),
            auditdeny: AccessVector(auditdeny),
            seqno: 1,
            flags: AvdFlags::NONE,
        }
    }

    fn ar(requested: u32, d: &AvDecision, failed: bool) -> (u32, u32) {
        let (a, b) = audit_required(AccessVector(requested), d, failed);
        (a.0, b.0)
    }

    fn xar(
        requested: u32,
        d: &AvDecision,
        x: Option<&XpermsDecision>,
        func: u8,
        failed: bool,
    ) -> (u32, u32) {
        let (a, b) = xperm_audit_required(AccessVector(requested), d, x, func, failed);
        (a.0, b.0)
    }

    #[test]
    fn required_bits() {
        // Denied, audited.
        assert_eq!(ar(0b110, &d(0b010, 0, !0), true), (0b100, 0b100));
        // Denied, dontaudit'ed.
        assert_eq!(ar(0b110, &d(0b010, 0, !0b100), true), (0, 0b100));
        // Granted, auditallow'ed on one of two bits.
        assert_eq!(ar(0b011, &d(0b011, 0b001, !0), false), (0b001, 0));
        // Granted, not audited.
        assert_eq!(ar(0b011, &d(0b011, 0, !0), false), (0, 0));
        // Failed without a missing bit: everything requested is audited as denied.
        assert_eq!(ar(0b011, &d(0b011, 0, 0), true), (0b011, 0b011));
        // neveraudit.
        let mut n = d(0, 0, !0);
        n.flags = AvdFlags::NEVERAUDIT;
        assert_eq!(ar(1, &n, true), (0, 0));
    }

    #[test]
    fn xperm_required_bits() {
        let x = XpermsDecision {
            used: XpermsUsed::DONTAUDIT | XpermsUsed::AUDITALLOW,
            dontaudit: [1, 0, 0, 0, 0, 0, 0, 0],
            auditallow: [2, 0, 0, 0, 0, 0, 0, 0],
            ..Default::default()
        };
        // Denied function 0 is dontaudit'ed, function 1 is not.
        assert_eq!(xar(1, &d(0, 0, !0), Some(&x), 0, true), (0, 1));
        assert_eq!(xar(1, &d(0, 0, !0), Some(&x), 1, true), (1, 1));
        // Granted with auditallow on the base permission: only function 1 is audited.
        assert_eq!(xar(1, &d(1, 1, !0), Some(&x), 0, false), (0, 0));
        assert_eq!(xar(1, &d(1, 1, !0), Some(&x), 1, false), (1, 0));
        // Without per-function rules the base decision alone decides.
        assert_eq!(xar(1, &d(1, 1, !0), None, 0, false), (1, 0));
    }

    #[test]
    fn untrusted_strings() {
        let mut s = String::new();
        write_untrusted(&mut s, "cat");
        assert_eq!(s, "\"cat\"");
        s.clear();
        write_untrusted(&mut s, "a b");
        assert_eq!(s, "612062");
        s.clear();
        write_untrusted(&mut s, "x\"");
        assert_eq!(s, "7822");
    }
}
