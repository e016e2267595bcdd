//! A run over one or more logs: read, parse, decide (each distinct denial once), render.
//!
//! Reports stream out as records are read (audit2why mode), or rules are accumulated and
//! rendered at the end (audit2allow mode). Malformed SELinux lines and denials the policy
//! cannot place are counted and kept (the first [`MAX_KEPT`]) with their file and line
//! number for the caller to report; a run never stops on them.

use crate::allow::AllowGenerator;
use crate::allow::{Origin, RecordNote};
use crate::booldesc::BoolDescriptions;
use crate::engine::{Engine, Verdict};
use crate::error::{Malformed, Unknown};
use crate::filter::TypeFilter;
use crate::module::{Explanation, Generation};
use crate::parse::{avc_path, header, parse_line, starts_over, AvcRecord, AvcSource, Line};
use crate::read::{LineReader, Newlines, RawLine, MAX_LINE};
use crate::why;
use serde_json::json;
use std::collections::HashMap;
use std::io::{self, BufRead, Write};

/// Problems kept for reporting; later ones are only counted.
pub const MAX_KEPT: usize = 1000;
/// Distinct denials whose verdicts are cached; the cache is cleared when it fills.
const CACHE_LIMIT: usize = 1 << 16;

/// What to print.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// audit2why's report per record.
    #[default]
    Why,
    /// audit2allow's rules.
    Allow,
}

/// Output options.
#[derive(Copy, Clone, Debug, Default)]
pub struct Options {
    /// Report per record, or rules.
    pub mode: Mode,
    /// Add arbiter's full explanation to each report.
    pub explain: bool,
    /// JSON Lines (one object per record; in allow mode one object with the rules text).
    pub json: bool,
    /// The input is a program's output (`audit2allow -a` / `-d` read `ausearch` / `dmesg`):
    /// sepolgen then generates its (empty) rules even when no SELinux record was seen,
    /// where for a file it says "Nothing to do" and stops.
    pub program_output: bool,
    /// audit2allow's `-l`: forget what was read before each policy load (or auditd start,
    /// see [`crate::starts_over`]). Reports are then held until the run ends.
    pub last_reload: bool,
}

/// A line that was skipped or could not be explained.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The input's name (`-` for standard input).
    pub source: String,
    /// 1-based line number.
    pub line: u64,
    /// What was wrong.
    pub what: ProblemKind,
}

/// Why a line was skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProblemKind {
    /// The SELinux record could not be read.
    Malformed(Malformed),
    /// The policy does not know a name the denial uses.
    Unknown(Unknown),
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.what {
            ProblemKind::Malformed(m) => {
                write!(f, "{}:{}: unreadable: {m}", self.source, self.line)
            }
            ProblemKind::Unknown(u) => {
                write!(f, "{}:{}: not explained: {u}", self.source, self.line)
            }
        }
    }
}

/// Counts of a run.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Lines read.
    pub lines: u64,
    /// AVC / USER_AVC records read.
    pub records: u64,
    /// Distinct denials decided (cache misses).
    pub decided: u64,
    /// SELinux lines that could not be read.
    pub malformed: u64,
    /// Denials the policy could not place.
    pub unknown: u64,
    /// The first [`MAX_KEPT`] problems.
    pub problems: Vec<Problem>,
    /// Whether any SELinux record was seen (audit2why says "Nothing to do" otherwise).
    pub selinux_seen: bool,
}

/// One run.
pub struct Session<'e> {
    engine: &'e Engine,
    opts: Options,
    cache: HashMap<String, Result<Verdict, Unknown>>,
    allow: AllowGenerator,
    summary: Summary,
    key: String,
    out: String,
    descriptions: BoolDescriptions,
    generation: Generation,
    type_filter: Option<TypeFilter>,
}

impl<'e> Session<'e> {
    /// A run against `engine`'s policy.
    pub fn new(engine: &'e Engine, opts: Options) -> Session<'e> {
        Session {
            engine,
            opts,
            cache: HashMap::new(),
            allow: AllowGenerator::new(),
            summary: Summary::default(),
            key: String::new(),
            out: String::new(),
            descriptions: BoolDescriptions::none(),
            generation: Generation::default(),
            type_filter: None,
        }
    }

    /// audit2allow's `-t`: only records with a matching type become rules (allow mode).
    pub fn with_type_filter(mut self, filter: TypeFilter) -> Session<'e> {
        self.type_filter = Some(filter);
        self
    }

    fn type_filter_passes<'a>(&self, types: impl IntoIterator<Item = &'a str>) -> bool {
        self.type_filter.as_ref().is_none_or(|f| f.any(types))
    }

    /// Generates rules with audit2allow's `-m`, `-r`, `-D`, `-x` options (allow mode).
    pub fn with_generation(mut self, generation: Generation) -> Session<'e> {
        self.generation = generation;
        self
    }

    /// Uses these boolean descriptions (audit2why reads the system's `policy.xml`:
    /// [`BoolDescriptions::system`]); without, descriptions derive from the names.
    pub fn with_descriptions(mut self, descriptions: BoolDescriptions) -> Session<'e> {
        self.descriptions = descriptions;
        self
    }

    /// Reads one input to its end, writing reports to `w` as they come.
    pub fn feed<R: BufRead, W: Write + ?Sized>(
        &mut self,
        name: &str,
        input: R,
        w: &mut W,
    ) -> io::Result<()> {
        self.feed_with(name, input, Newlines::Universal, w)
    }

    /// [`Session::feed`] with the line ends of the input's kind: audit2allow reads a named
    /// file with universal newlines, standard input and program output with `\n` only
    /// (a CRLF record keeps its `\r` in its report).
    pub fn feed_with<R: BufRead, W: Write + ?Sized>(
        &mut self,
        name: &str,
        input: R,
        newlines: Newlines,
        w: &mut W,
    ) -> io::Result<()> {
        let mut reader = LineReader::with_options(input, MAX_LINE, newlines);
        let mut line_no = 0u64;
        while let Some(raw) = reader.next_line()? {
            line_no += 1;
            self.summary.lines += 1;
            match raw {
                RawLine::TooLong {
                    len,
                    salvaged,
                    newline,
                } => {
                    let what = Malformed::TooLong {
                        max: MAX_LINE,
                        len,
                        salvaged: salvaged.is_some(),
                    };
                    self.problem(name, line_no, ProblemKind::Malformed(what));
                    if let Some(text) = salvaged {
                        self.line(name, line_no, &text, newline);
                    }
                }
                RawLine::Text { text, newline } => self.line(name, line_no, &text, newline),
            }
            if self.out.len() >= 1 << 16 && !self.opts.last_reload {
                w.write_all(self.out.as_bytes())?;
                self.out.clear();
            }
        }
        if !self.opts.last_reload {
            w.write_all(self.out.as_bytes())?;
            self.out.clear();
        }
        Ok(())
    }

    /// Finishes the run: audit2allow's rules in allow mode; returns the counts.
    pub fn finish<W: Write + ?Sized>(self, w: &mut W) -> io::Result<Summary> {
        // Reports held for `last_reload`.
        w.write_all(self.out.as_bytes())?;
        if self.opts.mode == Mode::Allow && (self.summary.selinux_seen || self.opts.program_output)
        {
            if self.opts.json {
                let v = self.allow.to_json(&self.generation);
                writeln!(w, "{v}")?;
            } else {
                w.write_all(self.allow.render(&self.generation).as_bytes())?;
            }
        }
        w.flush()?;
        Ok(self.summary)
    }

    fn problem(&mut self, source: &str, line: u64, what: ProblemKind) {
        match what {
            ProblemKind::Malformed(_) => self.summary.malformed += 1,
            ProblemKind::Unknown(_) => self.summary.unknown += 1,
        }
        // Every skipped line is kept (one per MiB of input at most); other problems only
        // up to the limit.
        let skipped = matches!(what, ProblemKind::Malformed(Malformed::TooLong { .. }));
        if skipped || self.summary.problems.len() < MAX_KEPT {
            self.summary.problems.push(Problem {
                source: source.to_string(),
                line,
                what,
            });
        }
    }

    fn line(&mut self, source: &str, line_no: u64, text: &str, newline: bool) {
        match parse_line(text) {
            Line::Other => {}
            Line::Notice => {
                self.summary.selinux_seen = true;
                if self.generation.explain != Explanation::None {
                    if let Some(path) = avc_path(text) {
                        self.allow.add_path(header(text), path);
                    }
                }
                if self.opts.last_reload && starts_over(text) {
                    // sepolgen's parser re-initialises: records, roles, and whether any
                    // SELinux line was seen at all.
                    self.allow = AllowGenerator::new();
                    self.out.clear();
                    self.summary.selinux_seen = false;
                }
            }
            Line::Malformed(m) => {
                self.summary.selinux_seen = true;
                self.problem(source, line_no, ProblemKind::Malformed(m));
            }
            Line::ComputeSid(c) => {
                self.summary.selinux_seen = true;
                if self.type_filter_passes([c.ty, c.stype, c.ttype]) {
                    self.allow.add_role(c.role, c.ty);
                }
            }
            Line::Avc(rec) => {
                self.summary.selinux_seen = true;
                self.summary.records += 1;
                let verdict = self.verdict(&rec);
                self.record(source, line_no, text, newline, &rec, verdict);
            }
        }
    }

    fn verdict(&mut self, rec: &AvcRecord<'_>) -> Result<Verdict, Unknown> {
        self.key.clear();
        for part in [rec.scontext, rec.tcontext, rec.tclass] {
            self.key.push_str(part);
            self.key.push('\0');
        }
        for p in &rec.perms {
            self.key.push_str(p);
            self.key.push('\0');
        }
        if let Some(v) = self.cache.get(&self.key) {
            return v.clone();
        }
        self.summary.decided += 1;
        let v = self
            .engine
            .analyze(rec.scontext, rec.tcontext, rec.tclass, &rec.perms);
        if self.cache.len() >= CACHE_LIMIT {
            self.cache.clear();
        }
        self.cache.insert(self.key.clone(), v.clone());
        v
    }

    fn record(
        &mut self,
        source: &str,
        line_no: u64,
        text: &str,
        newline: bool,
        rec: &AvcRecord<'_>,
        verdict: Result<Verdict, Unknown>,
    ) {
        if let Err(u) = &verdict {
            self.problem(source, line_no, ProblemKind::Unknown(u.clone()));
        }
        match self.opts.mode {
            Mode::Allow => {
                let types = [
                    why::split_context(rec.scontext).2,
                    why::split_context(rec.tcontext).2,
                ];
                if rec.denied && self.type_filter_passes(types) {
                    let v = match &verdict {
                        Ok(v) => Some(Some(v)),
                        // audit2allow still writes a rule for a class the policy lacks.
                        Err(Unknown::Tclass(_)) => Some(None),
                        Err(_) => None,
                    };
                    if let Some(v) = v {
                        let i = self.allow.add(
                            rec.scontext,
                            rec.tcontext,
                            rec.tclass,
                            &rec.perms,
                            v,
                            rec.ioctlcmd,
                        );
                        if self.generation.explain != Explanation::None {
                            let origin = Origin {
                                comm: rec.comm.unwrap_or("").to_string(),
                                exe: rec.exe.unwrap_or("").to_string(),
                                header: header(text).to_string(),
                            };
                            self.allow.note_origin(i, origin);
                        }
                        if self.generation.explain == Explanation::Long {
                            // sepolgen keeps the line as read: with its newline from a
                            // file, without from a program's output (split on newlines).
                            let nl = newline && !self.opts.program_output;
                            let note = RecordNote {
                                header: header(text).to_string(),
                                scontext: rec.scontext.to_string(),
                                tcontext: rec.tcontext.to_string(),
                                tclass: rec.tclass.to_string(),
                                perms: rec.perms.iter().map(|p| p.to_string()).collect(),
                                comm: rec.comm.unwrap_or("").to_string(),
                                exe: rec.exe.unwrap_or("").to_string(),
                                message: if nl {
                                    format!("{text}\n")
                                } else {
                                    text.to_string()
                                },
                            };
                            self.allow.add_note(i, note);
                        }
                    }
                }
            }
            Mode::Why if self.opts.json => {
                let v = self.json(source, line_no, rec, &verdict);
                self.out.push_str(&v.to_string());
                self.out.push('\n');
            }
            Mode::Why => {
                let raw = if newline {
                    format!("{text}\n")
                } else {
                    text.to_string()
                };
                match &verdict {
                    Ok(v) => why::write_report(
                        &mut self.out,
                        &raw,
                        v,
                        rec.scontext,
                        rec.tcontext,
                        &self.descriptions,
                    ),
                    Err(u) if self.opts.explain => {
                        self.out.push_str(&raw);
                        self.out.push_str(&format!("\n\tNot explained: {u}\n\n"));
                    }
                    Err(_) => {}
                }
                if self.opts.explain && verdict.is_ok() {
                    if let Ok((text, _)) =
                        self.engine
                            .explain(rec.scontext, rec.tcontext, rec.tclass, &rec.perms)
                    {
                        self.out.push_str("\tarbiter explanation:\n");
                        self.out.push_str(&text);
                        self.out.push('\n');
                    }
                }
            }
        }
    }

    fn json(
        &self,
        source: &str,
        line_no: u64,
        rec: &AvcRecord<'_>,
        verdict: &Result<Verdict, Unknown>,
    ) -> serde_json::Value {
        let mut v = json!({
            "source": source,
            "line": line_no,
            "record": match rec.source { AvcSource::Kernel => "AVC", AvcSource::User => "USER_AVC" },
            "denied": rec.denied,
            "permissive": rec.permissive,
            "scontext": rec.scontext,
            "tcontext": rec.tcontext,
            "tclass": rec.tclass,
            "perms": rec.perms,
            "ioctlcmd": rec.ioctlcmd,
            "comm": rec.comm,
            "exe": rec.exe,
            "name": rec.name,
        });
        let m = v.as_object_mut().expect("object literal");
        match verdict {
            Ok(vd) => {
                m.insert("verdict".into(), json!(vd.name()));
                m.insert("code".into(), json!(vd.code()));
                match vd {
                    Verdict::Boolean(f) => {
                        m.insert(
                            "booleans".into(),
                            json!(f
                                .iter()
                                .map(|b| json!({"name": b.name, "value": b.value}))
                                .collect::<Vec<_>>()),
                        );
                    }
                    Verdict::Constraint(buf) => {
                        m.insert("constraint".into(), json!(buf));
                        m.insert(
                            "causes".into(),
                            json!(why::constraint_causes(rec.scontext, rec.tcontext)),
                        );
                    }
                    _ => {}
                }
                if self.opts.explain {
                    if let Ok((_, e)) =
                        self.engine
                            .explain(rec.scontext, rec.tcontext, rec.tclass, &rec.perms)
                    {
                        m.insert("explanation".into(), e);
                    }
                }
            }
            Err(u) => {
                m.insert("verdict".into(), serde_json::Value::Null);
                m.insert("unknown".into(), json!(u.to_string()));
            }
        }
        v
    }
}
