//! `audit2allow -M NAME`: the module text written to `NAME.te`, compiled and packaged into
//! `NAME.pp` the way sepolgen's `ModuleCompiler` does it (no refpolicy build):
//!
//! ```text
//! /usr/bin/checkmodule [-M] -m -o NAME.mod NAME.te
//! /usr/bin/semodule_package -o NAME.pp -m NAME.mod
//! ```
//!
//! run in the output directory, `-M` when the running kernel's SELinux has MLS enabled
//! (libselinux's `is_selinux_mls_enabled`, whatever policy the denials were analysed
//! with), `NAME.mod` removed afterwards. The tools come from Debian's `checkpolicy` and
//! `semodule-utils`; when one is missing nothing is written and the error says so
//! (audit2allow would write `NAME.te` and then fail with the shell's "not found").

use crate::module::ModuleName;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use thiserror::Error;

/// The module compiler audit2allow runs.
pub const CHECKMODULE: &str = "/usr/bin/checkmodule";
/// The module packager audit2allow runs.
pub const SEMODULE_PACKAGE: &str = "/usr/bin/semodule_package";

/// Why a package could not be built.
#[derive(Debug, Error)]
pub enum PackageError {
    /// A tool is not installed.
    #[error("building a module package needs {} (Debian package {package}), which is not installed", tool.display())]
    MissingTool {
        /// The tool's path.
        tool: PathBuf,
        /// The Debian package that provides it.
        package: &'static str,
    },
    /// `NAME.te` could not be written.
    #[error("could not write output file: {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// A tool could not be started.
    #[error("could not run {}: {source}", tool.display())]
    Run {
        /// The tool's path.
        tool: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// `checkmodule` failed: audit2allow's message, with the tool's output.
    #[error("compilation failed:\n{0}")]
    Compile(String),
    /// `semodule_package` failed: audit2allow's message, with the tool's output.
    #[error("packaging failed [{0}]")]
    Package(String),
}

/// The files a build leaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Package {
    /// The module source, `NAME.te`.
    pub te: PathBuf,
    /// The module package, `NAME.pp`.
    pub pp: PathBuf,
}

/// The tools a build runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tools {
    /// The module compiler.
    pub checkmodule: PathBuf,
    /// The module packager.
    pub semodule_package: PathBuf,
}

impl Default for Tools {
    /// audit2allow's: [`CHECKMODULE`], [`SEMODULE_PACKAGE`].
    fn default() -> Tools {
        Tools {
            checkmodule: CHECKMODULE.into(),
            semodule_package: SEMODULE_PACKAGE.into(),
        }
    }
}

/// Writes `te` to `DIR/NAME.te` and builds `DIR/NAME.pp` from it with audit2allow's tools
/// (see the module documentation); `mls` adds checkmodule's `-M` ([`kernel_mls_enabled`]
/// is audit2allow's choice).
pub fn build(dir: &Path, name: &ModuleName, te: &str, mls: bool) -> Result<Package, PackageError> {
    build_with(&Tools::default(), dir, name, te, mls)
}

/// [`build`] with other tools. Checks both are installed before writing anything.
pub fn build_with(
    tools: &Tools,
    dir: &Path,
    name: &ModuleName,
    te: &str,
    mls: bool,
) -> Result<Package, PackageError> {
    for (tool, package) in [
        (&tools.checkmodule, "checkpolicy"),
        (&tools.semodule_package, "semodule-utils"),
    ] {
        if !tool.is_file() {
            return Err(PackageError::MissingTool {
                tool: tool.clone(),
                package,
            });
        }
    }
    let name = name.as_str();
    let (te_name, mod_name, pp_name) = (
        format!("{name}.te"),
        format!("{name}.mod"),
        format!("{name}.pp"),
    );
    let te_path = dir.join(&te_name);
    std::fs::write(&te_path, te).map_err(|source| PackageError::Write {
        path: te_path.clone(),
        source,
    })?;
    let mut compile: Vec<&str> = Vec::new();
    if mls {
        compile.push("-M");
    }
    compile.extend(["-m", "-o", &mod_name, &te_name]);
    let (ok, output) = run(dir, &tools.checkmodule, &compile)?;
    if !ok {
        return Err(PackageError::Compile(output));
    }
    let (ok, output) = run(
        dir,
        &tools.semodule_package,
        &["-o", &pp_name, "-m", &mod_name],
    )?;
    if !ok {
        return Err(PackageError::Package(output));
    }
    // sepolgen removes the compiled module once packaged; failing to is not an error there.
    let _ = std::fs::remove_file(dir.join(&mod_name));
    Ok(Package {
        te: te_path,
        pp: dir.join(pp_name),
    })
}

/// Runs a tool in `dir`: success, and its output as `getstatusoutput` returns it (standard
/// output then standard error here, where the shell interleaves them; one final newline
/// removed).
fn run(dir: &Path, tool: &Path, args: &[&str]) -> Result<(bool, String), PackageError> {
    let out = Command::new(tool)
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|source| PackageError::Run {
            tool: tool.to_path_buf(),
            source,
        })?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    if text.ends_with('\n') {
        text.pop();
    }
    Ok((out.status.success(), text))
}

/// libselinux's `is_selinux_mls_enabled`: the running kernel's `selinuxfs` holds `mls`
/// reading exactly `1`. False when SELinux is not mounted (a container, a non-SELinux
/// kernel).
pub fn kernel_mls_enabled() -> bool {
    let mut mounts: Vec<PathBuf> = vec!["/sys/fs/selinux".into(), "/selinux".into()];
    if let Ok(m) = std::fs::read_to_string("/proc/mounts") {
        mounts.extend(m.lines().filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, dir, fstype) = (f.next()?, f.next()?, f.next()?);
            (fstype == "selinuxfs").then(|| PathBuf::from(dir))
        }));
    }
    mounts
        .iter()
        .find_map(|d| std::fs::read(d.join("mls")).ok())
        .is_some_and(|b| b == b"1")
}

/// What audit2allow prints once the package is built.
pub fn activation_notice(name: &ModuleName) -> String {
    format!(
        "******************** IMPORTANT ***********************\nTo make this policy package active, execute:\n\nsemodule -i {}.pp\n\n",
        name.as_str()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_is_named_and_nothing_is_written() {
        let dir = std::env::temp_dir().join(format!("arbiter-pkg-missing-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let tools = Tools {
            checkmodule: dir.join("no-checkmodule"),
            ..Tools::default()
        };
        let name = ModuleName::parse("local").unwrap();
        let e = build_with(&tools, &dir, &name, "module local 1.0;\n", false).unwrap_err();
        assert!(matches!(
            e,
            PackageError::MissingTool {
                package: "checkpolicy",
                ..
            }
        ));
        assert!(e.to_string().contains("no-checkmodule"), "{e}");
        assert!(!dir.join("local.te").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn activation_notice_names_the_package() {
        let name = ModuleName::parse("my-mod").unwrap();
        assert!(activation_notice(&name).ends_with("\n\nsemodule -i my-mod.pp\n\n"));
    }
}
