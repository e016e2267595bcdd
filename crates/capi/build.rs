//! Gives the shared library the soname `libarbiter.so.<major>`, so programs linked
//! against an installed copy keep working across compatible upgrades.
fn main() {
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libarbiter.so.{major}");
    println!("cargo:rerun-if-changed=build.rs");
}
