//! `include/arbiter.h` declares exactly the functions the crate exports, with the same
//! signatures, and its structs and flags match the Rust definitions.
//!
//! The Rust side is read from the sources (`#[no_mangle]` functions) with a fixed table
//! from Rust types to the header's C spellings; the C side from the header's prototypes
//! with parameter names dropped. Both are reduced to one canonical text per function.

use std::collections::BTreeMap;
use std::path::Path;

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Removes `/* */` and `//` comments and preprocessor lines.
fn strip_c(src: &str) -> String {
    let mut out = String::new();
    let mut rest = src;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        rest = match rest[i..].find("*/") {
            Some(j) => &rest[i + j + 2..],
            None => "",
        };
    }
    out.push_str(rest);
    out.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Splits at top-level commas (outside parentheses and angle brackets).
fn split_top(s: &str) -> Vec<String> {
    let (mut parts, mut cur, mut depth) = (Vec::new(), String::new(), 0i32);
    for ch in s.chars() {
        match ch {
            '(' | '<' => depth += 1,
            ')' | '>' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() {
        parts.push(cur);
    }
    parts
}

/// A C type with no whitespace (`const char *` → `constchar*`).
fn canon(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// A C parameter declaration without its name.
fn c_param_type(decl: &str) -> String {
    let decl = decl.trim();
    if let Some(open) = decl.find("(*") {
        // Function pointer `ret (*name)(params)`: drop the name and the params' names.
        let close = open + decl[open..].find(')').unwrap();
        let ret = &decl[..open];
        let params = decl[close + 1..].trim();
        let params = &params[1..params.len() - 1];
        let params: Vec<String> = split_top(params).iter().map(|p| c_param_type(p)).collect();
        return canon(&format!("{ret}(*)({})", params.join(",")));
    }
    if decl == "void" {
        return String::new();
    }
    let end = decl
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    canon(&decl[..end])
}

/// name → canonical `ret(params)` of each prototype in the header.
fn header_functions(header: &str) -> BTreeMap<String, String> {
    let mut fns = BTreeMap::new();
    for stmt in strip_c(header).split(';') {
        let stmt = stmt.trim();
        let Some(open) = stmt.find('(') else { continue };
        if stmt.starts_with("typedef") || stmt.contains('{') || stmt.contains('}') {
            continue;
        }
        let head = &stmt[..open];
        let name_at = head
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1);
        let (ret, name) = (&head[..name_at], &head[name_at..]);
        let params = &stmt[open + 1..stmt.len() - 1];
        let params: Vec<String> = split_top(params)
            .iter()
            .map(|p| c_param_type(p))
            .filter(|p| !p.is_empty())
            .collect();
        let sig = format!("{}({})", canon(ret), params.join(","));
        assert!(
            fns.insert(name.to_string(), sig).is_none(),
            "{name} declared twice"
        );
    }
    fns
}

/// The header's spelling of a Rust FFI type.
fn rust_to_c(ty: &str) -> String {
    let ty = ty.trim();
    if let Some(inner) = ty.strip_prefix("*const ") {
        return format!("const{}*", rust_to_c(inner));
    }
    if let Some(inner) = ty.strip_prefix("*mut ") {
        return format!("{}*", rust_to_c(inner));
    }
    let c = match ty {
        "c_char" => "char",
        "c_void" => "void",
        "c_int" => "int",
        "c_uint" => "unsigned",
        "usize" => "size_t",
        "u64" => "uint64_t",
        "ArbSid" => "arb_sid",
        "ArbClass" => "arb_class",
        "ArbPerms" => "arb_perms",
        "ArbServer" => "arb_server",
        "ArbAvc" => "arb_avc",
        "ArbAvDecision" => "structarb_av_decision",
        "ArbCacheStats" => "structarb_avc_cache_stats",
        "ArbAuditCallback" => "void(*)(void*,constchar*)",
        other => panic!("no C spelling for Rust type {other:?}: extend rust_to_c"),
    };
    c.to_string()
}

/// name → canonical `ret(params)` of each `#[no_mangle]` function in the crate's sources.
fn rust_functions() -> BTreeMap<String, String> {
    let mut fns = BTreeMap::new();
    let src = crate_dir().join("src");
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, _) in text.match_indices("#[no_mangle]") {
            let rest = &text[i..];
            let fn_at = rest.find("fn ").unwrap() + 3;
            let open = fn_at + rest[fn_at..].find('(').unwrap();
            let name = rest[fn_at..open].trim().to_string();
            let body = rest[open..].find('{').unwrap() + open;
            let sig = &rest[open..body];
            let close = sig.rfind(')').unwrap();
            let params: Vec<String> = split_top(&sig[1..close])
                .iter()
                .map(|p| rust_to_c(p.split_once(':').unwrap().1))
                .collect();
            let ret = match sig[close + 1..].trim().strip_prefix("->") {
                Some(r) => rust_to_c(r),
                None => "void".into(),
            };
            let sig = format!("{ret}({})", params.join(","));
            assert!(fns.insert(name.clone(), sig).is_none(), "{name} twice");
        }
    }
    fns
}

fn header() -> String {
    std::fs::read_to_string(crate_dir().join("include/arbiter.h")).unwrap()
}

#[test]
fn header_declares_exactly_the_exported_functions_with_their_signatures() {
    let c = header_functions(&header());
    let rust = rust_functions();
    let only_c: Vec<_> = c.keys().filter(|k| !rust.contains_key(*k)).collect();
    let only_rust: Vec<_> = rust.keys().filter(|k| !c.contains_key(*k)).collect();
    assert!(only_c.is_empty(), "declared but not exported: {only_c:?}");
    assert!(
        only_rust.is_empty(),
        "exported but not declared: {only_rust:?}"
    );
    for (name, sig) in &rust {
        assert_eq!(&c[name], sig, "signature of {name}: header vs Rust");
    }
    assert!(rust.len() >= 40, "only {} functions found", rust.len());
}

/// `(type, name)` fields of `struct NAME { ... };` in C.
fn c_struct(header: &str, name: &str) -> Vec<(String, String)> {
    let text = strip_c(header);
    let start = text
        .find(&format!("struct {name} {{"))
        .expect("struct in header");
    let body = &text[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
    body.split(';')
        .filter(|f| !f.trim().is_empty())
        .map(|f| {
            let (ty, field) = f.trim().rsplit_once(' ').unwrap();
            (ty.trim().to_string(), field.to_string())
        })
        .collect()
}

/// `(type, name)` fields of `pub struct NAME { ... }` in the Rust sources, in C spelling.
fn rust_struct(name: &str) -> Vec<(String, String)> {
    let src = crate_dir().join("src");
    for entry in std::fs::read_dir(&src).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let Some(start) = text.find(&format!("pub struct {name} {{")) else {
            continue;
        };
        let body = &text[start..];
        let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
        return body
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("pub "))
            .map(|l| {
                let (field, ty) = l["pub ".len()..]
                    .trim_end_matches(',')
                    .split_once(':')
                    .unwrap();
                let ty = match ty.trim() {
                    "u32" => "uint32_t",
                    "u64" => "uint64_t",
                    other => panic!("field type {other}"),
                };
                (ty.to_string(), field.trim().to_string())
            })
            .collect();
    }
    panic!("struct {name} not found")
}

#[test]
fn header_structs_have_the_rust_layout() {
    let h = header();
    assert_eq!(
        c_struct(&h, "arb_av_decision"),
        rust_struct("ArbAvDecision")
    );
    assert_eq!(
        c_struct(&h, "arb_avc_cache_stats"),
        rust_struct("ArbCacheStats")
    );
}

#[test]
fn header_flags_match_the_engine() {
    let h = header();
    let value = |name: &str| -> u32 {
        let line = h
            .lines()
            .find(|l| l.starts_with(&format!("#define {name} ")))
            .unwrap_or_else(|| panic!("{name} not defined"));
        let v = line.split_whitespace().nth(2).unwrap();
        u32::from_str_radix(v.trim_start_matches("0x").trim_end_matches('u'), 16).unwrap()
    };
    use arbiter_decide::AvdFlags;
    assert_eq!(value("ARB_AVD_FLAGS_PERMISSIVE"), AvdFlags::PERMISSIVE.0);
    assert_eq!(value("ARB_AVD_FLAGS_NEVERAUDIT"), AvdFlags::NEVERAUDIT.0);
}

#[test]
fn header_reader_sees_parameter_types_without_names() {
    let fns = header_functions(
        "int f(const char *path, arb_server **out);\nvoid g(void);\n\
         void h(void (*cb)(void *arg, const char *r), void *arg);",
    );
    assert_eq!(fns["f"], "int(constchar*,arb_server**)");
    assert_eq!(fns["g"], "void()");
    assert_eq!(fns["h"], "void(void(*)(void*,constchar*),void*)");
}
