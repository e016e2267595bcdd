//! Command lines for the setools-style commands (`info`, `search`, `diff`), whose option
//! parsers take strings, with policy paths that need not be UTF-8.
//!
//! A Linux path is bytes. Each argument that is not UTF-8 is handed to the string parser as
//! a placeholder; the placeholder is turned back into the original bytes where the parser
//! returns it as a policy path, and an argument that is not UTF-8 anywhere else (a type
//! name, a pattern) is an error naming its position.

use std::ffi::{OsStr, OsString};

/// Arguments as strings, with the non-UTF-8 ones standing in as placeholders.
pub struct Args {
    /// The arguments, placeholders included.
    pub strings: Vec<String>,
    originals: Vec<OsString>,
}

/// What a placeholder looks like: a noncharacter no option or name starts with.
const MARK: &str = "\u{FFFE}arbiter-argument-";

impl Args {
    /// Splits the command line into strings and placeholders.
    pub fn new(args: Vec<OsString>) -> Args {
        let mut originals = Vec::new();
        let strings = args
            .into_iter()
            .map(|a| match a.into_string() {
                Ok(s) => s,
                Err(a) => {
                    originals.push(a);
                    format!("{MARK}{}", originals.len() - 1)
                }
            })
            .collect();
        Args { strings, originals }
    }

    /// The path an argument returned by the parser as a policy path stands for.
    pub fn path<'a>(&'a self, s: &'a str) -> &'a OsStr {
        s.strip_prefix(MARK)
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|n| self.originals.get(n))
            .map_or(OsStr::new(s), OsString::as_os_str)
    }

    /// An error when a non-UTF-8 argument is used other than as one of `paths` (the
    /// policy paths the parser found).
    pub fn check_only_paths<'a>(
        &self,
        paths: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), crate::out::CliError> {
        let used = paths.into_iter().filter(|p| p.starts_with(MARK)).count();
        if used == self.originals.len() {
            return Ok(());
        }
        let first = self.strings.iter().position(|s| s.starts_with(MARK));
        Err(crate::out::CliError::NotUtf8Argument {
            position: first.map_or(0, |i| i + 1),
            shown: self.originals[0].to_string_lossy().into_owned(),
        })
    }

    /// A name to show for a policy path (invalid UTF-8 replaced), as setools prints it.
    pub fn display(&self, s: &str) -> String {
        self.path(s).to_string_lossy().into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn non_utf8_policy_path_round_trips() {
        let bad = OsStr::from_bytes(b"/tmp/p\xff.33").to_os_string();
        let a = Args::new(vec!["-A".into(), bad.clone()]);
        assert_eq!(a.strings[0], "-A");
        assert_eq!(a.path(&a.strings[1]), bad.as_os_str());
        assert!(a.check_only_paths([a.strings[1].as_str()]).is_ok());
    }

    #[test]
    fn non_utf8_argument_elsewhere_is_refused_with_its_position() {
        let bad = OsStr::from_bytes(b"t\xff").to_os_string();
        let a = Args::new(vec!["-s".into(), bad, "policy".into()]);
        let e = a.check_only_paths(["policy"]).unwrap_err();
        assert!(
            matches!(e, crate::out::CliError::NotUtf8Argument { position: 2, .. }),
            "{e}"
        );
        assert!(e.to_string().starts_with("argument 2 "), "{e}");
    }
}
