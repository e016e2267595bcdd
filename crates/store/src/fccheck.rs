//! `setfiles -q -c POLICY file_contexts` in process, for a *passing* verdict only.
//!
//! semodule checks the new file contexts against the new policy with the external
//! `setfiles -c` (libselinux 3.4's file label backend, `selabel_open` with validation:
//! `label_file.c`'s `init`, `process_line` and `nodups_specs`; `setfiles.c`'s `canoncon`
//! with `sepol_check_context`). Run after the policy is written, it was the largest
//! single-threaded step of `build --store` after the compiler. This module decides in
//! process whether that check would pass, on a subset of inputs it understands exactly,
//! and otherwise says "not sure" — then the real `setfiles -c` is run, which gives the
//! verdict, the messages and the status. So a pass here is always a pass of setfiles; a
//! failure or anything unusual is always setfiles' own.
//!
//! What setfiles checks, for each of `file_contexts`, then `.homedirs` and `.local` beside
//! it (a missing one is skipped), line by line (`read_spec_entries`, `process_line`):
//! skip leading white space, then empty lines and `#` comments; two or three fields
//! (regex, optional file type, context); the regex, anchored as `^…$`, must compile with
//! PCRE2 (`PCRE2_DOTALL`, no compile context); the type must be `-b -c -d -p -l -s --`;
//! a context other than `<<none>>` must pass `sepol_check_context` on the policy file.
//! After `file_contexts` (only that one), no two of its specifications may have the same
//! regex text with the same file type, or either without one (`nodups_specs`).
//!
//! The subset accepted here, everything else is "not sure":
//! - every byte of a line is printable ASCII, a space or a tab (no NUL, CR, other control
//!   characters or non-ASCII, where `isspace`/`strlen`/`isascii` details would matter);
//! - a non-comment line has exactly two or three fields (setfiles ignores a fourth, a
//!   line of one is an error: both are left to it);
//! - the regex compiles with the **same system library** setfiles uses (libpcre2-8,
//!   loaded with `dlopen` by its soname, the way libselinux 3.4 links it), same pattern
//!   text, same options; when the library cannot be loaded, nothing is decided here;
//! - the context is accepted by [`arbiter_decide::parse_context`] on the compiled policy
//!   (the kernel's `string_to_context_struct` and `policydb_context_isvalid`; where it
//!   differs from libsepol 3.4's `context_from_string` it is the stricter of the two);
//! - no duplicate in `file_contexts` by `nodups_specs`' rule.
//!
//! The caller uses this only when `[setfiles]` is semanage.conf's default program with its
//! default arguments and that program exists (otherwise running it is the verdict).
#![allow(unsafe_code)]

use std::collections::{HashMap, HashSet};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

use arbiter_decide::{parse_context, Names};
use arbiter_policy::Policy;

/// Why the in-process check did not pass (the real `setfiles -c` decides then).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsure(pub String);

/// The check's inputs: the compiled policy (the one written to the policy file) and the
/// three texts setfiles would read.
pub struct FcCheck<'a> {
    pub policy: &'a Policy,
    pub names: &'a Names,
}

impl FcCheck<'_> {
    /// Checks one file's lines; with `nodups`, also `nodups_specs` over that file.
    pub fn file(&self, what: &str, text: &[u8], nodups: bool) -> Result<(), Unsure> {
        let pcre = Pcre2::get().ok_or_else(|| Unsure("libpcre2-8.so.0 not loaded".into()))?;
        let mut seen: HashMap<&[u8], Vec<u8>> = HashMap::new();
        let mut pattern = Vec::with_capacity(256);
        let mut ok_contexts: HashSet<&[u8]> = HashSet::new();
        for (i, line) in text.split(|&b| b == b'\n').enumerate() {
            let lineno = i + 1;
            let unsure = |why: &str| Unsure(format!("{what}: line {lineno}: {why}"));
            if let Some(&b) = line
                .iter()
                .find(|&&b| !(b == b'\t' || (0x20..0x7f).contains(&b)))
            {
                return Err(unsure(&format!("byte {b:#04x}")));
            }
            let mut fields = line
                .split(|&b| b == b' ' || b == b'\t')
                .filter(|f| !f.is_empty());
            let Some(regex) = fields.next() else {
                continue;
            };
            if regex[0] == b'#' {
                continue;
            }
            let (mode, context) = match (fields.next(), fields.next(), fields.next()) {
                (Some(ctx), None, None) => (0u8, ctx),
                (Some(ty), Some(ctx), None) => {
                    (file_type(ty).ok_or_else(|| unsure("file type"))?, ctx)
                }
                _ => return Err(unsure("field count")),
            };
            pattern.clear();
            pattern.push(b'^');
            pattern.extend_from_slice(regex);
            pattern.extend_from_slice(b"$\0");
            if !pcre.compiles(&pattern) {
                return Err(unsure("regex"));
            }
            if context != b"<<none>>" && !ok_contexts.contains(context) {
                let s = std::str::from_utf8(context).map_err(|_| unsure("context"))?;
                parse_context(self.policy, self.names, s).map_err(|e| unsure(&e.to_string()))?;
                ok_contexts.insert(context);
            }
            if nodups {
                let modes = seen.entry(regex).or_default();
                if modes.iter().any(|&m| m == 0 || mode == 0 || m == mode) {
                    return Err(unsure("duplicate specification"));
                }
                modes.push(mode);
            }
        }
        Ok(())
    }
}

/// `string_to_mode`'s accepted spellings, as small non-zero codes (0 is "any type").
fn file_type(t: &[u8]) -> Option<u8> {
    Some(match t {
        b"-b" => 1,
        b"-c" => 2,
        b"-d" => 3,
        b"-p" => 4,
        b"-l" => 5,
        b"-s" => 6,
        b"--" => 7,
        _ => return None,
    })
}

type CompileFn =
    unsafe extern "C" fn(*const u8, usize, u32, *mut c_int, *mut usize, *mut c_void) -> *mut c_void;
type FreeFn = unsafe extern "C" fn(*mut c_void);
type MatchDataFn = unsafe extern "C" fn(*const c_void, *mut c_void) -> *mut c_void;

/// The four libpcre2-8 functions libselinux 3.4's `regex_prepare_data` and
/// `regex_data_free` call.
struct Pcre2 {
    compile: CompileFn,
    code_free: FreeFn,
    match_data_create: MatchDataFn,
    match_data_free: FreeFn,
}

const PCRE2_DOTALL: u32 = 0x0000_0020;
const PCRE2_ZERO_TERMINATED: usize = usize::MAX;

extern "C" {
    fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}
const RTLD_NOW: c_int = 2;

impl Pcre2 {
    /// The library, loaded once per process (and never unloaded); `None` if it or one of
    /// its functions is missing.
    fn get() -> Option<&'static Pcre2> {
        static LIB: OnceLock<Option<Pcre2>> = OnceLock::new();
        LIB.get_or_init(Pcre2::load).as_ref()
    }

    fn load() -> Option<Pcre2> {
        // SAFETY: dlopen with a NUL-terminated soname; libpcre2-8 has no initialisers
        // with side effects on this process beyond its own data.
        let h = unsafe { dlopen(c"libpcre2-8.so.0".as_ptr(), RTLD_NOW) };
        if h.is_null() {
            return None;
        }
        let sym = |name: &CStr| {
            // SAFETY: `h` is a live handle (never closed) and `name` is NUL-terminated.
            let p = unsafe { dlsym(h, name.as_ptr()) };
            (!p.is_null()).then_some(p)
        };
        let (c, cf, md, mf) = (
            sym(c"pcre2_compile_8")?,
            sym(c"pcre2_code_free_8")?,
            sym(c"pcre2_match_data_create_from_pattern_8")?,
            sym(c"pcre2_match_data_free_8")?,
        );
        // SAFETY: these are PCRE2 10.x's documented prototypes (pcre2.h) for the symbols
        // of the same names, which the soname's ABI keeps.
        unsafe {
            Some(Pcre2 {
                compile: std::mem::transmute::<*mut c_void, CompileFn>(c),
                code_free: std::mem::transmute::<*mut c_void, FreeFn>(cf),
                match_data_create: std::mem::transmute::<*mut c_void, MatchDataFn>(md),
                match_data_free: std::mem::transmute::<*mut c_void, FreeFn>(mf),
            })
        }
    }

    /// Whether `pattern` (NUL-terminated) compiles as `regex_prepare_data` compiles it,
    /// match data included; everything allocated is freed.
    fn compiles(&self, pattern: &[u8]) -> bool {
        debug_assert_eq!(pattern.last(), Some(&0));
        let mut code: c_int = 0;
        let mut offset: usize = 0;
        // SAFETY: `pattern` is NUL-terminated (PCRE2_ZERO_TERMINATED), the out-pointers are
        // live locals, and a null compile context asks for the defaults, as libselinux does.
        let re = unsafe {
            (self.compile)(
                pattern.as_ptr(),
                PCRE2_ZERO_TERMINATED,
                PCRE2_DOTALL,
                &mut code,
                &mut offset,
                std::ptr::null_mut(),
            )
        };
        if re.is_null() {
            return false;
        }
        // SAFETY: `re` is a compiled pattern from pcre2_compile, freed exactly once below
        // after the match data made from it.
        unsafe {
            let md = (self.match_data_create)(re, std::ptr::null_mut());
            let ok = !md.is_null();
            if ok {
                (self.match_data_free)(md);
            }
            (self.code_free)(re);
            ok
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcre2_verdicts() {
        let Some(p) = Pcre2::get() else {
            eprintln!("libpcre2-8.so.0 not available: skipped");
            return;
        };
        assert!(p.compiles(b"^/usr/lib(/.*)?$\0"));
        assert!(p.compiles(b"^/a\\.b[^/]*$\0"));
        assert!(!p.compiles(b"^/a(b$\0"));
        assert!(!p.compiles(b"^/a[b$\0"));
        assert!(p.compiles(b"^/a\\$\0"), "an escaped dollar");
        assert!(!p.compiles(b"^/a{2,1}$\0"));
        assert!(!p.compiles(b"^*$\0"));
    }

    #[test]
    fn file_types() {
        for t in ["-b", "-c", "-d", "-p", "-l", "-s", "--"] {
            assert!(file_type(t.as_bytes()).is_some(), "{t}");
        }
        for t in ["-", "-x", "--d", "d", "-D"] {
            assert!(file_type(t.as_bytes()).is_none(), "{t}");
        }
    }
}
