//! Configuration parsing, masks and au_preselect, pinned to libbsm's observable behaviour
//! (the examples of the research brief, verified against libbsm).

use arbiter_bsm::{
    user_mask, ClassDb, Config, Control, EventDb, Mask, Outcome, Preselector, UserDb,
};

fn classes() -> ClassDb {
    ClassDb::builtin()
}

fn mask(s: &str) -> Mask {
    Mask::parse(s, &classes()).unwrap_or_else(|e| panic!("{s}: {e}"))
}

#[test]
fn masks_apply_items_left_to_right() {
    assert_eq!(
        mask("lo,aa"),
        Mask {
            success: 0x3000,
            failure: 0x3000
        }
    );
    assert_eq!(
        mask("+lo"),
        Mask {
            success: 0x1000,
            failure: 0
        }
    );
    assert_eq!(
        mask("-lo"),
        Mask {
            success: 0,
            failure: 0x1000
        }
    );
    assert_eq!(mask("lo,^lo"), Mask::default());
    assert_eq!(
        mask("all,^fr"),
        Mask {
            success: 0xffff_fffe,
            failure: 0xffff_fffe
        }
    );
    assert_eq!(
        mask("all,^+fr"),
        Mask {
            success: 0xffff_fffe,
            failure: 0xffff_ffff
        }
    );
    assert_eq!(
        mask("all,^-fr"),
        Mask {
            success: 0xffff_ffff,
            failure: 0xffff_fffe
        }
    );
    assert_eq!(mask("^+fr,all"), Mask::both(u32::MAX));
    assert_eq!(mask("no"), Mask::default());
    assert_eq!(mask("lo,,aa"), mask("lo,aa"));
    assert_eq!(mask(",lo"), mask("lo"));
}

#[test]
fn masks_reject_what_getauditflagsbin_rejects() {
    for bad in [" lo", "LO", "+-lo", "^", "lo:aa", "-^lo", "zz"] {
        assert!(Mask::parse(bad, &classes()).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn mask_text_drops_prefixes_like_getauditflagschar() {
    let c = classes();
    assert_eq!(mask("lo,aa").to_text(&c, false), "lo,aa");
    assert_eq!(mask("+lo").to_text(&c, false), "lo");
    assert_eq!(mask("+lo").to_text_exact(&c), "+lo");
    assert_eq!(
        Mask::parse(&mask("+lo,-fw,ex").to_text_exact(&c), &c),
        Ok(mask("+lo,-fw,ex"))
    );
}

#[test]
fn event_lookup_takes_the_first_duplicate_and_preselection_the_last() {
    let c = classes();
    let ev = EventDb::builtin(&c);
    assert_eq!(
        ev.by_number(6171).map(|e| e.name.as_slice()),
        Some(&b"AUE_ftpd_logout"[..])
    );
    let p = Preselector::new(&ev);
    assert_eq!(
        p.preselect(6171, &mask("lo"), Outcome::Both)
            .map(|s| s.selected()),
        Some(false)
    );
    assert_eq!(
        p.preselect(6171, &mask("all"), Outcome::Both)
            .map(|s| s.selected()),
        Some(true)
    );
    assert_eq!(p.class_of(6171), Some(0x800));
}

#[test]
fn class_no_is_never_selected_and_unknown_events_are_minus_one() {
    let c = classes();
    let p = Preselector::new(&EventDb::builtin(&c));
    assert_eq!(
        p.preselect(192, &Mask::both(u32::MAX), Outcome::Both)
            .map(|s| s.selected()),
        Some(false)
    );
    assert_eq!(
        p.preselect(43250, &Mask::both(u32::MAX), Outcome::Both),
        None
    );
    // Unknown class names give class 0 (6214 lists `ua`).
    assert_eq!(p.class_of(6214), Some(0));
    assert_eq!(p.class_of(23), Some(0x4000_0080));
}

#[test]
fn preselection_uses_the_half_of_the_mask_for_the_outcome() {
    let c = classes();
    let p = Preselector::new(&EventDb::builtin(&c));
    let m = mask("+fr,-fw");
    let open_r = 72; // fr
    assert!(p
        .preselect(open_r, &m, Outcome::Success)
        .is_some_and(|s| s.selected()));
    assert!(!p
        .preselect(open_r, &m, Outcome::Failure)
        .is_some_and(|s| s.selected()));
    assert!(p
        .preselect(open_r, &m, Outcome::Both)
        .is_some_and(|s| s.selected()));
}

#[test]
fn a_blank_line_truncates_enumeration_but_not_lookup() {
    let c = classes();
    let data = b"1:AUE_EXIT:exit(2):pc\n\n2:AUE_FORK:fork(2):pc\n";
    let ev = EventDb::parse(data, &c, "audit_event");
    assert_eq!(ev.enumerate().count(), 1);
    assert!(ev.by_number(2).is_some());
    let p = Preselector::new(&ev);
    assert_eq!(p.class_of(2), None);
    let d = ev.diagnostics(false);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].error.line, 2);
    assert!(
        d[0].error.to_string().starts_with("audit_event:2: "),
        "{}",
        d[0].error
    );
}

#[test]
fn fields_collapse_and_numbers_are_atoi_truncated() {
    let c = classes();
    let ev = EventDb::parse(
        b"43082:AUE_RTPRIO::rtprio(2):pc\n70000:AUE_X:x:fr\nabc:AUE_Y:y:fr\n",
        &c,
        "e",
    );
    let e = ev.by_number(43082).expect("43082");
    assert_eq!((e.desc.as_slice(), e.class), (&b"rtprio(2)"[..], 0x80));
    assert_eq!(
        ev.by_number(4464).map(|e| e.name.as_slice()),
        Some(&b"AUE_X"[..])
    );
    assert_eq!(
        ev.by_number(0).map(|e| e.name.as_slice()),
        Some(&b"AUE_Y"[..])
    );
    let strict = ev.diagnostics(true);
    assert!(
        strict.iter().any(|d| d.error.line == 2 && !d.rejected),
        "{strict:?}"
    );
    assert!(
        strict.iter().any(|d| d.error.line == 3 && !d.rejected),
        "{strict:?}"
    );
}

#[test]
fn overlong_names_are_rejected_with_file_and_line() {
    let c = classes();
    let long = format!("5:{}:d:fr\n", "A".repeat(30));
    let ev = EventDb::parse(long.as_bytes(), &c, "audit_event");
    assert!(ev.by_number(5).is_none());
    assert_eq!(ev.diagnostics(false)[0].error.line, 1);
    let cl = ClassDb::parse(b"0x1:toolongname:x\n0x2:ok:y\n", "audit_class");
    assert_eq!(cl.entries().len(), 0);
    assert_eq!(cl.diagnostics().len(), 1);
}

#[test]
fn class_masks_accept_hex_octal_and_decimal() {
    let cl = ClassDb::parse(b"0x10:a:x\n010:b:y\n10:c:z\n", "audit_class");
    let m: Vec<u32> = cl.entries().iter().map(|e| e.mask).collect();
    assert_eq!(m, vec![16, 8, 10]);
}

#[test]
fn control_values_keep_leading_spaces_and_colons() {
    let c = Control::parse(b"# c\nflags: lo\nnaflags:lo,aa\nhost:a:b \t\n");
    assert_eq!(c.flags(), b" lo");
    assert!(c.flags_mask(&classes()).is_err());
    assert_eq!(c.naflags(), b"lo,aa");
    assert_eq!(c.get("host"), Some(&b"a:b"[..]));
    assert_eq!(Control::parse(b"").flags(), b"");
}

#[test]
fn user_masks_combine_flags_always_and_never() {
    let cfg = Config::builtin();
    assert_eq!(user_mask(&cfg, "root"), Ok(Mask::both(0x3000)));
    assert_eq!(user_mask(&cfg, "nobody"), Ok(Mask::both(0x3000)));
    let c = classes();
    let users = UserDb::parse(b"alice:ex:lo\nbob:lo:\ncarol:fr:no\n", &c, "audit_user");
    let cfg2 = Config {
        users,
        ..Config::builtin()
    };
    assert_eq!(user_mask(&cfg2, "alice"), Ok(Mask::both(0x4000_2000)));
    // `bob:lo:` is invalid and stops the enumeration: carol is invisible too.
    assert_eq!(user_mask(&cfg2, "carol"), Ok(Mask::both(0x3000)));
    assert_eq!(cfg2.users.diagnostics().len(), 1);
}
