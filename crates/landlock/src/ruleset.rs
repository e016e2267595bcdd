//! Rulesets as `landlock_create_ruleset` and `landlock_add_rule` build them, with the same
//! validation and the same errno for each rejected input.

use crate::access::{fs, net, scope, AccessFs, AccessNet, Scopes};
use crate::errno::Errno;
use crate::object::ObjectId;
use std::collections::BTreeMap;

/// The handled masks of one ruleset (one future layer).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Handled {
    /// Handled filesystem rights.
    pub fs: AccessFs,
    /// Handled network rights.
    pub net: AccessNet,
    /// Scopes.
    pub scope: Scopes,
}

/// Why `landlock_create_ruleset` or `landlock_add_rule` would fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RulesetError {
    /// A handled mask has a bit no ABI 7 right uses (EINVAL).
    #[error("EINVAL: unknown bit in handled {what} mask {mask:#x}")]
    UnknownHandledBit {
        /// `fs`, `net` or `scoped`.
        what: &'static str,
        /// The offending mask.
        mask: u64,
    },
    /// Nothing is handled (ENOMSG).
    #[error("ENOMSG: the ruleset handles nothing")]
    Empty,
    /// A rule grants nothing (ENOMSG).
    #[error("ENOMSG: the rule grants no right")]
    EmptyRule,
    /// A rule grants a right the ruleset does not handle (EINVAL).
    #[error("EINVAL: rule rights {rights:#x} are not all handled (handled {handled:#x})")]
    NotHandled {
        /// The rule's rights.
        rights: u64,
        /// The ruleset's handled mask.
        handled: u64,
    },
    /// A rule on a non-directory grants a directory-only right (EINVAL).
    #[error("EINVAL: rights {rights:#x} include directory-only rights but the rule is on a non-directory")]
    DirectoryRightOnFile {
        /// The rule's rights.
        rights: u64,
    },
    /// A port above 65535 (EINVAL).
    #[error("EINVAL: port {0} is above 65535")]
    PortTooLarge(u64),
}

impl RulesetError {
    /// The errno the kernel returns for this rejection.
    pub fn errno(&self) -> Errno {
        match self {
            RulesetError::Empty | RulesetError::EmptyRule => Errno::ENOMSG,
            _ => Errno::EINVAL,
        }
    }
}

/// A ruleset: handled masks, path-beneath rules keyed by object and port rules. Rules for the
/// same key are ORed, as `insert_rule` does at level 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ruleset {
    handled: Handled,
    fs_rules: BTreeMap<ObjectId, AccessFs>,
    net_rules: BTreeMap<u16, AccessNet>,
}

impl Ruleset {
    /// `landlock_create_ruleset`: checks the masks as the kernel does (unknown bits → EINVAL in
    /// the order fs, net, scoped; all zero → ENOMSG).
    pub fn new(handled_fs: u64, handled_net: u64, scoped: u64) -> Result<Self, RulesetError> {
        if handled_fs & !u64::from(fs::ALL) != 0 {
            return Err(RulesetError::UnknownHandledBit {
                what: "fs",
                mask: handled_fs,
            });
        }
        if handled_net & !u64::from(net::ALL) != 0 {
            return Err(RulesetError::UnknownHandledBit {
                what: "net",
                mask: handled_net,
            });
        }
        if scoped & !u64::from(scope::ALL) != 0 {
            return Err(RulesetError::UnknownHandledBit {
                what: "scoped",
                mask: scoped,
            });
        }
        if handled_fs == 0 && handled_net == 0 && scoped == 0 {
            return Err(RulesetError::Empty);
        }
        Ok(Ruleset {
            handled: Handled {
                fs: handled_fs as AccessFs,
                net: handled_net as AccessNet,
                scope: scoped as Scopes,
            },
            fs_rules: BTreeMap::new(),
            net_rules: BTreeMap::new(),
        })
    }

    /// The handled masks as given (without the REFER upgrade, which happens at merge).
    pub fn handled(&self) -> Handled {
        self.handled
    }

    /// `landlock_add_rule(LANDLOCK_RULE_PATH_BENEATH)` for an inode of the given kind.
    pub fn add_path_beneath(
        &mut self,
        object: ObjectId,
        is_dir: bool,
        allowed: u64,
    ) -> Result<(), RulesetError> {
        if allowed == 0 {
            return Err(RulesetError::EmptyRule);
        }
        let handled = u64::from(self.handled.fs);
        if allowed | handled != handled {
            return Err(RulesetError::NotHandled {
                rights: allowed,
                handled,
            });
        }
        if !is_dir && allowed & !u64::from(fs::FILE) != 0 {
            return Err(RulesetError::DirectoryRightOnFile { rights: allowed });
        }
        *self.fs_rules.entry(object).or_insert(0) |= allowed as AccessFs;
        Ok(())
    }

    /// `landlock_add_rule(LANDLOCK_RULE_NET_PORT)`.
    pub fn add_net_port(&mut self, port: u64, allowed: u64) -> Result<(), RulesetError> {
        if allowed == 0 {
            return Err(RulesetError::EmptyRule);
        }
        let handled = u64::from(self.handled.net);
        if allowed | handled != handled {
            return Err(RulesetError::NotHandled {
                rights: allowed,
                handled,
            });
        }
        let port = u16::try_from(port).map_err(|_| RulesetError::PortTooLarge(port))?;
        *self.net_rules.entry(port).or_insert(0) |= allowed as AccessNet;
        Ok(())
    }

    /// Path-beneath rules, by object.
    pub fn fs_rules(&self) -> impl ExactSizeIterator<Item = (ObjectId, AccessFs)> + '_ {
        self.fs_rules.iter().map(|(k, v)| (*k, *v))
    }

    /// Port rules, by port.
    pub fn net_rules(&self) -> impl ExactSizeIterator<Item = (u16, AccessNet)> + '_ {
        self.net_rules.iter().map(|(k, v)| (*k, *v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_rejects_unknown_bits_then_empty_masks() {
        assert_eq!(
            Ruleset::new(1 << 16, 0, 0).unwrap_err().errno(),
            Errno::EINVAL
        );
        assert_eq!(Ruleset::new(0, 4, 0).unwrap_err().errno(), Errno::EINVAL);
        assert_eq!(Ruleset::new(0, 0, 4).unwrap_err().errno(), Errno::EINVAL);
        assert_eq!(Ruleset::new(0, 0, 0).unwrap_err().errno(), Errno::ENOMSG);
        assert!(Ruleset::new(0, 0, 1).is_ok());
    }

    #[test]
    fn add_rule_checks_empty_then_handled_then_file_rights() {
        let mut r = Ruleset::new(u64::from(fs::READ_DIR | fs::READ_FILE), 1, 0).unwrap();
        let o = ObjectId(0);
        assert_eq!(
            r.add_path_beneath(o, true, 0).unwrap_err().errno(),
            Errno::ENOMSG
        );
        // REFER is not handled unless listed: the raw handled mask is checked.
        assert_eq!(
            r.add_path_beneath(o, true, u64::from(fs::REFER))
                .unwrap_err(),
            RulesetError::NotHandled {
                rights: u64::from(fs::REFER),
                handled: u64::from(fs::READ_DIR | fs::READ_FILE)
            }
        );
        assert_eq!(
            r.add_path_beneath(o, false, u64::from(fs::READ_DIR))
                .unwrap_err()
                .errno(),
            Errno::EINVAL
        );
        r.add_path_beneath(o, true, u64::from(fs::READ_DIR))
            .unwrap();
        r.add_path_beneath(o, true, u64::from(fs::READ_FILE))
            .unwrap();
        assert_eq!(
            r.fs_rules().collect::<Vec<_>>(),
            vec![(o, fs::READ_DIR | fs::READ_FILE)]
        );
        assert_eq!(r.add_net_port(65536, 1).unwrap_err().errno(), Errno::EINVAL);
        assert_eq!(r.add_net_port(80, 2).unwrap_err().errno(), Errno::EINVAL);
        r.add_net_port(80, 1).unwrap();
    }
}
