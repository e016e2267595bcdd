//! Builds the C shim (csrc/oracle.c) and links libsepol.
//!
//! * Headers: `$SEPOL_INCLUDE_DIR` or `/usr/include` must contain
//!   `sepol/policydb/services.h`; otherwise the build fails and says to run
//!   `apt-get install -y libsepol-dev`.
//! * Library: `libsepol.a` is preferred (searched in `$SEPOL_LIB_DIR`,
//!   `pkg-config --variable=libdir libsepol`, then the usual system
//!   directories) because the oracle needs internal symbols (`policydb_read`,
//!   `policydb_load_isids`, `evaluate_conds`, `sepol_set_policydb`, ...) that
//!   `libsepol.so`'s version script hides.  Without the archive the crate
//!   falls back to `-lsepol` (dynamic): it still builds, `policydb_read_only`
//!   and `heap_in_use` work, but `Oracle::load` returns `-ENOSYS`.
//!   `ARBITER_ORACLE_FORCE_DYNAMIC=1` forces that fallback (to test it).

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn fail(msg: &str) -> ! {
    eprintln!("\nerror: sepol-oracle: {msg}\n");
    std::process::exit(1);
}

fn lib_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Ok(d) = env::var("SEPOL_LIB_DIR") {
        dirs.push(PathBuf::from(d));
    }
    if let Ok(out) = Command::new("pkg-config")
        .args(["--variable=libdir", "libsepol"])
        .output()
    {
        if out.status.success() {
            let d = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if !d.is_empty() {
                dirs.push(PathBuf::from(d));
            }
        }
    }
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_else(|_| "x86_64".into());
    for d in [
        format!("/usr/lib/{arch}-linux-gnu"),
        format!("/lib/{arch}-linux-gnu"),
        "/usr/lib64".into(),
        "/usr/lib".into(),
        "/usr/local/lib".into(),
    ] {
        dirs.push(PathBuf::from(d));
    }
    dirs
}

fn main() {
    println!("cargo:rerun-if-changed=csrc/oracle.c");
    println!("cargo:rerun-if-changed=build.rs");
    // Without the `libsepol` feature the crate is empty and links nothing: the workspace
    // builds on machines without libsepol-dev.
    if env::var_os("CARGO_FEATURE_LIBSEPOL").is_none() {
        return;
    }
    for v in [
        "SEPOL_INCLUDE_DIR",
        "SEPOL_LIB_DIR",
        "ARBITER_ORACLE_FORCE_DYNAMIC",
    ] {
        println!("cargo:rerun-if-env-changed={v}");
    }

    let include =
        PathBuf::from(env::var("SEPOL_INCLUDE_DIR").unwrap_or_else(|_| "/usr/include".into()));
    let services_h = include.join("sepol/policydb/services.h");
    if !services_h.exists() {
        fail(&format!(
            "libsepol headers not found ({} is missing).\n  \
             The differential oracle needs libsepol's development files:\n      \
             apt-get install -y libsepol-dev\n  \
             (or set SEPOL_INCLUDE_DIR / SEPOL_LIB_DIR to another libsepol install)",
            services_h.display()
        ));
    }

    let force_dynamic =
        env::var("ARBITER_ORACLE_FORCE_DYNAMIC").is_ok_and(|v| !v.is_empty() && v != "0");
    let static_dir = if force_dynamic {
        None
    } else {
        lib_dirs()
            .into_iter()
            .find(|d| d.join("libsepol.a").is_file())
    };

    let mut build = cc::Build::new();
    build
        .file("csrc/oracle.c")
        .include(&include)
        .flag_if_supported("-Wall")
        .flag_if_supported("-std=gnu11");
    if static_dir.is_some() {
        build.define("ORACLE_STATIC", None);
    }
    build.compile("sepol_oracle_shim");

    // The shim's archive must precede libsepol on the link line; cc has
    // already printed its own rustc-link-lib line above this point.
    match static_dir {
        Some(dir) => {
            println!("cargo:rustc-link-search=native={}", dir.display());
            println!("cargo:rustc-link-lib=static=sepol");
        }
        None => {
            if let Some(dir) = lib_dirs()
                .into_iter()
                .find(|d| d.join("libsepol.so").exists() || d.join("libsepol.so.2").exists())
            {
                println!("cargo:rustc-link-search=native={}", dir.display());
            }
            println!("cargo:rustc-link-lib=dylib=sepol");
            println!(
                "cargo:warning=sepol-oracle: libsepol.a not used; linked libsepol.so dynamically. \
                 Oracle::load will return ENOSYS (libsepol.so hides policydb_read etc.); \
                 only policydb_read_only/heap_in_use work. apt-get install -y libsepol-dev for the archive."
            );
        }
    }
}
