//! Xen object contexts (`pirqcon`, `iomemcon`, `ioportcon`, `pcidevicecon`,
//! `devicetreecon`): libsepol parses their numbers, verifies their contexts and sorts them
//! (refusing duplicates at `-v`, cil.md §4) whatever the target; a SELinux policy leaves
//! them out, and `-t xen` lowers the sorted, deduplicated rules into the model's Xen tables
//! ([`lower`]).

use crate::kw::Kw;
use crate::msort::msort;
use crate::Fail;
use arbiter_policy::mls::Context;
use arbiter_policy::ocontext::{
    DeviceTreeCon, IomemCon, IoportCon, PciDeviceCon, PirqCon, Platform, XenContexts,
};
use std::cmp::Ordering;

/// The key a Xen context rule is sorted and deduplicated by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum XenKey {
    Pirq(u32),
    Iomem(u64, u64),
    Ioport(u32, u32),
    PciDevice(u32),
    DeviceTree(Vec<u8>),
}

/// One rule: its key, its context (user, role, type, low and high sensitivity: what
/// libsepol compares when `-m` tolerates equal duplicates), the compiler's context `C` to
/// lower, and where it is.
pub(crate) struct XenCon<C> {
    pub kw: Kw,
    pub key: XenKey,
    pub context: [u32; 5],
    pub ctx: C,
    pub at: String,
}

/// `strtoul`/`strtoull` as libsepol calls them (`cil_string_to_uint32/64`): an optional
/// sign, `0x` or a leading `0` choosing the base when `base` is 0, the whole text used; a
/// minus wraps; `None` on overflow or stray characters.
fn strtou(text: &[u8], base: u32, max: u64) -> Option<u64> {
    let (neg, mut t) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let mut radix = base;
    if (radix == 0 || radix == 16) && (t.starts_with(b"0x") || t.starts_with(b"0X")) && t.len() > 2
    {
        radix = 16;
        t = &t[2..];
    } else if radix == 0 && t.len() > 1 && t[0] == b'0' {
        radix = 8;
    } else if radix == 0 {
        radix = 10;
    }
    if t.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &c in t {
        let d = (c as char).to_digit(radix)?;
        v = v.checked_mul(u64::from(radix))?.checked_add(u64::from(d))?;
    }
    let v = if neg { v.wrapping_neg() } else { v };
    // strtoul works in unsigned long (64 bits here); the 32-bit form then refuses values
    // above u32::MAX, negatives included.
    (v <= max).then_some(v)
}

/// The key of a rule (`args` are its list's elements after the keyword), with secilc's
/// messages when a number does not parse.
pub(crate) fn key(kw: Kw, first: Result<&[u8], &[&[u8]]>, here: &str) -> Result<XenKey, Fail> {
    let bad = |why: Vec<&str>| {
        let mut m: Vec<String> = why.into_iter().map(String::from).collect();
        m.push(format!("Bad {} declaration at {here}", kw.text()));
        m.push("Failed to build AST".into());
        m.push("Failed to compile cildb: -1".into());
        Fail::bad(m)
    };
    let u32_of = |t: &[u8], base: u32| {
        strtou(t, base, u64::from(u32::MAX))
            .map(|v| v as u32)
            .ok_or(())
    };
    let e32 = [
        "Failed to create uint32_t from string",
        "Failed to fill 32-bit integer",
    ];
    let e64 = [
        "Failed to create uint64_t from string",
        "Failed to fill 64-bit integer",
    ];
    match kw {
        Kw::PirqCon | Kw::PciDeviceCon => {
            let t = first.map_err(|_| bad(vec!["Invalid syntax"]))?;
            let base = if kw == Kw::PirqCon { 10 } else { 0 };
            let v = u32_of(t, base).map_err(|_| bad(e32.to_vec()))?;
            Ok(if kw == Kw::PirqCon {
                XenKey::Pirq(v)
            } else {
                XenKey::PciDevice(v)
            })
        }
        Kw::DeviceTreeCon => {
            let t = first.map_err(|_| bad(vec!["Invalid syntax"]))?;
            Ok(XenKey::DeviceTree(t.to_vec()))
        }
        Kw::IomemCon => {
            let word = "Improper iomem specified";
            let one = |t: &[u8]| strtou(t, 0, u64::MAX).ok_or(());
            let (lo, hi) = match first {
                Ok(t) => {
                    let v = one(t).map_err(|_| bad([&e64[..], &[word]].concat()))?;
                    (v, v)
                }
                Err([a, b]) => (
                    one(a).map_err(|_| bad([&e64[..], &[word]].concat()))?,
                    one(b).map_err(|_| bad([&e64[..], &[word]].concat()))?,
                ),
                Err(_) => return Err(bad(vec!["Improper iomem range specified"])),
            };
            Ok(XenKey::Iomem(lo, hi))
        }
        _ => {
            let word = "Improper ioport specified";
            let (lo, hi) = match first {
                Ok(t) => {
                    let v = u32_of(t, 0).map_err(|_| bad([&e32[..], &[word]].concat()))?;
                    (v, v)
                }
                Err([a, b]) => (
                    u32_of(a, 0).map_err(|_| bad([&e32[..], &[word]].concat()))?,
                    u32_of(b, 0).map_err(|_| bad([&e32[..], &[word]].concat()))?,
                ),
                Err(_) => return Err(bad(vec!["Improper ioport range specified"])),
            };
            Ok(XenKey::Ioport(lo, hi))
        }
    }
}

/// libsepol's comparators (`cil_post.c`): numbers, paths by `strcmp`, ranges by their
/// size as a truncated `int` difference, then their low end.
fn compare(a: &XenKey, b: &XenKey) -> Ordering {
    match (a, b) {
        (XenKey::Pirq(x), XenKey::Pirq(y)) | (XenKey::PciDevice(x), XenKey::PciDevice(y)) => {
            x.cmp(y)
        }
        (XenKey::DeviceTree(x), XenKey::DeviceTree(y)) => x.cmp(y),
        (XenKey::Iomem(al, ah), XenKey::Iomem(bl, bh)) => {
            let d = (ah.wrapping_sub(*al)).wrapping_sub(bh.wrapping_sub(*bl)) as i32;
            d.cmp(&0).then(al.cmp(bl))
        }
        (XenKey::Ioport(al, ah), XenKey::Ioport(bl, bh)) => {
            let d = (ah.wrapping_sub(*al)).wrapping_sub(bh.wrapping_sub(*bl)) as i32;
            d.cmp(&0).then(al.cmp(bl))
        }
        _ => Ordering::Equal,
    }
}

/// `__cil_post_process_context_rules` for the five Xen kinds, in libsepol's order: with
/// `-v`, rules with equal keys are reported and the build fails (under `-m`, only when
/// their contexts differ); at the default level duplicates are dropped silently (and the
/// rules are not written anyway).
pub(crate) fn check_duplicates<C>(
    all: &[XenCon<C>],
    verbose: u8,
    multiple_decls: bool,
) -> Result<(), Fail> {
    if verbose == 0 {
        return Ok(());
    }
    for kw in [
        Kw::PirqCon,
        Kw::IomemCon,
        Kw::IoportCon,
        Kw::PciDeviceCon,
        Kw::DeviceTreeCon,
    ] {
        let mut v: Vec<&XenCon<C>> = all.iter().filter(|x| x.kw == kw).collect();
        if v.len() < 2 {
            continue;
        }
        msort(&mut v, &|a: &&XenCon<C>, b: &&XenCon<C>| {
            compare(&a.key, &b.key)
        });
        let mut out = Vec::new();
        let mut i = 0;
        let mut conflicting = 0;
        let mut failed = false;
        for j in 1..v.len() {
            if compare(&v[i].key, &v[j].key) != Ordering::Equal {
                i = j;
                if conflicting >= 4 {
                    out.push(format!(
                        "  Only first 4 of {conflicting} conflicting rules shown"
                    ));
                }
                conflicting = 0;
            } else if multiple_decls && v[i].context == v[j].context {
                // Tolerated; libsepol keeps the later copy in the earlier one's place.
                if conflicting == 0 {
                    i = j;
                }
            } else {
                conflicting += 1;
                if conflicting == 1 {
                    // libsepol 3.4 names pirqcon conflicts "iomemcon".
                    let word = if kw == Kw::PirqCon {
                        "iomemcon"
                    } else {
                        kw.text()
                    };
                    out.push(format!("Found conflicting {word} rules"));
                    out.push(format!("  at {}", v[i].at));
                    failed = true;
                }
                if conflicting < 4 || verbose > 1 {
                    out.push(format!("  at {}", v[j].at));
                }
            }
        }
        if failed {
            out.push(format!("Problems processing {} rules", kw.text()));
            out.push("Failed post db handling".into());
            out.push("Post process failed".into());
            out.push("Failed to compile cildb: -1".into());
            return Err(Fail::bad(out));
        }
    }
    Ok(())
}

/// The rules of one kind as libsepol keeps them (`__cil_post_process_context_rules` once
/// [`check_duplicates`] has passed): sorted by key; of equal keys the first survives, or,
/// under `-m` while no conflicting rule has been seen, the later rule with an equal context
/// takes the earlier one's place.
fn kept<C>(all: &mut Vec<XenCon<C>>, kw: Kw, multiple_decls: bool) -> Vec<XenCon<C>> {
    let (mut v, rest): (Vec<XenCon<C>>, Vec<XenCon<C>>) =
        std::mem::take(all).into_iter().partition(|x| x.kw == kw);
    *all = rest;
    if v.len() < 2 {
        return v;
    }
    msort(&mut v, &|a: &XenCon<C>, b: &XenCon<C>| {
        compare(&a.key, &b.key)
    });
    // Slots of `v`, compacted in place as libsepol compacts its array of pointers.
    let mut slot: Vec<usize> = (0..v.len()).collect();
    let mut i = 0;
    let mut conflicting = 0u32;
    for j in 1..v.len() {
        if compare(&v[slot[i]].key, &v[j].key) != Ordering::Equal {
            i += 1;
            conflicting = 0;
        } else if !multiple_decls || v[slot[i]].context != v[j].context {
            conflicting += 1;
        }
        if i != j && conflicting == 0 {
            slot[i] = j;
        }
    }
    slot.truncate(i + 1);
    let mut taken: Vec<Option<XenCon<C>>> = v.into_iter().map(Some).collect();
    slot.iter().filter_map(|&k| taken[k].take()).collect()
}

/// Lowers the Xen rules for `-t xen`: each kind sorted and deduplicated as libsepol does,
/// contexts converted by `context` (the compiler's context to the model's).
pub(crate) fn lower<C>(
    mut all: Vec<XenCon<C>>,
    multiple_decls: bool,
    context: impl Fn(&C) -> Result<Context, Fail>,
) -> Result<XenContexts, Fail> {
    let mut x = XenContexts::default();
    for r in kept(&mut all, Kw::PirqCon, multiple_decls) {
        if let XenKey::Pirq(pirq) = r.key {
            x.pirqs.push(PirqCon {
                // libsepol's ocontext keeps 16 bits of the 32 CIL parses.
                pirq: pirq as u16,
                context: context(&r.ctx)?,
            });
        }
    }
    for r in kept(&mut all, Kw::IomemCon, multiple_decls) {
        if let XenKey::Iomem(low, high) = r.key {
            x.iomems.push(IomemCon {
                low,
                high,
                context: context(&r.ctx)?,
            });
        }
    }
    for r in kept(&mut all, Kw::IoportCon, multiple_decls) {
        if let XenKey::Ioport(low, high) = r.key {
            x.ioports.push(IoportCon {
                low,
                high,
                context: context(&r.ctx)?,
            });
        }
    }
    for r in kept(&mut all, Kw::PciDeviceCon, multiple_decls) {
        if let XenKey::PciDevice(device) = r.key {
            x.pci_devices.push(PciDeviceCon {
                device,
                context: context(&r.ctx)?,
            });
        }
    }
    for r in kept(&mut all, Kw::DeviceTreeCon, multiple_decls) {
        if let XenKey::DeviceTree(path) = r.key {
            // The model holds text; a path that is not UTF-8 fails rather than change.
            let path = String::from_utf8(path).map_err(|_| {
                Fail::bad(vec![format!(
                    "devicetreecon path at {} is not UTF-8 (arbiter's policy model holds text)",
                    r.at
                )])
            })?;
            x.device_trees.push(DeviceTreeCon {
                path: path.into(),
                context: context(&r.ctx)?,
            });
        }
    }
    Ok(x)
}

/// Makes `policy` a Xen policy holding `xen` (the hook the lowering calls for `-t xen`).
/// Linux object contexts stay in the model, and the writer refuses them: libsepol would
/// write them into the Xen tables of the same index, a policy no one meant.
pub(crate) fn make_xen(policy: &mut arbiter_policy::Policy, xen: XenContexts) {
    policy.ocontexts.platform = Platform::Xen;
    policy.ocontexts.xen = xen;
}
