//! Statements' names looked up in one policy: type sets become sets of types (attributes
//! expanded, as libsepol expands a neverallow's `stypes`/`ttypes`), permission names
//! become each class's bits, ioctl numbers a 65,536-bit set.

use super::parse::{NameSet, Source, Statement, XpermSet};
use super::NeverallowError;
use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::ClassId;
use arbiter_query::Index;
use std::collections::HashMap;

/// One statement resolved against a policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assertion {
    /// The input it came from.
    pub file: String,
    /// Its line there.
    pub line: u32,
    /// Its text, for reports.
    pub text: String,
    /// The source types, by type slot (attributes already expanded; never set for one).
    pub sources: Vec<bool>,
    /// The target types, by type slot.
    pub targets: Vec<bool>,
    /// Whether each source is also a target of itself (`self`).
    pub target_self: bool,
    /// The permission bits forbidden in each class.
    pub perms: Vec<(ClassId, u32)>,
    /// For neverallowxperm: the forbidden ioctl numbers, 64 per word.
    pub ioctls: Option<Vec<u64>>,
}

impl Assertion {
    /// Whether this is a neverallowxperm / neverallowx.
    pub fn is_xperm(&self) -> bool {
        self.ioctls.is_some()
    }
}

/// Words in an ioctl-number set.
pub const IOCTL_WORDS: usize = 1024;

/// Resolves every statement of `source`; the first unknown name is an error.
pub fn resolve(index: &Index<'_>, source: &Source) -> Result<Vec<Assertion>, NeverallowError> {
    let mut r = Resolver {
        index,
        source,
        cache: HashMap::new(),
        visiting: Vec::new(),
    };
    source.statements.iter().map(|s| r.statement(s)).collect()
}

struct Resolver<'a, 'p> {
    index: &'a Index<'p>,
    source: &'a Source,
    cache: HashMap<String, Vec<bool>>,
    visiting: Vec<String>,
}

impl Resolver<'_, '_> {
    fn unknown(s: &Statement, message: String) -> NeverallowError {
        NeverallowError::Unknown {
            file: s.file.clone(),
            line: s.line,
            message,
        }
    }

    fn statement(&mut self, s: &Statement) -> Result<Assertion, NeverallowError> {
        let sources = self.types(s, &s.source)?;
        let targets = match &s.target {
            Some(t) => self.types(s, t)?,
            None => vec![false; self.index.type_slots()],
        };
        let mut perms: Vec<(ClassId, u32)> = Vec::new();
        for cp in &s.perms {
            for name in &cp.classes {
                let class = self
                    .index
                    .class(name)
                    .ok_or_else(|| Self::unknown(s, format!("unknown class '{name}'")))?;
                let bits = self.perms(s, class, &cp.perms)?;
                match perms.iter_mut().find(|(c, _)| *c == class) {
                    Some((_, b)) => *b |= bits,
                    None => perms.push((class, bits)),
                }
            }
        }
        let ioctls = s.xperms.as_ref().map(xperm_bits);
        Ok(Assertion {
            file: s.file.clone(),
            line: s.line,
            text: s.text.clone(),
            sources,
            targets,
            target_self: s.target_self,
            perms,
            ioctls,
        })
    }

    /// The universe of type sets: every type (not attribute) slot.
    fn all_types(&self) -> Vec<bool> {
        let p = self.index.policy();
        (0..self.index.type_slots())
            .map(|i| p.types.get(i).is_some_and(|d| d.flavor == TypeFlavor::Type))
            .collect()
    }

    fn types(&mut self, s: &Statement, set: &NameSet) -> Result<Vec<bool>, NeverallowError> {
        let all = self.all_types();
        let combine = |this: &mut Self,
                       items: &[NameSet],
                       f: fn(bool, bool) -> bool,
                       start: Option<Vec<bool>>|
         -> Result<Vec<bool>, NeverallowError> {
            let mut acc = start;
            for i in items {
                let v = this.types(s, i)?;
                acc = Some(match acc {
                    None => v,
                    Some(a) => a.iter().zip(&v).map(|(&x, &y)| f(x, y)).collect(),
                });
            }
            Ok(acc.unwrap_or_else(|| vec![false; all.len()]))
        };
        Ok(match set {
            NameSet::Name(n) => self.named_types(s, n)?,
            NameSet::All => all,
            NameSet::Not(x) => {
                let v = self.types(s, x)?;
                all.iter().zip(&v).map(|(&a, &x)| a && !x).collect()
            }
            NameSet::Or(items) => combine(self, items, |x, y| x || y, None)?,
            NameSet::And(items) => combine(self, items, |x, y| x && y, None)?,
            NameSet::Xor(items) => combine(self, items, |x, y| x != y, None)?,
            NameSet::Minus(a, b) => {
                let (a, b) = (self.types(s, a)?, self.types(s, b)?);
                a.iter().zip(&b).map(|(&x, &y)| x && !y).collect()
            }
        })
    }

    /// A type, alias or attribute of the policy, or an attribute the input declares.
    fn named_types(&mut self, s: &Statement, name: &str) -> Result<Vec<bool>, NeverallowError> {
        if let Some(v) = self.cache.get(name) {
            return Ok(v.clone());
        }
        let source = self.source;
        if let Some(local) = source.attributes.iter().find(|a| a.name == name) {
            if self.visiting.iter().any(|v| v == name) || self.visiting.len() > 64 {
                return Err(NeverallowError::Syntax {
                    file: s.file.clone(),
                    line: local.line,
                    message: format!("attribute '{name}' contains itself"),
                });
            }
            self.visiting.push(name.to_string());
            let v = self.types(s, &NameSet::Or(local.members.clone()));
            self.visiting.pop();
            let v = v?;
            self.cache.insert(name.to_string(), v.clone());
            return Ok(v);
        }
        let t = self
            .index
            .type_or_attr(name)
            .ok_or_else(|| Self::unknown(s, format!("unknown type or attribute '{name}'")))?;
        let mut v = vec![false; self.index.type_slots()];
        for &m in self.index.expand(t) {
            if let Some(b) = v.get_mut(m.index()) {
                *b = true;
            }
        }
        Ok(v)
    }

    fn perms(&self, s: &Statement, class: ClassId, set: &NameSet) -> Result<u32, NeverallowError> {
        let all = self.index.class_perm_mask(class);
        let fold = |items: &[NameSet], f: fn(u32, u32) -> u32| -> Result<u32, NeverallowError> {
            let mut acc: Option<u32> = None;
            for i in items {
                let v = self.perms(s, class, i)?;
                acc = Some(acc.map_or(v, |a| f(a, v)));
            }
            Ok(acc.unwrap_or(0))
        };
        Ok(match set {
            NameSet::Name(n) => {
                let bit = self
                    .index
                    .class_perms(class)
                    .find(|&(p, _)| p == n)
                    .map(|(_, b)| b)
                    .ok_or_else(|| {
                        Self::unknown(
                            s,
                            format!(
                                "permission '{n}' is not defined for class '{}'",
                                self.index.class_name(class)
                            ),
                        )
                    })?;
                1u32.checked_shl(bit).unwrap_or(0)
            }
            NameSet::All => all,
            NameSet::Not(x) => all & !self.perms(s, class, x)?,
            NameSet::Or(items) => fold(items, |a, b| a | b)?,
            NameSet::And(items) => fold(items, |a, b| a & b)?,
            NameSet::Xor(items) => fold(items, |a, b| a ^ b)?,
            NameSet::Minus(a, b) => self.perms(s, class, a)? & !self.perms(s, class, b)?,
        })
    }
}

/// The ioctl numbers a set names.
fn xperm_bits(set: &XpermSet) -> Vec<u64> {
    let fold = |items: &[XpermSet], f: fn(u64, u64) -> u64| {
        let mut acc: Option<Vec<u64>> = None;
        for i in items {
            let v = xperm_bits(i);
            acc = Some(match acc {
                None => v,
                Some(a) => a.iter().zip(&v).map(|(&x, &y)| f(x, y)).collect(),
            });
        }
        acc.unwrap_or_else(|| vec![0; IOCTL_WORDS])
    };
    match set {
        XpermSet::Range(lo, hi) => {
            let mut v = vec![0u64; IOCTL_WORDS];
            for n in *lo as usize..=*hi as usize {
                v[n / 64] |= 1 << (n % 64);
            }
            v
        }
        XpermSet::All => vec![u64::MAX; IOCTL_WORDS],
        XpermSet::Not(x) => xperm_bits(x).iter().map(|w| !w).collect(),
        XpermSet::Or(items) => fold(items, |a, b| a | b),
        XpermSet::And(items) => fold(items, |a, b| a & b),
        XpermSet::Xor(items) => fold(items, |a, b| a ^ b),
    }
}
