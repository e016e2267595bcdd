//! Realistic denial logs generated from a policy, for the differential test against
//! audit2why / audit2allow and for the benchmark.
//!
//! Denials are drawn from the policy's own rules so that every verdict occurs: conditional
//! allow rules (boolean-gated), unconditional allow rules asked for a permission they lack
//! (TE, dontaudit) or hold (allowed), the same across users (constraints), process
//! transitions between roles without `role allow` (RBAC), and a few names the policy does
//! not know. Each is written in one of the log formats the parser reads, with field order
//! and spacing varied as the real sources vary them.

use crate::engine::Engine;
use arbiter_policy::avtab::{AvtabDatum, AvtabKind};
use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::{Policy, TypeId};

/// A log format.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// `/var/log/audit/audit.log`.
    AuditLog,
    /// `ausearch -i` (interpreted values, `----` separators).
    Ausearch,
    /// `journalctl` text.
    Journal,
    /// `dmesg` / kernel log.
    Dmesg,
    /// Android `logcat`.
    Logcat,
    /// USER_AVC from a userspace object manager (dbus, systemd).
    UserAvc,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 6] = [
        Format::AuditLog,
        Format::Ausearch,
        Format::Journal,
        Format::Dmesg,
        Format::Logcat,
        Format::UserAvc,
    ];

    /// A short name (file suffixes, reports).
    pub fn name(self) -> &'static str {
        match self {
            Format::AuditLog => "audit.log",
            Format::Ausearch => "ausearch",
            Format::Journal => "journal",
            Format::Dmesg => "dmesg",
            Format::Logcat => "logcat",
            Format::UserAvc => "user_avc",
        }
    }
}

/// One access to log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    /// Source context.
    pub scontext: String,
    /// Target context.
    pub tcontext: String,
    /// Class.
    pub tclass: String,
    /// Permissions.
    pub perms: Vec<String>,
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> Option<&'a T> {
        (!v.is_empty()).then(|| &v[self.below(v.len())])
    }
}

/// Draws `n` accesses from the policy's rules (see the module documentation).
pub fn accesses(engine: &Engine, n: usize, seed: u64) -> Vec<Access> {
    let p = engine.policy();
    let mut rng = Rng(seed | 1);
    let level = if p.mls { ":s0" } else { "" };
    // A valid process context for each type that some user's role may have.
    let mut domain_ctx: Vec<Option<String>> = vec![None; p.types.len()];
    let mut domain_roles: Vec<Vec<(String, String)>> = vec![Vec::new(); p.types.len()];
    for u in &p.users {
        for r in u.roles.iter() {
            let Some(role) = p.roles.get(r as usize) else {
                continue;
            };
            for t in role.types.iter() {
                let ti = t as usize;
                if ti >= p.types.len() || domain_roles[ti].len() >= 3 {
                    continue;
                }
                let ctx = format!("{}:{}:{}{level}", u.name, role.name, p.types[ti].name);
                if engine.context_valid(&ctx) {
                    domain_roles[ti].push((u.name.to_string(), role.name.to_string()));
                    domain_ctx[ti].get_or_insert(ctx);
                }
            }
        }
    }
    let object_ctx = |t: usize, user: &str| format!("{user}:object_r:{}{level}", p.types[t].name);
    let members = members_of(p);
    let pick_member =
        |rng: &mut Rng, t: TypeId| -> Option<usize> { rng.pick(&members[t.index()]).copied() };
    let rules: Vec<_> = p
        .avtab
        .entries
        .iter()
        .filter(|e| e.key.kind == AvtabKind::Allowed)
        .collect();
    let cond_rules: Vec<_> = p
        .cond_avtab
        .entries
        .iter()
        .filter(|e| e.key.kind == AvtabKind::Allowed)
        .collect();
    let users: Vec<&str> = p.users.iter().map(|u| &*u.name).collect();

    let mut out = Vec::with_capacity(n);
    let mut attempts = 0;
    while out.len() < n && attempts < n * 50 {
        attempts += 1;
        let kind = rng.below(10);
        let (rule, cond) = if kind < 3 {
            (rng.pick(&cond_rules), true)
        } else {
            (rng.pick(&rules), false)
        };
        let Some(rule) = rule else { continue };
        let AvtabDatum::Perms(bits) = rule.datum() else {
            continue;
        };
        let Some(s) = pick_member(&mut rng, rule.key.source) else {
            continue;
        };
        let Some(t) = pick_member(&mut rng, rule.key.target) else {
            continue;
        };
        let Some(sctx) = domain_ctx[s].clone() else {
            continue;
        };
        let class = &*p.class(rule.key.class).name;
        let all = engine.class_perms(class);
        let granted: Vec<String> = all
            .iter()
            .enumerate()
            .filter(|(i, _)| bits & (1 << i) != 0)
            .map(|(_, n)| n.clone())
            .collect();
        let mut tuser = "system_u";
        let mut tctx = object_ctx(t, tuser);
        if !cond && kind == 9 {
            // Across users: constraints on identity changes.
            tuser = rng.pick(&users).copied().unwrap_or("system_u");
            tctx = object_ctx(t, tuser);
        }
        if class == "process" && kind >= 7 {
            // A transition to another role: RBAC when no `allow R1 R2;`.
            if let Some((u, r)) = rng.pick(&domain_roles[t]).cloned() {
                tctx = format!("{u}:{r}:{}{level}", p.types[t].name);
            }
        }
        if !engine.context_valid(&tctx) {
            continue;
        }
        let perm = if cond || kind < 6 || kind == 9 {
            rng.pick(&granted).cloned()
        } else {
            // A permission the rule lacks: TE denial (or dontaudit, or allowed elsewhere).
            let lacking: Vec<&String> = all
                .iter()
                .enumerate()
                .filter(|(i, _)| bits & (1 << i) == 0)
                .map(|(_, n)| n)
                .collect();
            rng.pick(&lacking).map(|s| (*s).clone())
        };
        let Some(perm) = perm else { continue };
        let mut perms = vec![perm];
        if rng.below(4) == 0 {
            if let Some(second) = rng.pick(&granted) {
                if !perms.contains(second) {
                    perms.push(second.clone());
                }
            }
        }
        out.push(Access {
            scontext: sctx,
            tcontext: tctx,
            tclass: class.to_string(),
            perms,
        });
    }
    out
}

/// For each type or attribute value - 1: the concrete types it stands for.
fn members_of(p: &Policy) -> Vec<Vec<usize>> {
    let mut m: Vec<Vec<usize>> = vec![Vec::new(); p.types.len()];
    for (t, attrs) in p.type_attr_map.iter().enumerate() {
        if p.types[t].flavor != TypeFlavor::Type {
            continue;
        }
        for a in attrs.iter() {
            if let Some(v) = m.get_mut(a as usize) {
                if v.len() < 64 {
                    v.push(t);
                }
            }
        }
    }
    m
}

/// Renders one access as a denial line of `format`; `i` varies ids, times and field order.
pub fn render(a: &Access, format: Format, i: usize) -> String {
    let perms = a.perms.join(" ");
    let comm = ["bash", "httpd", "sshd", "python3", "systemd"][i % 5];
    let mut fields = [
        format!("scontext={}", a.scontext),
        format!("tcontext={}", a.tcontext),
        format!("tclass={}", a.tclass),
    ];
    // Sources differ in field order: rotate the three required fields.
    fields.rotate_left(i % 3);
    let fields = fields.join(" ");
    let ts = 1_700_000_000 + i as u64;
    let serial = 1000 + i;
    let ioctl = if a.perms.iter().any(|p| p == "ioctl") {
        " ioctlcmd=0x5401"
    } else {
        ""
    };
    match format {
        Format::AuditLog => format!(
            "type=AVC msg=audit({ts}.{:03}:{serial}): avc:  denied  {{ {perms} }} for  pid={} comm=\"{comm}\" name=\"f{i}\" dev=\"dm-0\" ino={}{ioctl} {fields} permissive=0",
            i % 1000,
            100 + i % 5000,
            4000 + i
        ),
        Format::Ausearch => format!(
            "----\ntime->Tue Nov 24 12:00:{:02} 2026\ntype=AVC msg=audit(11/24/2026 12:00:{:02}.{:03}:{serial}) : avc:  denied  {{ {perms} }} for  pid={} comm={comm} path=/tmp/f{i} dev=\"dm-0\" ino={} {fields} permissive=0 ",
            i % 60,
            i % 60,
            i % 1000,
            100 + i % 5000,
            4000 + i
        ),
        Format::Journal => format!(
            "Nov 24 12:00:{:02} host audit[{}]: AVC avc:  denied  {{ {perms} }} for  pid={} comm=\"{comm}\"{ioctl} {fields} permissive=1",
            i % 60,
            100 + i,
            100 + i
        ),
        Format::Dmesg => format!(
            "[{:5}.{:06}] audit: type=1400 audit({ts}.{:03}:{serial}): avc:  denied  {{ {perms} }} for  pid={} comm=\"{comm}\" {fields} permissive=0",
            i / 100,
            i % 1_000_000,
            i % 1000,
            100 + i
        ),
        Format::Logcat => format!(
            "11-24 12:00:{:02}.{:03}  {}  {} W {comm}  : type=1400 audit(0.0:{serial}): avc: denied {{ {perms} }} for name=\"f{i}\" dev=\"sda1\" ino={} {fields} permissive=0 app=com.example",
            i % 60,
            i % 1000,
            1000 + i,
            1000 + i,
            4000 + i
        ),
        Format::UserAvc => format!(
            "type=USER_AVC msg=audit({ts}.{:03}:{serial}): pid=1 uid=81 auid=4294967295 ses=4294967295 subj=system_u:system_r:system_dbusd_t:s0 msg='avc:  denied  {{ {perms} }} for msgtype=method_call interface=org.example.X member=Y dest=:1.{i} spid={} tpid=1 {fields} permissive=0  exe=\"/usr/bin/dbus-daemon\" sauid=81 hostname=? addr=? terminal=?'",
            i % 1000,
            100 + i
        ),
    }
}
