//! Links the `arbiter` executable position-dependent (`-no-pie`). A position-independent
//! executable has its read-only pointer tables (`.data.rel.ro`: vtables, string tables,
//! clap's and the compiler's static tables) relocated by the dynamic loader at every start,
//! which copies each touched page (copy-on-write) and walks every relocation; linked at a
//! fixed address, those tables are plain file-backed pages. Only the binary's own link
//! changes: every crate is still compiled position-independent (the Python extension and
//! the C library are shared objects and are not affected).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
