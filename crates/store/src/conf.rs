//! `semanage.conf` as libsemanage 3.4 reads it (`conf-scan.l`, `conf-parse.y`): every key,
//! its default, and the `[load_policy]`/`[setfiles]`/`[sefcontext_compile]`/`[verify …]`
//! blocks. libsemanage rejects a file it cannot parse; so do we, naming file:line.

use std::path::{Path, PathBuf};

use arbiter_cil::Target;
use arbiter_policy::HandleUnknown;

use crate::error::StoreError;

/// An external program block (`[setfiles]` … `[end]`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExternalProg {
    pub path: String,
    pub args: Option<String>,
}

/// The settings of one `semanage.conf`, defaults as in libsemanage 3.4's
/// `semanage_conf_init`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SemanageConf {
    /// `module-store`: only `direct` is supported (a socket path or host names a policy
    /// server, which libsemanage 3.4 itself no longer implements).
    pub module_store: String,
    pub store_root: String,
    pub compiler_directory: String,
    pub ignore_module_cache: bool,
    /// `policy-version`: the binary's format version (15..=33 with libsepol 3.4).
    pub policy_version: u32,
    pub target_platform: Target,
    /// `expand-check`: non-zero checks neverallow rules (secilc without `-N`).
    pub expand_check: i32,
    pub file_mode: u32,
    pub save_previous: bool,
    pub save_linked: bool,
    pub disable_genhomedircon: bool,
    pub usepasswd: bool,
    /// `ignoredirs`: `;`-separated home directories genhomedircon skips.
    pub ignoredirs: Option<String>,
    pub handle_unknown: Option<HandleUnknown>,
    pub bzip_blocksize: i32,
    pub bzip_small: bool,
    pub remove_hll: bool,
    pub optimize_policy: bool,
    pub load_policy: Option<ExternalProg>,
    pub setfiles: Option<ExternalProg>,
    pub sefcontext_compile: Option<ExternalProg>,
    pub verify_module: Vec<ExternalProg>,
    pub verify_linked: Vec<ExternalProg>,
    pub verify_kernel: Vec<ExternalProg>,
}

/// libsepol 3.4's `sepol_policy_kern_vers_max()`.
pub const POLICY_VERSION_MAX: u32 = 33;
/// libsepol 3.4's `sepol_policy_kern_vers_min()`.
pub const POLICY_VERSION_MIN: u32 = 15;

fn sbin(name: &str) -> String {
    let s = format!("/sbin/{name}");
    if Path::new(&s).exists() {
        s
    } else {
        format!("/usr/sbin/{name}")
    }
}

impl Default for SemanageConf {
    fn default() -> Self {
        SemanageConf {
            module_store: "direct".into(),
            store_root: "/var/lib/selinux".into(),
            compiler_directory: "/usr/libexec/selinux/hll".into(),
            ignore_module_cache: false,
            policy_version: POLICY_VERSION_MAX,
            target_platform: Target::Selinux,
            expand_check: 1,
            file_mode: 0o644,
            save_previous: false,
            save_linked: false,
            disable_genhomedircon: false,
            usepasswd: true,
            ignoredirs: None,
            handle_unknown: None,
            bzip_blocksize: 9,
            bzip_small: false,
            remove_hll: false,
            optimize_policy: false,
            load_policy: Some(ExternalProg {
                path: sbin("load_policy"),
                args: None,
            }),
            setfiles: Some(ExternalProg {
                path: sbin("setfiles"),
                args: Some("-q -c $@ $<".into()),
            }),
            sefcontext_compile: Some(ExternalProg {
                path: sbin("sefcontext_compile"),
                args: Some("$@".into()),
            }),
            verify_module: Vec::new(),
            verify_linked: Vec::new(),
            verify_kernel: Vec::new(),
        }
    }
}

/// Where libsemanage looks for the file (`semanage_conf_path`): under the root first, else
/// the host's `/etc/selinux/semanage.conf`.
pub fn conf_path(root: &Path) -> PathBuf {
    let in_root = root.join("etc/selinux/semanage.conf");
    if in_root.exists() {
        in_root
    } else {
        PathBuf::from("/etc/selinux/semanage.conf")
    }
}

impl SemanageConf {
    /// Reads `path`; a missing file gives the defaults, as in libsemanage.
    pub fn load(path: &Path) -> Result<SemanageConf, StoreError> {
        match std::fs::read(path) {
            Ok(bytes) => Self::parse(&String::from_utf8_lossy(&bytes), path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(SemanageConf::default()),
            Err(e) => Err(StoreError::io(path, e)),
        }
    }

    /// Parses the text of a `semanage.conf`; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<SemanageConf, StoreError> {
        let mut c = SemanageConf::default();
        let mut block: Option<(String, ExternalProg, usize)> = None;
        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            let err = |msg: String| StoreError::Conf {
                path: path.to_path_buf(),
                line: line_no,
                msg,
            };
            let line = match raw.find('#') {
                Some(p) => &raw[..p],
                None => raw,
            };
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            if line.starts_with('[') {
                match line {
                    "[end]" => {
                        let Some((name, prog, start)) = block.take() else {
                            return Err(err("[end] without a block".into()));
                        };
                        if prog.path.is_empty() {
                            return Err(StoreError::Conf {
                                path: path.to_path_buf(),
                                line: start,
                                msg: format!("{name} block without a path"),
                            });
                        }
                        match name.as_str() {
                            "[load_policy]" => c.load_policy = Some(prog),
                            "[setfiles]" => c.setfiles = Some(prog),
                            "[sefcontext_compile]" => c.sefcontext_compile = Some(prog),
                            "[verify module]" => c.verify_module.push(prog),
                            "[verify linked]" => c.verify_linked.push(prog),
                            _ => c.verify_kernel.push(prog),
                        }
                    }
                    "[load_policy]"
                    | "[setfiles]"
                    | "[sefcontext_compile]"
                    | "[verify module]"
                    | "[verify linked]"
                    | "[verify kernel]" => {
                        if block.is_some() {
                            return Err(err(format!("{line} inside another block")));
                        }
                        block = Some((line.to_string(), ExternalProg::default(), line_no));
                    }
                    _ => return Err(err(format!("unknown block {line}"))),
                }
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                return Err(err(format!("expected `key = value`, found `{line}`")));
            };
            let key = key.trim();
            let value = unquote(value.trim());
            if let Some((_, prog, _)) = block.as_mut() {
                match key {
                    "path" => prog.path = value.to_string(),
                    "args" => prog.args = Some(value.to_string()),
                    _ => return Err(err(format!("unknown key `{key}` in a program block"))),
                }
                continue;
            }
            let boolean = |what: &str| -> Result<bool, StoreError> {
                if value.eq_ignore_ascii_case("true") {
                    Ok(true)
                } else if value.eq_ignore_ascii_case("false") {
                    Ok(false)
                } else {
                    Err(err(format!("{what} can only be 'true' or 'false'")))
                }
            };
            match key {
                "module-store" => c.module_store = value.to_string(),
                "store-root" => c.store_root = value.to_string(),
                "compiler-directory" => c.compiler_directory = value.to_string(),
                "ignore-module-cache" => c.ignore_module_cache = boolean("ignore-module-cache")?,
                "policy-version" => {
                    let v = atoi(value);
                    if v < POLICY_VERSION_MIN as i64 || v > POLICY_VERSION_MAX as i64 {
                        return Err(err(format!(
                            "policy-version {value} is not between {POLICY_VERSION_MIN} and {POLICY_VERSION_MAX}"
                        )));
                    }
                    c.policy_version = v as u32;
                }
                "target-platform" => {
                    c.target_platform = if value.eq_ignore_ascii_case("selinux") {
                        Target::Selinux
                    } else if value.eq_ignore_ascii_case("xen") {
                        Target::Xen
                    } else {
                        return Err(err("target_platform can only be 'selinux' or 'xen'".into()));
                    }
                }
                "expand-check" => c.expand_check = atoi(value) as i32,
                "file-mode" => {
                    c.file_mode = u32::from_str_radix(octal_prefix(value), 8).unwrap_or(0)
                }
                "save-previous" => c.save_previous = boolean("save-previous")?,
                "save-linked" => c.save_linked = boolean("save-linked")?,
                "disable-genhomedircon" => {
                    c.disable_genhomedircon = boolean("disable-genhomedircon")?
                }
                "usepasswd" => c.usepasswd = boolean("usepasswd")?,
                "ignoredirs" => c.ignoredirs = Some(value.to_string()),
                "handle-unknown" => {
                    c.handle_unknown = Some(match value.to_ascii_lowercase().as_str() {
                        "deny" => HandleUnknown::Deny,
                        "reject" => HandleUnknown::Reject,
                        "allow" => HandleUnknown::Allow,
                        _ => {
                            return Err(err(
                                "handle-unknown can only be 'deny', 'reject' or 'allow'".into(),
                            ))
                        }
                    })
                }
                "bzip-blocksize" => {
                    let b = atoi(value);
                    if b > 9 {
                        return Err(err("bzip-blocksize can only be in the range 0-9".into()));
                    }
                    c.bzip_blocksize = b as i32;
                }
                "bzip-small" => c.bzip_small = boolean("bzip-small")?,
                "remove-hll" => c.remove_hll = boolean("remove-hll")?,
                "optimize-policy" => c.optimize_policy = boolean("optimize-policy")?,
                _ => {
                    return Err(err(format!(
                        "unknown key `{key}` (libsemanage 3.4 has no such setting)"
                    )))
                }
            }
        }
        if let Some((name, _, start)) = block {
            return Err(StoreError::Conf {
                path: path.to_path_buf(),
                line: start,
                msg: format!("{name} block has no [end]"),
            });
        }
        if c.module_store != "direct" {
            return Err(StoreError::Unsupported(format!(
                "module-store = {} in {} (only `direct` stores can be built)",
                c.module_store,
                path.display()
            )));
        }
        Ok(c)
    }
}

/// A value in double quotes loses them, as the scanner's `my_qstrdup` does.
fn unquote(v: &str) -> &str {
    if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
        &v[1..v.len() - 1]
    } else {
        v
    }
}

/// C's `atoi`: leading sign and digits, anything after ignored, 0 if none.
fn atoi(s: &str) -> i64 {
    let s = s.trim_start();
    let (neg, digits) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    let v = digits[..end].parse::<i64>().unwrap_or(0);
    if neg {
        -v
    } else {
        v
    }
}

/// The octal digits `strtoul(…, 8)` would consume.
fn octal_prefix(s: &str) -> &str {
    let end = s
        .find(|c: char| !('0'..='7').contains(&c))
        .unwrap_or(s.len());
    if end == 0 {
        "0"
    } else {
        &s[..end]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debian_file_sets_expand_check_off_and_keeps_defaults() {
        let c = SemanageConf::parse(
            "# comment\nmodule-store = direct\n\nexpand-check=0\n#policy-version = 19\n",
            Path::new("semanage.conf"),
        )
        .unwrap();
        assert_eq!(c.expand_check, 0);
        assert_eq!(c.policy_version, 33);
        assert_eq!(c.store_root, "/var/lib/selinux");
    }

    #[test]
    fn bad_boolean_names_file_and_line() {
        let e = SemanageConf::parse(
            "usepasswd = true\noptimize-policy = maybe\n",
            Path::new("x.conf"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("x.conf:2:"), "{e}");
    }

    #[test]
    fn blocks_set_external_programs() {
        let c = SemanageConf::parse(
            "[sefcontext_compile]\npath = /bin/true\nargs = \"$@\"\n[end]\n",
            Path::new("c"),
        )
        .unwrap();
        assert_eq!(c.sefcontext_compile.unwrap().path, "/bin/true");
    }

    #[test]
    fn version_out_of_range_is_refused() {
        assert!(SemanageConf::parse("policy-version = 34\n", Path::new("c")).is_err());
        assert_eq!(
            SemanageConf::parse("policy-version = 31\n", Path::new("c"))
                .unwrap()
                .policy_version,
            31
        );
    }
}
