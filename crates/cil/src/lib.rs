//! The CIL compiler: CIL source text to an [`arbiter_policy::Policy`], plus the text
//! outputs secilc writes beside it (`file_contexts`, `seusers`, `users_extra`).
//!
//! SCAFFOLD: this file fixes the public API that the build command and the module-store
//! builder are written against; the compiler itself is being written (issue 15).

#![forbid(unsafe_code)]

use arbiter_policy::{HandleUnknown, Policy};

/// The number of avtab slots secilc 3.4 allocates (`MAX_AVTAB_SIZE` rules give 2^20 slots),
/// whatever the policy's size: the written order of the avtab depends on it.
pub const CIL_AVTAB_SLOTS: u32 = 1 << 20;

/// One input file: the name shown in messages (secilc shows the path it was given;
/// `semodule` the module's store path) and its bytes.
#[derive(Clone, Debug)]
pub struct Source {
    pub name: String,
    pub text: Vec<u8>,
}

/// Which kind of policy to build (`secilc -t`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Target {
    #[default]
    Selinux,
    Xen,
}

/// secilc's options, one field each (`secilc --help`).
#[derive(Clone, Debug)]
pub struct Options {
    /// `-t`
    pub target: Target,
    /// `-M`: force MLS on or off over the policy's `(mls …)` statement.
    pub mls: Option<bool>,
    /// `-c`: the format version to write (15..=33); part of the options because it changes
    /// what the compiler keeps.
    pub policy_version: u32,
    /// `-U`: overrides `handleunknown`.
    pub handle_unknown: Option<HandleUnknown>,
    /// `-D`
    pub disable_dontaudit: bool,
    /// `-P`
    pub preserve_tunables: bool,
    /// `-Q`
    pub qualified_names: bool,
    /// `-m`
    pub multiple_decls: bool,
    /// `-N`: skip neverallow and bounds checks.
    pub disable_neverallow: bool,
    /// `-G`
    pub expand_generated: bool,
    /// `-X`
    pub expand_size: u32,
    /// `-O`
    pub optimize: bool,
    /// `-v` count (0 = errors only).
    pub verbose: u8,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            target: Target::Selinux,
            mls: None,
            policy_version: 33,
            handle_unknown: None,
            disable_dontaudit: false,
            preserve_tunables: false,
            qualified_names: false,
            multiple_decls: false,
            disable_neverallow: false,
            expand_generated: false,
            expand_size: 1,
            optimize: false,
            verbose: 0,
        }
    }
}

/// What a successful compilation produces.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The policy, its lists in libsepol 3.4's order (write it with the writer's libsepol
    /// layout and [`CIL_AVTAB_SLOTS`] to get secilc's bytes).
    pub policy: Policy,
    /// `secilc -f`'s text.
    pub file_contexts: Vec<u8>,
    /// libsepol's `cil_selinuxusers_to_string` text (semodule's `seusers`).
    pub seusers: Vec<u8>,
    /// libsepol's `cil_userprefixes_to_string` text (semodule's `users_extra`).
    pub users_extra: Vec<u8>,
    /// Messages secilc prints on stderr for a successful build at this verbosity.
    pub warnings: Vec<String>,
}

/// Why a compilation failed: the messages secilc would print and its exit status.
#[derive(Debug, thiserror::Error)]
#[error("{}", messages.join("\n"))]
pub struct CilError {
    /// secilc's stderr lines, each naming file:line where secilc does.
    pub messages: Vec<String>,
    /// secilc's exit status for this failure (255 most errors, 254 unresolved names).
    pub status: u8,
}

/// Compiles `sources` (in command-line order) as secilc 3.4 does.
pub fn compile(sources: &[Source], opts: &Options) -> Result<Compiled, CilError> {
    let _ = (sources, opts);
    Err(CilError {
        messages: vec!["the CIL compiler is not built yet".into()],
        status: 255,
    })
}
