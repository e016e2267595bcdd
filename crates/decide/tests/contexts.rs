//! Context parsing, validity and formatting on real policies: Debian's default (targeted,
//! MLS-enabled with `s0` and `c0..c1023`) and MLS policies, and the repository's small
//! policies (non-MLS `tiny`, MLS `features` with sensitivity and category aliases).
//!
//! The differential test against libsepol on random strings is in
//! `crates/oracle-tests/tests/contexts_oracle.rs` (it links libsepol).
//!
//! Policies that are not installed are skipped with a note (CI installs them).

use arbiter_testkit::Rng;
use std::path::{Path, PathBuf};

use arbiter_decide::internals::parse_context_bytes;
use arbiter_decide::{format_context, parse_context, DecideError, Names};
use arbiter_policy::{Ebitmap, Policy};

const DEBIAN_DEFAULT: &str = arbiter_testkit::DEBIAN_DEFAULT;
const DEBIAN_MLS: &str = arbiter_testkit::DEBIAN_MLS;

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
    assert!(
        matches!(&reason, arbiter_policy::Invalid::RoleType { role, .. } if role == "system_r"),
        "{reason}"
    );
    // object_r is exempt from the role/type and user/role checks.
    assert!(parse_context(&p, &n, "system_u:object_r:user_home_t:s0").is_ok());
}

#[test]
fn attributes_are_not_valid_types() {
    let Some((p, n)) = load(DEBIAN_DEFAULT) else {
        return;
    };
    let sym = n.type_symbol("domain").expect("domain is an attribute");
    assert_eq!(sym.flavor, arbiter_policy::symbols::TypeFlavor::Attribute);
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

#[test]
fn random_bytes_never_panic() {
    let Some((p, n)) = load(DEBIAN_MLS) else {
        return;
    };
    let mut rng = Rng::new(0x5eed_1234_abcd_0001);
    let alphabet = b"sc0123456789:-.,_ux\0\xff\xc3";
    for _ in 0..200_000 {
        let len = rng.below(40);
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                if rng.below(4) == 0 {
                    rng.next_u64() as u8
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
