//! The text outputs secilc writes beside the policy: `file_contexts`, `seusers` and
//! `users_extra`.

use super::*;

/// A `selinuxuser` as lowered: login name, user declaration, range.
pub(super) type SeUser = (Sym, u32, (Lvl, Lvl));

/// `file_contexts` (from the sorted `filecon` list), `seusers` (`selinuxuser` lines newest
/// first, then `__default__`) and `users_extra` (`userprefix` lines).
pub(super) fn outputs(
    l: &L<'_>,
    filecons: &[FileCon],
    selinuxusers: &[SeUser],
    seuser_default: Option<&(u32, (Lvl, Lvl))>,
    userprefixes: &[(u32, Sym)],
) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    // A line is its path, a file type and a context (`u:r:t:s0`, some tens of bytes).
    let mut fc = Vec::with_capacity(filecons.iter().map(|f| f.0.len() + 64).sum());
    for (path, ft, ctx, _) in filecons {
        fc.extend_from_slice(path);
        fc.extend_from_slice(match ft {
            1 => b"\t--",
            2 => b"\t-d",
            3 => b"\t-c",
            4 => b"\t-b",
            5 => b"\t-s",
            6 => b"\t-p",
            7 => b"\t-l",
            _ => b"",
        });
        match ctx {
            Some(c) => {
                fc.push(b'\t');
                fc.extend_from_slice(l.name_bytes(l.users[c.user as usize]));
                fc.push(b':');
                fc.extend_from_slice(l.name_bytes(l.roles[c.role as usize]));
                fc.push(b':');
                fc.extend_from_slice(l.name_bytes(l.types[c.ty as usize]));
                if l.mls {
                    fc.push(b':');
                    level_text(l, &c.range.0, &mut fc);
                    if c.range.0 != c.range.1 {
                        fc.push(b'-');
                        level_text(l, &c.range.1, &mut fc);
                    }
                }
            }
            None => fc.extend_from_slice(b"\t<<none>>"),
        }
        fc.push(b'\n');
    }
    let mut seusers = Vec::new();
    let seuser_line = |name: &[u8], u: u32, rg: &(Lvl, Lvl), out: &mut Vec<u8>| {
        out.extend_from_slice(name);
        out.push(b':');
        out.extend_from_slice(ast_name(l, u).as_bytes());
        if l.mls {
            out.push(b':');
            level_text(l, &rg.0, out);
            out.push(b'-');
            level_text(l, &rg.1, out);
        }
        out.push(b'\n');
    };
    for (name, u, rg) in selinuxusers.iter().rev() {
        seuser_line(l.int.bytes(*name), *u, rg, &mut seusers);
    }
    if let Some((u, rg)) = seuser_default {
        seuser_line(b"__default__", *u, rg, &mut seusers);
    }
    let mut users_extra = Vec::new();
    for (u, p) in userprefixes {
        users_extra.extend_from_slice(b"user ");
        users_extra.extend_from_slice(l.name_bytes(*u));
        users_extra.extend_from_slice(b" prefix ");
        users_extra.extend_from_slice(l.int.bytes(*p));
        users_extra.extend_from_slice(b";\n");
    }
    (fc, seusers, users_extra)
}
