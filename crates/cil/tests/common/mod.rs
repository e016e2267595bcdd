//! Shared oracle helpers: running secilc on the same input, reading module stores, and
//! comparing two policies section by section (the first difference of each section).

#![allow(dead_code)]

use arbiter_cil::{Options, Source};
use arbiter_policy::avtab::AvtabEntry;
use arbiter_policy::HandleUnknown;
use arbiter_policy::Policy;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// Whether secilc is missing and the caller allowed skipping (`ARBITER_NO_SECILC=1`).
pub fn skip() -> bool {
    let have = Command::new("secilc").arg("--help").output().is_ok();
    if !have {
        if std::env::var_os("ARBITER_NO_SECILC").is_some() {
            eprintln!("secilc not installed; skipped (ARBITER_NO_SECILC=1)");
            return true;
        }
        panic!("secilc is not installed (set ARBITER_NO_SECILC=1 to skip oracle tests)");
    }
    false
}

/// secilc options of a case (first lines `; args: ...`) and the same as [`Options`].
pub fn case_args(text: &str) -> (Vec<String>, Options) {
    let mut opts = Options::default();
    let mut args = Vec::new();
    for line in text.lines().take_while(|l| l.starts_with(';')) {
        if let Some(rest) = line.strip_prefix("; args:") {
            args.extend(rest.split_whitespace().map(String::from));
        }
    }
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-N" => opts.disable_neverallow = true,
            "-v" => opts.verbose += 1,
            "-D" => opts.disable_dontaudit = true,
            "-P" => opts.preserve_tunables = true,
            "-m" => opts.multiple_decls = true,
            "-G" => opts.expand_generated = true,
            "-O" => opts.optimize = true,
            "-M" => opts.mls = it.next().map(|v| v == "true" || v == "1"),
            "-X" => opts.expand_size = it.next().and_then(|v| v.parse().ok()).unwrap_or(1),
            "-t" => {
                opts.target = match it.next().map(String::as_str) {
                    Some("xen") => arbiter_cil::Target::Xen,
                    _ => arbiter_cil::Target::Selinux,
                }
            }
            "-c" => opts.policy_version = it.next().and_then(|v| v.parse().ok()).unwrap_or(33),
            "-U" => {
                opts.handle_unknown = match it.next().map(String::as_str) {
                    Some("allow") => Some(HandleUnknown::Allow),
                    Some("reject") => Some(HandleUnknown::Reject),
                    _ => Some(HandleUnknown::Deny),
                }
            }
            other => panic!("corpus: option {other} not mapped"),
        }
    }
    (args, opts)
}

/// A fresh scratch directory.
pub fn scratch(tag: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let d = std::env::temp_dir().join(format!(
        "arbiter-cil-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// The enabled modules of a store, decompressed, in libsemanage's order (highest priority
/// per name, names by strcmp). `None` when the store is not installed.
pub fn store_sources(store: &str) -> Option<Vec<Source>> {
    let root = Path::new("/var/lib/selinux")
        .join(store)
        .join("active/modules");
    let mut prios: Vec<(u32, PathBuf)> = std::fs::read_dir(&root)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            Some((n, e.path()))
        })
        .collect();
    prios.sort_by_key(|p| std::cmp::Reverse(p.0));
    let mut chosen: BTreeMap<Vec<u8>, PathBuf> = BTreeMap::new();
    for (_, p) in &prios {
        for e in std::fs::read_dir(p).ok()?.filter_map(|e| e.ok()) {
            let name = e.file_name().to_string_lossy().as_bytes().to_vec();
            if root
                .join("disabled")
                .join(String::from_utf8_lossy(&name).as_ref())
                .exists()
            {
                continue;
            }
            chosen.entry(name).or_insert_with(|| e.path().join("cil"));
        }
    }
    let mut out = Vec::new();
    for (_, path) in chosen {
        let raw = std::fs::read(&path).ok()?;
        let text = if raw.starts_with(b"BZh") {
            let o = Command::new("bzcat")
                .arg(&path)
                .output()
                .expect("bzcat runs");
            assert!(o.status.success(), "bzcat {}", path.display());
            o.stdout
        } else {
            raw
        };
        out.push(Source {
            name: path.display().to_string(),
            text,
        });
    }
    Some(out)
}

/// What secilc did.
pub struct SecilcRun {
    pub status: i32,
    pub stderr: String,
    pub policy: Option<Vec<u8>>,
    pub file_contexts: Option<Vec<u8>>,
}

/// Writes `sources` into `dir` (named by their base names) and runs secilc with `args`.
pub fn secilc(dir: &Path, args: &[&str], sources: &[Source]) -> SecilcRun {
    let mut files = Vec::new();
    for (i, s) in sources.iter().enumerate() {
        let base = Path::new(&s.name)
            .file_name()
            .map(|b| b.to_string_lossy().into_owned())
            .unwrap_or_else(|| format!("f{i}.cil"));
        let p = dir.join(format!("{i:04}-{base}"));
        std::fs::write(&p, &s.text).expect("write input");
        files.push(p);
    }
    secilc_files(dir, args, &files)
}

/// Runs secilc with `args` on files already on disk (so messages name the same paths).
pub fn secilc_files(dir: &Path, args: &[&str], files: &[PathBuf]) -> SecilcRun {
    let pol = dir.join("policy.out");
    let fc = dir.join("fc.out");
    let _ = std::fs::remove_file(&pol);
    let _ = std::fs::remove_file(&fc);
    let o = Command::new("secilc")
        .args(args)
        .arg("-o")
        .arg(&pol)
        .arg("-f")
        .arg(&fc)
        .args(files)
        .output()
        .expect("secilc runs");
    SecilcRun {
        status: o.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        policy: std::fs::read(&pol).ok().filter(|_| o.status.success()),
        file_contexts: std::fs::read(&fc).ok().filter(|_| o.status.success()),
    }
}

fn first_diff<T: std::fmt::Debug + PartialEq>(what: &str, a: &[T], b: &[T], out: &mut Vec<String>) {
    if a.len() != b.len() {
        out.push(format!(
            "{what}: {} entries (ours) vs {} (secilc)",
            a.len(),
            b.len()
        ));
    }
    if let Some(i) = (0..a.len().min(b.len())).find(|&i| a[i] != b[i]) {
        out.push(format!(
            "{what}[{i}]: ours {:?}\n    secilc {:?}",
            a[i], b[i]
        ));
    }
}

/// An entry's datum with extended permissions resolved (indexes differ between models).
fn datum_text(t: &arbiter_policy::avtab::Avtab, x: &AvtabEntry) -> String {
    match t.xperms_of(x.datum()) {
        Some(xp) => format!("{xp:?}"),
        None => format!("{:?}", x.datum()),
    }
}

type KeyMap = BTreeMap<(u16, u16, u16), Vec<(u16, String)>>;

fn by_key(t: &arbiter_policy::avtab::Avtab) -> KeyMap {
    let mut m: KeyMap = BTreeMap::new();
    for x in &t.entries {
        m.entry((
            x.key.source.value(),
            x.key.target.value(),
            x.key.class.value(),
        ))
        .or_default()
        .push((x.key.kind.bits(), datum_text(t, x)));
    }
    m
}

fn resolved(t: &arbiter_policy::avtab::Avtab) -> Vec<(arbiter_policy::avtab::AvtabKey, String)> {
    t.entries
        .iter()
        .map(|x| (x.key, datum_text(t, x)))
        .collect()
}

/// libsepol writes genfs in sorted order; the reader re-sorts each filesystem's entries by
/// decreasing path length. Brings ours to the reader's order.
fn reader_genfs_order(p: &Policy) -> Vec<arbiter_policy::ocontext::GenfsCon> {
    let mut v = p.genfs.clone();
    v.sort_by(|a, b| a.fstype.cmp(&b.fstype));
    let mut out = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j < v.len() && v[j].fstype == v[i].fstype {
            j += 1;
        }
        let mut g = v[i..j].to_vec();
        g.sort_by_key(|e| std::cmp::Reverse(e.path.len()));
        out.extend(g);
        i = j;
    }
    out
}

/// Every section's first difference between our policy and secilc's (read back).
pub fn compare(ours: &Policy, theirs: &Policy) -> Vec<String> {
    let mut d = Vec::new();
    if ours.mls != theirs.mls {
        d.push(format!("mls {} vs {}", ours.mls, theirs.mls));
    }
    if ours.handle_unknown != theirs.handle_unknown {
        d.push(format!(
            "handle_unknown {:?} vs {:?}",
            ours.handle_unknown, theirs.handle_unknown
        ));
    }
    if ours.policycaps != theirs.policycaps {
        d.push("policycaps differ".into());
    }
    if ours.permissive != theirs.permissive {
        d.push("permissive differ".into());
    }
    first_diff("commons", &ours.commons, &theirs.commons, &mut d);
    first_diff("classes", &ours.classes, &theirs.classes, &mut d);
    first_diff("roles", &ours.roles, &theirs.roles, &mut d);
    first_diff("types", &ours.types, &theirs.types, &mut d);
    let mut a = ours.type_aliases.clone();
    let mut b = theirs.type_aliases.clone();
    a.sort_by(|x, y| x.name.cmp(&y.name));
    b.sort_by(|x, y| x.name.cmp(&y.name));
    first_diff("type_aliases", &a, &b, &mut d);
    first_diff("users", &ours.users, &theirs.users, &mut d);
    first_diff("bools", &ours.bools, &theirs.bools, &mut d);
    first_diff(
        "sensitivities",
        &ours.sensitivities,
        &theirs.sensitivities,
        &mut d,
    );
    first_diff("categories", &ours.categories, &theirs.categories, &mut d);
    let mut a = ours.sensitivity_aliases.clone();
    let mut b = theirs.sensitivity_aliases.clone();
    a.sort_by(|x, y| x.name.cmp(&y.name));
    b.sort_by(|x, y| x.name.cmp(&y.name));
    first_diff("sensitivity_aliases", &a, &b, &mut d);
    let mut a = ours.category_aliases.clone();
    let mut b = theirs.category_aliases.clone();
    a.sort_by(|x, y| x.name.cmp(&y.name));
    b.sort_by(|x, y| x.name.cmp(&y.name));
    first_diff("category_aliases", &a, &b, &mut d);
    // avtab: same multiset per (s,t,c) in the same order, then the exact file order.
    let ka = by_key(&ours.avtab);
    let kb = by_key(&theirs.avtab);
    if ka != kb {
        let k = ka
            .iter()
            .find(|(k, v)| kb.get(k) != Some(v))
            .map(|(k, v)| format!("{k:?}: ours {v:?} secilc {:?}", kb.get(k)))
            .or_else(|| {
                kb.iter()
                    .find(|(k, _)| !ka.contains_key(k))
                    .map(|(k, v)| format!("{k:?}: missing in ours, secilc {v:?}"))
            });
        d.push(format!("avtab keys differ: {}", k.unwrap_or_default()));
    }
    first_diff(
        "avtab order",
        &resolved(&ours.avtab),
        &resolved(&theirs.avtab),
        &mut d,
    );
    first_diff("cond_nodes", &ours.cond_nodes, &theirs.cond_nodes, &mut d);
    first_diff(
        "cond_avtab",
        &ours.cond_avtab.entries,
        &theirs.cond_avtab.entries,
        &mut d,
    );
    first_diff("role_trans", &ours.role_trans, &theirs.role_trans, &mut d);
    first_diff("role_allow", &ours.role_allow, &theirs.role_allow, &mut d);
    first_diff(
        "filename_trans",
        &ours.filename_trans,
        &theirs.filename_trans,
        &mut d,
    );
    let o = &ours.ocontexts;
    let t = &theirs.ocontexts;
    first_diff("initial_sids", &o.initial_sids, &t.initial_sids, &mut d);
    first_diff("fs", &o.fs, &t.fs, &mut d);
    first_diff("ports", &o.ports, &t.ports, &mut d);
    first_diff("netifs", &o.netifs, &t.netifs, &mut d);
    first_diff("nodes", &o.nodes, &t.nodes, &mut d);
    first_diff("fs_use", &o.fs_use, &t.fs_use, &mut d);
    first_diff("nodes6", &o.nodes6, &t.nodes6, &mut d);
    first_diff("ibpkeys", &o.ibpkeys, &t.ibpkeys, &mut d);
    first_diff("ibendports", &o.ibendports, &t.ibendports, &mut d);
    first_diff("genfs", &reader_genfs_order(ours), &theirs.genfs, &mut d);
    if o.platform != t.platform {
        d.push(format!("platform: {:?} vs {:?}", o.platform, t.platform));
    }
    first_diff("xen pirqs", &o.xen.pirqs, &t.xen.pirqs, &mut d);
    first_diff("xen ioports", &o.xen.ioports, &t.xen.ioports, &mut d);
    first_diff("xen iomems", &o.xen.iomems, &t.xen.iomems, &mut d);
    first_diff(
        "xen pci_devices",
        &o.xen.pci_devices,
        &t.xen.pci_devices,
        &mut d,
    );
    first_diff(
        "xen device_trees",
        &o.xen.device_trees,
        &t.xen.device_trees,
        &mut d,
    );
    let mut a = ours.range_trans.clone();
    let mut b = theirs.range_trans.clone();
    let key = |r: &arbiter_policy::transitions::RangeTrans| (r.source, r.target, r.class);
    a.sort_by_key(key);
    b.sort_by_key(key);
    first_diff("range_trans", &a, &b, &mut d);
    first_diff(
        "type_attr_map",
        &ours.type_attr_map,
        &theirs.type_attr_map,
        &mut d,
    );
    d
}
