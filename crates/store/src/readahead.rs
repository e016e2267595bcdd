//! Decompressing the store's modules on every core while the compiler parses them in build
//! order. bzip2 decompression of Debian's 22.5 MB of CIL costs more CPU than parsing it, so
//! one reader thread would leave the parser waiting; several readers take the next module
//! each, and the texts are handed out strictly in build order. A window bounds how far the
//! readers may run ahead, so at most that many texts are held at once (Debian's largest
//! module, base, is 4 MB).

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::error::StoreError;
use crate::modules::{read_maybe_bzip2, Module};

type Text = Result<Vec<u8>, StoreError>;

/// Modules read ahead of the compiler: [`ReadAhead::work`] runs on each reader thread,
/// [`ReadAhead::next`] on the consumer's.
pub struct ReadAhead<'a> {
    modules: &'a [Module],
    window: usize,
    state: Mutex<State>,
    /// Signalled whenever a text is finished, taken, or the readers are told to stop.
    changed: Condvar,
}

/// Who may touch what: readers claim `claimed` (the next index to decompress) and insert
/// into `done`; only the consumer advances `taken` and removes from `done`. Everything is
/// under the one mutex, held only for bookkeeping, never while decompressing.
#[derive(Default)]
struct State {
    claimed: usize,
    taken: usize,
    done: BTreeMap<usize, Text>,
    stop: bool,
}

impl<'a> ReadAhead<'a> {
    /// A read-ahead over `modules` letting readers hold at most `window` texts (at least
    /// one) that the consumer has not taken yet.
    pub fn new(modules: &'a [Module], window: usize) -> ReadAhead<'a> {
        ReadAhead {
            modules,
            window: window.max(1),
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock; a poisoned one still has consistent state.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'g>(&self, g: MutexGuard<'g, State>) -> MutexGuard<'g, State> {
        self.changed.wait(g).unwrap_or_else(|e| e.into_inner())
    }

    /// A reader thread's loop: claim the next module within the window, decompress it,
    /// file the result; return when every module is claimed or [`ReadAhead::stop`] was
    /// called.
    pub fn work(&self) {
        loop {
            let i = {
                let mut st = self.lock();
                loop {
                    if st.stop || st.claimed >= self.modules.len() {
                        return;
                    }
                    if st.claimed < st.taken + self.window {
                        break;
                    }
                    st = self.wait(st);
                }
                st.claimed += 1;
                st.claimed - 1
            };
            // Files an error for the claimed module if decompression panics, so that the
            // consumer is never left waiting for it.
            let mut slot = Slot {
                ahead: self,
                index: i,
                text: None,
            };
            slot.text = Some(read_maybe_bzip2(&self.modules[i].cil_path()));
        }
    }

    /// The next module's text in build order (waiting for it), `None` after the last.
    pub fn next(&self) -> Option<Text> {
        let mut st = self.lock();
        if st.taken >= self.modules.len() {
            return None;
        }
        loop {
            let want = st.taken;
            if let Some(t) = st.done.remove(&want) {
                st.taken += 1;
                self.changed.notify_all();
                return Some(t);
            }
            st = self.wait(st);
        }
    }

    /// Tells the readers to finish the module in hand and claim no more.
    pub fn stop(&self) {
        self.lock().stop = true;
        self.changed.notify_all();
    }
}

/// A claimed module's result, filed when dropped: normally after decompression, or during
/// unwinding with an internal error instead.
struct Slot<'r, 'a> {
    ahead: &'r ReadAhead<'a>,
    index: usize,
    text: Option<Text>,
}

impl Drop for Slot<'_, '_> {
    fn drop(&mut self) {
        let text = self.text.take().unwrap_or_else(|| {
            Err(StoreError::Internal(
                "a module reader thread panicked".into(),
            ))
        });
        self.ahead.lock().done.insert(self.index, text);
        self.ahead.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn module(dir: PathBuf, name: &str) -> Module {
        Module {
            name: name.into(),
            priority: 100,
            lang_ext: "cil".into(),
            dir,
        }
    }

    #[test]
    fn texts_come_in_build_order_from_several_readers() {
        let dir = std::env::temp_dir().join(format!("arbiter-store-ahead-{}", std::process::id()));
        let mut modules = Vec::new();
        for i in 0..40 {
            let d = dir.join(format!("m{i}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("cil"), format!("(type t{i})\n").repeat(i + 1)).unwrap();
            modules.push(module(d, &format!("m{i}")));
        }
        let ahead = ReadAhead::new(&modules, 3);
        let got: Vec<Vec<u8>> = std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| ahead.work());
            }
            std::iter::from_fn(|| ahead.next())
                .map(|t| t.unwrap())
                .collect()
        });
        assert_eq!(got.len(), 40);
        for (i, t) in got.iter().enumerate() {
            assert_eq!(t, format!("(type t{i})\n").repeat(i + 1).as_bytes());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_module_is_an_error_in_its_place_and_stop_ends_the_readers() {
        let dir = std::env::temp_dir().join(format!("arbiter-store-ahead2-{}", std::process::id()));
        let mut modules = Vec::new();
        for i in 0..6 {
            let d = dir.join(format!("m{i}"));
            std::fs::create_dir_all(&d).unwrap();
            if i != 2 {
                std::fs::write(d.join("cil"), "(type t)\n").unwrap();
            }
            modules.push(module(d, &format!("m{i}")));
        }
        let ahead = ReadAhead::new(&modules, 2);
        std::thread::scope(|s| {
            s.spawn(|| ahead.work());
            s.spawn(|| ahead.work());
            assert!(ahead.next().unwrap().is_ok());
            assert!(ahead.next().unwrap().is_ok());
            assert!(ahead.next().unwrap().is_err(), "m2 has no cil file");
            ahead.stop();
        });
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
