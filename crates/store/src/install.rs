//! Writing a set of outputs so that a failure leaves every existing file as it was: each
//! output is first written completely into a staging directory beside its destination
//! (same file system), external programs (`sefcontext_compile`, `setfiles -c`) run on the
//! staged copies, and only when everything has succeeded are the staged files renamed over
//! the old ones. Each rename is atomic; a failure between two renames (which needs the file
//! system to fail mid-way) is reported and can leave the set mixed.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::error::StoreError;

/// Files staged for installation.
#[derive(Default)]
pub struct Staging {
    /// (staged path, final path)
    files: Vec<(PathBuf, PathBuf)>,
    dirs: Vec<PathBuf>,
    /// Files to delete once the staged files are in place.
    removals: Vec<PathBuf>,
    /// The flush started by [`Staging::start_sync`]: how many of `files` it covers, and
    /// the thread doing it.
    syncing: Option<(usize, std::thread::JoinHandle<Result<(), StoreError>>)>,
    committed: bool,
}

impl Staging {
    fn staging_dir(&mut self, dest: &Path) -> Result<PathBuf, StoreError> {
        let parent = dest.parent().unwrap_or(Path::new("."));
        self.dir_in(parent, "")
    }

    /// A scratch directory in `parent` for files that are never installed (copies an
    /// external program reads while the staged ones are being written beside them),
    /// removed with the staging directories.
    pub fn scratch_dir(&mut self, parent: &Path, tag: &str) -> Result<PathBuf, StoreError> {
        self.dir_in(parent, &format!(".{tag}"))
    }

    fn dir_in(&mut self, parent: &Path, suffix: &str) -> Result<PathBuf, StoreError> {
        let dir = parent.join(format!(".arbiter-build.{}{suffix}", std::process::id()));
        if !self.dirs.contains(&dir) {
            fs::create_dir_all(parent).map_err(|e| StoreError::io(parent, e))?;
            match fs::create_dir(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(StoreError::io(&dir, e)),
            }
            self.dirs.push(dir.clone());
        }
        Ok(dir)
    }

    /// Writes `bytes` to a staged copy of `dest` with permission bits `mode`; returns the
    /// staged path.
    pub fn stage(&mut self, dest: &Path, bytes: &[u8], mode: u32) -> Result<PathBuf, StoreError> {
        let dir = self.staging_dir(dest)?;
        let staged = dir.join(dest.file_name().unwrap_or_default());
        let mut f = fs::File::create(&staged).map_err(|e| StoreError::io(&staged, e))?;
        // Flushed to disk by `commit`, all files at once, before the first rename.
        f.write_all(bytes).map_err(|e| StoreError::io(&staged, e))?;
        fs::set_permissions(&staged, fs::Permissions::from_mode(mode))
            .map_err(|e| StoreError::io(&staged, e))?;
        self.files.push((staged.clone(), dest.to_path_buf()));
        Ok(staged)
    }

    /// Adds a file an external program produced in a staging directory.
    pub fn adopt(&mut self, staged: &Path, dest: &Path, mode: u32) -> Result<(), StoreError> {
        fs::set_permissions(staged, fs::Permissions::from_mode(mode))
            .map_err(|e| StoreError::io(staged, e))?;
        self.files.push((staged.to_path_buf(), dest.to_path_buf()));
        Ok(())
    }

    /// Starts flushing the files staged so far to disk on a thread of its own, so that the
    /// flush overlaps with what the caller still waits for (the external programs);
    /// [`Staging::commit`] waits for it and flushes the files staged after.
    pub fn start_sync(&mut self) -> Result<(), StoreError> {
        if self.syncing.is_some() {
            return Ok(());
        }
        let files: Vec<PathBuf> = self.files.iter().map(|(s, _)| s.clone()).collect();
        let count = files.len();
        let handle = std::thread::Builder::new()
            .name("staging-sync".into())
            .spawn(move || sync_files(&files))
            .map_err(|e| StoreError::Internal(format!("cannot start a file sync thread: {e}")))?;
        self.syncing = Some((count, handle));
        Ok(())
    }

    /// Waits for the flush [`Staging::start_sync`] started (if any) and flushes every file
    /// staged after it, so that no rename can expose a file whose data is not there yet.
    fn sync_staged(&mut self) -> Result<(), StoreError> {
        let done = match self.syncing.take() {
            Some((count, handle)) => {
                handle
                    .join()
                    .map_err(|_| StoreError::Internal("a file sync thread panicked".into()))??;
                count
            }
            None => 0,
        };
        let rest: Vec<PathBuf> = self.files[done..].iter().map(|(s, _)| s.clone()).collect();
        sync_files(&rest)
    }

    /// Deletes `path` (if it exists) when the set is committed.
    pub fn remove_on_commit(&mut self, path: &Path) {
        self.removals.push(path.to_path_buf());
    }

    /// Renames every staged file over its destination, in staging order, then performs the
    /// removals. (Renaming on several threads was tried: each rename over an existing file
    /// frees the old one's blocks, and concurrent renames only slowed each other down.)
    pub fn commit(mut self) -> Result<Vec<PathBuf>, StoreError> {
        self.sync_staged()?;
        let mut done = Vec::new();
        for (staged, dest) in &self.files {
            fs::rename(staged, dest).map_err(|e| StoreError::io(dest, e))?;
            done.push(dest.clone());
        }
        self.committed = true;
        for r in &self.removals {
            match fs::remove_file(r) {
                Ok(()) => done.push(r.clone()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(StoreError::io(r, e)),
            }
        }
        Ok(done)
    }
}

/// Flushes `files` to disk on a few threads at once: the file system can then commit them
/// together instead of one journal commit after another.
fn sync_files(files: &[PathBuf]) -> Result<(), StoreError> {
    on_threads(files, |staged| {
        fs::File::open(staged)
            .and_then(|f| f.sync_all())
            .map_err(|e| StoreError::io(staged, e))
    })
}

/// Runs `op` on every item, the items split in order among up to four threads (each
/// stops at its first failure); the error is the failure of the earliest failing chunk.
fn on_threads<T: Sync>(
    items: &[T],
    op: impl Fn(&T) -> Result<(), StoreError> + Sync,
) -> Result<(), StoreError> {
    const THREADS: usize = 4;
    let chunk = items.len().div_ceil(THREADS).max(1);
    let op = &op;
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| {
                std::thread::Builder::new()
                    .name("staging-files".into())
                    .spawn_scoped(s, move || part.iter().try_for_each(op))
                    .map_err(|e| StoreError::Internal(format!("cannot start a file thread: {e}")))
            })
            .collect();
        handles.into_iter().try_for_each(|h| {
            h?.join()
                .map_err(|_| StoreError::Internal("a file thread panicked".into()))?
        })
    })
}

impl Drop for Staging {
    fn drop(&mut self) {
        // A flush still running is waited for, so that it does not race the removals.
        if let Some((_, handle)) = self.syncing.take() {
            let _ = handle.join();
        }
        if !self.committed {
            for (staged, _) in &self.files {
                let _ = fs::remove_file(staged);
            }
        }
        for d in &self.dirs {
            // Removes leftovers of a failed external program too.
            let _ = fs::remove_dir_all(d);
        }
    }
}

/// An external program started by [`spawn_prog`], running while the caller does other
/// work; [`Running::finish`] waits for it and turns a failure into libsemanage's message.
pub struct Running {
    /// `None` once waited for.
    child: Option<Child>,
    name: String,
    first: PathBuf,
}

/// Starts an external program as libsemanage's `semanage_exec_prog` runs it: `args` with
/// `$@` replaced by `first` and `$<` by `second`, split on white space. Its output is
/// collected (and reported if it fails) rather than mixed into ours.
pub fn spawn_prog(
    prog: &crate::conf::ExternalProg,
    first: &Path,
    second: &Path,
) -> Result<Running, StoreError> {
    let args = prog.args.as_deref().unwrap_or("");
    let argv: Vec<String> = args
        .split_whitespace()
        .map(|a| {
            a.replace("$@", &first.to_string_lossy())
                .replace("$<", &second.to_string_lossy())
        })
        .collect();
    let name = Path::new(&prog.path)
        .file_name()
        .map_or(prog.path.clone(), |n| n.to_string_lossy().into_owned());
    let child = Command::new(&prog.path)
        .args(&argv)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| StoreError::External(format!("{name}: cannot run {}: {e}", prog.path)))?;
    Ok(Running {
        child: Some(child),
        name,
        first: first.to_path_buf(),
    })
}

impl Running {
    /// Waits for the program (reading its output meanwhile, so a talkative program cannot
    /// block on a full pipe) and fails unless it exited with status 0.
    pub fn finish(mut self) -> Result<(), StoreError> {
        let Some(child) = self.child.take() else {
            return Ok(());
        };
        let (name, first) = (&self.name, &self.first);
        let out = child
            .wait_with_output()
            .map_err(|e| StoreError::External(format!("{name}: cannot wait for it: {e}")))?;
        if !out.status.success() {
            return Err(StoreError::External(format!(
                "{name} returned error code {}. Compiling {}{}",
                out.status.code().unwrap_or(-1),
                first.display(),
                String::from_utf8_lossy(&out.stderr)
                    .trim_end()
                    .lines()
                    .map(|l| format!("\n{l}"))
                    .collect::<String>()
            )));
        }
        Ok(())
    }
}

impl Drop for Running {
    /// A build that fails while programs still run (an earlier one failed, a write failed)
    /// stops them and reaps them before its staging directories are removed, so none is
    /// left writing into a deleted directory or lingering as a zombie.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_staging_leaves_destination_untouched() {
        let dir = std::env::temp_dir().join(format!("arbiter-store-stage-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let dest = dir.join("f");
        fs::write(&dest, b"old").unwrap();
        {
            let mut s = Staging::default();
            s.stage(&dest, b"new", 0o600).unwrap();
        }
        assert_eq!(fs::read(&dest).unwrap(), b"old");
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            1,
            "staging directory removed"
        );
        let mut s = Staging::default();
        s.stage(&dest, b"new", 0o600).unwrap();
        s.commit().unwrap();
        assert_eq!(fs::read(&dest).unwrap(), b"new");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn files_staged_after_an_early_sync_are_installed_too() {
        let dir = std::env::temp_dir().join(format!("arbiter-store-sync-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a"), dir.join("b"));
        let mut s = Staging::default();
        s.stage(&a, b"first", 0o600).unwrap();
        s.start_sync().unwrap();
        s.stage(&b, b"second", 0o644).unwrap();
        assert!(!a.exists(), "nothing installed before commit");
        assert_eq!(s.commit().unwrap(), [a.clone(), b.clone()]);
        assert_eq!(fs::read(&a).unwrap(), b"first");
        assert_eq!(fs::read(&b).unwrap(), b"second");
        // A set dropped while its flush runs installs nothing and leaves no staging.
        let mut s = Staging::default();
        s.stage(&a, b"never", 0o600).unwrap();
        s.start_sync().unwrap();
        drop(s);
        assert_eq!(fs::read(&a).unwrap(), b"first");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 2);
        fs::remove_dir_all(&dir).unwrap();
    }
}
