//! Type rules (`typetransition`, `typechange`, `typemember`, named type transitions)
//! entered into the unconditional table or a conditional list.

use super::*;

/// Enters type rule statement `s`: into `cond`'s list when it sits in a booleanif
/// branch, else into the unconditional table; a named transition into the filename
/// transitions. A second rule for the same key with another result is an error.
pub(super) fn type_rule(
    l: &mut L<'_>,
    p: &mut Parts,
    s: u32,
    cond: Option<(&mut CondBuild, bool)>,
) -> Result<(), Fail> {
    let (t, int, ast) = (l.t, l.int, l.ast);
    let st = ast.stmts[s as usize];
    let a = l.args(s);
    let src = l.tref(a[1])?;
    let tgt = l.tref(a[2])?;
    let ci = l.class_of(a[3])?;
    let res = match l.tref(a[a.len() - 1])? {
        TRef::Type(i) => l.type_val[i as usize],
        _ => {
            return Err(err(format!(
                "Type rule result must be a type at {}",
                l.here(s)
            )))
        }
    };
    let named = a.len() == 6 && t.sym(a[4]) != Some(Kw::Star.sym());
    let kind = kind_bits(st.kw);
    // A type (most sources and targets) is its own one value, not a vector of it.
    let (one_src, many_srcs);
    let srcs: &[u32] = match src {
        TRef::Type(i) => {
            one_src = [l.type_val[i as usize]];
            &one_src
        }
        _ => {
            many_srcs = l.expand_all(src)?;
            &many_srcs
        }
    };
    let mut cond = cond;
    for &sv in srcs {
        let (one_tgt, many_tgts);
        let tgts: &[u32] = match tgt {
            TRef::SelfT => {
                one_tgt = [sv];
                &one_tgt
            }
            TRef::Type(i) => {
                one_tgt = [l.type_val[i as usize]];
                &one_tgt
            }
            TRef::Attr(_) => {
                many_tgts = l.expand_all(tgt)?;
                &many_tgts
            }
        };
        for &tv in tgts {
            if named {
                let name = t.sym(a[4]).unwrap_or(0);
                let key = (tv, ci, name);
                let idx = *p.ftindex.entry(key).or_insert_with(|| {
                    p.ftrans.push(FilenameTrans {
                        target: tid(tv),
                        class: cid(ci),
                        name: int.str(name).into(),
                        outcomes: Box::new([]),
                    });
                    p.ftrans.len() - 1
                });
                let ft = &mut p.ftrans[idx];
                if let Some((_, o)) = ft.outcomes.iter().find(|(b, _)| b.contains(sv - 1)) {
                    if o.value() as u32 != res {
                        return Err(err(format!(
                            "Conflicting name type transition rules at {}",
                            l.here(s)
                        )));
                    }
                    continue;
                }
                // An outcome's sources grow in place; a new outcome adds one entry to the
                // list, allocated at its new length.
                match ft
                    .outcomes
                    .iter_mut()
                    .find(|(_, o)| o.value() as u32 == res)
                {
                    Some((b, _)) => {
                        *b = Ebitmap::from_bits(b.iter().chain([sv - 1]));
                    }
                    None => {
                        let mut outs = Vec::with_capacity(ft.outcomes.len() + 1);
                        outs.extend(std::mem::take(&mut ft.outcomes));
                        outs.push((Ebitmap::from_bits([sv - 1]), tid(res)));
                        ft.outcomes = outs.into_boxed_slice();
                    }
                }
                continue;
            }
            let key = AvtabKey {
                source: tid(sv),
                target: tid(tv),
                class: cid(ci),
                kind,
            };
            let entry = AvtabEntry::new(key, AvtabDatum::Type(tid(res))).map_err(mismatch)?;
            if let Some(i) = p.avindex.get(&p.avtab, &key) {
                if let AvtabDatum::Type(existing) = p.avtab[i as usize].datum() {
                    if existing != tid(res) {
                        let (key, res, old) = ((sv, tv, ci), res, existing.value() as u32);
                        let lines = messages::type_rule_conflict(l, s, key, res, old);
                        return Err(Fail::bad(lines));
                    }
                }
                continue;
            }
            match cond.as_mut() {
                None => {
                    p.avindex
                        .find_or_append(&mut p.avtab, entry)
                        .map_err(too_many)?;
                }
                Some((cb, br)) => {
                    let (this, other) = if *br {
                        (&cb.true_list, &cb.false_list)
                    } else {
                        (&cb.false_list, &cb.true_list)
                    };
                    if !other.iter().any(|e| e.key == key) && this.iter().any(|e| e.key == key) {
                        continue;
                    }
                    let list = if *br {
                        &mut cb.true_list
                    } else {
                        &mut cb.false_list
                    };
                    list.push(entry);
                }
            }
        }
    }
    Ok(())
}
