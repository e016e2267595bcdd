//! The kernel tree model of the Landlock layout study holds exactly the rules of the flat
//! domain it is built from: the study compares layouts, so they must answer alike.

use arbiter_lab::landlock_tree::TreeDomain;
use arbiter_landlock::access::{fs, net};
use arbiter_landlock::{Domain, Layout, ObjectId, RuleLayers, Rules, Ruleset};
use arbiter_testkit::Rng;

fn entries(r: RuleLayers<'_>) -> Vec<(usize, u16)> {
    r.iter().map(|e| (e.layer(), e.access())).collect()
}

#[test]
fn the_tree_model_finds_the_rules_of_its_domain() {
    let mut rng = Rng::new(11);
    let mut domain: Option<Domain> = None;
    for layer in 0..5u64 {
        let mut r = Ruleset::new(u64::from(fs::ALL), u64::from(net::ALL), 0).unwrap();
        for _ in 0..250 {
            let object = ObjectId(rng.below(400) as u32);
            r.add_path_beneath(object, true, rng.below_u64(0xffff) | 1)
                .unwrap();
            r.add_net_port(rng.below_u64(150), 1 + (layer & 1)).unwrap();
        }
        domain = Some(Domain::restrict(domain.as_ref(), &r, Layout::Hash).unwrap());
    }
    let flat = domain.unwrap();
    let tree = TreeDomain::from_domain(&flat, 5);
    let mut hits = 0;
    for k in 0..500u32 {
        let want = entries(flat.find_fs(ObjectId(k)));
        assert_eq!(want, entries(tree.find_fs(ObjectId(k))), "fs key {k}");
        hits += usize::from(!want.is_empty());
        let port = k as u16;
        assert_eq!(
            entries(flat.find_net(port)),
            entries(tree.find_net(port)),
            "port {port}"
        );
    }
    assert!(
        hits > 300,
        "the keys exercise hits and misses ({hits} hits)"
    );
}
