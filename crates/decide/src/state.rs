//! One immutable policy state: what every decision reads.
//!
//! A [`Snapshot`] holds the policy, its index and name tables, the SID table whose
//! contexts are expressed in that policy's values, one assignment of booleans, which
//! conditional rule lists that assignment enables, and a sequence number. A boolean commit
//! publishes a new snapshot sharing everything but the booleans; a policy load publishes a
//! new snapshot with everything rebuilt (see [`crate::security`] for publication and
//! [`crate::convert`] for how SIDs carry over). A query in flight keeps its snapshot
//! alive, so it finishes on one consistent state.

use crate::index::{CondTag, PolicyIndex, UNCONDITIONAL};
use crate::names::Names;
use crate::sidtab::SidTable;
use crate::sync::Arc;
use arbiter_policy::cond::CondExpr;
use arbiter_policy::Policy;
use std::sync::atomic::{AtomicU64, Ordering};

/// What one policy load built: shared by every snapshot of that load.
pub struct Loaded {
    /// The policy.
    pub policy: std::sync::Arc<Policy>,
    /// Its decision index.
    pub index: PolicyIndex,
    /// Its name tables.
    pub names: Names,
    /// SIDs and their contexts in this policy's values.
    pub sids: SidTable,
    /// Unique across every server of the process: identifies this load (a [`PermSet`]
    /// resolved against it is valid only for snapshots of it).
    ///
    /// [`PermSet`]: crate::PermSet
    pub load_id: u64,
    /// The sequence number of the first snapshot of this load.
    pub load_seqno: u64,
}

/// Source of [`Loaded::load_id`]: one counter for the whole process, so two servers (or one
/// server before and after a reload) never share a load identity.
static LOADS: AtomicU64 = AtomicU64::new(1);

impl Loaded {
    /// Bundles a policy with what was built from it, under a fresh load identity.
    pub fn new(
        policy: std::sync::Arc<Policy>,
        index: PolicyIndex,
        sids: SidTable,
        load_seqno: u64,
    ) -> Loaded {
        let names = Names::new(&policy);
        Loaded::from_parts(policy, index, names, sids, load_seqno)
    }

    /// Like [`Loaded::new`] with name tables already built.
    pub fn from_parts(
        policy: std::sync::Arc<Policy>,
        index: PolicyIndex,
        names: Names,
        sids: SidTable,
        load_seqno: u64,
    ) -> Loaded {
        Loaded {
            policy,
            index,
            names,
            sids,
            // Relaxed: only uniqueness matters, which the RMW guarantees in any order.
            load_id: LOADS.fetch_add(1, Ordering::Relaxed),
            load_seqno,
        }
    }
}

/// One consistent policy state.
pub struct Snapshot {
    /// The policy (shared with the load).
    pub policy: std::sync::Arc<Policy>,
    /// What the load built: index, names, SIDs.
    pub loaded: Arc<Loaded>,
    /// Bumped on every boolean commit and policy load; never decreases for the life of
    /// the server.
    pub seqno: u64,
    bools: Box<[bool]>,
    /// Bit `tag` set iff conditional list `tag` is enabled.
    enabled: Box<[u64]>,
}

impl Snapshot {
    /// The state of `loaded` under the boolean values `bools`.
    pub fn new(loaded: Arc<Loaded>, bools: Box<[bool]>, seqno: u64) -> Snapshot {
        let policy = loaded.policy.clone();
        let n = policy.cond_nodes.len();
        let mut enabled = vec![0u64; (2 * n).div_ceil(64).max(1)];
        for (i, node) in policy.cond_nodes.iter().enumerate() {
            // The kernel disables both lists when an expression cannot be evaluated.
            match eval_cond(&node.expr, &bools) {
                Some(true) => set_bit(&mut enabled, 2 * i),
                Some(false) => set_bit(&mut enabled, 2 * i + 1),
                None => {}
            }
        }
        Snapshot {
            policy,
            loaded,
            seqno,
            bools,
            enabled: enabled.into_boxed_slice(),
        }
    }

    /// The decision index.
    #[inline]
    pub fn index(&self) -> &PolicyIndex {
        &self.loaded.index
    }

    /// The name tables.
    #[inline]
    pub fn names(&self) -> &Names {
        &self.loaded.names
    }

    /// The SID table.
    #[inline]
    pub fn sids(&self) -> &SidTable {
        &self.loaded.sids
    }

    /// Whether a rule with this conditional tag applies under this snapshot's booleans.
    #[inline]
    pub fn cond_enabled(&self, tag: CondTag) -> bool {
        if tag == UNCONDITIONAL {
            return true;
        }
        let b = tag as usize;
        self.enabled
            .get(b / 64)
            .is_some_and(|w| w & (1 << (b % 64)) != 0)
    }

    /// The boolean values this snapshot was computed with.
    pub fn bools(&self) -> &[bool] {
        &self.bools
    }

    /// Evaluates a conditional node's expression under this snapshot's booleans.
    pub fn cond_value(&self, node: usize) -> Option<bool> {
        self.policy
            .cond_nodes
            .get(node)
            .and_then(|n| eval_cond(&n.expr, &self.bools))
    }
}

fn set_bit(words: &mut [u64], b: usize) {
    words[b / 64] |= 1 << (b % 64);
}

/// Evaluates a postfix boolean expression as the kernel's `cond_evaluate_expr`; `None` when
/// the expression is malformed (stack underflow, unknown boolean, not one result).
pub fn eval_cond(expr: &[CondExpr], bools: &[bool]) -> Option<bool> {
    let mut stack: Vec<bool> = Vec::with_capacity(8);
    for e in expr {
        match *e {
            CondExpr::Bool(b) => stack.push(*bools.get(b.index())?),
            CondExpr::Not => {
                let v = stack.pop()?;
                stack.push(!v);
            }
            op => {
                let b = stack.pop()?;
                let a = stack.pop()?;
                stack.push(match op {
                    CondExpr::Or => a | b,
                    CondExpr::And => a & b,
                    CondExpr::Xor => a ^ b,
                    CondExpr::Eq => a == b,
                    CondExpr::Neq => a != b,
                    CondExpr::Bool(_) | CondExpr::Not => unreachable!("handled above"),
                });
            }
        }
    }
    if stack.len() == 1 {
        stack.pop()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_policy::BoolId;

    fn b(i: u32) -> CondExpr {
        CondExpr::Bool(BoolId::new(i).unwrap())
    }

    #[test]
    fn cond_expressions_follow_postfix_semantics() {
        let bools = [true, false];
        assert_eq!(eval_cond(&[b(1)], &bools), Some(true));
        assert_eq!(eval_cond(&[b(1), CondExpr::Not], &bools), Some(false));
        assert_eq!(eval_cond(&[b(1), b(2), CondExpr::And], &bools), Some(false));
        assert_eq!(eval_cond(&[b(1), b(2), CondExpr::Or], &bools), Some(true));
        assert_eq!(eval_cond(&[b(1), b(2), CondExpr::Xor], &bools), Some(true));
        assert_eq!(eval_cond(&[b(1), b(2), CondExpr::Eq], &bools), Some(false));
        assert_eq!(eval_cond(&[b(1), b(2), CondExpr::Neq], &bools), Some(true));
    }

    #[test]
    fn malformed_cond_expression_enables_neither_list() {
        assert_eq!(eval_cond(&[CondExpr::And], &[true]), None);
        assert_eq!(eval_cond(&[b(1), b(1)], &[true]), None);
        assert_eq!(eval_cond(&[b(9)], &[true]), None);
    }
}
