//! The Debian reference policies (`selinux-policy-default` and `selinux-policy-mls`, as CI
//! installs them), read whole and compared with what `seinfo` reports for them; and a
//! random-corruption run over the default policy, which must never panic.
//!
//! When a policy file is absent the test prints a note and passes, so that a developer
//! machine without the packages can still run the suite.

use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::{HandleUnknown, Policy};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

const DEFAULT: &str = arbiter_testkit::DEBIAN_DEFAULT;
const MLS: &str = arbiter_testkit::DEBIAN_MLS;

/// Reads the file, or `None` (with a note on stderr) when it is not installed.
fn load(path: &str) -> Option<(Vec<u8>, Policy)> {
    if !Path::new(path).exists() {
        eprintln!(
            "note: {path} is not installed; skipping (CI installs selinux-policy-default and -mls)"
        );
        return None;
    }
    let bytes = std::fs::read(path).expect("readable policy");
    let policy = Policy::from_bytes(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
    Some((bytes, policy))
}

/// The counts `seinfo` prints for a policy.
#[derive(Debug, PartialEq, Eq)]
struct Stats {
    classes: usize,
    /// Permissions declared: each common's plus each class's own (seinfo's count).
    permissions: usize,
    sensitivities: usize,
    categories: usize,
    types: usize,
    attributes: usize,
    users: usize,
    roles: usize,
    booleans: usize,
    constraints: usize,
    mls_constraints: usize,
    validatetrans: usize,
    mls_validatetrans: usize,
    polcaps: usize,
}

fn stats(p: &Policy) -> Stats {
    let flavors = |f| p.types.iter().filter(|t| t.flavor == f).count();
    let permissions = p.classes.iter().map(|c| c.perms.len()).sum::<usize>()
        + p.commons.iter().map(|c| c.perms.len()).sum::<usize>();
    let split = |lists: &mut dyn Iterator<Item = &arbiter_policy::constraint::Constraint>| {
        let (mls, plain): (Vec<_>, Vec<_>) = lists.partition(|c| c.is_mls());
        (plain.len(), mls.len())
    };
    let (constraints, mls_constraints) =
        split(&mut p.classes.iter().flat_map(|c| c.constraints.iter()));
    let (validatetrans, mls_validatetrans) =
        split(&mut p.classes.iter().flat_map(|c| c.validatetrans.iter()));
    Stats {
        classes: p.classes.len(),
        permissions,
        sensitivities: p.sensitivities.len(),
        categories: p.categories.len(),
        types: flavors(TypeFlavor::Type),
        attributes: flavors(TypeFlavor::Attribute),
        users: p.users.len(),
        roles: p.roles.len(),
        booleans: p.bools.len(),
        constraints,
        mls_constraints,
        validatetrans,
        mls_validatetrans,
        polcaps: p.policycaps.len(),
    }
}

#[test]
fn default_policy_matches_seinfo() {
    let Some((_, p)) = load(DEFAULT) else { return };
    assert_eq!((p.version, p.mls), (33, true));
    assert_eq!(p.handle_unknown, HandleUnknown::Allow);
    assert_eq!(
        stats(&p),
        Stats {
            classes: 134,
            permissions: 425,
            sensitivities: 1,
            categories: 1024,
            types: 3936,
            attributes: 217,
            users: 7,
            roles: 15,
            booleans: 291,
            constraints: 133,
            mls_constraints: 110,
            validatetrans: 0,
            mls_validatetrans: 0,
            polcaps: 5,
        }
    );
    assert!(p.types.iter().all(|t| t.flavor != TypeFlavor::Unnamed));
    assert_eq!(&*p.roles[0].name, "object_r");
}

#[test]
fn mls_policy_matches_seinfo() {
    let Some((_, p)) = load(MLS) else { return };
    assert_eq!(p.handle_unknown, HandleUnknown::Deny);
    assert_eq!(
        stats(&p),
        Stats {
            classes: 134,
            permissions: 425,
            sensitivities: 16,
            categories: 1024,
            types: 3938,
            attributes: 259,
            users: 7,
            roles: 15,
            booleans: 291,
            constraints: 64,
            mls_constraints: 227,
            validatetrans: 0,
            mls_validatetrans: 17,
            polcaps: 5,
        }
    );
}

#[test]
fn stored_contexts_pass_the_public_context_check() {
    for path in [DEFAULT, MLS] {
        let Some((_, p)) = load(path) else { continue };
        assert_eq!(p.ocontexts.initial_sids.len(), 27, "{path}");
        for sid in &p.ocontexts.initial_sids {
            p.context_is_valid(&sid.context)
                .unwrap_or_else(|e| panic!("{path}: initial SID {}: {e}", sid.sid));
        }
        // A context the policy does not authorise is refused with a reason: system_u may
        // not have user_r (value 8) in the reference policy.
        let mut ctx = p.ocontexts.initial_sids[0].context.clone();
        let user_r = p.roles.iter().position(|r| &*r.name == "user_r").unwrap();
        ctx.role = arbiter_policy::RoleId::from_index(user_r).unwrap();
        let err = p.context_is_valid(&ctx).unwrap_err();
        assert!(err.to_string().contains("user_r"), "{path}: {err}");
    }
}

/// A fixed-seed xorshift64 generator: reproducible corruption without a dependency.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// How many corrupted copies to read: 2000 in an optimised build (about 5 s); in a debug
/// build, where one read of the 2 MB policy takes about 0.05 s, 100 (set
/// `ARBITER_CORRUPTION_ITERATIONS` to choose).
fn corruption_iterations() -> usize {
    if let Some(n) = std::env::var("ARBITER_CORRUPTION_ITERATIONS")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        return n;
    }
    if cfg!(debug_assertions) {
        100
    } else {
        2000
    }
}

#[test]
fn random_corruption_is_an_error_or_a_policy_never_a_panic() {
    let Some((bytes, _)) = load(DEFAULT) else {
        return;
    };
    let mut rng = XorShift(0x5eed_0fa4_b17e_4200);
    let mut copy = bytes.clone();
    let (mut ok, mut err) = (0, 0);
    for i in 0..corruption_iterations() {
        copy.copy_from_slice(&bytes);
        let flips = 1 + rng.below(4);
        let mut at = Vec::with_capacity(flips);
        for _ in 0..flips {
            // Half the time aim at the first 64 KiB, where headers, symbol tables and
            // counts are dense; otherwise anywhere.
            let span = if rng.next() & 1 == 0 {
                copy.len().min(64 * 1024)
            } else {
                copy.len()
            };
            let pos = rng.below(span);
            copy[pos] ^= (1 + rng.below(255)) as u8;
            at.push(pos);
        }
        match catch_unwind(AssertUnwindSafe(|| Policy::from_bytes(&copy))) {
            Ok(Ok(_)) => ok += 1,
            Ok(Err(_)) => err += 1,
            Err(_) => panic!("iteration {i}: reading panicked after flipping bytes at {at:?}"),
        }
    }
    eprintln!("corruption: {ok} still valid, {err} refused");
}
