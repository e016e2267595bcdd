//! The writer against the reader (property tests over every token type), and the reader,
//! printer and selector against truncated and corrupted trails.

mod common;

use arbiter_bsm::{
    decode, encode, records, Addr, FramingError, RecordStream, RecordWriter, Subject, SubjectForm,
    Token, MAX_RECORD_SIZE,
};
use arbiter_bsm::{Config, ExecStrings, Header, PrintOptions, Printer, ReduceOptions, Reducer};
use proptest::prelude::*;

fn addr(n: &[u64; 8], v6: bool) -> Addr {
    if v6 {
        let mut a = [0u8; 16];
        a[..8].copy_from_slice(&n[0].to_be_bytes());
        a[8..].copy_from_slice(&n[1].to_be_bytes());
        Addr::V6(a)
    } else {
        Addr::V4((n[0] as u32).to_be_bytes())
    }
}

/// Builds a token of kind `k` from `bytes` (no NULs: NULs are added where the layout needs
/// terminators) and the numbers `n`.
fn make<'a>(k: u8, bytes: &'a [u8], strs: &'a [u8], n: &[u64; 8]) -> Token<'a> {
    let b = |i: usize| n[i] as u8;
    let w = |i: usize| n[i] as u16;
    let d = |i: usize| n[i] as u32;
    let v6 = n[7] & 1 == 1;
    let arr2 = |i: usize| (n[i] as u16).to_be_bytes();
    let arr4 = |i: usize| (n[i] as u32).to_be_bytes();
    match k {
        0 => Token::File {
            sec: d(0),
            msec: d(1),
            name: bytes,
        },
        1 => Token::Trailer {
            magic: w(0),
            count: d(1),
        },
        2..=5 => {
            let id = [0x14, 0x15, 0x74, 0x79][k as usize - 2];
            let ex = id == 0x15 || id == 0x79;
            let wide = id == 0x74 || id == 0x79;
            Token::Header(Header {
                id,
                size: d(0),
                version: b(1),
                event: w(2),
                modifier: w(3),
                host: if ex {
                    Some(if n[6] % 3 == 0 {
                        Addr::Invalid(d(6) | 1 & !4 & !16)
                    } else {
                        addr(n, v6)
                    })
                } else {
                    None
                },
                sec: if wide { n[4] } else { d(4) as u64 },
                msec: if wide { n[5] } else { d(5) as u64 },
            })
        }
        6 => {
            let unit = b(0) % 4;
            let size = [1usize, 2, 4, 8][unit as usize];
            let count = (bytes.len() / size) as u8;
            Token::Arbitrary {
                how: b(1),
                unit,
                count,
                data: &bytes[..count as usize * size],
            }
        }
        7 => Token::Ipc {
            kind: b(0),
            id: d(1),
        },
        8 => Token::Path(bytes),
        9..=16 => {
            let f = k - 9;
            let form = SubjectForm {
                process: f & 1 == 1,
                wide: f & 2 == 2,
                ex: f & 4 == 4,
            };
            Token::Subject(Subject {
                form,
                auid: d(0),
                euid: d(1),
                egid: d(2),
                ruid: d(3),
                rgid: d(4),
                pid: d(5),
                sid: d(6),
                port: if form.wide { n[7] } else { n[7] as u32 as u64 },
                addr: if form.ex { addr(n, v6) } else { addr(n, false) },
            })
        }
        17 => Token::Return32 {
            status: b(0),
            value: d(1),
        },
        18 => Token::Return64 {
            status: b(0),
            value: n[1],
        },
        19 => Token::Text(bytes),
        20 => Token::Opaque(bytes),
        21 => Token::InAddr(arr4(0)),
        22 => Token::InAddrEx(addr(n, v6)),
        23 => {
            let mut ip = [0u8; 20];
            for (i, x) in ip.iter_mut().enumerate() {
                *x = (n[i % 8] >> (i % 7)) as u8;
            }
            Token::Ip(ip)
        }
        24 => Token::Iport(arr2(0)),
        25 => Token::Arg32 {
            no: b(0),
            value: d(1),
            text: bytes,
        },
        26 => Token::Arg64 {
            no: b(0),
            value: n[1],
            text: bytes,
        },
        27 => Token::Socket {
            stype: w(0),
            lport: arr2(1),
            laddr: arr4(2),
            rport: arr2(3),
            raddr: arr4(4),
        },
        28 => Token::SocketEx {
            domain: w(0),
            stype: w(1),
            lport: arr2(2),
            laddr: addr(n, v6),
            rport: arr2(3),
            raddr: addr(n, v6),
        },
        29 => Token::SockInet32 {
            family: w(0),
            port: arr2(1),
            addr: arr4(2),
        },
        30 => match addr(n, true) {
            Addr::V6(a) => Token::SockInet128 {
                family: w(0),
                port: arr2(1),
                addr: a,
            },
            _ => unreachable!(),
        },
        31 => {
            // path bytes then its NUL, at most 107 bytes of path
            let len = strs.iter().position(|&c| c == 0).unwrap_or(0);
            Token::SockUnix {
                family: w(0),
                path: &strs[..len],
                taken: &strs[..len + 1],
            }
        }
        32 => Token::Seq(d(0)),
        33 => Token::IpcPerm(arbiter_bsm::IpcPerm {
            uid: d(0),
            gid: d(1),
            cuid: d(2),
            cgid: d(3),
            mode: d(4),
            seq: d(5),
            key: d(6),
        }),
        34 => {
            let count = ((bytes.len() / 4).min(16)) as u16;
            Token::Groups {
                count,
                list: &bytes[..count as usize * 4],
            }
        }
        35 | 36 => {
            let count = strs.iter().filter(|&&c| c == 0).count() as u32;
            let s = ExecStrings { count, data: strs };
            if k == 35 {
                Token::ExecArgs(s)
            } else {
                Token::ExecEnv(s)
            }
        }
        37 => Token::Attr(arbiter_bsm::Attr {
            wide: v6,
            mode: d(0),
            uid: d(1),
            gid: d(2),
            fsid: d(3),
            nodeid: n[4],
            dev: if v6 { n[5] } else { d(5) as u64 },
        }),
        38 => Token::Exit {
            status: d(0),
            ret: d(1),
        },
        39 | 40 => {
            let mut u = [0u8; 16];
            u[..8].copy_from_slice(&n[1].to_be_bytes());
            u[8..].copy_from_slice(&n[2].to_be_bytes());
            if k == 39 {
                Token::ArgUuid {
                    no: b(0),
                    uuid: u,
                    text: bytes,
                }
            } else {
                Token::RetUuid {
                    no: b(0),
                    uuid: u,
                    text: bytes,
                }
            }
        }
        41 => Token::Upriv {
            sorf: b(0),
            name: bytes,
        },
        42 => Token::Privset {
            set: bytes,
            privs: &bytes[bytes.len() / 2..],
        },
        _ => Token::Zonename(bytes),
    }
}

/// NUL-terminated strings for exec tokens and unix socket paths.
fn strings() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(proptest::collection::vec(1u8..=255, 0..12), 0..6).prop_map(|v| {
        let mut out = Vec::new();
        for s in v {
            out.extend_from_slice(&s);
            out.push(0);
        }
        if out.is_empty() {
            out.push(0);
        }
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    /// Every token the writer writes, the reader reads back identically, consuming exactly
    /// the bytes written, wherever it sits in a record.
    #[test]
    fn every_token_round_trips_through_writer_and_reader(
        k in 0u8..44,
        bytes in proptest::collection::vec(any::<u8>(), 0..64),
        strs in strings(),
        n in any::<[u64; 8]>(),
    ) {
        let t = make(k, &bytes, &strs, &n);
        let mut buf = Vec::new();
        encode(&t, &mut buf);
        let written = buf.len();
        // A trailer after it, as in a record (the unknown-token rule needs a record end).
        encode(&Token::Trailer { magic: 0xb105, count: 0 }, &mut buf);
        let (back, used) = decode(&buf).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(used, written);
        prop_assert_eq!(back, t);
    }

    /// Records framed by RecordWriter come back as the same records and tokens.
    #[test]
    fn records_round_trip_through_the_record_writer(
        ks in proptest::collection::vec(6u8..44, 0..8),
        bytes in proptest::collection::vec(any::<u8>(), 0..40),
        strs in strings(),
        n in any::<[u64; 8]>(),
    ) {
        let mut w = RecordWriter::new();
        let toks: Vec<Token> = ks.iter().map(|&k| make(k, &bytes, &strs, &n)).collect();
        let h = Header { id: 0x14, size: 0, version: 11, event: 72, modifier: 0, host: None, sec: 1, msec: 2 };
        w.begin(h);
        for t in &toks {
            w.token(t);
        }
        w.end();
        w.file(3, 4, b"/var/audit/x");
        let data = w.into_bytes();
        let recs: Vec<_> = records(&data).collect::<Result<_, _>>().map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(recs.len(), 2);
        let got: Vec<Token> = recs[0].tokens().collect::<Result<_, _>>().map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(got.len(), toks.len() + 2);
        prop_assert_eq!(&got[1..got.len() - 1], &toks[..]);
        match got[0] {
            Token::Header(h) => prop_assert_eq!(h.size as usize, recs[0].bytes.len()),
            other => prop_assert!(false, "first token {:?}", other),
        }
    }
}

#[test]
fn an_unknown_token_takes_everything_before_the_trailer() {
    let rec = [0x83u8, 1, 2, 3, 0x13, 0xb1, 0x05, 0, 0, 0, 9];
    let (t, n) = decode(&rec).expect("decodes");
    assert_eq!(
        t,
        Token::Unknown {
            id: 0x83,
            data: &[1, 2, 3]
        }
    );
    assert_eq!(n, 4);
    assert!(decode(&rec[..7]).is_err());
}

fn trails() -> Vec<(String, Vec<u8>)> {
    let dir = common::data_dir();
    let mut out = Vec::new();
    for name in [
        "synthetic/edge.bsm",
        "synthetic/small.bsm",
        "reference/execve-long-args.trail",
    ] {
        out.push((name.to_string(), std::fs::read(dir.join(name)).expect(name)));
    }
    for e in std::fs::read_dir(dir.join("reference")).expect("reference") {
        let p = e.expect("entry").path();
        let n = p
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        if n.ends_with("_record") {
            out.push((n, std::fs::read(&p).expect("read")));
        }
    }
    out
}

/// What a reader sees of a trail, resynchronising after every framing error: each record
/// as (offset, bytes), each framing error, and each place resynchronisation resumed.
#[derive(Debug, PartialEq, Eq)]
enum Seen {
    Record(usize, Vec<u8>),
    Framing(FramingError),
    Resumed(Option<usize>),
}

fn seen_in_memory(data: &[u8]) -> Vec<Seen> {
    let mut seen = Vec::new();
    let mut it = records(data);
    loop {
        match it.next() {
            None => break,
            Some(Ok(r)) => seen.push(Seen::Record(r.offset, r.bytes.to_vec())),
            Some(Err(e)) => {
                seen.push(Seen::Framing(e));
                let at = it.resync();
                seen.push(Seen::Resumed(at));
                if at.is_none() {
                    break;
                }
            }
        }
    }
    seen
}

/// The stream settles an oversized record's error once the records are read; so does this.
fn seen_streamed(src: impl std::io::Read) -> Vec<Seen> {
    let mut seen = Vec::new();
    let mut it = RecordStream::new(src);
    loop {
        match it.next_record().expect("reading never fails here") {
            None => break,
            Some(Ok(r)) => seen.push(Seen::Record(r.offset, r.bytes.to_vec())),
            Some(Err(e)) => {
                seen.push(Seen::Framing(e));
                let at = it.resync().expect("reading never fails here");
                seen.push(Seen::Resumed(at));
                if at.is_none() {
                    break;
                }
            }
        }
    }
    for s in &mut seen {
        if let Seen::Framing(e) = s {
            *e = it.resolve(*e).expect("reading never fails here");
        }
    }
    seen
}

/// Runs everything over `data`: framing (in memory and streamed in small pieces, which
/// must agree record for record and error for error), tokens, every print form,
/// reduction. Checks that errors name offsets inside the input and that output stays
/// proportional to the input.
fn exercise(cfg: &Config, data: &[u8]) {
    assert_eq!(
        seen_streamed(common::Trickle::new(data)),
        seen_in_memory(data)
    );
    for r in records(data) {
        match r {
            Ok(rec) => {
                for t in rec.tokens() {
                    if let Err(e) = t {
                        assert!(
                            e.offset >= rec.offset && e.offset < rec.offset + rec.bytes.len(),
                            "{e}"
                        );
                    }
                }
            }
            Err(e) => assert!(e.offset() <= data.len(), "{e}"),
        }
    }
    for opts in [
        PrintOptions {
            noresolve: true,
            ..PrintOptions::default()
        },
        PrintOptions {
            noresolve: true,
            xml: true,
            oneline: true,
            ..PrintOptions::default()
        },
        PrintOptions {
            raw: true,
            ..PrintOptions::default()
        },
    ] {
        let mut out = Vec::new();
        Printer::new(&cfg.events, opts)
            .print_trail(data, &mut out)
            .expect("write");
        // The widest token expansion (hex dumps, vis escapes, group lists) stays within a
        // small constant factor of the input, plus per-record text.
        assert!(
            out.len() <= 64 * data.len() + 4096,
            "{} bytes out of {}",
            out.len(),
            data.len()
        );
    }
    let args: Vec<String> = ["-c", "lo"].iter().map(|s| s.to_string()).collect();
    let (o, _) = ReduceOptions::parse(&args, cfg).expect("options");
    let mut out = Vec::new();
    Reducer::new(o, cfg).reduce_trail(data, &mut out);
    assert!(out.len() <= data.len());
}

#[test]
fn truncation_at_every_byte_offset_gives_typed_errors_and_no_panic() {
    let cfg = Config::builtin();
    let all = trails();
    assert!(all.is_empty() || all.len() > 50);
    for (name, data) in all.iter().filter(|(n, _)| !n.contains("small")) {
        for cut in 0..=data.len() {
            exercise(&cfg, &data[..cut]);
        }
        // The last record cut short is reported as truncated, at its own offset.
        if let Some(Err(e)) = records(&data[..data.len() - 1]).last() {
            assert!(
                matches!(e, arbiter_bsm::FramingError::Truncated { .. }),
                "{name}: {e}"
            );
        }
    }
}

#[test]
fn random_corruption_gives_typed_errors_and_no_panic() {
    let cfg = Config::builtin();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for (_, data) in trails() {
        for _ in 0..if data.len() > 5000 { 200 } else { 40 } {
            let mut d = data.clone();
            for _ in 0..1 + rnd() % 8 {
                let i = (rnd() % d.len() as u64) as usize;
                d[i] = rnd() as u8;
            }
            exercise(&cfg, &d);
        }
    }
}

#[test]
fn resync_finds_the_next_record_after_damage() {
    let mut w = RecordWriter::new();
    for ev in [1u16, 2, 3] {
        w.begin(Header {
            id: 0x14,
            size: 0,
            version: 11,
            event: ev,
            modifier: 0,
            host: None,
            sec: 0,
            msec: 0,
        });
        w.token(&Token::Text(b"hello"));
        w.end();
    }
    let mut data = w.into_bytes();
    let second = records(&data).nth(1).expect("second").expect("ok").offset;
    data[second] = 0x99; // the second record's header id
    let mut it = records(&data);
    assert!(it.next().expect("first").is_ok());
    let err = it.next().expect("error").expect_err("damaged");
    assert_eq!(err.offset(), second);
    assert!(it.next().is_none());
    let at = it.resync().expect("resyncs");
    let rec = it.next().expect("third").expect("ok");
    assert_eq!(rec.offset, at);
    assert!(matches!(rec.tokens().next(), Some(Ok(Token::Header(h))) if h.event == 3));
}

#[test]
fn printing_with_resync_goes_on_after_a_damaged_header_and_reports_it() {
    let mut w = RecordWriter::new();
    for ev in [1u16, 2, 3] {
        w.begin(Header {
            id: 0x14,
            size: 0,
            version: 11,
            event: ev,
            modifier: 0,
            host: None,
            sec: 0,
            msec: 0,
        });
        w.token(&Token::Text(b"hello"));
        w.end();
    }
    let mut data = w.into_bytes();
    let second = records(&data).nth(1).expect("second").expect("ok").offset;
    data[second + 1] = 0xff; // the second record's size now runs past the end
    let cfg = Config::builtin();
    let print = |resync: bool| {
        let opts = PrintOptions {
            raw: true,
            oneline: true,
            resync,
            ..PrintOptions::default()
        };
        let mut out = Vec::new();
        let s = Printer::new(&cfg.events, opts)
            .print_trail(&data, &mut out)
            .expect("write");
        (String::from_utf8(out).expect("utf8"), s)
    };
    let (plain, s) = print(false);
    assert_eq!(plain.lines().count(), 1);
    assert_eq!(s.framing.len(), 1);
    assert_eq!(s.framing[0].offset(), second);
    let (resynced, s) = print(true);
    let lines: Vec<&str> = resynced.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[1].starts_with("20,") && lines[1].contains(",11,3,"),
        "{}",
        lines[1]
    );
    assert_eq!(s.framing.len(), 1);
    assert_eq!(s.skipped, data.len() / 3);
}

/// A trail of three small records with a record of `size` bytes (header, text, trailer)
/// between the first and the last, cut to `keep` bytes of that record.
fn with_big_record(size: usize, keep: usize) -> (Vec<u8>, usize) {
    let mut w = RecordWriter::new();
    w.begin(Header {
        id: 0x14,
        size: 0,
        version: 11,
        event: 1,
        modifier: 0,
        host: None,
        sec: 0,
        msec: 0,
    });
    w.token(&Token::Text(b"before"));
    w.end();
    let small = w.into_bytes();
    let mut data = small.clone();
    let at = data.len();
    let mut big = vec![0u8; size];
    big[0] = 0x14;
    big[1..5].copy_from_slice(&(size as u32).to_be_bytes());
    big[size - 7..size - 4].copy_from_slice(&[0x13, 0xb1, 0x05]);
    big[size - 4..].copy_from_slice(&(size as u32).to_be_bytes());
    data.extend_from_slice(&big[..keep]);
    if keep == size {
        data.extend_from_slice(&small);
    }
    (data, at)
}

#[test]
fn a_record_over_the_size_limit_stops_the_trail_and_resync_looks_inside_it() {
    let size = MAX_RECORD_SIZE + 100;
    let (data, at) = with_big_record(size, size);
    let seen = seen_in_memory(&data);
    assert_eq!(seen_streamed(common::Trickle::new(&data)), seen);
    assert_eq!(seen_streamed(&data[..]), seen);
    assert!(
        matches!(
            seen[1],
            Seen::Framing(FramingError::TooLarge { offset, size: s, .. }) if offset == at && s == size as u64
        ),
        "{:?}",
        &seen[1]
    );
    // The forged record's own trailer is not a record; the next one after it is.
    assert_eq!(seen[2], Seen::Resumed(Some(at + size)));
    assert!(matches!(&seen[3], Seen::Record(o, _) if *o == at + size));
}

#[test]
fn an_oversized_record_cut_short_is_reported_as_truncated_with_what_was_left() {
    let size = MAX_RECORD_SIZE + 100;
    let (data, at) = with_big_record(size, size - 10);
    let seen = seen_in_memory(&data);
    assert_eq!(seen_streamed(&data[..]), seen);
    assert_eq!(
        seen[1],
        Seen::Framing(FramingError::Truncated {
            offset: at,
            size: size as u64,
            available: size - 10
        })
    );
}
