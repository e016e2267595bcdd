//! Cache configuration, validated once at construction.

use crate::hash::HashKind;
use crate::table::WAYS;

/// The kernel's default bucket count (`AVC_CACHE_SLOTS`).
pub const AVC_CACHE_SLOTS: usize = 512;
/// The kernel's default entry limit (`AVC_DEF_CACHE_THRESHOLD`).
pub const AVC_DEF_CACHE_THRESHOLD: usize = 512;
/// Entries the kernel frees per reclaim pass (`AVC_CACHE_RECLAIM`).
pub const AVC_CACHE_RECLAIM: usize = 16;
/// Largest accepted bucket count: bounds the allocation against an absurd argument
/// (2^24 buckets of 128 bytes is 2 GiB for the access vector table).
pub const MAX_SLOTS: usize = 1 << 24;

/// Entries per bucket of arbiter's tables.
pub const ENTRIES_PER_SLOT: usize = WAYS;

/// Sizing of the three tables and the hash that places keys in them.
///
/// A *slot* is a bucket, as in the kernel: the kernel hangs a linked chain off each slot,
/// arbiter stores up to [`ENTRIES_PER_SLOT`] entries inline in each (one 128-byte,
/// two-cache-line bucket for access vectors) and lets a full bucket spill into the next.
/// So `threshold` may exceed `slots` — as in the kernel study's 2048 entries / 512 slots —
/// up to `ENTRIES_PER_SLOT * slots`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AvcConfig {
    /// Access-vector table buckets: a power of two, > 0.
    pub slots: usize,
    /// Most access-vector entries cached at once (the kernel's `cache_threshold`), > 0.
    pub threshold: usize,
    /// Bucket hash of all three tables.
    pub hash: HashKind,
    /// Extended-permission table buckets (one entry per (ssid, tsid, class, base, driver)).
    pub xperm_slots: usize,
    /// Most extended-permission entries cached.
    pub xperm_threshold: usize,
    /// Create-label table buckets.
    pub create_slots: usize,
    /// Most create-label entries cached.
    pub create_threshold: usize,
    /// Start in enforcing mode.
    pub enforcing: bool,
}

impl Default for AvcConfig {
    /// The kernel's default threshold (512) with arbiter's layout and hash.
    fn default() -> AvcConfig {
        AvcConfig::for_threshold(AVC_DEF_CACHE_THRESHOLD)
    }
}

impl AvcConfig {
    /// arbiter's layout for a given entry limit: one bucket per entry, rounded up to a
    /// power of two. Each bucket holds [`ENTRIES_PER_SLOT`] (4) entries, so a full cache
    /// fills a quarter of its cells and a good hash leaves almost every entry in the first
    /// cache line of its home bucket; the benchmark measured half the buckets (two entries
    /// per bucket) at about 20 % slower hits and a longest probe at the window's end, for
    /// the same hit ratio. Cost: 128 bytes per entry of threshold (the kernel spends about
    /// 80 per cached entry plus 8 per slot).
    pub fn default_slots(threshold: usize) -> usize {
        threshold.max(1).next_power_of_two()
    }

    /// arbiter's default layout for `threshold` access-vector entries. The side tables are
    /// smaller because they are queried far less: extended permissions (ioctl/netlink
    /// commands, 128-byte cells) get `threshold / 16` entries, create labels
    /// `threshold / 4`, each at least 16, in half as many buckets as the access-vector
    /// rule would give (at most two entries per four-entry bucket). At the kernel's default
    /// of 512 entries the three tables take 64 + 8 + 8 KiB; at 8192, 1 MiB + 128 + 128 KiB.
    pub fn for_threshold(threshold: usize) -> AvcConfig {
        let xperm = (threshold / 16).max(16);
        let create = (threshold / 4).max(16);
        let side_slots = |n: usize| (Self::default_slots(n) / 2).max(1);
        AvcConfig {
            slots: Self::default_slots(threshold),
            threshold,
            hash: HashKind::Arbiter,
            xperm_slots: side_slots(xperm),
            xperm_threshold: xperm,
            create_slots: side_slots(create),
            create_threshold: create,
            enforcing: true,
        }
    }

    /// Same side tables and mode, explicit access-vector sizing and hash (the benchmark's
    /// study configurations).
    pub fn with_layout(mut self, threshold: usize, slots: usize, hash: HashKind) -> AvcConfig {
        self.threshold = threshold;
        self.slots = slots;
        self.hash = hash;
        self
    }

    /// Checks every table's sizing.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check("av", self.slots, self.threshold)?;
        check("xperm", self.xperm_slots, self.xperm_threshold)?;
        check("create", self.create_slots, self.create_threshold)
    }
}

fn check(table: &'static str, slots: usize, threshold: usize) -> Result<(), ConfigError> {
    check_slots(table, slots, threshold)?;
    let capacity = slots * ENTRIES_PER_SLOT;
    if threshold > capacity {
        return Err(ConfigError::ThresholdExceedsCapacity {
            table,
            threshold,
            capacity,
        });
    }
    Ok(())
}

/// The checks every hash table of `slots` chains or sets shares (the caches here and the
/// kernel and libselinux models in `baseline`): a power-of-two slot count in
/// `1..=MAX_SLOTS`, and a nonzero reclaim threshold.
pub fn check_slots(table: &'static str, slots: usize, threshold: usize) -> Result<(), ConfigError> {
    if slots == 0 {
        return Err(ConfigError::ZeroSlots { table });
    }
    if !slots.is_power_of_two() {
        return Err(ConfigError::SlotsNotPowerOfTwo { table, slots });
    }
    if slots > MAX_SLOTS {
        return Err(ConfigError::TooManySlots {
            table,
            slots,
            max: MAX_SLOTS,
        });
    }
    if threshold == 0 {
        return Err(ConfigError::ZeroThreshold { table });
    }
    Ok(())
}

/// A configuration the cache cannot honour. `table` is `"av"`, `"xperm"` or `"create"`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A table with no slot.
    #[error("{table} table: slot count must be > 0")]
    ZeroSlots {
        /// Which table.
        table: &'static str,
    },
    /// Slot counts are powers of two (the hash is masked).
    #[error("{table} table: slot count {slots} is not a power of two")]
    SlotsNotPowerOfTwo {
        /// Which table.
        table: &'static str,
        /// The slot count given.
        slots: usize,
    },
    /// More slots than the cache supports.
    #[error("{table} table: slot count {slots} exceeds the maximum {max}")]
    TooManySlots {
        /// Which table.
        table: &'static str,
        /// The slot count given.
        slots: usize,
        /// The largest accepted.
        max: usize,
    },
    /// A table that may hold no entry.
    #[error("{table} table: threshold must be > 0")]
    ZeroThreshold {
        /// Which table.
        table: &'static str,
    },
    /// More entries than the slots can hold.
    #[error("{table} table: threshold {threshold} exceeds the table's capacity {capacity} (slots x entries per slot)")]
    ThresholdExceedsCapacity {
        /// Which table.
        table: &'static str,
        /// The threshold given.
        threshold: usize,
        /// Slots times entries per slot.
        capacity: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid() {
        AvcConfig::default().validate().unwrap();
        for t in [1, 2, 3, 512, 1000, 8192, 100_000] {
            AvcConfig::for_threshold(t).validate().unwrap();
        }
    }

    #[test]
    fn default_footprint() {
        // Bytes per bucket: 4 cells of 32 (access vectors, create labels) or 128 (xperms).
        let bytes = |c: &AvcConfig| c.slots * 128 + c.xperm_slots * 512 + c.create_slots * 128;
        assert_eq!(bytes(&AvcConfig::for_threshold(512)), (64 + 8 + 8) << 10);
        assert_eq!(
            bytes(&AvcConfig::for_threshold(8192)),
            (1024 + 128 + 128) << 10
        );
    }

    #[test]
    fn each_error() {
        let base = AvcConfig::default();
        let c = AvcConfig {
            slots: 0,
            ..base.clone()
        };
        assert_eq!(c.validate(), Err(ConfigError::ZeroSlots { table: "av" }));
        let c = AvcConfig {
            slots: 384,
            ..base.clone()
        };
        assert_eq!(
            c.validate(),
            Err(ConfigError::SlotsNotPowerOfTwo {
                table: "av",
                slots: 384
            })
        );
        let c = AvcConfig {
            slots: MAX_SLOTS * 2,
            ..base.clone()
        };
        assert_eq!(
            c.validate(),
            Err(ConfigError::TooManySlots {
                table: "av",
                slots: MAX_SLOTS * 2,
                max: MAX_SLOTS
            })
        );
        let c = AvcConfig {
            threshold: 0,
            ..base.clone()
        };
        assert_eq!(
            c.validate(),
            Err(ConfigError::ZeroThreshold { table: "av" })
        );
        let c = AvcConfig {
            slots: 512,
            threshold: 512 * ENTRIES_PER_SLOT + 1,
            ..base.clone()
        };
        assert_eq!(
            c.validate(),
            Err(ConfigError::ThresholdExceedsCapacity {
                table: "av",
                threshold: 2049,
                capacity: 2048
            })
        );
        let c = AvcConfig {
            xperm_slots: 3,
            ..base.clone()
        };
        assert_eq!(
            c.validate(),
            Err(ConfigError::SlotsNotPowerOfTwo {
                table: "xperm",
                slots: 3
            })
        );
        let c = AvcConfig {
            create_threshold: 0,
            ..base.clone()
        };
        assert_eq!(
            c.validate(),
            Err(ConfigError::ZeroThreshold { table: "create" })
        );
        // The study's tightest configuration is accepted.
        base.with_layout(2048, 512, HashKind::Original)
            .validate()
            .unwrap();
    }
}
