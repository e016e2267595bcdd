//! Security contexts: parsing `user:role:type[:range]`, validity, and the canonical string.
//!
//! # Parsing
//!
//! [`parse_context`] follows the kernel's `string_to_context_struct` and
//! `mls_context_to_sid` (security/selinux/ss/services.c, mls.c) step by step, so that a
//! string is accepted exactly when the kernel accepts it and yields the same context:
//!
//! * the input is a C string: it ends at the first NUL byte (the kernel copies the buffer
//!   with `kmemdup_nul` and then scans to NUL; libsepol's `context_from_string` does the
//!   same), so `"u:r:t:s0\0junk"` is `"u:r:t:s0"`;
//! * user = up to the first `:`, role = up to the second `:` (both colons required), type =
//!   up to the next `:` or the end; each is looked up in its symbol table (type aliases
//!   resolve to their type; a type *attribute* is refused);
//! * non-MLS policy: any `:` after the type is an error (the kernel returns `-EINVAL` when
//!   an MLS field is present and no default SID is given);
//! * MLS policy: the range is required. Neither the kernel (without a default SID, which
//!   only `security_context_to_sid_default` passes, for file xattrs) nor libsepol's
//!   `sepol_context_to_sid` ("MLS is enabled, but no MLS context found") supplies one;
//! * range = `low[-high]`, split at the *first* `-`; each level = `sens[:cats]` split at its
//!   first `:`; cats = `,`-separated items, each `cat` or `catA.catB` split at the first `.`
//!   (so `c0.c2.c3` looks up the category `c2.c3` and fails), with `catA` strictly below
//!   `catB`; sensitivity and category aliases are accepted; a missing high level copies
//!   the low one;
//! * last, the context must pass the kernel's `policydb_context_isvalid`
//!   ([`Policy::context_is_valid`], see [`validate_context`]).
//!
//! Errors are reported in the kernel's order (user, role, type, range, validity), and name
//! the offending part: `Unknown{User,Role,Type,Sensitivity,Category}` for a name no symbol
//! has; `MalformedContext` for the shape (a missing `:`, an empty sensitivity or category,
//! a descending `cA.cB`, a range in a non-MLS policy or none in an MLS one);
//! `InvalidContext` when every part exists but the policy forbids the combination — and for
//! a type attribute in the type field (the name exists, it just is not a type).
//!
//! One known divergence from libsepol 3.4 (the test oracle): its older `mls_context_to_sid`
//! stops reading at a second `-` in the high level, accepting `s0-s0:c0-anything` as
//! `s0-s0:c0`. The kernel's version since late 2018 (Jann Horn, "selinux: refactor
//! mls_context_to_sid() and make it stricter") rejects it, and so do we.
//!
//! # Formatting
//!
//! [`format_context`] is the kernel's `context_struct_to_string` / `mls_sid_to_context`:
//! the low level, then `-high` only when high differs from low; categories ascending, a run
//! of three or more consecutive categories as `cA.cB`, a run of two as `cA,cB`
//! (`c0,c1,c2,c5` → `c0.c2,c5`; `c0,c1,c3` → `c0,c1,c3`). The kernel's code emits `.` when
//! `prev - head > 1` and `,` otherwise. libsepol 3.4 differs when a run crosses a gap
//! between two ebitmap nodes: it prints `c62,c63,c128` as `c62.c128` (its bit iterator
//! jumps over the gap without ending the run). That is a libsepol bug — its string no
//! longer parses back to the same context — and we print what the kernel prints.

use arbiter_policy::mls::{Context, MlsLevel, MlsRange};
use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::{CatId, Ebitmap, Policy, SensId};

use crate::error::{DecideError, Result};
use crate::names::Names;

/// Parses and validates a context string against `policy`, exactly as the kernel's
/// `security_context_to_sid` does (see the module documentation).
///
/// Never panics, whatever the input: this is the fuzzing entry point. `names` must have been
/// built from `policy`.
pub fn parse_context(policy: &Policy, names: &Names, s: &str) -> Result<Context> {
    parse_context_bytes(policy, names, s.as_bytes())
}

/// [`parse_context`] on raw bytes (the kernel's interface takes bytes; a name that is not
/// UTF-8 simply names no symbol).
pub fn parse_context_bytes(policy: &Policy, names: &Names, input: &[u8]) -> Result<Context> {
    let s = match input.iter().position(|&b| b == 0) {
        Some(nul) => &input[..nul],
        None => input,
    };
    let ctx = parse_unvalidated(names, s)?;
    match policy.context_is_valid(&ctx) {
        Ok(()) => Ok(ctx),
        Err(reason) => Err(DecideError::InvalidContext {
            context: lossy(s),
            reason,
        }),
    }
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn malformed(s: &[u8], reason: impl Into<String>) -> DecideError {
    DecideError::MalformedContext {
        context: lossy(s),
        reason: reason.into(),
    }
}

/// Splits at the first `sep`: (before, Some(after)) or (all, None).
#[inline]
fn split_once(s: &[u8], sep: u8) -> (&[u8], Option<&[u8]>) {
    match s.iter().position(|&b| b == sep) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    }
}

/// A name as the symbol tables see it: bytes that are not UTF-8 name nothing.
#[inline]
fn as_name(b: &[u8]) -> Option<&str> {
    std::str::from_utf8(b).ok()
}

/// `string_to_context_struct` up to, not including, `policydb_context_isvalid`.
fn parse_unvalidated(names: &Names, s: &[u8]) -> Result<Context> {
    let (user, Some(rest)) = split_once(s, b':') else {
        return Err(malformed(s, "no ':' after the user"));
    };
    let user = as_name(user)
        .and_then(|n| names.user(n))
        .ok_or_else(|| DecideError::UnknownUser(lossy(user)))?;
    let (role, Some(rest)) = split_once(rest, b':') else {
        return Err(malformed(s, "no ':' after the role"));
    };
    let role = as_name(role)
        .and_then(|n| names.role(n))
        .ok_or_else(|| DecideError::UnknownRole(lossy(role)))?;
    let (ty_name, mls) = split_once(rest, b':');
    let sym = as_name(ty_name)
        .and_then(|n| names.type_symbol(n))
        .ok_or_else(|| DecideError::UnknownType(lossy(ty_name)))?;
    if sym.flavor != TypeFlavor::Type {
        return Err(DecideError::InvalidContext {
            context: lossy(s),
            reason: arbiter_policy::Invalid::AttributeAsType(lossy(ty_name)),
        });
    }
    let range = match (names.mls(), mls) {
        (false, None) => MlsRange::default(),
        (false, Some(_)) => {
            return Err(malformed(
                s,
                "the policy is not MLS but the context has an MLS range",
            ))
        }
        (true, None) => {
            return Err(malformed(
                s,
                "the policy is MLS and the context has no MLS range",
            ))
        }
        (true, Some(range)) => parse_range(names, s, range)?,
    };
    Ok(Context {
        user,
        role,
        ty: sym.id,
        range,
    })
}

/// `mls_context_to_sid` for a present range (`oldc == ':'`).
fn parse_range(names: &Names, whole: &[u8], range: &[u8]) -> Result<MlsRange> {
    let (low, high) = split_once(range, b'-');
    // Category bits while parsing, dense: sets and runs in any order, duplicates allowed.
    let mut words = vec![0u64; names.category_words()];
    let low = parse_level(names, whole, low, &mut words)?;
    let high = match high {
        Some(high) => parse_level(names, whole, high, &mut words)?,
        None => low.clone(),
    };
    Ok(MlsRange { low, high })
}

fn parse_level(names: &Names, whole: &[u8], level: &[u8], words: &mut [u64]) -> Result<MlsLevel> {
    let (sens, cats) = split_once(level, b':');
    if sens.is_empty() {
        return Err(malformed(whole, "empty sensitivity"));
    }
    let sens: SensId = as_name(sens)
        .and_then(|n| names.sensitivity(n))
        .ok_or_else(|| DecideError::UnknownSensitivity(lossy(sens)))?;
    words.fill(0);
    let mut any = false;
    if let Some(mut cats) = cats {
        loop {
            let (item, next) = split_once(cats, b',');
            let (first, last) = split_once(item, b'.');
            let first = category(names, whole, first)?;
            let lo = first.index();
            let hi = match last {
                None => lo,
                Some(last) => {
                    let last = category(names, whole, last)?;
                    if first.value() >= last.value() {
                        return Err(malformed(
                            whole,
                            format!(
                                "category range {} is not ascending",
                                String::from_utf8_lossy(item)
                            ),
                        ));
                    }
                    last.index()
                }
            };
            // `category()` returned ids of this policy, so both are < category_count().
            set_range(words, lo, hi);
            any = true;
            match next {
                Some(rest) => cats = rest,
                None => break,
            }
        }
    }
    let cats = if !any {
        Ebitmap::default()
    } else if let Some(known) = names.common_category_set(words) {
        known
    } else {
        ebitmap_from_words(words)
    };
    Ok(MlsLevel {
        sens: sens.value(),
        cats,
    })
}

fn category(names: &Names, whole: &[u8], name: &[u8]) -> Result<CatId> {
    if name.is_empty() {
        return Err(malformed(whole, "empty category"));
    }
    as_name(name)
        .and_then(|n| names.category(n))
        .filter(|c| c.index() < names.category_count())
        .ok_or_else(|| DecideError::UnknownCategory(lossy(name)))
}

/// Sets bits `lo..=hi` (both within `words`), a word at a time.
fn set_range(words: &mut [u64], lo: usize, hi: usize) {
    let (lw, hw) = (lo / 64, hi / 64);
    let low_mask = u64::MAX << (lo % 64);
    let high_mask = u64::MAX >> (63 - hi % 64);
    if lw == hw {
        words[lw] |= low_mask & high_mask;
    } else {
        words[lw] |= low_mask;
        words[lw + 1..hw].fill(u64::MAX);
        words[hw] |= high_mask;
    }
}

fn ebitmap_from_words(words: &[u64]) -> Ebitmap {
    Ebitmap::from_bits(words.iter().enumerate().flat_map(|(i, &w)| {
        let mut m = w;
        std::iter::from_fn(move || {
            if m == 0 {
                return None;
            }
            let b = m.trailing_zeros();
            m &= m - 1;
            Some(i as u32 * 64 + b)
        })
    }))
}

/// Checks `ctx` against the policy as the kernel's `policydb_context_isvalid` does (via
/// [`Policy::context_is_valid`], the policy crate's one implementation of that rule, also
/// used on the policy's own contexts at load): user, role and type declared; unless the
/// role is `object_r`, the role authorised for the type and the user for the role; for MLS,
/// both levels valid (sensitivity declared, categories allowed by its `level` statement),
/// high dominating low, and unless `object_r`, the range within the user's range.
///
/// The error is [`DecideError::InvalidContext`] with the context's canonical string.
pub fn validate_context(policy: &Policy, names: &Names, ctx: &Context) -> Result<()> {
    policy
        .context_is_valid(ctx)
        .map_err(|reason| DecideError::InvalidContext {
            context: format_context(names, ctx),
            reason,
        })
}

/// The canonical string of `ctx` (the kernel's `context_struct_to_string`).
///
/// For a context valid in the policy `names` was built from. Values the policy does not
/// define (a bug upstream) are written as `?N` rather than panicking.
pub fn format_context(names: &Names, ctx: &Context) -> String {
    let mut out = String::with_capacity(64);
    write_context(names, ctx, &mut out);
    out
}

/// [`format_context`] appending to `out`.
pub fn write_context(names: &Names, ctx: &Context, out: &mut String) {
    use std::fmt::Write;
    let name = |n: Option<&str>, v: u32, out: &mut String| match n {
        Some(n) => out.push_str(n),
        None => {
            let _ = write!(out, "?{v}");
        }
    };
    name(names.user_name(ctx.user), ctx.user.value(), out);
    out.push(':');
    name(names.role_name(ctx.role), ctx.role.value(), out);
    out.push(':');
    name(names.type_name(ctx.ty), u32::from(ctx.ty.value()), out);
    if !names.mls() {
        return;
    }
    out.push(':');
    write_level(names, &ctx.range.low, out);
    if ctx.range.high != ctx.range.low {
        out.push('-');
        write_level(names, &ctx.range.high, out);
    }
}

/// The MLS part of [`format_context`] alone (`s0-s0:c0.c1023`), as libselinux's
/// `context_range_get` would return it; empty for non-MLS policies.
pub fn format_range(names: &Names, range: &MlsRange) -> String {
    let mut out = String::new();
    if names.mls() {
        write_level(names, &range.low, &mut out);
        if range.high != range.low {
            out.push('-');
            write_level(names, &range.high, &mut out);
        }
    }
    out
}

/// One level as `mls_sid_to_context` writes it.
fn write_level(names: &Names, level: &MlsLevel, out: &mut String) {
    use std::fmt::Write;
    match SensId::new(level.sens).and_then(|s| names.sensitivity_name(s)) {
        Some(n) => out.push_str(n),
        None => {
            let _ = write!(out, "?{}", level.sens);
        }
    }
    let cat = |bit: u32, out: &mut String| match CatId::from_index(bit as usize)
        .and_then(|c| names.category_name(c))
    {
        Some(n) => out.push_str(n),
        None => {
            let _ = write!(out, "?{}", u64::from(bit) + 1);
        }
    };
    // The kernel's loop: `head` starts a run, `prev` is the last bit seen; a run of length
    // >= 3 (prev - head > 1) closes with '.', of length 2 with ','.
    let mut run: Option<(u32, u32)> = None;
    let close = |(head, prev): (u32, u32), out: &mut String| {
        if prev != head {
            out.push(if prev - head > 1 { '.' } else { ',' });
            cat(prev, out);
        }
    };
    // Whole runs at a time, word by word (`c0.c1023` is 16 words, not 1024 bits).
    for (first, last) in runs(&level.cats) {
        match run {
            Some((head, prev)) if first == prev + 1 => run = Some((head, last)),
            Some(r) => {
                close(r, out);
                out.push(',');
                cat(first, out);
                run = Some((first, last));
            }
            None => {
                out.push(':');
                cat(first, out);
                run = Some((first, last));
            }
        }
    }
    if let Some(r) = run {
        close(r, out);
    }
}

/// The maximal runs of consecutive set bits within each 64-bit node, as `(first, last)`,
/// ascending. Runs that continue across a node boundary come out as two adjacent runs;
/// [`write_level`] joins them.
fn runs(cats: &Ebitmap) -> impl Iterator<Item = (u32, u32)> + '_ {
    cats.nodes().flat_map(|(start, map)| {
        let mut m = map;
        let mut base = start;
        std::iter::from_fn(move || {
            if m == 0 {
                return None;
            }
            let skip = m.trailing_zeros();
            // `skip < 64` since m != 0; shifting by it is in range.
            m >>= skip;
            base += skip;
            let len = (!m).trailing_zeros(); // 1..=64
            let run = (base, base + len - 1);
            m = if len == 64 { 0 } else { m >> len };
            base += len;
            Some(run)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's bit-at-a-time run finding, for comparison.
    fn naive_runs(cats: &Ebitmap) -> Vec<(u32, u32)> {
        let mut out: Vec<(u32, u32)> = Vec::new();
        for bit in cats.iter() {
            match out.last_mut() {
                Some((_, last)) if *last + 1 == bit => *last = bit,
                _ => out.push((bit, bit)),
            }
        }
        out
    }

    /// `runs` split at node boundaries, joined as `write_level` joins them.
    fn joined_runs(cats: &Ebitmap) -> Vec<(u32, u32)> {
        let mut out: Vec<(u32, u32)> = Vec::new();
        for (first, last) in runs(cats) {
            match out.last_mut() {
                Some((_, l)) if *l + 1 == first => *l = last,
                _ => out.push((first, last)),
            }
        }
        out
    }

    #[test]
    fn set_range_sets_exactly_the_range() {
        for lo in 0..200 {
            for hi in lo..200 {
                let mut words = [0u64; 4];
                set_range(&mut words, lo, hi);
                for bit in 0..256 {
                    let set = words[bit / 64] & (1 << (bit % 64)) != 0;
                    assert_eq!(set, (lo..=hi).contains(&bit), "{lo}..={hi} bit {bit}");
                }
            }
        }
    }

    #[test]
    fn word_runs_match_bit_runs() {
        let mut seed = 0x1234_5678_9abc_def1u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let fixed = [
            Ebitmap::from_bits(0..64),
            Ebitmap::from_bits(0..1024),
            Ebitmap::from_bits([62, 63, 128]),
            Ebitmap::from_bits([63, 64]),
            Ebitmap::from_bits([0, 63, 64, 127, 128, 255]),
            Ebitmap::default(),
        ];
        for e in &fixed {
            assert_eq!(joined_runs(e), naive_runs(e), "{e:?}");
        }
        for _ in 0..5_000 {
            let words = 1 + next() % 6;
            let bits = (0..words as u32).flat_map(|w| {
                let mut m = match next() % 4 {
                    0 => u64::MAX,
                    1 => 0,
                    2 => next() & next(),
                    _ => next(),
                };
                std::iter::from_fn(move || {
                    (m != 0).then(|| {
                        let b = m.trailing_zeros();
                        m &= m - 1;
                        w * 64 + b
                    })
                })
            });
            let e = Ebitmap::from_bits(bits.collect::<Vec<_>>());
            assert_eq!(joined_runs(&e), naive_runs(&e), "{e:?}");
        }
    }
}
