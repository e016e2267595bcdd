//! The module store (`<store-root>/<name>/active/modules`) as libsemanage 3.4 lists it:
//! priority directories 1–999, one directory per module holding `cil`, `hll` and `lang_ext`,
//! and `disabled/<name>` markers that switch a module off at every priority
//! (`semanage_direct_list_all`, `semanage_get_active_modules`).

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::StoreError;

/// One module chosen for the build: its highest-priority copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Module {
    pub name: String,
    pub priority: u16,
    /// The module's `lang_ext` (`pp` for Debian's modules, `cil` for CIL-native ones).
    pub lang_ext: String,
    /// `<modules>/<priority>/<name>`.
    pub dir: PathBuf,
}

impl Module {
    /// The `cil` file libsemanage passes to the compiler (and names in its messages).
    pub fn cil_path(&self) -> PathBuf {
        self.dir.join("cil")
    }
}

/// libsemanage's `semanage_module_validate_name`: a letter, then letters, digits, `_`, `-`,
/// and single dots each followed by one of those.
pub fn valid_module_name(name: &str) -> bool {
    let b = name.as_bytes();
    let valid = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
    if b.is_empty() || !b[0].is_ascii_alphabetic() {
        return false;
    }
    let mut i = 1;
    while i < b.len() {
        if valid(b[i]) {
            i += 1;
        } else if b[i] == b'.' && i + 1 < b.len() && valid(b[i + 1]) {
            i += 2;
        } else {
            return false;
        }
    }
    true
}

/// libsemanage's `semanage_string_to_priority`: a decimal 1..=999.
fn parse_priority(s: &str) -> Option<u16> {
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let v: u32 = s.parse().ok()?;
    (1..=999).contains(&v).then_some(v as u16)
}

fn sorted_entries(dir: &Path) -> Result<Vec<String>, StoreError> {
    let rd = std::fs::read_dir(dir).map_err(|e| StoreError::io(dir, e))?;
    let mut names = Vec::new();
    for e in rd {
        let e = e.map_err(|e| StoreError::io(dir, e))?;
        let name = e
            .file_name()
            .into_string()
            .map_err(|n| StoreError::store(dir, format!("entry {n:?} is not a UTF-8 name")))?;
        if !name.starts_with('.') {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// The modules a rebuild compiles, in the order libsemanage passes them to the compiler:
/// disabled names skipped, each name's highest priority kept, sorted by `strcmp` of the
/// name (`semanage_get_active_modules`).
pub fn active_modules(modules_dir: &Path) -> Result<Vec<Module>, StoreError> {
    let mut priorities = Vec::new();
    for name in sorted_entries(modules_dir)? {
        if name == "disabled" {
            continue;
        }
        let p = parse_priority(&name).ok_or_else(|| {
            StoreError::store(
                &modules_dir.join(&name),
                "not a module priority (libsemanage expects a number from 1 to 999)",
            )
        })?;
        priorities.push((p, name));
    }
    priorities.sort_by_key(|p| std::cmp::Reverse(p.0));
    let disabled_dir = modules_dir.join("disabled");
    let mut chosen: Vec<Module> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (priority, pname) in priorities {
        let pdir = modules_dir.join(&pname);
        for name in sorted_entries(&pdir)? {
            let dir = pdir.join(&name);
            if !valid_module_name(&name) {
                return Err(StoreError::store(&dir, format!("Name {name} is invalid.")));
            }
            let lang_path = dir.join("lang_ext");
            let lang = std::fs::read(&lang_path).map_err(|e| StoreError::io(&lang_path, e))?;
            // libsemanage keeps the first line as read by getline (newline included).
            let end = lang
                .iter()
                .position(|&c| c == b'\n')
                .map_or(lang.len(), |p| p + 1);
            let lang_ext = String::from_utf8_lossy(&lang[..end]).into_owned();
            if disabled_dir.join(&name).exists() || !seen.insert(name.clone()) {
                continue;
            }
            chosen.push(Module {
                name,
                priority,
                lang_ext,
                dir,
            });
        }
    }
    chosen.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    Ok(chosen)
}

/// The most a module's CIL may decompress to (Debian's largest, base, is 5 MB): a bound
/// against bzip2 bombs, far above any real module.
pub const MAX_MODULE_BYTES: u64 = 1 << 30;

/// Compressed files at least this large are decoded block-parallel (see `bzip2_blocks`):
/// below it a file is most likely one block (a block holds up to 900 kB of text, which
/// CIL compresses about tenfold), and scanning it for block boundaries would be wasted.
const PARALLEL_MIN_BYTES: usize = 64 * 1024;

/// The bytes of a module file, bzip2-decompressed when they start with `BZh` (as
/// libsemanage's `map_compressed_file`). A damaged bzip2 stream is an error here, where
/// libsemanage would hand the compressed bytes to the CIL parser.
pub fn read_maybe_bzip2(path: &Path) -> Result<Vec<u8>, StoreError> {
    let raw = std::fs::read(path).map_err(|e| StoreError::io(path, e))?;
    if !raw.starts_with(b"BZh") {
        return Ok(raw);
    }
    if raw.len() >= PARALLEL_MIN_BYTES {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        if let Some(text) = crate::bzip2_blocks::decode_parallel(&raw, threads, MAX_MODULE_BYTES) {
            return Ok(text);
        }
    }
    if let Some(text) = crate::bzip2_decode::decode(&raw, MAX_MODULE_BYTES) {
        return Ok(text);
    }
    // The reference decoder: for what ours leaves to it, and for the error.
    let mut out = Vec::with_capacity(raw.len() * 8);
    bzip2::read::BzDecoder::new(&raw[..])
        .take(MAX_MODULE_BYTES + 1)
        .read_to_end(&mut out)
        .map_err(|e| StoreError::store(path, format!("damaged bzip2 data: {e}")))?;
    if out.len() as u64 > MAX_MODULE_BYTES {
        return Err(StoreError::store(
            path,
            format!("decompresses to more than {MAX_MODULE_BYTES} bytes"),
        ));
    }
    Ok(out)
}

/// Fails with [`StoreError::HllOnly`] (or a store error for a CIL-native module) for the
/// first module, in build order, that has no `cil` file: checked for every module before
/// any is read, so such a store is refused before the slow decompression starts.
pub fn check_cil(modules: &[Module], compiler_dir: &str) -> Result<(), StoreError> {
    for m in modules {
        let cil = m.cil_path();
        if !cil.exists() {
            let lang = m.lang_ext.trim_end().to_string();
            if lang.eq_ignore_ascii_case("cil") {
                return Err(StoreError::store(
                    &cil,
                    format!("module `{}` has no cil file", m.name),
                ));
            }
            return Err(StoreError::HllOnly {
                name: m.name.clone(),
                compiler: format!("{compiler_dir}/{lang}"),
                lang,
                path: cil,
            });
        }
    }
    Ok(())
}

/// Reads every module's CIL into memory (in parallel: decompression is most of the cost),
/// after [`check_cil`]. The store build streams instead (`ReadAhead`); this is for
/// callers that want every text at once (the oracle tests write them out for secilc).
pub fn read_cil(modules: &[Module], compiler_dir: &str) -> Result<Vec<Vec<u8>>, StoreError> {
    check_cil(modules, compiler_dir)?;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(modules.len().max(1));
    let chunk = modules.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = modules
            .chunks(chunk)
            .map(|ms| {
                s.spawn(move || {
                    ms.iter()
                        .map(|m| read_maybe_bzip2(&m.cil_path()))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut out = Vec::with_capacity(modules.len());
        for h in handles {
            let texts = h
                .join()
                .map_err(|_| StoreError::Internal("a module reader thread panicked".into()))?;
            for r in texts {
                out.push(r?);
            }
        }
        Ok(out)
    })
}

/// libsemanage 3.4's `modules_checksum` content, computed as the texts pass: `sha256:` and
/// the hex digest of the epoch (1), the module count and each module's CIL prefixed by its
/// length (all lengths 8-byte little-endian), then a NUL — 72 bytes.
pub struct ModulesChecksum {
    hash: Sha256,
    expected: usize,
    seen: usize,
}

impl ModulesChecksum {
    /// A checksum over `count` modules (the count is hashed before any text).
    pub fn new(count: usize) -> ModulesChecksum {
        let mut hash = Sha256::new();
        hash.update(1u64.to_le_bytes());
        hash.update((count as u64).to_le_bytes());
        ModulesChecksum {
            hash,
            expected: count,
            seen: 0,
        }
    }

    /// Adds the next module's CIL, in build order.
    pub fn add(&mut self, cil: &[u8]) {
        self.hash.update((cil.len() as u64).to_le_bytes());
        self.hash.update(cil);
        self.seen += 1;
    }

    /// Whether exactly the counted number of modules was added: otherwise the digest
    /// would not be libsemanage's.
    pub fn is_complete(&self) -> bool {
        self.seen == self.expected
    }

    /// The file's content (check [`ModulesChecksum::is_complete`] first).
    pub fn finish(self) -> Vec<u8> {
        let digest = self.hash.finalize();
        let mut out = b"sha256:".to_vec();
        for b in digest.iter() {
            out.extend_from_slice(format!("{b:02x}").as_bytes());
        }
        out.push(0);
        out
    }
}

/// [`ModulesChecksum`] over texts already in memory.
pub fn modules_checksum(cils: &[Vec<u8>]) -> Vec<u8> {
    let mut sum = ModulesChecksum::new(cils.len());
    for c in cils {
        sum.add(c);
    }
    sum.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_follow_libsemanage_rules() {
        assert!(valid_module_name("base"));
        assert!(valid_module_name("a.b-c_d"));
        assert!(!valid_module_name("1abc"));
        assert!(!valid_module_name("a..b"));
        assert!(!valid_module_name("a."));
    }

    #[test]
    fn bzip2_modules_are_decompressed_and_damage_is_an_error() {
        let dir = std::env::temp_dir().join(format!("arbiter-store-bz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = b"(allow a b (c (d)))\n".repeat(100);
        let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
        std::io::Write::write_all(&mut enc, &text).unwrap();
        let bz = enc.finish().unwrap();
        let f = dir.join("cil");
        std::fs::write(&f, &bz).unwrap();
        assert_eq!(read_maybe_bzip2(&f).unwrap(), text);
        std::fs::write(&f, &text).unwrap();
        assert_eq!(
            read_maybe_bzip2(&f).unwrap(),
            text,
            "plain CIL is read as is"
        );
        std::fs::write(&f, &bz[..bz.len() / 2]).unwrap();
        let e = read_maybe_bzip2(&f).unwrap_err().to_string();
        assert!(e.contains("damaged bzip2"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn priorities_are_one_to_999() {
        assert_eq!(parse_priority("100"), Some(100));
        assert_eq!(parse_priority("0"), None);
        assert_eq!(parse_priority("1000"), None);
        assert_eq!(parse_priority("x1"), None);
    }
}
