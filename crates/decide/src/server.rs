//! Boolean state and snapshots.
//!
//! A [`Snapshot`] is immutable: the policy, its index, one assignment of booleans, which
//! conditional rule lists that assignment enables, and a sequence number. Committing
//! booleans builds a new snapshot and publishes it. Readers never lock on the check path:
//! each thread keeps its own `Arc<Snapshot>` in a [`Reader`] and compares the published
//! sequence number (one `Acquire` load of a shared word, no read-modify-write) before
//! each query; only when it changed does the reader take the publication lock to pick up
//! the new snapshot. A query in flight keeps its snapshot alive, so it finishes on one
//! consistent policy state.

use crate::index::{CondTag, PolicyIndex, UNCONDITIONAL};
use crate::{DecideError, Result};
use arbiter_policy::cond::CondExpr;
use arbiter_policy::{BoolId, Policy};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// One consistent policy state.
pub struct Snapshot {
    pub policy: Arc<Policy>,
    pub index: Arc<PolicyIndex>,
    /// Bumped on every commit; starts at 1 for a freshly loaded policy.
    pub seqno: u64,
    bools: Box<[bool]>,
    /// Bit `tag` set iff conditional list `tag` is enabled.
    enabled: Box<[u64]>,
}

impl Snapshot {
    pub fn new(
        policy: Arc<Policy>,
        index: Arc<PolicyIndex>,
        bools: Box<[bool]>,
        seqno: u64,
    ) -> Snapshot {
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
            index,
            seqno,
            bools,
            enabled: enabled.into_boxed_slice(),
        }
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

/// Publishes snapshots and holds the pending boolean values between `set` and `commit`.
pub struct Publisher {
    policy: Arc<Policy>,
    index: Arc<PolicyIndex>,
    /// Written under `current`'s lock, read lock-free by readers (Acquire pairs with the
    /// Release store in `commit`, so a reader that sees the new number finds the snapshot).
    seqno: AtomicU64,
    current: Mutex<Arc<Snapshot>>,
    pending: Mutex<Vec<bool>>,
}

impl Publisher {
    pub fn new(policy: Arc<Policy>) -> Publisher {
        let index = Arc::new(PolicyIndex::build(&policy));
        let bools: Vec<bool> = policy.bools.iter().map(|b| b.state).collect();
        let snap = Snapshot::new(
            policy.clone(),
            index.clone(),
            bools.clone().into_boxed_slice(),
            1,
        );
        Publisher {
            policy,
            index,
            seqno: AtomicU64::new(1),
            current: Mutex::new(Arc::new(snap)),
            pending: Mutex::new(bools),
        }
    }

    pub fn policy(&self) -> &Arc<Policy> {
        &self.policy
    }

    pub fn index(&self) -> &Arc<PolicyIndex> {
        &self.index
    }

    /// The published sequence number (one load).
    #[inline]
    pub fn seqno(&self) -> u64 {
        self.seqno.load(Ordering::Acquire)
    }

    /// The current snapshot (takes the publication lock; use a [`Reader`] on hot paths).
    pub fn snapshot(&self) -> Arc<Snapshot> {
        lock(&self.current).clone()
    }

    /// A per-thread reader.
    pub fn reader(&self) -> Reader<'_> {
        Reader {
            publisher: self,
            snap: self.snapshot(),
        }
    }

    /// The boolean with this name.
    pub fn bool_id(&self, name: &str) -> Result<BoolId> {
        self.policy
            .bools
            .iter()
            .position(|b| &*b.name == name)
            .and_then(BoolId::from_index)
            .ok_or_else(|| DecideError::UnknownBoolean(name.to_string()))
    }

    /// Sets a pending value; nothing changes for readers until [`Publisher::commit`].
    pub fn set_bool(&self, id: BoolId, value: bool) {
        if let Some(v) = lock(&self.pending).get_mut(id.index()) {
            *v = value;
        }
    }

    /// The pending values (what the next commit will publish).
    pub fn pending_bools(&self) -> Vec<bool> {
        lock(&self.pending).clone()
    }

    /// Publishes the pending values as a new snapshot; returns its sequence number.
    pub fn commit(&self) -> u64 {
        let bools = lock(&self.pending).clone().into_boxed_slice();
        let mut cur = lock(&self.current);
        let seqno = cur.seqno + 1;
        *cur = Arc::new(Snapshot::new(
            self.policy.clone(),
            self.index.clone(),
            bools,
            seqno,
        ));
        self.seqno.store(seqno, Ordering::Release);
        seqno
    }
}

/// A poisoned lock only means another thread panicked while holding it; the data it guards
/// (a snapshot pointer or boolean vector) is always left whole, so keep going.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A thread's view of the published snapshot.
pub struct Reader<'a> {
    publisher: &'a Publisher,
    snap: Arc<Snapshot>,
}

impl Reader<'_> {
    /// The newest snapshot: one atomic load when nothing changed.
    #[inline]
    pub fn snapshot(&mut self) -> &Arc<Snapshot> {
        if self.publisher.seqno() != self.snap.seqno {
            self.snap = self.publisher.snapshot();
        }
        &self.snap
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
