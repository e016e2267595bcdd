//! The in-process `setfiles -c` verdict (`FcCheck`) against the real `setfiles -q -c` on
//! the installed Debian policy: whenever the in-process check passes, setfiles must pass
//! (exit 0) on the same files; the well-formed cases must pass in process (else the build
//! would always run setfiles and the fast path would go untested) and the broken ones must
//! fail in setfiles (so that they test something). Skipped where setfiles or the policy
//! is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use arbiter_decide::Names;
use arbiter_policy::Policy;
use arbiter_store::FcCheck;

const POLICY: &str = "/etc/selinux/default/policy/policy.33";
const SETFILES: &str = "/sbin/setfiles";

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("arbiter-fccheck-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// How each case is expected to come out.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Want {
    /// Well formed: setfiles passes and so does the in-process check.
    Pass,
    /// Broken: setfiles fails (the in-process check then must not pass).
    Fail,
    /// Either: only "in-process pass implies setfiles pass" is asserted.
    Any,
}

struct Case {
    name: &'static str,
    base: Vec<u8>,
    homedirs: Option<Vec<u8>>,
    local: Option<Vec<u8>>,
    want: Want,
}

const GOOD: &str = "/etc/.*\tsystem_u:object_r:etc_t:s0\n\
/usr/.*\tsystem_u:object_r:usr_t:s0\n\
/usr/(.*/)?man\t-d\tsystem_u:object_r:man_t:s0\n\
/usr/.*\\.cgi\t--\tsystem_u:object_r:httpd_sys_script_exec_t:s0\n";

fn case(name: &'static str, extra: &str, want: Want) -> Case {
    Case {
        name,
        base: format!("{GOOD}{extra}").into_bytes(),
        homedirs: None,
        local: None,
        want,
    }
}

fn cases() -> Vec<Case> {
    use Want::*;
    let mut v = vec![
        case("plain", "", Pass),
        case(
            "comments, blank lines, leading and trailing blanks",
            "# a comment\n\n   \t\n  # indented comment\n  /srv(/.*)?   system_u:object_r:var_t:s0  \t\n",
            Pass,
        ),
        case("no final newline", "/srv\tsystem_u:object_r:var_t:s0", Pass),
        case("<<none>>", "/proc(/.*)?\t<<none>>\n", Pass),
        case(
            "same regex, different file types",
            "/dev/x\t-c\tsystem_u:object_r:device_t:s0\n/dev/x\t-b\tsystem_u:object_r:device_t:s0\n",
            Pass,
        ),
        case(
            "every file type",
            "/a\t-b\tsystem_u:object_r:device_t:s0\n/a\t-c\tsystem_u:object_r:device_t:s0\n\
             /a\t-d\tsystem_u:object_r:var_t:s0\n/a\t-p\tsystem_u:object_r:var_t:s0\n\
             /a\t-l\tsystem_u:object_r:var_t:s0\n/a\t-s\tsystem_u:object_r:var_t:s0\n\
             /a\t--\tsystem_u:object_r:var_t:s0\n",
            Pass,
        ),
        case("categories", "/srv\tsystem_u:object_r:var_t:s0-s0:c0.c1023\n", Pass),
        case("bad regex: open group", "/srv(/.*\tsystem_u:object_r:var_t:s0\n", Fail),
        case("bad regex: open class", "/srv[a\tsystem_u:object_r:var_t:s0\n", Fail),
        // Anchored, a trailing backslash escapes the `$`: PCRE2 compiles it.
        case("trailing backslash", "/srv\\\tsystem_u:object_r:var_t:s0\n", Pass),
        case("bad regex: quantifier out of order", "/srv{2,1}\tsystem_u:object_r:var_t:s0\n", Fail),
        case("bad regex: nothing to repeat", "*\tsystem_u:object_r:var_t:s0\n", Fail),
        case("unknown type", "/srv\tsystem_u:object_r:no_such_t:s0\n", Fail),
        case("unknown user", "/srv\tnobody_u:object_r:var_t:s0\n", Fail),
        case("unknown role", "/srv\tsystem_u:no_r:var_t:s0\n", Fail),
        case("role not authorised for the user", "/srv\tuser_u:system_r:var_t:s0\n", Fail),
        case("no range in an MLS policy", "/srv\tsystem_u:object_r:var_t\n", Fail),
        case("unknown sensitivity", "/srv\tsystem_u:object_r:var_t:s9\n", Fail),
        case("unknown category", "/srv\tsystem_u:object_r:var_t:s0:c5000\n", Fail),
        case("high below low", "/srv\tsystem_u:object_r:var_t:s0:c1-s0\n", Fail),
        case("attribute as type", "/srv\tsystem_u:object_r:file_type:s0\n", Fail),
        case("malformed context", "/srv\tsystem_u\n", Fail),
        case("invalid file type", "/srv\t-x\tsystem_u:object_r:var_t:s0\n", Fail),
        case("invalid file type, long", "/srv\t--d\tsystem_u:object_r:var_t:s0\n", Fail),
        case("one field", "/srv\n", Fail),
        case("four fields", "/srv\t--\tsystem_u:object_r:var_t:s0\textra\n", Any),
        case(
            "duplicate, same context",
            "/srv\tsystem_u:object_r:var_t:s0\n/srv\tsystem_u:object_r:var_t:s0\n",
            Fail,
        ),
        case(
            "duplicate, different contexts",
            "/srv\tsystem_u:object_r:var_t:s0\n/srv\tsystem_u:object_r:etc_t:s0\n",
            Fail,
        ),
        case(
            "duplicate, one without a file type",
            "/srv\t-d\tsystem_u:object_r:var_t:s0\n/srv\tsystem_u:object_r:var_t:s0\n",
            Fail,
        ),
        case(
            "duplicate, same file type",
            "/srv\t-d\tsystem_u:object_r:var_t:s0\n/srv\t-d\tsystem_u:object_r:var_t:s0\n",
            Fail,
        ),
        case("non-ASCII byte", "/srv/\u{e9}\tsystem_u:object_r:var_t:s0\n", Fail),
        case("carriage return", "/srv\tsystem_u:object_r:var_t:s0\r\n", Any),
        case("vertical tab as separator", "/srv\x0bsystem_u:object_r:var_t:s0\n", Any),
        case("NUL byte", "/srv\tsystem_u:object_r:var_t:s0\0junk\n", Any),
    ];
    let hd = |name, h: &str, want| Case {
        name,
        base: GOOD.as_bytes().to_vec(),
        homedirs: Some(h.as_bytes().to_vec()),
        local: None,
        want,
    };
    v.push(hd(
        "homedirs, good",
        "/home/[^/]+\t-d\tunconfined_u:object_r:user_home_dir_t:s0\n",
        Pass,
    ));
    v.push(hd(
        "homedirs repeats a base regex (nodups is base-only)",
        "/etc/.*\tsystem_u:object_r:etc_t:s0\n",
        Pass,
    ));
    v.push(hd(
        "homedirs, duplicate inside",
        "/h\tsystem_u:object_r:var_t:s0\n/h\tsystem_u:object_r:var_t:s0\n",
        Pass,
    ));
    v.push(hd(
        "homedirs, bad regex",
        "/home/(x\tsystem_u:object_r:var_t:s0\n",
        Fail,
    ));
    v.push(hd(
        "homedirs, bad context",
        "/home/x\tsystem_u:object_r:no_such_t:s0\n",
        Fail,
    ));
    let local = |name, l: &str, want| Case {
        name,
        base: GOOD.as_bytes().to_vec(),
        homedirs: None,
        local: Some(l.as_bytes().to_vec()),
        want,
    };
    v.push(local(
        "local, good",
        "/srv/www(/.*)?\tsystem_u:object_r:httpd_sys_content_t:s0\n",
        Pass,
    ));
    v.push(local(
        "local, bad regex",
        "/srv/www(\tsystem_u:object_r:var_t:s0\n",
        Fail,
    ));
    v.push(local(
        "local, bad type",
        "/srv/www\tsystem_u:object_r:no_such_t:s0\n",
        Fail,
    ));
    v.push(local(
        "local, bad file type",
        "/srv/www\t-q\tsystem_u:object_r:var_t:s0\n",
        Fail,
    ));
    let installed = Path::new("/etc/selinux/default/contexts/files");
    if let (Ok(fc), Ok(h)) = (
        std::fs::read(installed.join("file_contexts")),
        std::fs::read(installed.join("file_contexts.homedirs")),
    ) {
        v.push(Case {
            name: "the installed file_contexts and .homedirs",
            base: fc,
            homedirs: Some(h),
            local: None,
            want: Pass,
        });
    }
    v
}

#[test]
fn in_process_verdict_never_passes_what_setfiles_fails() {
    if !Path::new(SETFILES).exists() || !Path::new(POLICY).exists() {
        eprintln!("{SETFILES} or {POLICY} missing: skipped");
        return;
    }
    let policy = Policy::from_bytes(&std::fs::read(POLICY).unwrap()).unwrap();
    let names = Names::new(&policy);
    let check = FcCheck {
        policy: &policy,
        names: &names,
    };
    let dir = scratch("verdicts");
    let mut wrong = Vec::new();
    for (i, c) in cases().iter().enumerate() {
        let d = dir.join(i.to_string());
        std::fs::create_dir_all(&d).unwrap();
        let fc = d.join("file_contexts");
        std::fs::write(&fc, &c.base).unwrap();
        if let Some(h) = &c.homedirs {
            std::fs::write(d.join("file_contexts.homedirs"), h).unwrap();
        }
        if let Some(l) = &c.local {
            std::fs::write(d.join("file_contexts.local"), l).unwrap();
        }
        let out = Command::new(SETFILES)
            .args(["-q", "-c", POLICY])
            .arg(&fc)
            .output()
            .unwrap();
        let setfiles_ok = out.status.success();
        let ours = check
            .file("file_contexts", &c.base, true)
            .and_then(|()| match &c.homedirs {
                Some(h) => check.file("file_contexts.homedirs", h, false),
                None => Ok(()),
            })
            .and_then(|()| match &c.local {
                Some(l) => check.file("file_contexts.local", l, false),
                None => Ok(()),
            });
        let bad = (ours.is_ok() && !setfiles_ok)
            || (c.want == Want::Pass && (ours.is_err() || !setfiles_ok))
            || (c.want == Want::Fail && (setfiles_ok || ours.is_ok()));
        if bad {
            wrong.push(format!(
                "{}: setfiles {} ({}), in process {:?}, wanted {:?}",
                c.name,
                out.status,
                String::from_utf8_lossy(&out.stderr).trim(),
                ours,
                c.want
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
