//! The kernel's quirks from the reference brief, each pinned by a test over the public API.

use arbiter_landlock::access::{fs, net, scope};
use arbiter_landlock::check::{self, ReferQuery};
use arbiter_landlock::config::{load_layers, Config, Format};
use arbiter_landlock::{is_scoped, OpenFlags, IOCTL_NAMES};
use arbiter_landlock::{
    Domain, DomainError, Errno, Layout, ObjectId, Op, Outcome, Rules, Ruleset, Sandbox,
};
use std::path::PathBuf;

const P: ObjectId = ObjectId(0); // common parent, the mount root
const A: ObjectId = ObjectId(1); // source directory
const B: ObjectId = ObjectId(2); // destination directory
const REG: u32 = 0o100644;
const DIR: u32 = 0o040755;

fn layer(handled: u16, rules: &[(ObjectId, u16)]) -> Ruleset {
    let mut r = Ruleset::new(u64::from(handled), 0, 0).unwrap();
    for (o, a) in rules {
        r.add_path_beneath(*o, true, u64::from(*a)).unwrap();
    }
    r
}

fn stack(layers: &[Ruleset]) -> Domain {
    let mut d: Option<Domain> = None;
    for l in layers {
        d = Some(Domain::restrict(d.as_ref(), l, Layout::Hash).unwrap());
    }
    d.unwrap()
}

/// Moves `A/x` (of `mode`) to `B/x`.
fn cross_move(dom: &Domain, mode: u32, removable: bool) -> Result<(), Errno> {
    let q = ReferQuery {
        old: (None, mode),
        new: None,
        same_dir: false,
        old_parent_walk: &[Some(A), Some(P)],
        new_dir_walk: &[Some(B), Some(P)],
        mount_root: 1,
        removable,
        exchange: false,
    };
    check::check_refer(dom, &q).map_err(|d| d.errno)
}

#[test]
fn a_net_only_layer_denies_refer_under_an_allow_all_fs_layer() {
    let fs_layer = layer(fs::ALL, &[(P, fs::ALL)]);
    assert_eq!(
        cross_move(&stack(std::slice::from_ref(&fs_layer)), REG, true),
        Ok(())
    );
    let net_only = Ruleset::new(0, u64::from(net::BIND_TCP), 0).unwrap();
    assert_eq!(
        cross_move(&stack(&[fs_layer, net_only]), REG, true),
        Err(Errno::EXDEV)
    );
}

#[test]
fn a_net_only_domain_does_not_restrict_renames_or_mounts() {
    let d = stack(&[Ruleset::new(0, u64::from(net::BIND_TCP), 0).unwrap()]);
    assert_eq!(cross_move(&d, REG, true), Ok(()));
    assert_eq!(check::check_mount(&d), Ok(()));
    assert_eq!(
        check::check_mount(&stack(&[layer(fs::READ_FILE, &[])])),
        Err(Errno::EPERM)
    );
}

#[test]
fn abi1_style_rulesets_make_every_cross_directory_rename_exdev() {
    let h = fs::REMOVE_FILE | fs::MAKE_REG;
    assert_eq!(
        cross_move(&stack(&[layer(h, &[(P, h)])]), REG, true),
        Err(Errno::EXDEV)
    );
}

#[test]
fn a_directory_move_must_not_gain_make_dir() {
    let h = fs::REMOVE_DIR | fs::MAKE_DIR | fs::REFER;
    let gains = layer(
        h,
        &[
            (A, fs::REMOVE_DIR | fs::REFER),
            (B, fs::MAKE_DIR | fs::REFER),
        ],
    );
    assert_eq!(cross_move(&stack(&[gains]), DIR, true), Err(Errno::EXDEV));
    let same = layer(h, &[(A, h), (B, h)]);
    assert_eq!(cross_move(&stack(&[same]), DIR, true), Ok(()));
}

#[test]
fn a_file_move_compares_file_rights_only() {
    let h = fs::REMOVE_FILE | fs::MAKE_REG | fs::MAKE_DIR | fs::REFER;
    let l = layer(
        h,
        &[
            (A, fs::REMOVE_FILE | fs::REFER),
            (B, fs::MAKE_REG | fs::MAKE_DIR | fs::REFER),
        ],
    );
    assert_eq!(cross_move(&stack(&[l]), REG, true), Ok(()));
}

#[test]
fn gaining_read_file_is_exdev_losing_it_is_fine() {
    let h = fs::REMOVE_FILE | fs::MAKE_REG | fs::REFER | fs::READ_FILE;
    let base = fs::REMOVE_FILE | fs::MAKE_REG | fs::REFER;
    let gain = layer(h, &[(A, base), (B, base | fs::READ_FILE)]);
    assert_eq!(cross_move(&stack(&[gain]), REG, true), Err(Errno::EXDEV));
    let lose = layer(h, &[(A, base | fs::READ_FILE), (B, base)]);
    assert_eq!(cross_move(&stack(&[lose]), REG, true), Ok(()));
}

#[test]
fn a_missing_make_right_is_eacces_even_without_refer() {
    let h = fs::REMOVE_FILE | fs::MAKE_REG | fs::REFER;
    let l = layer(h, &[(A, fs::REMOVE_FILE)]);
    assert_eq!(cross_move(&stack(&[l]), REG, true), Err(Errno::EACCES));
    // A link needs no REMOVE_FILE at the source, only REFER.
    let l = layer(h, &[(A, fs::REFER), (B, fs::MAKE_REG | fs::REFER)]);
    assert_eq!(cross_move(&stack(&[l]), REG, false), Ok(()));
}

#[test]
fn exec_needs_execute_and_read_file() {
    let h = fs::EXECUTE | fs::READ_FILE;
    let only_exec = stack(&[layer(h, &[(P, fs::EXECUTE)])]);
    assert!(check::check_open(&only_exec, &[None, Some(P)], h, false)
        .denied
        .is_some());
    let both = stack(&[layer(h, &[(P, h)])]);
    assert!(check::check_open(&both, &[None, Some(P)], h, false)
        .denied
        .is_none());
}

#[test]
fn truncate_and_ioctl_dev_are_decided_at_open_time() {
    let h = fs::READ_FILE | fs::TRUNCATE | fs::IOCTL_DEV;
    let d = stack(&[layer(h, &[(P, fs::READ_FILE)])]);
    let r = check::check_open(&d, &[None, Some(P)], fs::READ_FILE, true);
    assert!(r.denied.is_none());
    assert_eq!(r.allowed_access & (fs::TRUNCATE | fs::IOCTL_DEV), 0);
    // Rights no layer handles stay allowed on the file.
    let d = stack(&[layer(fs::READ_FILE, &[(P, fs::READ_FILE)])]);
    let r = check::check_open(&d, &[None, Some(P)], fs::READ_FILE, true);
    assert_eq!(
        r.allowed_access & (fs::TRUNCATE | fs::IOCTL_DEV),
        fs::TRUNCATE | fs::IOCTL_DEV
    );
}

#[test]
fn rights_are_ored_within_a_layer_and_anded_across_layers() {
    let h = fs::EXECUTE | fs::READ_FILE;
    let f = ObjectId(7);
    let mut l1 = Ruleset::new(u64::from(h), 0, 0).unwrap();
    l1.add_path_beneath(f, false, u64::from(fs::EXECUTE))
        .unwrap();
    l1.add_path_beneath(P, true, u64::from(fs::READ_FILE))
        .unwrap();
    let d = stack(&[l1.clone()]);
    assert!(check::check_walk(&d, &[Some(f), Some(P)], h).is_ok());
    let d = stack(&[l1, layer(h, &[(P, fs::READ_FILE)])]);
    let m = check::check_walk(&d, &[Some(f), Some(P)], h).unwrap_err();
    assert_eq!(m.denials(), vec![(1, fs::EXECUTE)]);
}

#[test]
fn the_seventeenth_layer_is_e2big_and_refer_is_added_only_to_fs_layers() {
    let mut d = Domain::restrict(None, &Ruleset::new(0, 1, 0).unwrap(), Layout::Sorted).unwrap();
    assert_eq!(d.layer(0).fs, 0);
    for _ in 1..16 {
        d = Domain::restrict(Some(&d), &layer(fs::READ_FILE, &[]), Layout::Sorted).unwrap();
    }
    assert_eq!(d.layer(15).fs, fs::READ_FILE | fs::REFER);
    assert_eq!(
        Domain::restrict(Some(&d), &layer(fs::READ_FILE, &[]), Layout::Sorted).unwrap_err(),
        DomainError::TooManyLayers
    );
}

#[test]
fn binding_port_zero_needs_a_rule_for_port_zero() {
    let mut r = Ruleset::new(0, u64::from(net::BIND_TCP), 0).unwrap();
    r.add_net_port(8080, u64::from(net::BIND_TCP)).unwrap();
    let d = stack(&[r.clone()]);
    assert!(check::check_net(&d, 0, net::BIND_TCP).is_err());
    assert!(check::check_net(&d, 8080, net::BIND_TCP).is_ok());
    assert!(
        check::check_net(&d, 1, net::CONNECT_TCP).is_ok(),
        "connect is not handled"
    );
    r.add_net_port(0, u64::from(net::BIND_TCP)).unwrap();
    assert!(check::check_net(&stack(&[r]), 0, net::BIND_TCP).is_ok());
}

#[test]
fn signal_scope_allows_same_and_nested_domains_only() {
    let scoped = Ruleset::new(0, 0, u64::from(scope::SIGNAL)).unwrap();
    let parent = Domain::restrict(None, &scoped, Layout::Sorted).unwrap();
    let nested =
        Domain::restrict(Some(&parent), &layer(fs::READ_FILE, &[]), Layout::Sorted).unwrap();
    let sibling = Domain::restrict(None, &scoped, Layout::Sorted).unwrap();
    assert!(!is_scoped(Some(&parent), Some(&parent), scope::SIGNAL));
    assert!(!is_scoped(Some(&parent), Some(&nested), scope::SIGNAL));
    assert!(is_scoped(Some(&parent), Some(&sibling), scope::SIGNAL));
    assert!(is_scoped(Some(&parent), None, scope::SIGNAL));
    assert!(!is_scoped(None, Some(&parent), scope::SIGNAL));
    assert!(!is_scoped(Some(&parent), None, scope::ABSTRACT_UNIX_SOCKET));
    // The nested domain's own layer does not scope; the inherited one does, toward the
    // parent domain only from outside it.
    assert!(!is_scoped(Some(&nested), Some(&parent), scope::SIGNAL));
}

#[test]
fn both_layouts_find_the_same_rules() {
    let mut d: Option<Domain> = None;
    let mut seed = 7u64;
    for l in 0..6u64 {
        let mut r = Ruleset::new(u64::from(fs::ALL), u64::from(net::ALL), 0).unwrap();
        for _ in 0..300 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            r.add_path_beneath(
                ObjectId((seed >> 40) as u32 % 500),
                true,
                (seed >> 20) & 0xffff | 1,
            )
            .unwrap();
            r.add_net_port((seed >> 33) % 200, 1 + (l & 1)).unwrap();
        }
        d = Some(Domain::restrict(d.as_ref(), &r, Layout::Sorted).unwrap());
    }
    let sorted = d.unwrap();
    let hash = sorted.with_layout(Layout::Hash);
    let words = |r: arbiter_landlock::RuleLayers<'_>| {
        r.iter()
            .map(|e| (e.layer(), e.access()))
            .collect::<Vec<_>>()
    };
    let mut found = 0;
    for k in 0..600 {
        let s = words(sorted.find_fs(ObjectId(k)));
        assert_eq!(s, words(hash.find_fs(ObjectId(k))), "fs key {k}");
        found += usize::from(!s.is_empty());
        let n = words(sorted.find_net(k as u16));
        assert_eq!(n, words(hash.find_net(k as u16)), "port {k}");
    }
    assert!(
        found > 400,
        "the keys exercise hits and misses ({found} hits)"
    );
    assert_eq!(sorted.num_entries(), hash.num_entries());
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "arbiter-landlock-quirks-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn sandbox_from(dir: &std::path::Path, toml: &str) -> Sandbox {
    let f = dir.join("layer.toml");
    std::fs::write(&f, toml).unwrap();
    load_layers(&[f], Layout::Sorted).unwrap().sandbox
}

#[test]
fn pipes_reached_through_proc_self_fd_are_never_checked() {
    let dir = tmp("pipe");
    std::fs::write(dir.join("f"), b"x").unwrap();
    let sb = sandbox_from(
        &dir,
        "[[ruleset]]\nhandled_access_fs = [\"read_file\", \"write_file\"]\n",
    );
    let (r, _w) = std::io::pipe().unwrap();
    let path = PathBuf::from(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&r)
    ));
    let read = |p: PathBuf| Op::Open {
        path: p,
        flags: OpenFlags {
            read: true,
            ..OpenFlags::default()
        },
    };
    assert_eq!(sb.evaluate(&read(path)).outcome, Outcome::Allowed);
    assert_eq!(
        sb.evaluate(&read(dir.join("f"))).outcome,
        Outcome::Denied(Errno::EACCES)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_denied_o_creat_open_still_creates_the_file() {
    let dir = tmp("creat");
    let toml = format!(
        "[[ruleset]]\nhandled_access_fs = [\"read_file\", \"make_reg\"]\n[[path_beneath]]\nallowed_access = [\"make_reg\"]\nparent = [\"{}\"]\n",
        dir.display()
    );
    let sb = sandbox_from(&dir, &toml);
    let op = Op::parse(&[
        "open",
        &dir.join("new").display().to_string(),
        "rdonly,creat",
    ])
    .unwrap();
    let ev = sb.evaluate(&op);
    assert_eq!(ev.outcome, Outcome::Denied(Errno::EACCES));
    assert!(
        ev.explanation.iter().any(|l| l.contains("created")),
        "{:?}",
        ev.explanation
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn device_ioctls_outside_the_always_allowed_list_need_ioctl_dev() {
    let dir = tmp("ioctl");
    std::fs::write(dir.join("f"), b"x").unwrap();
    let toml = format!(
        "[[ruleset]]\nhandled_access_fs = [\"read_file\", \"ioctl_dev\"]\n[[path_beneath]]\nallowed_access = [\"read_file\"]\nparent = [\"/dev/null\", \"{}\"]\n",
        dir.display()
    );
    let sb = sandbox_from(&dir, &toml);
    let cmd = |n: &str| IOCTL_NAMES.iter().find(|(m, _)| *m == n).unwrap().1;
    let null = PathBuf::from("/dev/null");
    assert_eq!(
        sb.evaluate(&Op::Ioctl(null.clone(), cmd("FIOCLEX")))
            .outcome,
        Outcome::Allowed
    );
    assert_eq!(
        sb.evaluate(&Op::Ioctl(null.clone(), cmd("TCGETS"))).outcome,
        Outcome::Denied(Errno::EACCES)
    );
    assert_eq!(
        sb.evaluate(&Op::Ioctl(null, cmd("FIONREAD"))).outcome,
        Outcome::Denied(Errno::EACCES)
    );
    assert_eq!(
        sb.evaluate(&Op::Ioctl(dir.join("f"), cmd("TCGETS")))
            .outcome,
        Outcome::Allowed
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn config_rights_on_a_file_keep_only_file_rights() {
    let dir = tmp("filerule");
    std::fs::write(dir.join("f"), b"x").unwrap();
    let c = Config::parse(
        &format!(
            "abi = 7\n[[path_beneath]]\nallowed_access = [\"abi.all\"]\nparent = [\"{}\"]\n",
            dir.join("f").display()
        ),
        Format::Toml,
    )
    .unwrap();
    let r = c.resolve(&mut Default::default()).unwrap();
    assert_eq!(r.paths[0].1, fs::FILE);
    std::fs::remove_dir_all(&dir).unwrap();
}
