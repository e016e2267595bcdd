//! Models of the kernel's and libselinux's caches, for comparison in the benchmark.
//!
//! [`KernelAvc`] follows `security/selinux/avc.c` (before 6.19, with a selectable hash):
//! an array of `slots` hlist heads; each entry a separately allocated node pushed at the
//! head of its chain (`hlist_add_head_rcu`); a lookup walks the chain comparing ssid,
//! tclass, tsid; an insertion allocates, bumps the node count and, when it exceeds the
//! threshold, reclaims [`AVC_CACHE_RECLAIM`] nodes by emptying chains from the bucket after
//! a rotating hint (`avc_reclaim_node`); an existing node for the key is replaced; inserts
//! with a sequence number older than the latest reset are refused
//! (`avc_latest_notif_update`). RCU readers do no writes, so concurrent lookups are
//! modelled by sharing `&KernelAvc` between threads while nothing inserts.
//!
//! [`LockedAvc`] follows libselinux's `avc.c`: the same chains behind one global mutex
//! taken by every lookup, a per-node `used` bit set by lookups and a second-chance reclaim
//! of one node when the pool is exhausted.

use std::sync::Mutex;

use crate::raw_compute_av;
use arbiter_avc::internals::check_slots;
use arbiter_avc::{CacheStats, ConfigError, HashKind, HashStats, AVC_CACHE_RECLAIM};
use arbiter_decide::{AvDecision as Decision, DecideError as SourceError, DecisionSource};

struct Node {
    ssid: u32,
    tsid: u32,
    tclass: u16,
    avd: Decision,
    next: Option<Box<Node>>,
}

fn validate(slots: usize, threshold: usize) -> Result<(), ConfigError> {
    check_slots("baseline", slots, threshold)
}

/// Drops a chain iteratively (a recursive drop of a long chain could exhaust the stack).
fn drop_chain(mut head: Option<Box<Node>>) -> usize {
    let mut n = 0;
    while let Some(mut node) = head {
        head = node.next.take();
        n += 1;
    }
    n
}

fn chain_stats(slots: &[Option<Box<Node>>], entries: usize) -> HashStats {
    let mut st = HashStats {
        entries,
        buckets: slots.len(),
        ..Default::default()
    };
    for head in slots {
        let mut len = 0;
        let mut cur = head.as_deref();
        while let Some(n) = cur {
            len += 1;
            cur = n.next.as_deref();
        }
        if len > 0 {
            st.buckets_used += 1;
        }
        st.longest_chain = st.longest_chain.max(len);
    }
    st.longest_probe = st.longest_chain;
    st
}

/// The kernel's AVC (chained buckets, reclaim by rotating bucket hint).
pub struct KernelAvc {
    slots: Vec<Option<Box<Node>>>,
    bits: u32,
    hash: HashKind,
    threshold: usize,
    active: usize,
    lru_hint: usize,
    latest_notif: u64,
    stats: CacheStats,
}

impl Drop for KernelAvc {
    fn drop(&mut self) {
        for s in &mut self.slots {
            drop_chain(s.take());
        }
    }
}

impl KernelAvc {
    /// `slots` buckets (power of two), reclaim above `threshold` nodes.
    pub fn new(slots: usize, threshold: usize, hash: HashKind) -> Result<KernelAvc, ConfigError> {
        validate(slots, threshold)?;
        Ok(KernelAvc {
            slots: (0..slots).map(|_| None).collect(),
            bits: slots.trailing_zeros(),
            hash,
            threshold,
            active: 0,
            lru_hint: 0,
            latest_notif: 0,
            stats: CacheStats::default(),
        })
    }

    #[inline(always)]
    fn bucket(&self, ssid: u32, tsid: u32, tclass: u16) -> usize {
        self.hash.bucket(ssid, tsid, tclass as u32, self.bits)
    }

    /// `avc_search_node`: hash, then walk the chain. No statistics, as in the kernel
    /// function the 2025 study timed.
    #[inline]
    pub fn search(&self, ssid: u32, tsid: u32, tclass: u16) -> Option<&Decision> {
        let mut cur = self.slots[self.bucket(ssid, tsid, tclass)].as_deref();
        while let Some(n) = cur {
            if n.ssid == ssid && n.tclass == tclass && n.tsid == tsid {
                return Some(&n.avd);
            }
            cur = n.next.as_deref();
        }
        None
    }

    /// `avc_reclaim_node`: empty chains from the bucket after the hint until
    /// `AVC_CACHE_RECLAIM` nodes are gone.
    fn reclaim(&mut self) -> usize {
        let mask = self.slots.len() - 1;
        let mut ecx = 0;
        for _ in 0..self.slots.len() {
            self.lru_hint = self.lru_hint.wrapping_add(1);
            let h = self.lru_hint & mask;
            while let Some(mut node) = self.slots[h].take() {
                self.slots[h] = node.next.take();
                self.active -= 1;
                self.stats.reclaims += 1;
                self.stats.frees += 1;
                ecx += 1;
                if ecx >= AVC_CACHE_RECLAIM {
                    return ecx;
                }
            }
        }
        ecx
    }

    /// `avc_insert`.
    pub fn insert(&mut self, ssid: u32, tsid: u32, tclass: u16, avd: Decision) {
        if avd.seqno < self.latest_notif {
            return;
        }
        // avc_alloc_node
        self.stats.allocations += 1;
        self.active += 1;
        if self.active > self.threshold {
            self.reclaim();
        }
        let h = self.bucket(ssid, tsid, tclass);
        // Replace an existing node for the key in place of the old one.
        let mut cur = self.slots[h].as_deref_mut();
        while let Some(n) = cur {
            if n.ssid == ssid && n.tsid == tsid && n.tclass == tclass {
                n.avd = avd;
                self.active -= 1;
                self.stats.frees += 1;
                return;
            }
            cur = n.next.as_deref_mut();
        }
        let next = self.slots[h].take();
        self.slots[h] = Some(Box::new(Node {
            ssid,
            tsid,
            tclass,
            avd,
            next,
        }));
    }

    /// `avc_lookup` + `avc_compute_av` on a miss: the cached or freshly computed decision.
    pub fn check<S: DecisionSource + ?Sized>(
        &mut self,
        source: &S,
        ssid: u32,
        tsid: u32,
        tclass: u16,
    ) -> Result<Decision, SourceError> {
        self.stats.lookups += 1;
        if let Some(d) = self.search(ssid, tsid, tclass).copied() {
            self.stats.hits += 1;
            return Ok(d);
        }
        self.stats.misses += 1;
        let d = raw_compute_av(source, ssid, tsid, tclass)?;
        self.insert(ssid, tsid, tclass, d);
        Ok(d)
    }

    /// `avc_ss_reset`: flush and record the reset's sequence number.
    pub fn reset(&mut self, seqno: u64) {
        for i in 0..self.slots.len() {
            let n = drop_chain(self.slots[i].take());
            self.stats.frees += n as u64;
        }
        self.active = 0;
        self.latest_notif = self.latest_notif.max(seqno);
    }

    /// `avc_get_hash_stats` (`longest_probe` = `longest_chain`).
    pub fn hash_stats(&self) -> HashStats {
        chain_stats(&self.slots, self.active)
    }

    /// Counters of the `check` path.
    pub fn stats(&self) -> CacheStats {
        self.stats
    }

    /// Nodes in the cache.
    pub fn len(&self) -> usize {
        self.active
    }

    /// No node.
    pub fn is_empty(&self) -> bool {
        self.active == 0
    }
}

struct LNode {
    ssid: u32,
    tsid: u32,
    tclass: u16,
    used: bool,
    avd: Decision,
    next: Option<Box<LNode>>,
}

struct Locked {
    slots: Vec<Option<Box<LNode>>>,
    bits: u32,
    hash: HashKind,
    max_nodes: usize,
    active: usize,
    lru_hint: usize,
}

impl Drop for Locked {
    fn drop(&mut self) {
        for s in &mut self.slots {
            let mut head = s.take();
            while let Some(mut n) = head {
                head = n.next.take();
            }
        }
    }
}

/// libselinux's userspace AVC: chains behind one global mutex, second-chance reclaim.
pub struct LockedAvc {
    inner: Mutex<Locked>,
}

impl LockedAvc {
    /// `slots` buckets (power of two; libselinux uses 512), at most `max_nodes` nodes
    /// (libselinux: 410).
    pub fn new(slots: usize, max_nodes: usize, hash: HashKind) -> Result<LockedAvc, ConfigError> {
        validate(slots, max_nodes)?;
        Ok(LockedAvc {
            inner: Mutex::new(Locked {
                slots: (0..slots).map(|_| None).collect(),
                bits: slots.trailing_zeros(),
                hash,
                max_nodes,
                active: 0,
                lru_hint: 0,
            }),
        })
    }

    fn guard(&self) -> std::sync::MutexGuard<'_, Locked> {
        arbiter_testkit::lock(&self.inner)
    }

    /// `avc_lookup` under the global lock; marks the node used.
    pub fn lookup(&self, ssid: u32, tsid: u32, tclass: u16) -> Option<Decision> {
        let mut g = self.guard();
        let h = g.hash.bucket(ssid, tsid, tclass as u32, g.bits);
        let mut cur = g.slots[h].as_deref_mut();
        while let Some(n) = cur {
            if n.ssid == ssid && n.tclass == tclass && n.tsid == tsid {
                n.used = true;
                return Some(n.avd);
            }
            cur = n.next.as_deref_mut();
        }
        None
    }

    /// `avc_insert` (with `avc_claim_node` / `avc_reclaim_node`).
    pub fn insert(&self, ssid: u32, tsid: u32, tclass: u16, avd: Decision) {
        let mut g = self.guard();
        let g = &mut *g;
        let h = g.hash.bucket(ssid, tsid, tclass as u32, g.bits);
        let mut cur = g.slots[h].as_deref_mut();
        while let Some(n) = cur {
            if n.ssid == ssid && n.tclass == tclass && n.tsid == tsid {
                n.avd = avd;
                return;
            }
            cur = n.next.as_deref_mut();
        }
        if g.active >= g.max_nodes {
            g.reclaim_one();
        }
        let next = g.slots[h].take();
        g.slots[h] = Some(Box::new(LNode {
            ssid,
            tsid,
            tclass,
            used: false,
            avd,
            next,
        }));
        g.active += 1;
    }

    /// The cached or freshly computed decision.
    pub fn check<S: DecisionSource + ?Sized>(
        &self,
        source: &S,
        ssid: u32,
        tsid: u32,
        tclass: u16,
    ) -> Result<Decision, SourceError> {
        if let Some(d) = self.lookup(ssid, tsid, tclass) {
            return Ok(d);
        }
        let d = raw_compute_av(source, ssid, tsid, tclass)?;
        self.insert(ssid, tsid, tclass, d);
        Ok(d)
    }

    /// Nodes in the cache.
    pub fn len(&self) -> usize {
        self.guard().active
    }

    /// No node.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Locked {
    /// Second chance: clear `used` bits from the hint onwards (two sweeps at most) and
    /// free the first node found unused.
    fn reclaim_one(&mut self) {
        let mask = self.slots.len() - 1;
        let start = self.lru_hint;
        for _ in 0..2 {
            let mut h = start;
            loop {
                // Find the first unused node of the chain, clearing used bits on the way.
                let mut idx = None;
                let mut i = 0;
                let mut cur = self.slots[h].as_deref_mut();
                while let Some(n) = cur {
                    if !n.used {
                        idx = Some(i);
                        break;
                    }
                    n.used = false;
                    i += 1;
                    cur = n.next.as_deref_mut();
                }
                if let Some(i) = idx {
                    self.lru_hint = h;
                    let mut link = &mut self.slots[h];
                    for _ in 0..i {
                        link = &mut link.as_mut().expect("chain shorter than counted").next;
                    }
                    let mut victim = link.take().expect("victim exists");
                    *link = victim.next.take();
                    self.active -= 1;
                    return;
                }
                h = (h + 1) & mask;
                if h == start {
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_avc::fake::FakeSource;

    #[test]
    fn kernel_model_reclaims_16_over_threshold() {
        let src = FakeSource::new();
        let mut k = KernelAvc::new(8, 32, HashKind::Original).unwrap();
        for i in 0..33u32 {
            k.check(&src, i + 1, 1, 1).unwrap();
        }
        // The 33rd allocation exceeds 32 and reclaims 16 nodes.
        assert_eq!(k.len(), 33 - 16);
        assert_eq!(k.stats().reclaims, 16);
        let st = k.hash_stats();
        assert_eq!(st.entries, k.len());
        assert!(st.buckets_used <= 8);
        // Hits are answered from the cache.
        let before = src.av_computes();
        k.check(&src, 33, 1, 1).unwrap();
        assert_eq!(src.av_computes(), before);
    }

    #[test]
    fn kernel_model_replace_and_reset() {
        let src = FakeSource::new();
        let mut k = KernelAvc::new(16, 100, HashKind::Murmur3).unwrap();
        let d = src.expected(1, 2, 3, 1);
        k.insert(1, 2, 3, d);
        k.insert(
            1,
            2,
            3,
            Decision {
                allowed: arbiter_decide::AccessVector(7),
                ..d
            },
        );
        assert_eq!(k.len(), 1);
        assert_eq!(k.search(1, 2, 3).unwrap().allowed, 7);
        k.reset(5);
        assert!(k.is_empty());
        // Older than the latest reset: refused.
        k.insert(1, 2, 3, d);
        assert!(k.search(1, 2, 3).is_none());
        k.insert(1, 2, 3, Decision { seqno: 5, ..d });
        assert!(k.search(1, 2, 3).is_some());
    }

    #[test]
    fn locked_model_bounds_nodes() {
        let src = FakeSource::new();
        let l = LockedAvc::new(4, 10, HashKind::Original).unwrap();
        for i in 1..=100u32 {
            l.check(&src, i, i, 1).unwrap();
            assert!(l.len() <= 10);
        }
        assert_eq!(l.len(), 10);
        assert!(l.lookup(100, 100, 1).is_some());
    }

    #[test]
    fn baseline_config_errors() {
        assert!(KernelAvc::new(0, 1, HashKind::Original).is_err());
        assert!(KernelAvc::new(3, 1, HashKind::Original).is_err());
        assert!(KernelAvc::new(4, 0, HashKind::Original).is_err());
        assert!(LockedAvc::new(6, 1, HashKind::Original).is_err());
    }
}
