//! Every subcommand, in every output mode, against output that cannot be written.
//!
//! The subcommands are read from the command line's own definition (`arbiter --help`, then
//! each command's `--help`, recursively), so a command added later without a case here
//! fails [`every_subcommand_has_a_case`]. Each case runs twice:
//!
//! - into `/dev/full`: exit status 2 and `arbiter: cannot write output: ...` on stderr
//!   (never 0 with the output lost, never a panic);
//! - into a pipe whose reading end is already closed: exit status 0, nothing on stderr
//!   (a closed pipe is how `| head` says "enough", as sesearch treats it), never a panic.
//!
//! A case whose command writes nothing of its own (`landlock run` execs another program)
//! says so and is checked for that instead.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_arbiter");

const HTTPD: &str = "system_u:system_r:httpd_t:s0";
const CONTENT: &str = "system_u:object_r:httpd_content_t:s0";
const HOME: &str = "user_u:object_r:user_home_t:s0";

/// What a case's command writes on standard output.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Writes {
    /// Some output (the case must fail into `/dev/full`).
    Output,
    /// Nothing of its own.
    Nothing,
}

struct Case {
    /// The subcommand path (`bsm print`), as the help lists it.
    command: &'static str,
    /// The arguments after the subcommand path.
    args: Vec<String>,
    stdin: Vec<u8>,
    writes: Writes,
}

/// Files the cases read.
struct Fixtures {
    dir: PathBuf,
}

impl Fixtures {
    /// Files of their own for each test (the tests run in parallel).
    fn new(test: &str) -> Fixtures {
        let dir =
            std::env::temp_dir().join(format!("arbiter-io-failures-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("a")).unwrap();
        std::fs::write(dir.join("a/f"), b"x\n").unwrap();
        std::fs::write(
            dir.join("layer.toml"),
            format!(
                "abi = 4\n[[ruleset]]\nhandled_access_fs = [\"abi.all\"]\n\
                 [[path_beneath]]\nallowed_access = [\"read_file\"]\nparent = [\"{}\"]\n",
                dir.join("a").display()
            ),
        )
        .unwrap();
        // For `landlock run`: only writes are handled, so the command can be executed.
        std::fs::write(
            dir.join("run.toml"),
            "abi = 4\n[[ruleset]]\nhandled_access_fs = [\"write_file\"]\n",
        )
        .unwrap();
        std::fs::write(dir.join("audit.log"), denial_log()).unwrap();
        let cfg = arbiter_bsm::Config::builtin();
        let trail = arbiter_lab::bsm_study::synthetic_trail(&cfg, 200, 7);
        std::fs::write(dir.join("trail.bsm"), trail).unwrap();
        Fixtures { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }
}

impl Drop for Fixtures {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn denial_log() -> String {
    format!(
        "type=AVC msg=audit(1.0:1): avc:  denied  {{ read }} for  pid=1 comm=\"cat\" \
         scontext={HTTPD} tcontext={HOME} tclass=file permissive=0\n"
    )
}

fn case(command: &'static str, args: &[&str]) -> Case {
    Case {
        command,
        args: args.iter().map(|s| s.to_string()).collect(),
        stdin: Vec::new(),
        writes: Writes::Output,
    }
}

fn with_stdin(mut c: Case, stdin: impl Into<Vec<u8>>) -> Case {
    c.stdin = stdin.into();
    c
}

/// One or more cases per subcommand and output mode.
fn cases(f: &Fixtures) -> Vec<Case> {
    let log = f.path("audit.log");
    let layer = f.path("layer.toml");
    let trail = f.path("trail.bsm");
    let file = f.path("a/f");
    let av_batch = format!("{HTTPD} {CONTENT} file\n{HTTPD} {HOME} file\n");
    let run_layer = f.path("run.toml");
    let mut no_output = case("landlock run", &["--layer", &run_layer, "--", "true"]);
    no_output.writes = Writes::Nothing;
    vec![
        case("info", &["builtin"]),
        case("info", &["builtin", "--json"]),
        case("info", &["builtin", "-t"]),
        case("info", &["builtin", "-t", "--json"]),
        case("info", &["--help"]),
        case("check", &["builtin", HTTPD, CONTENT, "file", "read"]),
        case(
            "check",
            &["builtin", HTTPD, HOME, "file", "read", "--explain"],
        ),
        case("check", &["builtin", HTTPD, HOME, "file", "read", "--json"]),
        with_stdin(case("av", &["builtin"]), av_batch.clone()),
        with_stdin(case("av", &["builtin", "--no-cache"]), av_batch),
        case("label", &["builtin", HTTPD, CONTENT, "file"]),
        case("bools", &["builtin"]),
        case("why", &["builtin", &log]),
        case("why", &["builtin", &log, "--explain"]),
        case("why", &["builtin", &log, "--json"]),
        case("why", &["builtin", &log, "--allow"]),
        case("why", &["builtin", &log, "-m", "local", "-v"]),
        with_stdin(case("why", &["builtin"]), denial_log()),
        case("demo", &[]),
        case("search", &["-A", "builtin"]),
        case("search", &["-A", "--json", "builtin"]),
        case("search", &["-T", "builtin"]),
        case("search", &["--help"]),
        case("diff", &["builtin", "policies/bin/features.33"]),
        case("diff", &["--stats", "builtin", "policies/bin/features.33"]),
        case("diff", &["--json", "builtin", "policies/bin/features.33"]),
        case("bsm print", &[&trail]),
        case("bsm print", &["-l", "-n", &trail]),
        case("bsm print", &["-x", &trail]),
        case("bsm print", &["--json", &trail]),
        with_stdin(
            case("bsm print", &[]),
            std::fs::read(f.dir.join("trail.bsm")).unwrap(),
        ),
        case("bsm reduce", &[&trail]),
        case("bsm reduce", &["-c", "lo", &trail]),
        case("bsm preselect", &["--event", "AUE_OPEN_R", "--mask", "fr"]),
        case(
            "bsm preselect",
            &["--event", "AUE_OPEN_R", "--mask", "fr", "--explain"],
        ),
        case("bsm config", &["--strict"]),
        case("landlock check", &["--layer", &layer, "--", "read", &file]),
        case(
            "landlock check",
            &[
                "--layer",
                &layer,
                "--explain",
                "--json",
                "--",
                "read",
                &file,
            ],
        ),
        with_stdin(
            case("landlock check", &["--layer", &layer, "--batch"]),
            format!("read {file}\nwrite {file}\nbogus\n"),
        ),
        no_output,
        case("build", &["-h"]),
        case("build", &["--store", "-h"]),
        case("dta", &["-p", "policies/bin/default.33", "-s", "init_t"]),
        case(
            "dta",
            &["-p", "policies/bin/default.33", "-s", "init_t", "--json"],
        ),
        case(
            "infoflow",
            &["-p", "policies/bin/default.33", "-s", "httpd_t"],
        ),
        case(
            "infoflow",
            &["-p", "policies/bin/default.33", "-s", "httpd_t", "--json"],
        ),
        case(
            "neverallow",
            &[
                "policies/bin/tiny.33",
                "-n",
                "neverallow domain self:process fork;",
            ],
        ),
        case(
            "neverallow",
            &[
                "policies/bin/tiny.33",
                "-n",
                "neverallow domain self:process fork;",
                "--json",
            ],
        ),
        case(
            "neverallow",
            &[
                "policies/bin/tiny.33",
                "-n",
                "neverallow domain self:process fork;",
                "--by-statement",
            ],
        ),
        case(
            "sechecker",
            &["tests/data/sechecker/tiny.ini", "policies/bin/tiny.33"],
        ),
        case(
            "sechecker",
            &[
                "tests/data/sechecker/tiny.ini",
                "policies/bin/tiny.33",
                "--json",
            ],
        ),
        case("manpage", &[]),
        case("manpage", &["bsm", "print"]),
        case("completions", &["bash"]),
        case(
            "bench avc",
            &[
                "--quick",
                "--queries",
                "2000",
                "--distinct",
                "50",
                "--repetitions",
                "1",
            ],
        ),
        case(
            "bench bsm",
            &[
                "--records",
                "200",
                "--seconds",
                "0.001",
                "--repetitions",
                "1",
            ],
        ),
        case(
            "bench reload",
            &[
                "--policy",
                "builtin",
                "--sids",
                "10",
                "--seconds",
                "0.05",
                "--lookups",
                "1000",
            ],
        ),
        case("bench landlock", &["--repetitions", "1", "--checks", "10"]),
    ]
}

/// The subcommands listed by `arbiter [PATH...] --help`, recursively, as paths.
fn subcommands(path: &[String]) -> Vec<String> {
    let out = Command::new(BIN)
        .args(path)
        .arg("--help")
        .output()
        .expect("run arbiter --help");
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    let Some(list) = help.split("Commands:\n").nth(1) else {
        return vec![path.join(" ")];
    };
    let mut all = Vec::new();
    for line in list.lines().take_while(|l| !l.trim().is_empty()) {
        let name = line.split_whitespace().next().unwrap().to_string();
        if name == "help" {
            continue;
        }
        let mut sub = path.to_vec();
        sub.push(name);
        all.extend(subcommands(&sub));
    }
    all
}

fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .unwrap()
}

fn run(c: &Case, stdout: Stdio) -> Output {
    let mut child = Command::new(BIN)
        .current_dir(workspace_root())
        .args(c.command.split(' '))
        .args(&c.args)
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .expect("run arbiter");
    let mut stdin = child.stdin.take().unwrap();
    // The command may stop before reading its input: a failed write here is expected.
    let _ = stdin.write_all(&c.stdin);
    drop(stdin);
    child.wait_with_output().unwrap()
}

fn describe(c: &Case) -> String {
    format!("arbiter {} {}", c.command, c.args.join(" "))
}

#[test]
fn every_subcommand_has_a_case() {
    let f = Fixtures::new("list");
    let covered: BTreeSet<&str> = cases(&f).iter().map(|c| c.command).collect();
    let listed = subcommands(&[]);
    assert!(
        listed.len() >= 15,
        "help lists too few commands: {listed:?}"
    );
    let missing: Vec<&String> = listed
        .iter()
        .filter(|s| !covered.contains(s.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "subcommands without an output-failure case in tests/io_failures.rs: {missing:?}"
    );
    let unknown: Vec<&&str> = covered
        .iter()
        .filter(|c| !listed.iter().any(|l| l == *c))
        .collect();
    assert!(
        unknown.is_empty(),
        "cases for commands that do not exist: {unknown:?}"
    );
}

#[test]
fn every_command_fails_with_status_2_into_a_full_disk() {
    let f = Fixtures::new("full");
    let mut failures = Vec::new();
    for c in cases(&f) {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let o = run(&c, Stdio::from(full));
        let err = String::from_utf8_lossy(&o.stderr);
        let ok = match c.writes {
            Writes::Output => {
                o.status.code() == Some(2) && err.contains("arbiter: cannot write output: ")
            }
            Writes::Nothing => o.status.code() == Some(0),
        };
        if !ok || err.contains("panicked") {
            failures.push(format!(
                "{}: status {:?}, stderr {:?}",
                describe(&c),
                o.status,
                err.chars().take(300).collect::<String>()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_command_stops_quietly_with_status_0_into_a_closed_pipe() {
    let f = Fixtures::new("pipe");
    let mut failures = Vec::new();
    for c in cases(&f) {
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let o = run(&c, Stdio::from(writer));
        let err = String::from_utf8_lossy(&o.stderr);
        if o.status.code() != Some(0) || err.contains("panicked") || err.contains("cannot write") {
            failures.push(format!(
                "{}: status {:?}, stderr {:?}",
                describe(&c),
                o.status,
                err.chars().take(300).collect::<String>()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `println!`/`print!` panic on a closed pipe and bypass the writer's failure check: no
/// command code uses them (nor a second handle on stdout).
#[test]
fn command_code_writes_only_through_the_one_writer() {
    fn visit(dir: &Path, found: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                visit(&p, found);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") || p.ends_with("out.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap();
                let bad = [
                    "println!(",
                    "print!(",
                    "io::stdout()",
                    "eprintln!(",
                    "eprint!(",
                ];
                if bad.iter().any(|b| code.contains(b)) {
                    found.push(format!("{}:{}: {}", p.display(), n + 1, line.trim()));
                }
            }
        }
    }
    let mut found = Vec::new();
    visit(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut found,
    );
    assert!(found.is_empty(), "{}", found.join("\n"));
}
