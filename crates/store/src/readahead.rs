//! Decompressing the store's modules on every core while the compiler parses them in build
//! order. bzip2 decompression of Debian's 22.5 MB of CIL costs more CPU than parsing it, so
//! one reader thread would leave the parser waiting; several readers take the next module
//! each, and the texts are handed out strictly in build order. A window bounds how far the
//! readers may run ahead, so at most that many texts are held at once (Debian's largest
//! module, base, is 5 MB).
//!
//! The largest module (by its file's size) is claimed first: decompressing Debian's base
//! alone takes as long as a fifth of all the others together, and claimed in build order
//! (it is 22nd) it would be the one piece the compiler waits for while the other cores
//! idle at the window's edge. Claimed first, it decompresses on one core while the others
//! feed the compiler the modules before it.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::error::StoreError;
use crate::modules::{read_maybe_bzip2, Module};

type Text = Result<Vec<u8>, StoreError>;

/// Modules read ahead of the compiler: [`ReadAhead::work`] runs on each reader thread,
/// [`ReadAhead::next`] on the consumer's.
pub struct ReadAhead<'a> {
    modules: &'a [Module],
    /// The order in which readers claim modules: the largest first, then build order.
    claim_order: Vec<usize>,
    window: usize,
    state: Mutex<State>,
    /// Signalled whenever a text is finished, taken, or the readers are told to stop.
    changed: Condvar,
}

/// Who may touch what: readers advance `claimed` (how many of `claim_order` are claimed)
/// and insert into `done`; only the consumer advances `taken` (how many modules it has
/// taken, in build order) and removes from `done`. `held` counts the claimed modules the
/// consumer has not taken (being decompressed or waiting in `done`): readers raise it,
/// the consumer lowers it. Everything is under the one mutex, held only for bookkeeping,
/// never while decompressing.
#[derive(Default)]
struct State {
    claimed: usize,
    taken: usize,
    held: usize,
    done: BTreeMap<usize, Text>,
    stop: bool,
}

impl<'a> ReadAhead<'a> {
    /// A read-ahead over `modules` letting readers hold at most `window` texts (at least
    /// one) that the consumer has not taken yet; the module the consumer waits for may
    /// always be claimed, so the window never starves it.
    pub fn new(modules: &'a [Module], window: usize) -> ReadAhead<'a> {
        let sizes: Vec<u64> = modules
            .iter()
            .map(|m| m.cil_path().metadata().map_or(0, |md| md.len()))
            .collect();
        ReadAhead {
            modules,
            claim_order: claim_order(&sizes),
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
                    if st.stop || st.claimed >= self.claim_order.len() {
                        return;
                    }
                    let next = self.claim_order[st.claimed];
                    if st.held < self.window || next == st.taken {
                        break;
                    }
                    st = self.wait(st);
                }
                st.claimed += 1;
                st.held += 1;
                self.claim_order[st.claimed - 1]
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
                st.held -= 1;
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

/// The claim order for modules of these file sizes: the largest first (the earliest in
/// build order among equals), then every other module in build order.
fn claim_order(sizes: &[u64]) -> Vec<usize> {
    let Some(big) = (0..sizes.len()).max_by_key(|&i| (sizes[i], std::cmp::Reverse(i))) else {
        return Vec::new();
    };
    std::iter::once(big)
        .chain((0..sizes.len()).filter(|&i| i != big))
        .collect()
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
    fn the_largest_module_is_claimed_first_then_build_order() {
        assert_eq!(claim_order(&[3, 9, 1, 9, 2]), [1, 0, 2, 3, 4]);
        assert_eq!(claim_order(&[5]), [0]);
        assert!(claim_order(&[]).is_empty());
    }

    #[test]
    fn a_window_of_one_still_delivers_when_the_largest_comes_last() {
        let dir = std::env::temp_dir().join(format!("arbiter-store-ahead3-{}", std::process::id()));
        let mut modules = Vec::new();
        for i in 0..8 {
            let d = dir.join(format!("m{i}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("cil"), format!("(type t{i})\n").repeat(1 + 50 * i)).unwrap();
            modules.push(module(d, &format!("m{i}")));
        }
        let ahead = ReadAhead::new(&modules, 1);
        let got: Vec<Vec<u8>> = std::thread::scope(|s| {
            s.spawn(|| ahead.work());
            s.spawn(|| ahead.work());
            std::iter::from_fn(|| ahead.next())
                .map(|t| t.unwrap())
                .collect()
        });
        for (i, t) in got.iter().enumerate() {
            assert_eq!(t, format!("(type t{i})\n").repeat(1 + 50 * i).as_bytes());
        }
        assert_eq!(got.len(), 8);
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
