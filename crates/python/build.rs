//! Links the extension with the functions setools scripts run placed together, in one
//! output section before the rest of the code (`code-order.ld`, made by
//! `bench/symbol_order.py`, which says why: the code pages a script keeps resident).
//!
//! The file is a linker script of `INSERT BEFORE .text` form (the procedure linkage table
//! follows the ordered code there; `INSERT AFTER .eh_frame` keeps the exception tables
//! and `INSERT AFTER .rodata` the read-only data of the crates no setools script runs
//! away from the pages a script reads), which GNU ld and lld (rustc's default linker on
//! x86_64 GNU/Linux from 1.90) read on top of their default layout. It is used for Linux
//! targets unless a linker that does not read it (gold, mold) is chosen in `RUSTFLAGS`;
//! `ARBITER_CODE_ORDER=0` turns it off.

use std::env;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=code-order.ld");
    println!("cargo:rerun-if-env-changed=ARBITER_CODE_ORDER");
    if env::var("ARBITER_CODE_ORDER").as_deref() == Ok("0")
        || env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux")
        || other_linker()
    {
        return;
    }
    let manifest = env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let script = Path::new(&manifest).join("code-order.ld");
    if script.is_file() {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-T,{}", script.display());
    }
}

/// Whether the build asks for a linker without `INSERT` support in linker scripts.
fn other_linker() -> bool {
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    flags
        .split('\x1f')
        .any(|f| f.contains("gold") || f.contains("mold"))
}
