//! Shared helpers of the integration tests: where the reference data lives.

#![allow(dead_code)]

use std::path::PathBuf;

/// The BSM reference data, in the repository at `tests/data/bsm/` (provenance in its
/// README): OpenBSM's reference tokens and records, generated trails, and what OpenBSM's own
/// praudit and auditreduce print for them.
pub fn data_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/bsm");
    assert!(
        dir.join("EXPECTED.tsv").is_file(),
        "BSM reference data missing from the checkout: {}",
        dir.display()
    );
    dir
}

/// Splits a command line the way `sh` would for the forms in EXPECTED.tsv (words, single
/// quotes, and `< FILE`).
pub fn shell_words(cmd: &str) -> (Vec<String>, Option<String>) {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quoted = false;
    let mut stdin = None;
    let mut redirect = false;
    for ch in cmd.chars().chain(std::iter::once(' ')) {
        if quoted {
            if ch == '\'' {
                quoted = false;
            } else {
                cur.push(ch);
            }
            continue;
        }
        match ch {
            '\'' => {
                quoted = true;
                in_word = true;
            }
            ' ' => {
                if in_word {
                    let w = std::mem::take(&mut cur);
                    if redirect {
                        stdin = Some(w);
                        redirect = false;
                    } else {
                        words.push(w);
                    }
                    in_word = false;
                }
            }
            '<' => redirect = true,
            c => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    (words, stdin)
}

/// Reads an expected output, gunzipping `.gz` files.
pub fn read_expected(path: &std::path::Path) -> Vec<u8> {
    let raw = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if path.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&raw[..]), &mut out)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out
    } else {
        raw
    }
}

/// A reader that hands out its bytes in uneven small pieces (1, 2, 3, 5, 7, 64 and 4093
/// bytes in turn), as a pipe may: every buffer boundary of a streaming reader gets hit.
pub struct Trickle<'a> {
    data: &'a [u8],
    turn: usize,
}

impl<'a> Trickle<'a> {
    /// A trickle over `data`.
    pub fn new(data: &'a [u8]) -> Trickle<'a> {
        Trickle { data, turn: 0 }
    }
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        const PIECES: [usize; 7] = [1, 2, 3, 5, 7, 64, 4093];
        let n = PIECES[self.turn % PIECES.len()]
            .min(buf.len())
            .min(self.data.len());
        self.turn += 1;
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}
