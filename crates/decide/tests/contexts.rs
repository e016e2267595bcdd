//! Context parsing, validity and formatting on real policies: Debian's default (targeted,
//! MLS-enabled with `s0` and `c0..c1023`) and MLS policies, and the repository's small
//! policies (non-MLS `tiny`, MLS `features` with sensitivity and category aliases).
//!
//! The differential tests run libsepol 3.4 (`sepol_context_to_sid` + `sepol_sid_to_context`)
//! on the same strings and require the same verdicts, the same canonical strings and the
//! same SID numbers, except for the two documented libsepol deviations from the kernel
//! (see `arbiter_decide::context`).
//!
//! Policies that are not installed are skipped with a note (CI installs them).

use std::path::{Path, PathBuf};

use arbiter_decide::context::{format_context, parse_context, parse_context_bytes};
use arbiter_decide::names::Names;
use arbiter_decide::sidtab::{Sid, SidTable};
use arbiter_decide::DecideError;
use arbiter_policy::{Ebitmap, Policy};

const DEBIAN_DEFAULT: &str = "/etc/selinux/default/policy/policy.33";
const DEBIAN_MLS: &str = "/etc/selinux/mls/policy/policy.33";

fn repo_policy(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../policies/bin")
        .join(name)
}

fn load(path: impl AsRef<Path>) -> Option<(Policy, Names)> {
    let path = path.as_ref();
    if !path.exists() {
        eprintln!("note: {} not installed; skipping", path.display());
        return None;
    }
    let policy = Policy::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let names = Names::new(&policy);
    Some((policy, names))
}

/// Parses and formats back.
fn canon(p: &Policy, n: &Names, s: &str) -> Result<String, DecideError> {
    parse_context(p, n, s).map(|c| format_context(n, &c))
}

fn assert_malformed(p: &Policy, n: &Names, s: &str) {
    let r = parse_context(p, n, s);
    assert!(
        matches!(r, Err(DecideError::MalformedContext { .. })),
        "{s:?}: {r:?}"
    );
}

fn assert_invalid(p: &Policy, n: &Names, s: &str) {
    let r = parse_context(p, n, s);
    assert!(
        matches!(r, Err(DecideError::InvalidContext { .. })),
        "{s:?}: {r:?}"
    );
}

#[test]
fn default_policy_system_context_round_trips() {
    let Some((p, n)) = load(DEBIAN_DEFAULT) else {
        return;
    };
    let s = "system_u:system_r:init_t:s0";
    let c = parse_context(&p, &n, s).unwrap();
    assert_eq!(n.user_name(c.user), Some("system_u"));
    assert_eq!(n.role_name(c.role), Some("system_r"));
    assert_eq!(n.type_name(c.ty), Some("init_t"));
    assert_eq!(c.range.low, c.range.high);
    assert_eq!(format_context(&n, &c), s);
}

#[test]
fn default_policy_full_category_range_round_trips() {
    let Some((p, n)) = load(DEBIAN_DEFAULT) else {
        return;
    };
    let s = "unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023";
    let c = parse_context(&p, &n, s).unwrap();
    assert_eq!(c.range.high.cats.len(), 1024);
    assert!(c.range.low.cats.is_empty());
    assert_eq!(format_context(&n, &c), s);
}

#[test]
fn category_runs_normalise_as_the_kernel_prints_them() {
    let Some((p, n)) = load(DEBIAN_DEFAULT) else {
        return;
    };
    let t = |cats: &str| canon(&p, &n, &format!("system_u:object_r:etc_t:s0:{cats}")).unwrap();
    // Runs of three or more: `first.last`; of two: `first,last`.
    assert_eq!(t("c0,c1,c2,c5"), "system_u:object_r:etc_t:s0:c0.c2,c5");
    assert_eq!(t("c0,c1,c3"), "system_u:object_r:etc_t:s0:c0,c1,c3");
    assert_eq!(
        t("c5,c3,c4,c0,c1"),
        "system_u:object_r:etc_t:s0:c0,c1,c3.c5"
    );
    assert_eq!(t("c0.c2,c1,c3"), "system_u:object_r:etc_t:s0:c0.c3");
    assert_eq!(t("c7,c7"), "system_u:object_r:etc_t:s0:c7");
    assert_eq!(t("c0.c1"), "system_u:object_r:etc_t:s0:c0,c1");
    // Runs across 64-bit node boundaries and gaps (libsepol 3.4 prints c62.c128 for the
    // first: its iterator skips the gap without ending the run).
    assert_eq!(t("c62,c63,c128"), "system_u:object_r:etc_t:s0:c62,c63,c128");
    assert_eq!(t("c62.c64"), "system_u:object_r:etc_t:s0:c62.c64");
    assert_eq!(
        t("c63,c128,c129"),
        "system_u:object_r:etc_t:s0:c63,c128,c129"
    );
    // Equal low and high are printed once.
    assert_eq!(
        canon(&p, &n, "system_u:object_r:etc_t:s0:c1-s0:c1").unwrap(),
        "system_u:object_r:etc_t:s0:c1"
    );
}

#[test]
fn unknown_symbols_name_the_offending_part() {
    let Some((p, n)) = load(DEBIAN_DEFAULT) else {
        return;
    };
    let e = |s: &str| parse_context(&p, &n, s).unwrap_err();
    assert_eq!(
        e("nobody_u:system_r:init_t:s0"),
        DecideError::UnknownUser("nobody_u".into())
    );
    assert_eq!(
        e("system_u:nobody_r:init_t:s0"),
        DecideError::UnknownRole("nobody_r".into())
    );
    assert_eq!(
        e("system_u:system_r:nothing_t:s0"),
        DecideError::UnknownType("nothing_t".into())
    );
    assert_eq!(
        e("system_u:system_r:init_t:s1"),
        DecideError::UnknownSensitivity("s1".into())
    );
    assert_eq!(
        e("system_u:system_r:init_t:s0:c1024"),
        DecideError::UnknownCategory("c1024".into())
    );
    // `c0.c2.c3` looks up the category `c2.c3`, as the kernel does.
    assert_eq!(
        e("system_u:system_r:init_t:s0:c0.c2.c3"),
        DecideError::UnknownCategory("c2.c3".into())
    );
    // Errors come in the kernel's order: the user before anything else.
    assert_eq!(
        e("nobody_u:nobody_r:nothing_t:s9"),
        DecideError::UnknownUser("nobody_u".into())
    );
}

#[test]
fn malformed_shapes_are_malformed() {
    let Some((p, n)) = load(DEBIAN_DEFAULT) else {
        return;
    };
    for s in [
        "",
        "system_u",
        "system_u:system_r",
        // An MLS policy needs a range (the kernel without a default SID, and libsepol).
        "system_u:system_r:init_t",
        "system_u:system_r:init_t:",
        "system_u:system_r:init_t:s0:",
        "system_u:system_r:init_t:s0:c0,",
        "system_u:system_r:init_t:s0:c0,,c1",
        "system_u:system_r:init_t:s0-",
        "system_u:system_r:init_t:s0:c1.c0",
        "system_u:system_r:init_t:s0:c1.c1",
    ] {
        assert_malformed(&p, &n, s);
    }
}

#[test]
fn role_not_authorised_for_type_is_invalid() {
    let Some((p, n)) = load(DEBIAN_DEFAULT) else {
        return;
    };
    let err = parse_context(&p, &n, "system_u:system_r:user_home_t:s0").unwrap_err();
    let DecideError::InvalidContext { context, reason } = err else {
        panic!("{err:?}")
    };
    assert_eq!(context, "system_u:system_r:user_home_t:s0");
    assert!(reason.contains("system_r"), "{reason}");
    // object_r is exempt from the role/type and user/role checks.
    assert!(parse_context(&p, &n, "system_u:object_r:user_home_t:s0").is_ok());
}

#[test]
fn attributes_are_not_valid_types() {
    let Some((p, n)) = load(DEBIAN_DEFAULT) else {
        return;
    };
    let sym = n.type_symbol("domain").expect("domain is an attribute");
    assert_eq!(sym.flavor, arbiter_policy::TypeFlavor::Attribute);
    assert_eq!(n.ty("domain"), None);
    assert_invalid(&p, &n, "system_u:object_r:domain:s0");
    assert_invalid(&p, &n, "system_u:system_r:domain:s0");
}

#[test]
fn mls_policy_checks_levels_dominance_and_user_range() {
    let Some((p, n)) = load(DEBIAN_MLS) else {
        return;
    };
    let ok = |s: &str| canon(&p, &n, s).unwrap_or_else(|e| panic!("{s}: {e}"));
    assert_eq!(
        ok("system_u:system_r:init_t:s0-s15:c0.c1023"),
        "system_u:system_r:init_t:s0-s15:c0.c1023"
    );
    assert_eq!(
        ok("system_u:object_r:etc_t:s3:c1,c2"),
        "system_u:object_r:etc_t:s3:c1,c2"
    );
    assert_invalid(&p, &n, "system_u:object_r:etc_t:s3-s1"); // high below low
    assert_invalid(&p, &n, "system_u:object_r:etc_t:s1:c1-s1:c2"); // incomparable
                                                                   // user_u's range is s0 only.
    assert_invalid(&p, &n, "user_u:user_r:user_t:s0-s1");
    assert!(parse_context(&p, &n, "user_u:user_r:user_t:s0").is_ok());
}

#[test]
fn non_mls_policy_refuses_a_range() {
    let Some((p, n)) = load(repo_policy("tiny.33")) else {
        return;
    };
    assert!(!p.mls);
    assert_eq!(
        canon(&p, &n, "system_u:system_r:init_t").unwrap(),
        "system_u:system_r:init_t"
    );
    assert_malformed(&p, &n, "system_u:system_r:init_t:s0");
    assert_malformed(&p, &n, "system_u:system_r:init_t:");
}

#[test]
fn aliases_resolve_and_print_as_primary_names() {
    let Some((mut p, n)) = load(repo_policy("features.33")) else {
        return;
    };
    assert_eq!(n.sensitivity("unclassified"), n.sensitivity("s0"));
    assert_eq!(n.category("project_x"), n.category("c5"));
    assert_eq!(
        canon(
            &p,
            &n,
            "system_u:object_r:etc_t:unclassified:project_x,c4,c6-ts:c0.c15"
        )
        .unwrap(),
        "system_u:object_r:etc_t:s0:c4.c6-s3:c0.c15"
    );
    // Aliases take values too: the file has 19 category values, 16 named.
    assert_eq!(
        parse_context(&p, &n, "system_u:object_r:etc_t:s0:c16"),
        Err(DecideError::UnknownCategory("c16".into()))
    );
    // A category the sensitivity's `level` statement does not allow (every policy at hand
    // allows all categories everywhere, so narrow `level s0` to c0.c7 here).
    p.sensitivities[0].level.cats = Ebitmap::from_bits(0..8);
    assert!(parse_context(&p, &n, "system_u:object_r:etc_t:s0:c7").is_ok());
    assert_invalid(&p, &n, "system_u:object_r:etc_t:s0:c8");
    assert_invalid(&p, &n, "system_u:object_r:etc_t:s0-s0:c0.c8");
    assert!(parse_context(&p, &n, "system_u:object_r:etc_t:s0-s1:c0.c8").is_ok());
}

#[test]
fn input_ends_at_the_first_nul_like_a_c_string() {
    let Some((p, n)) = load(DEBIAN_DEFAULT) else {
        return;
    };
    let c = parse_context(&p, &n, "system_u:system_r:init_t:s0\0garbage").unwrap();
    assert_eq!(format_context(&n, &c), "system_u:system_r:init_t:s0");
    assert!(parse_context(&p, &n, "system_u:system_r:init_t\0:s0").is_err());
}

/// A fixed-seed generator (xorshift64*), so failures reproduce.
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
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len())]
    }
}

#[test]
fn random_bytes_never_panic() {
    let Some((p, n)) = load(DEBIAN_MLS) else {
        return;
    };
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let alphabet = b"sc0123456789:-.,_ux\0\xff\xc3";
    for _ in 0..200_000 {
        let len = rng.below(40);
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                if rng.below(4) == 0 {
                    rng.next() as u8
                } else {
                    alphabet[rng.below(alphabet.len())]
                }
            })
            .collect();
        let _ = parse_context_bytes(&p, &n, &bytes);
        // Random bytes behind a valid prefix reach the MLS parser.
        let mut s = b"system_u:object_r:etc_t:".to_vec();
        s.extend_from_slice(&bytes);
        if let Ok(c) = parse_context_bytes(&p, &n, &s) {
            // Whatever parses, formats and parses back to itself.
            let f = format_context(&n, &c);
            assert_eq!(parse_context(&p, &n, &f).as_ref(), Ok(&c), "{f}");
        }
    }
}

/// Strings built from the policy's own names and separators, so most reach deep into the
/// parser and a good share are valid.
fn random_context(
    rng: &mut Rng,
    p: &Policy,
    n: &Names,
    users: &[&str],
    roles: &[&str],
    types: &[&str],
) -> String {
    // With thousands of types, random user/role/type triples are almost never authorised:
    // half the time, take the role from the user's set and the type from the role's.
    let pick_bit = |rng: &mut Rng, set: &Ebitmap| -> Option<usize> {
        let bits: Vec<u32> = set.iter().collect();
        (!bits.is_empty()).then(|| bits[rng.below(bits.len())] as usize)
    };
    let user = rng.pick(users);
    let coherent = rng.below(2) == 0;
    let role = match (coherent, p.users.iter().find(|u| &*u.name == user)) {
        (true, Some(u)) => pick_bit(rng, &u.roles).map_or("x_r", |r| &*p.roles[r].name),
        _ => rng.pick(roles),
    };
    let ty = match (coherent, p.roles.iter().find(|r| &*r.name == role)) {
        (true, Some(r)) => pick_bit(rng, &r.types).map_or("nothing_t", |t| &*p.types[t].name),
        _ => rng.pick(types),
    };
    let mut s = format!("{user}:{role}:{ty}");
    if !n.mls() && rng.below(10) != 0 {
        return s;
    }
    s.push(':');
    let sens = n.sensitivity_count().max(1);
    let cats = n.category_count().max(1);
    let levels = 1 + rng.below(2);
    for l in 0..levels {
        if l == 1 {
            s.push('-');
        }
        // Mostly low sensitivities: most users' ranges start at s0.
        let sv = if rng.below(2) == 0 {
            0
        } else {
            rng.below(sens + 1)
        };
        s.push_str(&format!("s{sv}"));
        let items = match rng.below(4) {
            0 => 0,
            _ => 1 + rng.below(4),
        };
        for i in 0..items {
            s.push(if i == 0 { ':' } else { ',' });
            // Categories cluster near 64-bit node edges to exercise run formatting.
            let base = [0, 60, 120, 190, cats.saturating_sub(4)][rng.below(5)];
            let a = (base + rng.below(8)).min(cats);
            s.push_str(&format!("c{a}"));
            if rng.below(2) == 0 {
                let b = (a + rng.below(80)).min(cats);
                s.push_str(&format!(".c{b}"));
            }
        }
    }
    // Occasionally damage it.
    match rng.below(12) {
        0 => {
            let cut = rng.below(s.len() + 1);
            s.truncate(cut);
        }
        1 => {
            let at = rng.below(s.len() + 1);
            let ch = [':', '-', '.', ',', 'c', 's', '0'][rng.below(7)];
            s.insert(at, ch);
        }
        _ => {}
    }
    s
}

/// Whether libsepol 3.4 may accept what the kernel rejects: its `mls_context_to_sid`
/// stops at a `-` after the high level's categories and ignores the rest.
fn libsepol_tolerates_trailing_junk(s: &str) -> bool {
    let mls = s.splitn(4, ':').nth(3).unwrap_or("");
    mls.split_once('-')
        .is_some_and(|(_, high)| high.contains('-'))
}

fn differential(path: impl AsRef<Path>, seed: u64, count: usize) {
    let path = path.as_ref();
    let Some((p, n)) = load(path) else {
        return;
    };
    let oracle = match sepol_oracle::Oracle::load(path) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("note: libsepol oracle unavailable ({e}); skipping");
            return;
        }
    };
    let sids = SidTable::new(&p);
    // Initial SIDs: same numbers, same strings.
    for (sid, text) in oracle.initial_sids() {
        let ours = sids.context(Sid::new(sid).unwrap());
        let ours = ours.map(|c| format_context(&n, c));
        assert_eq!(ours.as_deref(), Some(&*text), "initial SID {sid}");
    }
    let users: Vec<&str> = p
        .users
        .iter()
        .map(|u| &*u.name)
        .chain(["nobody_u"])
        .collect();
    let roles: Vec<&str> = p.roles.iter().map(|r| &*r.name).chain(["x_r"]).collect();
    let types: Vec<&str> = p
        .types
        .iter()
        .map(|t| &*t.name)
        .filter(|t| !t.is_empty())
        .chain(p.type_aliases.iter().map(|a| &*a.name))
        .chain(["nothing_t"])
        .collect();
    let mut rng = Rng(seed);
    let (mut accepted, mut rejected, mut gap_prints, mut tolerated) = (0, 0, 0, 0);
    for _ in 0..count {
        let s = random_context(&mut rng, &p, &n, &users, &roles, &types);
        let ours = parse_context(&p, &n, &s);
        if libsepol_tolerates_trailing_junk(&s) {
            // The kernel rejects these (no sensitivity or category name has a '-'); libsepol
            // might accept and allocate a SID, which would shift the numbering compared
            // below, so it is not asked.
            assert!(ours.is_err(), "{s:?}: {ours:?}");
            tolerated += 1;
            continue;
        }
        let theirs = oracle.context_to_sid(&s);
        match (&ours, &theirs) {
            (Ok(c), Ok(sid)) => {
                accepted += 1;
                let our_sid = sids.insert(c.clone()).unwrap();
                assert_eq!(our_sid.get(), *sid, "{s}: SID numbering");
                let text = format_context(&n, c);
                let their_text = oracle.sid_to_context(*sid).unwrap();
                if text != their_text {
                    // libsepol 3.4's run printing across ebitmap node gaps: its string no
                    // longer names the context; ours does.
                    gap_prints += 1;
                    assert_eq!(parse_context(&p, &n, &text).as_ref(), Ok(c), "{s}");
                    assert_ne!(
                        parse_context(&p, &n, &their_text).as_ref(),
                        Ok(c),
                        "{s}: ours {text}, libsepol {their_text}"
                    );
                }
            }
            (Err(_), Err(_)) => rejected += 1,
            _ => panic!("{s:?}: ours {ours:?}, libsepol {theirs:?}"),
        }
    }
    finish(path, accepted, rejected, gap_prints, tolerated);
    assert!(accepted > count / 50, "too few valid contexts generated");
}

fn finish(path: &Path, accepted: usize, rejected: usize, gaps: usize, tolerated: usize) {
    eprintln!(
        "{}: {accepted} accepted and {rejected} rejected as libsepol does; \
         {gaps} printed differently (libsepol node-gap bug); \
         {tolerated} with a second '-' (rejected, libsepol not asked)",
        path.display()
    );
}

#[test]
fn agrees_with_libsepol_on_the_default_policy() {
    differential(DEBIAN_DEFAULT, 0xdef0_0001, 20_000);
}

#[test]
fn agrees_with_libsepol_on_the_mls_policy() {
    differential(DEBIAN_MLS, 0x3115_0002, 20_000);
}

#[test]
fn agrees_with_libsepol_on_the_small_policies() {
    differential(repo_policy("features.33"), 0xfea7_0003, 20_000);
    differential(repo_policy("tiny.33"), 0x7119_0004, 5_000);
    differential(repo_policy("default.33"), 0xde4a_0005, 20_000);
}

#[test]
fn names_match_libsepol_for_classes_and_permissions() {
    for path in [
        PathBuf::from(DEBIAN_DEFAULT),
        repo_policy("features.33"),
        repo_policy("tiny.33"),
    ] {
        let Some((_, n)) = load(&path) else {
            continue;
        };
        let oracle = match sepol_oracle::Oracle::load(&path) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("note: libsepol oracle unavailable ({e}); skipping");
                return;
            }
        };
        assert_eq!(n.class_count(), usize::from(oracle.class_count()));
        for value in 1..=oracle.class_count() {
            let name = oracle.class_name(value).unwrap();
            let class = n.class(&name).unwrap();
            assert_eq!(class.value(), value, "{name}");
            assert_eq!(n.class_name(class), Some(&*name));
            let mut all = 0;
            for bit in 0..32 {
                let ours = n.perm_name(class, bit);
                let theirs = oracle.perm_name(value, bit + 1);
                assert_eq!(ours, theirs.as_deref(), "{name} bit {bit}");
                if let Some(perm) = ours {
                    assert_eq!(n.perm(class, perm), Some(1 << bit), "{name} {perm}");
                    assert_eq!(oracle.av_bit(&name, perm), Some(1 << bit));
                    all |= 1 << bit;
                }
            }
            assert_eq!(n.defined_perms(class), all, "{name}");
            let names = n.perms_to_names(class, u32::MAX);
            assert_eq!(names, oracle.av_to_names(value, all), "{name}");
        }
    }
}

#[test]
fn names_resolve_aliases_and_booleans() {
    let Some((p, n)) = load(DEBIAN_DEFAULT) else {
        return;
    };
    let file = n.class("file").unwrap();
    // `read` comes from the common `file`, `entrypoint` is the class's own.
    let read = n.perm(file, "read").unwrap();
    let ent = n.perm(file, "entrypoint").unwrap();
    assert_eq!(n.perms_to_names(file, read | ent), ["read", "entrypoint"]);
    assert_eq!(n.perm(file, "no_such_perm"), None);
    assert_eq!(n.class("no_such_class"), None);
    for a in &p.type_aliases {
        assert_eq!(n.ty(&a.name), Some(a.target), "{}", a.name);
    }
    for (i, b) in p.bools.iter().enumerate() {
        let id = n.boolean(&b.name).unwrap();
        assert_eq!(id.index(), i);
        assert_eq!(n.bool_name(id), Some(&*b.name));
    }
    assert!(n.ty("init_t").is_some());
    assert_eq!(
        n.user("system_u").and_then(|u| n.user_name(u)),
        Some("system_u")
    );
}
