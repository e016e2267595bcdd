//! The security server's atomics and locks, swappable for loom's so that
//! `RUSTFLAGS="--cfg loom"` runs the publication protocol under the model checker. The
//! `Arc` that owns policy states is loom's there too: dropping the last reference to a
//! state frees its SID table, and loom must see the reference count's synchronisation to
//! know that no reader still looks at it.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Mutex, MutexGuard};
