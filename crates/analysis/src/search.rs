//! networkx 2.8's two path searches, step for step, because setools prints paths in the
//! order they produce: `all_shortest_paths` (a breadth-first search recording every
//! same-level predecessor, then a depth-first walk back from the target) and
//! `all_simple_paths` with a cutoff (a depth-first search in successor order that never
//! continues through the target). Both stream: a path is handed to the caller as soon as
//! it is found, and the caller may stop the walk.

use std::ops::ControlFlow;

/// A directed graph in networkx's iteration order: each node's successors in the order
/// their edges were created.
#[derive(Debug, Default, Clone)]
pub struct Adjacency {
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

impl Adjacency {
    /// Builds the adjacency of `n` nodes from each node's ordered successor list.
    pub fn from_lists<I, J>(lists: I) -> Adjacency
    where
        I: IntoIterator<Item = J>,
        J: IntoIterator<Item = u32>,
    {
        let mut a = Adjacency {
            offsets: vec![0],
            targets: Vec::new(),
        };
        for list in lists {
            a.targets.extend(list);
            a.offsets.push(a.targets.len() as u32);
        }
        a
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether the graph has no node.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of edges.
    pub fn edges(&self) -> usize {
        self.targets.len()
    }

    /// The predecessor lists of this graph as networkx holds them in a graph whose edges
    /// were added tail by tail, tails in the order `tails` gives (every node once) and
    /// each tail's successors in order: a node's predecessors in the order of `tails`.
    pub fn predecessors_by(&self, tails: impl IntoIterator<Item = u32>) -> Adjacency {
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); self.len()];
        for u in tails {
            for &v in self.successors(u) {
                if let Some(l) = lists.get_mut(v as usize) {
                    l.push(u);
                }
            }
        }
        Adjacency::from_lists(lists)
    }

    /// The successors of `n`, in order (empty for an unknown node).
    pub fn successors(&self, n: u32) -> &[u32] {
        let n = n as usize;
        match (self.offsets.get(n), self.offsets.get(n + 1)) {
            (Some(&a), Some(&b)) => self.targets.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }
}

/// networkx `all_shortest_paths(G, source, target)` without weights: every shortest path,
/// in networkx's order, each given to `emit` as its node list. A source equal to the target
/// gives the one-node path.
pub fn all_shortest_paths(
    g: &Adjacency,
    source: u32,
    target: u32,
    emit: &mut dyn FnMut(&[u32]) -> ControlFlow<()>,
) {
    let n = g.len();
    if source as usize >= n || target as usize >= n {
        return;
    }
    // `nx.predecessor`: level by level; each node's predecessors on the previous level in
    // the order they were met. The predecessor lists of the target and of every node on
    // the levels before it are complete once the target's level has been discovered, so
    // the search stops there (networkx goes on, to no effect on the paths).
    const UNSEEN: u32 = u32::MAX;
    let mut level = vec![UNSEEN; n];
    let mut pred: Vec<Vec<u32>> = vec![Vec::new(); n];
    level[source as usize] = 0;
    let mut this = vec![source];
    let mut depth = 0;
    while !this.is_empty() && level[target as usize] == UNSEEN {
        depth += 1;
        let mut next = Vec::new();
        for &v in &this {
            for &w in g.successors(v) {
                let lw = &mut level[w as usize];
                if *lw == UNSEEN {
                    *lw = depth;
                    pred[w as usize].push(v);
                    next.push(w);
                } else if *lw == depth {
                    pred[w as usize].push(v);
                }
            }
        }
        this = next;
    }
    if level[target as usize] == UNSEEN {
        return;
    }
    // `_build_paths_from_predecessors`: a depth-first walk from the target over the
    // predecessor lists; the predecessor nearest the source varies first.
    let mut stack: Vec<(u32, usize)> = vec![(target, 0)];
    let mut path: Vec<u32> = Vec::new();
    while let Some(top) = stack.len().checked_sub(1) {
        let (node, i) = stack[top];
        if node == source && i == 0 {
            path.clear();
            path.extend(stack.iter().rev().map(|&(p, _)| p));
            if emit(&path).is_break() {
                return;
            }
        }
        if let Some(&next) = pred[node as usize].get(i) {
            stack[top].1 = i + 1;
            stack.push((next, 0));
        } else {
            stack.pop();
        }
    }
}

/// networkx `shortest_path(G, source, target)` without weights (its
/// `bidirectional_shortest_path`): one shortest path, the one networkx's search meets
/// first. The search grows whichever fringe is smaller (the forward one on a tie), level by
/// level, walking `succ` forward and `pred` backward in their orders, and stops at the
/// first node both searches have reached; so which path comes back depends on both orders,
/// and `pred` must list each node's predecessors in the order networkx's graph holds them
/// (for a copied graph: the order its edges were re-added, see the callers). `None` when
/// there is no path; a source equal to the target gives the one-node path.
pub fn shortest_path(
    succ: &Adjacency,
    pred: &Adjacency,
    source: u32,
    target: u32,
) -> Option<Vec<u32>> {
    let n = succ.len();
    if source as usize >= n || target as usize >= n || pred.len() != n {
        return None;
    }
    if source == target {
        return Some(vec![source]);
    }
    // `NONE` marks an unreached node; a reached node holds its link toward the source
    // (forward) or the target (backward), `END` for the source and target themselves.
    const NONE: u32 = u32::MAX;
    const END: u32 = u32::MAX - 1;
    let mut toward_source = vec![NONE; n];
    let mut toward_target = vec![NONE; n];
    toward_source[source as usize] = END;
    toward_target[target as usize] = END;
    let mut forward = vec![source];
    let mut backward = vec![target];
    let meet = 'search: loop {
        if forward.is_empty() || backward.is_empty() {
            return None;
        }
        if forward.len() <= backward.len() {
            for v in std::mem::take(&mut forward) {
                for &w in succ.successors(v) {
                    if toward_source[w as usize] == NONE {
                        forward.push(w);
                        toward_source[w as usize] = v;
                    }
                    if toward_target[w as usize] != NONE {
                        break 'search w;
                    }
                }
            }
        } else {
            for v in std::mem::take(&mut backward) {
                for &w in pred.successors(v) {
                    if toward_target[w as usize] == NONE {
                        toward_target[w as usize] = v;
                        backward.push(w);
                    }
                    if toward_source[w as usize] != NONE {
                        break 'search w;
                    }
                }
            }
        }
    };
    let mut path = Vec::new();
    let mut w = meet;
    while w != END {
        path.push(w);
        w = toward_source[w as usize];
    }
    path.reverse();
    let mut w = toward_target[meet as usize];
    while w != END {
        path.push(w);
        w = toward_target[w as usize];
    }
    Some(path)
}

/// networkx `all_simple_paths(G, source, target, cutoff)`: every path of 1 to `cutoff`
/// edges without a repeated node, in depth-first successor order. A source equal to the
/// target, or a cutoff below 1, gives none.
pub fn all_simple_paths(
    g: &Adjacency,
    source: u32,
    target: u32,
    cutoff: usize,
    emit: &mut dyn FnMut(&[u32]) -> ControlFlow<()>,
) {
    let n = g.len();
    if source as usize >= n || target as usize >= n || source == target || cutoff < 1 {
        return;
    }
    let mut on_path = vec![false; n];
    let mut path = vec![source];
    on_path[source as usize] = true;
    let mut stack: Vec<usize> = vec![0];
    while let Some(i) = stack.last_mut() {
        let node = *path.last().unwrap_or(&source);
        let succ = g.successors(node);
        let Some(&child) = succ.get(*i) else {
            stack.pop();
            if let Some(p) = path.pop() {
                on_path[p as usize] = false;
            }
            continue;
        };
        *i += 1;
        if on_path[child as usize] {
            continue;
        }
        if child == target {
            path.push(child);
            let flow = emit(&path);
            path.pop();
            if flow.is_break() {
                return;
            }
        } else if path.len() < cutoff {
            path.push(child);
            on_path[child as usize] = true;
            stack.push(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(
        f: impl Fn(&Adjacency, &mut dyn FnMut(&[u32]) -> ControlFlow<()>),
        g: &Adjacency,
    ) -> Vec<Vec<u32>> {
        let mut out = Vec::new();
        f(g, &mut |p| {
            out.push(p.to_vec());
            ControlFlow::Continue(())
        });
        out
    }

    /// s=0 -> {a=1, b=2}; a, b -> {x=3, y=4}; x, y -> t=5.
    fn diamond() -> Adjacency {
        Adjacency::from_lists(vec![
            vec![1, 2],
            vec![3, 4],
            vec![3, 4],
            vec![5],
            vec![5],
            vec![],
        ])
    }

    #[test]
    fn shortest_paths_vary_the_predecessor_nearest_the_source_first() {
        let paths = collect(|g, e| all_shortest_paths(g, 0, 5, e), &diamond());
        assert_eq!(
            paths,
            vec![
                vec![0, 1, 3, 5],
                vec![0, 2, 3, 5],
                vec![0, 1, 4, 5],
                vec![0, 2, 4, 5]
            ]
        );
    }

    #[test]
    fn simple_paths_follow_depth_first_successor_order() {
        let paths = collect(|g, e| all_simple_paths(g, 0, 5, 3, e), &diamond());
        assert_eq!(
            paths,
            vec![
                vec![0, 1, 3, 5],
                vec![0, 1, 4, 5],
                vec![0, 2, 3, 5],
                vec![0, 2, 4, 5]
            ]
        );
        assert!(collect(|g, e| all_simple_paths(g, 0, 5, 2, e), &diamond()).is_empty());
    }

    #[test]
    fn source_equal_to_target_is_one_empty_path_or_none() {
        let g = diamond();
        assert_eq!(
            collect(|g, e| all_shortest_paths(g, 2, 2, e), &g),
            vec![vec![2]]
        );
        assert!(collect(|g, e| all_simple_paths(g, 2, 2, 5, e), &g).is_empty());
    }

    #[test]
    fn shortest_path_meets_where_the_backward_search_first_reaches_the_forward_one() {
        // 0 -> {1, 3}; 1 -> 2; 3 -> 2. The forward search takes one level (its fringe is not
        // larger), then the backward one walks 2's predecessors in the order given.
        let succ = Adjacency::from_lists(vec![vec![1, 3], vec![2], vec![], vec![2]]);
        let by_node = succ.predecessors_by(0..4);
        assert_eq!(by_node.successors(2), &[1, 3]);
        assert_eq!(shortest_path(&succ, &by_node, 0, 2), Some(vec![0, 1, 2]));
        let reversed = Adjacency::from_lists(vec![vec![], vec![0], vec![3, 1], vec![0]]);
        assert_eq!(shortest_path(&succ, &reversed, 0, 2), Some(vec![0, 3, 2]));
        assert_eq!(shortest_path(&succ, &by_node, 2, 0), None);
        assert_eq!(shortest_path(&succ, &by_node, 3, 3), Some(vec![3]));
        assert_eq!(
            shortest_path(&diamond(), &diamond().predecessors_by(0..6), 0, 5),
            Some(vec![0, 1, 3, 5])
        );
    }

    #[test]
    fn a_break_stops_the_walk() {
        let mut n = 0;
        all_simple_paths(&diamond(), 0, 5, 3, &mut |_| {
            n += 1;
            ControlFlow::Break(())
        });
        assert_eq!(n, 1);
    }
}
