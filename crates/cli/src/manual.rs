//! `arbiter manpage` and `arbiter completions`: the manual pages and shell completions,
//! generated from the same clap definition that parses the arguments, so neither can drift
//! from what the binary accepts.

use clap::CommandFactory;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::out::{CliError, Out};

#[derive(clap::Args)]
pub struct ManpageArgs {
    /// The subcommand whose page to print, as typed (`bsm print`); none: arbiter(1).
    command: Vec<String>,
    /// Write every page (arbiter.1, arbiter-info.1, arbiter-bsm-print.1, ...) into DIR and
    /// list the files written, instead of printing one page.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    out_dir: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    shell: clap_complete::Shell,
}

/// The whole command tree, built (so that every subcommand knows its full name, which the
/// pages' titles and synopses use), without clap's `help` pseudo-subcommand.
fn built_command() -> clap::Command {
    let mut cmd = crate::Cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

pub fn manpage(a: ManpageArgs, out: &mut Out) -> Result<ExitCode, CliError> {
    let root = built_command();
    if let Some(dir) = a.out_dir {
        std::fs::create_dir_all(&dir).map_err(|e| CliError::file(dir.display(), e))?;
        let mut written = Vec::new();
        write_all_pages(&root, &dir, &mut written)?;
        for f in written {
            writeln!(out, "{}", f.display())?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut cmd = &root;
    for word in &a.command {
        cmd = cmd.find_subcommand(word).ok_or_else(|| {
            let known: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
            format!(
                "manpage: `{word}` is not a subcommand of `{}` (known: {})",
                cmd.get_bin_name().unwrap_or("arbiter"),
                known.join(", ")
            )
        })?;
    }
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut page)
        .map_err(|e| format!("manpage: {e}"))?;
    out.write_all(&page)?;
    Ok(ExitCode::SUCCESS)
}

/// Writes the page of `cmd` and of every visible subcommand below it.
fn write_all_pages(
    cmd: &clap::Command,
    dir: &Path,
    written: &mut Vec<PathBuf>,
) -> Result<(), CliError> {
    let man = clap_mangen::Man::new(cmd.clone());
    let path = dir.join(man.get_filename());
    let failed = |e| CliError::file(path.display(), e);
    let mut file = std::fs::File::create(&path).map_err(failed)?;
    man.render(&mut file).map_err(failed)?;
    written.push(path);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_all_pages(sub, dir, written)?;
    }
    Ok(())
}

pub fn completions(a: CompletionsArgs, out: &mut Out) -> Result<ExitCode, CliError> {
    let mut cmd = crate::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "arbiter", &mut script);
    out.write_all(&script)?;
    Ok(ExitCode::SUCCESS)
}
