//! The BSM trail reader, printer and selector on arbitrary bytes.
//!
//! Nothing may panic; every decoded token must re-encode to exactly the bytes it was read
//! from; output stays proportional to the input; the streaming reader, fed a few bytes at
//! a time, finds the same records and framing errors as the in-memory one.
#![no_main]

use std::sync::OnceLock;

use arbiter_bsm::{
    decode, encode, records, Config, PrintOptions, Printer, RecordStream, ReduceOptions, Reducer,
};
use libfuzzer_sys::fuzz_target;

fn config() -> &'static Config {
    static C: OnceLock<Config> = OnceLock::new();
    C.get_or_init(Config::builtin)
}

/// Built once: the preselection map behind `-c` is a 65,536-entry table.
fn reducer() -> &'static Reducer {
    static R: OnceLock<Reducer> = OnceLock::new();
    R.get_or_init(|| {
        let args: Vec<String> = ["-c", "lo", "-o", "file=^/etc/"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (o, _) = ReduceOptions::parse(&args, config()).expect("options parse");
        Reducer::new(o, config())
    })
}

/// Reads of 1 to 7 bytes, as a slow pipe gives them.
struct Trickle<'a>(&'a [u8], usize);

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.1 += 1;
        let n = (1 + self.1 % 7).min(buf.len()).min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

fuzz_target!(|data: &[u8]| {
    let cfg = config();
    let mut memory = Vec::new();
    let mut it = records(data);
    while let Some(r) = it.next() {
        let err = r.as_ref().err().copied();
        memory.push(r.map(|r| (r.offset, r.bytes.to_vec())));
        if err.is_some() && it.resync().is_none() {
            break;
        }
    }
    let mut streamed = Vec::new();
    let mut s = RecordStream::new(Trickle(data, 0));
    while let Some(r) = s.next_record().expect("a slice never fails") {
        let err = r.as_ref().err().copied();
        streamed.push(r.map(|r| (r.offset, r.bytes.to_vec())));
        if err.is_some() && s.resync().expect("a slice never fails").is_none() {
            break;
        }
    }
    for r in &mut streamed {
        if let Err(e) = r {
            *e = s.resolve(*e).expect("a slice never fails");
        }
    }
    assert_eq!(memory, streamed);
    for rec in records(data).flatten() {
        let mut pos = 0;
        while pos < rec.bytes.len() {
            let Ok((t, n)) = decode(&rec.bytes[pos..]) else {
                break;
            };
            let mut again = Vec::new();
            encode(&t, &mut again);
            assert_eq!(&again[..], &rec.bytes[pos..pos + n], "{t:?}");
            pos += n;
        }
    }
    for opts in [
        PrintOptions {
            noresolve: true,
            ..PrintOptions::default()
        },
        PrintOptions {
            raw: true,
            oneline: true,
            ..PrintOptions::default()
        },
        PrintOptions {
            xml: true,
            noresolve: true,
            ..PrintOptions::default()
        },
    ] {
        let mut out = Vec::new();
        let _ = Printer::new(&cfg.events, opts).print_trail(data, &mut out);
        assert!(out.len() <= 64 * data.len() + 4096);
    }
    let mut out = Vec::new();
    reducer().reduce_trail(data, &mut out);
    assert!(out.len() <= data.len());
});
