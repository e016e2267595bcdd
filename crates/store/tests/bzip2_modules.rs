//! The store's bzip2 decoder (`decode_bzip2`, and the block-parallel path for large
//! modules) against the `bzip2` crate's reference decoder on every module file of the
//! Debian stores installed on this machine: the same text, and never a refusal of a file
//! the reference decodes (a refusal would only cost time, but on real modules it would mean
//! the fast path is not being taken).

use std::io::Read;
use std::path::Path;

fn module_files(store: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let Ok(prios) = std::fs::read_dir(store.join("active/modules")) else {
        return files;
    };
    for p in prios.flatten() {
        let Ok(mods) = std::fs::read_dir(p.path()) else {
            continue;
        };
        for m in mods.flatten() {
            let cil = m.path().join("cil");
            if cil.is_file() {
                files.push(cil);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_debian_module_decodes_to_the_reference_text() {
    let mut checked = 0;
    for store in ["/var/lib/selinux/default", "/var/lib/selinux/mls"] {
        for f in module_files(Path::new(store)) {
            let raw = std::fs::read(&f).unwrap();
            if !raw.starts_with(b"BZh") {
                continue;
            }
            let mut reference = Vec::new();
            bzip2::read::BzDecoder::new(&raw[..])
                .read_to_end(&mut reference)
                .unwrap();
            let ours = arbiter_store::decode_bzip2(&raw, 1 << 30);
            assert!(ours.is_some(), "{}: refused", f.display());
            assert!(ours.unwrap() == reference, "{}: text differs", f.display());
            if raw.len() >= 64 * 1024 {
                let parallel = arbiter_store::decode_bzip2_parallel(&raw, 2, 1 << 30);
                assert!(parallel == Some(reference), "{}: parallel", f.display());
            }
            checked += 1;
        }
    }
    assert!(checked > 0, "no Debian module store on this machine");
}
