//! A model of the 6.18 kernel's domain: a balanced binary search tree of separately
//! allocated rules (the kernel's `rb_root` of `struct landlock_rule`), for the benchmark
//! only. Nodes are allocated in a shuffled order so that, as in the kernel's slab, tree
//! neighbours are not memory neighbours.

use arbiter_landlock::{Domain, Handled, ObjectId, RuleLayers, Rules};

type Link = Option<Box<Node>>;

struct Node {
    /// Stands for the kernel's `__rb_parent_color`, so a node has the kernel's shape.
    _parent_color: usize,
    left: Link,
    right: Link,
    key: u64,
    layers: Box<[u32]>,
}

/// A domain stored as two trees of individually allocated rules.
pub struct TreeDomain {
    layers: Vec<Handled>,
    fs_root: Link,
    net_root: Link,
    num_rules: usize,
    num_entries: usize,
}

/// Bytes the kernel allocates for one rule with `layers` entries: `struct landlock_rule`
/// (rb_node 24 + key 8 + num_layers 4 + 4 per layer) rounded up to its kmalloc size class.
pub fn kernel_rule_bytes(layers: usize) -> usize {
    let raw = 24 + 8 + 4 + 4 * layers;
    [8, 16, 32, 64, 96, 128, 192, 256, 512]
        .into_iter()
        .find(|&c| c >= raw)
        .unwrap_or(raw)
}

impl TreeDomain {
    /// The same layers and rules as `dom`, as trees; `seed` shuffles allocation order.
    pub fn from_domain(dom: &Domain, seed: u64) -> TreeDomain {
        let layers = (0..dom.num_layers()).map(|l| dom.layer(l)).collect();
        let mut num_entries = 0;
        let mut build = |is_fs: bool| {
            let mut rules: Vec<(u32, Vec<u32>)> = dom
                .rules(is_fs)
                .map(|(k, e)| {
                    (
                        k,
                        e.iter()
                            .map(|x| (x.layer() as u32) << 16 | u32::from(x.access()))
                            .collect(),
                    )
                })
                .collect();
            rules.sort_unstable_by_key(|r| r.0);
            num_entries += rules.iter().map(|r| r.1.len()).sum::<usize>();
            // Allocate in a shuffled order, then link as a balanced tree.
            let mut order: Vec<usize> = (0..rules.len()).collect();
            let mut s = seed | 1;
            for i in (1..order.len()).rev() {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                order.swap(i, (s % (i as u64 + 1)) as usize);
            }
            let mut nodes: Vec<Option<Box<Node>>> = (0..rules.len()).map(|_| None).collect();
            for i in order {
                nodes[i] = Some(Box::new(Node {
                    _parent_color: 0,
                    left: None,
                    right: None,
                    key: u64::from(rules[i].0),
                    layers: rules[i].1.clone().into_boxed_slice(),
                }));
            }
            link(&mut nodes, 0, rules.len())
        };
        let fs_root = build(true);
        let net_root = build(false);
        TreeDomain {
            layers,
            fs_root,
            net_root,
            num_rules: dom.num_fs_rules() + dom.num_net_rules(),
            num_entries,
        }
    }

    /// Bytes the kernel would allocate for these rules (see [`kernel_rule_bytes`]).
    pub fn kernel_memory_bytes(&self) -> usize {
        fn walk(n: &Link, acc: &mut usize) {
            if let Some(n) = n {
                *acc += kernel_rule_bytes(n.layers.len());
                walk(&n.left, acc);
                walk(&n.right, acc);
            }
        }
        let mut acc = 0;
        walk(&self.fs_root, &mut acc);
        walk(&self.net_root, &mut acc);
        acc
    }

    /// Number of rules.
    pub fn num_rules(&self) -> usize {
        self.num_rules
    }

    /// Number of (rule, layer) entries.
    pub fn num_entries(&self) -> usize {
        self.num_entries
    }
}

fn link(nodes: &mut [Option<Box<Node>>], lo: usize, hi: usize) -> Link {
    if lo >= hi {
        return None;
    }
    let mid = lo + (hi - lo) / 2;
    let left = link(nodes, lo, mid);
    let right = link(nodes, mid + 1, hi);
    let mut n = nodes[mid].take()?;
    n.left = left;
    n.right = right;
    Some(n)
}

fn find(mut n: &Link, key: u64) -> RuleLayers<'_> {
    while let Some(node) = n {
        if key < node.key {
            n = &node.left;
        } else if key > node.key {
            n = &node.right;
        } else {
            return RuleLayers::from_words(&node.layers);
        }
    }
    RuleLayers::none()
}

impl Rules for TreeDomain {
    fn num_layers(&self) -> usize {
        self.layers.len()
    }
    fn layer(&self, layer: usize) -> Handled {
        self.layers[layer]
    }
    fn find_fs(&self, object: ObjectId) -> RuleLayers<'_> {
        find(&self.fs_root, u64::from(object.0))
    }
    fn find_net(&self, port: u16) -> RuleLayers<'_> {
        find(&self.net_root, u64::from(port))
    }
}
