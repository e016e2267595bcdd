//! neverallow / neverallowxperm statements as written, in the policy language
//! (`neverallow dom { file_type -shadow_t }:file { read write };`) or in CIL
//! (`(neverallow dom shadow_t (file (read)))`), parsed into name expressions that
//! [`super::resolve()`] then looks up in a policy. Parsing knows nothing of the policy, so a
//! syntax error is reported the same whatever policy the statements are checked against.

use super::NeverallowError;

/// A set of names (types, or permissions of one class) as written: the policy language's
/// `{ a b -c }`, `~x`, `*` and CIL's `(and …)`, `(or …)`, `(not …)`, `(xor …)`, `(all)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameSet {
    /// One name.
    Name(String),
    /// Every member of the universe (`*`, CIL `all`).
    All,
    /// The universe minus the set (`~`, CIL `not`).
    Not(Box<NameSet>),
    /// The union (a `{ }` list, CIL `or` or a plain list).
    Or(Vec<NameSet>),
    /// The intersection (CIL `and`).
    And(Vec<NameSet>),
    /// The symmetric difference (CIL `xor`).
    Xor(Vec<NameSet>),
    /// The first set minus the second (the policy language's `-name` inside braces).
    Minus(Box<NameSet>, Box<NameSet>),
}

/// Extended permissions as written: inclusive ranges of 16-bit ioctl numbers, combined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum XpermSet {
    /// Values `lo..=hi`.
    Range(u16, u16),
    /// All 65,536 values (CIL `all`).
    All,
    /// The complement.
    Not(Box<XpermSet>),
    /// The union.
    Or(Vec<XpermSet>),
    /// The intersection.
    And(Vec<XpermSet>),
    /// The symmetric difference.
    Xor(Vec<XpermSet>),
}

/// The permissions of one statement: for each class named, the permissions named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassPerms {
    /// The classes (a policy-language class set lists several, each with the same perms).
    pub classes: Vec<String>,
    /// The permissions, resolved within each class.
    pub perms: NameSet,
}

/// One statement, unresolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    /// Where it starts.
    pub file: String,
    /// 1-based line of its first token.
    pub line: u32,
    /// The statement's text, whitespace collapsed, for reports.
    pub text: String,
    /// The source types.
    pub source: NameSet,
    /// The target types (`self` removed and recorded in `target_self`).
    pub target: Option<NameSet>,
    /// Whether the target names `self` (each source type against itself).
    pub target_self: bool,
    /// The classes and permissions.
    pub perms: Vec<ClassPerms>,
    /// For neverallowxperm / neverallowx: the ioctl numbers.
    pub xperms: Option<XpermSet>,
}

/// A CIL attribute declared in the input (`typeattributeset`), e.g. the generated
/// `base_typeattr_N` that refpolicy's neverallow rules name but the binary does not keep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalAttribute {
    /// The attribute's name.
    pub name: String,
    /// Where it is set.
    pub line: u32,
    /// Its members, as the union of every `typeattributeset` for it.
    pub members: Vec<NameSet>,
}

/// Everything one input holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Source {
    /// The statements, in input order.
    pub statements: Vec<Statement>,
    /// Attributes the input declares (CIL only).
    pub attributes: Vec<LocalAttribute>,
}

/// Parses one input; CIL when its first token is `(`, the policy language otherwise.
pub fn parse(file: &str, text: &str) -> Result<Source, NeverallowError> {
    let cil = text
        .lines()
        .map(str::trim_start)
        .find(|l| !l.is_empty() && !l.starts_with(';') && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with('('));
    if cil {
        parse_cil(file, text)
    } else {
        parse_conf(file, text)
    }
}

fn err(file: &str, line: u32, message: impl Into<String>) -> NeverallowError {
    NeverallowError::Syntax {
        file: file.to_string(),
        line,
        message: message.into(),
    }
}

// ---------------------------------------------------------------- policy language

#[derive(Clone, Debug, PartialEq, Eq)]
struct Tok {
    text: String,
    line: u32,
}

/// Splits policy-language text into identifiers and the punctuation `{ } ~ - * : ; ,`.
fn tokenize_conf(file: &str, text: &str) -> Result<Vec<Tok>, NeverallowError> {
    let mut toks = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = n as u32 + 1;
        let body = raw.split('#').next().unwrap_or("");
        let mut chars = body.char_indices().peekable();
        while let Some(&(i, c)) = chars.peek() {
            if c.is_whitespace() {
                chars.next();
            } else if "{}~-*:;,".contains(c) {
                toks.push(Tok {
                    text: c.to_string(),
                    line,
                });
                chars.next();
            } else if c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$' {
                let mut end = i;
                while let Some(&(j, d)) = chars.peek() {
                    if d.is_ascii_alphanumeric() || d == '_' || d == '.' || d == '$' {
                        end = j + d.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                toks.push(Tok {
                    text: body[i..end].to_string(),
                    line,
                });
            } else {
                return Err(err(file, line, format!("unexpected character {c:?}")));
            }
        }
    }
    Ok(toks)
}

struct ConfParser<'a> {
    file: &'a str,
    toks: Vec<Tok>,
    pos: usize,
    /// `~` nesting, bounded so that `~~~…` cannot exhaust the stack.
    depth: u32,
}

/// The deepest `~` / `( )` nesting accepted.
const MAX_DEPTH: u32 = 256;

impl ConfParser<'_> {
    fn line(&self) -> u32 {
        self.toks
            .get(self.pos)
            .or(self.toks.last())
            .map_or(1, |t| t.line)
    }

    fn deeper(&mut self) -> Result<(), NeverallowError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(err(self.file, self.line(), "expressions nested too deeply"));
        }
        Ok(())
    }

    fn peek(&self) -> Option<&str> {
        self.toks.get(self.pos).map(|t| t.text.as_str())
    }

    fn next(&mut self, what: &str) -> Result<Tok, NeverallowError> {
        match self.toks.get(self.pos) {
            Some(t) => {
                self.pos += 1;
                Ok(t.clone())
            }
            None => Err(err(
                self.file,
                self.line(),
                format!("unexpected end of input, expected {what}"),
            )),
        }
    }

    fn expect(&mut self, text: &str) -> Result<(), NeverallowError> {
        let t = self.next(&format!("'{text}'"))?;
        if t.text == text {
            Ok(())
        } else {
            Err(err(
                self.file,
                t.line,
                format!("expected '{text}', found '{}'", t.text),
            ))
        }
    }

    fn ident(&mut self, what: &str) -> Result<Tok, NeverallowError> {
        let t = self.next(what)?;
        if is_ident(&t.text) {
            Ok(t)
        } else {
            Err(err(
                self.file,
                t.line,
                format!("expected {what}, found '{}'", t.text),
            ))
        }
    }

    /// `name`, `*`, `~set`, or `{ a b -c … }`; `self` is reported to the caller.
    fn set(&mut self, allow_self: bool, saw_self: &mut bool) -> Result<NameSet, NeverallowError> {
        match self.peek() {
            Some("*") => {
                self.pos += 1;
                Ok(NameSet::All)
            }
            Some("~") => {
                self.pos += 1;
                self.deeper()?;
                let inner = self.set(false, saw_self);
                self.depth -= 1;
                Ok(NameSet::Not(Box::new(inner?)))
            }
            Some("{") => {
                self.pos += 1;
                let (mut pos, mut neg) = (Vec::new(), Vec::new());
                loop {
                    match self.peek() {
                        Some("}") => {
                            self.pos += 1;
                            break;
                        }
                        Some("-") => {
                            self.pos += 1;
                            neg.push(NameSet::Name(self.ident("a name after '-'")?.text));
                        }
                        Some("*") => {
                            self.pos += 1;
                            pos.push(NameSet::All);
                        }
                        _ => {
                            let t = self.ident("a name or '}'")?;
                            if t.text == "self" && allow_self {
                                *saw_self = true;
                            } else {
                                pos.push(NameSet::Name(t.text));
                            }
                        }
                    }
                }
                let pos = NameSet::Or(pos);
                Ok(if neg.is_empty() {
                    pos
                } else {
                    NameSet::Minus(Box::new(pos), Box::new(NameSet::Or(neg)))
                })
            }
            _ => {
                let t = self.ident("a name, '*', '~' or '{'")?;
                if t.text == "self" && allow_self {
                    *saw_self = true;
                    Ok(NameSet::Or(Vec::new()))
                } else {
                    Ok(NameSet::Name(t.text))
                }
            }
        }
    }

    /// `0x8900`, `0x8900-0x89ff`, `~…`, or `{ … }`.
    fn xperms(&mut self) -> Result<XpermSet, NeverallowError> {
        match self.peek() {
            Some("~") => {
                self.pos += 1;
                self.deeper()?;
                let inner = self.xperms();
                self.depth -= 1;
                Ok(XpermSet::Not(Box::new(inner?)))
            }
            Some("{") => {
                self.pos += 1;
                let mut items = Vec::new();
                while self.peek() != Some("}") {
                    if self.peek() == Some("~") {
                        self.pos += 1;
                        items.push(XpermSet::Not(Box::new(self.xperm_range()?)));
                    } else {
                        items.push(self.xperm_range()?);
                    }
                }
                self.pos += 1;
                Ok(XpermSet::Or(items))
            }
            // checkpolicy takes a range only inside braces.
            _ => {
                let t = self.ident("an ioctl number")?;
                let v = number(self.file, &t)?;
                if self.peek() == Some("-") {
                    return Err(err(
                        self.file,
                        t.line,
                        "an ioctl range must be inside '{ }'",
                    ));
                }
                Ok(XpermSet::Range(v, v))
            }
        }
    }

    fn xperm_range(&mut self) -> Result<XpermSet, NeverallowError> {
        let lo = self.ident("an ioctl number")?;
        let lo_v = number(self.file, &lo)?;
        if self.peek() == Some("-") {
            self.pos += 1;
            let hi = self.ident("an ioctl number")?;
            let hi_v = number(self.file, &hi)?;
            if hi_v < lo_v {
                return Err(err(self.file, hi.line, "ioctl range ends below its start"));
            }
            return Ok(XpermSet::Range(lo_v, hi_v));
        }
        Ok(XpermSet::Range(lo_v, lo_v))
    }
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$')
}

fn number(file: &str, t: &Tok) -> Result<u16, NeverallowError> {
    let s = t.text.as_str();
    let v = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => s.parse::<u32>().ok(),
    };
    v.and_then(|v| u16::try_from(v).ok())
        .ok_or_else(|| err(file, t.line, format!("'{s}' is not a 16-bit ioctl number")))
}

fn parse_conf(file: &str, text: &str) -> Result<Source, NeverallowError> {
    let toks = tokenize_conf(file, text)?;
    let mut p = ConfParser {
        file,
        toks,
        pos: 0,
        depth: 0,
    };
    let mut out = Source::default();
    while p.pos < p.toks.len() {
        let start = p.pos;
        let head = p.ident("a statement")?;
        let xperm = match head.text.as_str() {
            "neverallow" => false,
            "neverallowxperm" => true,
            other => {
                return Err(err(
                    file,
                    head.line,
                    format!("'{other}' is not a neverallow or neverallowxperm statement"),
                ))
            }
        };
        let mut unused = false;
        let source = p.set(false, &mut unused)?;
        let mut target_self = false;
        let target = p.set(true, &mut target_self)?;
        p.expect(":")?;
        let mut classes_self = false;
        let classes = flatten_names(file, head.line, p.set(false, &mut classes_self)?)?;
        let (perms, xperms) = if xperm {
            let op = p.ident("'ioctl'")?;
            if op.text != "ioctl" {
                return Err(err(
                    file,
                    op.line,
                    format!("unsupported extended permission kind '{}'", op.text),
                ));
            }
            (NameSet::Name("ioctl".into()), Some(p.xperms()?))
        } else {
            (p.set(false, &mut unused)?, None)
        };
        p.expect(";")?;
        let text = join_tokens(&p.toks[start..p.pos]);
        out.statements.push(Statement {
            file: file.to_string(),
            line: head.line,
            text,
            source,
            target: Some(target),
            target_self,
            perms: vec![ClassPerms { classes, perms }],
            xperms,
        });
    }
    Ok(out)
}

/// A class list: one name or `{ a b }`.
fn flatten_names(file: &str, line: u32, set: NameSet) -> Result<Vec<String>, NeverallowError> {
    match set {
        NameSet::Name(n) => Ok(vec![n]),
        NameSet::Or(items) if !items.is_empty() => items
            .into_iter()
            .map(|i| match i {
                NameSet::Name(n) => Ok(n),
                _ => Err(err(file, line, "a class list holds class names only")),
            })
            .collect(),
        _ => Err(err(file, line, "a class list holds class names only")),
    }
}

fn join_tokens(toks: &[Tok]) -> String {
    let mut s = String::new();
    for (i, t) in toks.iter().enumerate() {
        let glue = i == 0
            || t.text == ":"
            || t.text == ";"
            || toks[i - 1].text == ":"
            || toks[i - 1].text == "~"
            || toks[i - 1].text == "-"
            || (t.text == "-" && toks[i - 1].text.starts_with(|c: char| c.is_ascii_digit()));
        if !glue {
            s.push(' ');
        }
        s.push_str(&t.text);
    }
    s
}

// ---------------------------------------------------------------- CIL

/// An S-expression with the line of its first token.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Sexp {
    Atom(String, u32),
    List(Vec<Sexp>, u32),
}

impl Sexp {
    fn line(&self) -> u32 {
        match self {
            Sexp::Atom(_, l) | Sexp::List(_, l) => *l,
        }
    }

    fn atom(&self) -> Option<&str> {
        match self {
            Sexp::Atom(a, _) => Some(a),
            Sexp::List(..) => None,
        }
    }

    fn render(&self, out: &mut String) {
        match self {
            Sexp::Atom(a, _) => out.push_str(a),
            Sexp::List(items, _) => {
                out.push('(');
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    x.render(out);
                }
                out.push(')');
            }
        }
    }
}

/// Reads CIL text into top-level S-expressions (`;` comments, `"…"` strings as atoms).
fn read_sexps(file: &str, text: &str) -> Result<Vec<Sexp>, NeverallowError> {
    let mut stack: Vec<(Vec<Sexp>, u32)> = vec![(Vec::new(), 1)];
    for (n, raw) in text.lines().enumerate() {
        let line = n as u32 + 1;
        let mut rest = raw;
        loop {
            rest = rest.trim_start();
            let Some(c) = rest.chars().next() else { break };
            match c {
                ';' => break,
                '(' => {
                    if stack.len() > MAX_DEPTH as usize {
                        return Err(err(file, line, "expressions nested too deeply"));
                    }
                    stack.push((Vec::new(), line));
                    rest = &rest[1..];
                }
                ')' => {
                    if stack.len() < 2 {
                        return Err(err(file, line, "unbalanced ')'"));
                    }
                    let (items, l) = stack.pop().unwrap_or_default();
                    if let Some(top) = stack.last_mut() {
                        top.0.push(Sexp::List(items, l));
                    }
                    rest = &rest[1..];
                }
                _ => {
                    let end = rest
                        .find(|ch: char| ch.is_whitespace() || ch == '(' || ch == ')' || ch == ';')
                        .unwrap_or(rest.len());
                    if let Some(top) = stack.last_mut() {
                        top.0.push(Sexp::Atom(rest[..end].to_string(), line));
                    }
                    rest = &rest[end..];
                }
            }
        }
    }
    if stack.len() != 1 {
        let line = stack.last().map_or(1, |s| s.1);
        return Err(err(file, line, "unbalanced '(': missing ')'"));
    }
    let top = stack.pop().map(|s| s.0).unwrap_or_default();
    if let Some(a) = top.iter().find(|s| s.atom().is_some()) {
        return Err(err(
            file,
            a.line(),
            "a CIL statement must be in parentheses",
        ));
    }
    Ok(top)
}

fn parse_cil(file: &str, text: &str) -> Result<Source, NeverallowError> {
    let mut out = Source::default();
    let mut declared = std::collections::HashSet::new();
    for sx in read_sexps(file, text)? {
        let Sexp::List(items, line) = &sx else {
            continue;
        };
        let head = items.first().and_then(Sexp::atom).unwrap_or("");
        match head {
            "neverallow" | "neverallowx" => out.statements.push(cil_statement(
                file,
                *line,
                items,
                head == "neverallowx",
                &sx,
            )?),
            "typeattribute" => {
                let name = cil_name(file, items, 1, 2, "typeattribute NAME")?;
                declared.insert(name.clone());
                if !out.attributes.iter().any(|a| a.name == name) {
                    out.attributes.push(LocalAttribute {
                        name,
                        line: *line,
                        members: Vec::new(),
                    });
                }
            }
            "typeattributeset" => {
                if items.len() != 3 {
                    return Err(err(file, *line, "expected (typeattributeset NAME EXPR)"));
                }
                let name = cil_name(file, items, 1, 3, "typeattributeset NAME EXPR")?;
                let expr = cil_set(file, &items[2])?;
                match out.attributes.iter_mut().find(|a| a.name == name) {
                    Some(a) => a.members.push(expr),
                    None => out.attributes.push(LocalAttribute {
                        name,
                        line: *line,
                        members: vec![expr],
                    }),
                }
            }
            other => {
                return Err(err(
                    file,
                    *line,
                    format!(
                    "'{other}' is not neverallow, neverallowx, typeattribute or typeattributeset"
                ),
                ))
            }
        }
    }
    // CIL declarations may follow their use; every attribute set must be declared.
    if let Some(a) = out.attributes.iter().find(|a| !declared.contains(&a.name)) {
        return Err(err(
            file,
            a.line,
            format!(
                "typeattributeset of '{}', which no typeattribute declares",
                a.name
            ),
        ));
    }
    Ok(out)
}

fn cil_name(
    file: &str,
    items: &[Sexp],
    at: usize,
    len: usize,
    form: &str,
) -> Result<String, NeverallowError> {
    let line = items.first().map_or(1, Sexp::line);
    match items.get(at).and_then(Sexp::atom) {
        Some(n) if items.len() == len && is_ident(n) => Ok(n.to_string()),
        _ => Err(err(file, line, format!("expected ({form})"))),
    }
}

fn cil_statement(
    file: &str,
    line: u32,
    items: &[Sexp],
    xperm: bool,
    whole: &Sexp,
) -> Result<Statement, NeverallowError> {
    let form = if xperm {
        "(neverallowx SOURCE TARGET (ioctl CLASS (XPERMS)))"
    } else {
        "(neverallow SOURCE TARGET (CLASS (PERMS)))"
    };
    if items.len() != 4 {
        return Err(err(file, line, format!("expected {form}")));
    }
    let source = cil_set(file, &items[1])?;
    let (target, target_self) = match items[2].atom() {
        Some("self") => (None, true),
        _ => (Some(cil_set(file, &items[2])?), false),
    };
    let Sexp::List(cp, cp_line) = &items[3] else {
        return Err(err(
            file,
            items[3].line(),
            format!("expected {form}: named class permissions are not in a binary policy"),
        ));
    };
    let (perms, xperms) = if xperm {
        match cp.as_slice() {
            [op, class, expr] if op.atom() == Some("ioctl") => {
                let class = class
                    .atom()
                    .ok_or_else(|| err(file, *cp_line, "expected a class name"))?;
                (
                    vec![ClassPerms {
                        classes: vec![class.to_string()],
                        perms: NameSet::Name("ioctl".into()),
                    }],
                    Some(cil_xperms(file, expr)?),
                )
            }
            [op, ..] if op.atom().is_some_and(|o| o != "ioctl") => {
                return Err(err(
                    file,
                    *cp_line,
                    format!(
                        "unsupported extended permission kind '{}'",
                        op.atom().unwrap_or("")
                    ),
                ))
            }
            _ => return Err(err(file, *cp_line, format!("expected {form}"))),
        }
    } else {
        match cp.as_slice() {
            [class, perms] => {
                let class = class
                    .atom()
                    .ok_or_else(|| err(file, *cp_line, "expected a class name"))?;
                (
                    vec![ClassPerms {
                        classes: vec![class.to_string()],
                        perms: cil_set(file, perms)?,
                    }],
                    None,
                )
            }
            _ => return Err(err(file, *cp_line, format!("expected {form}"))),
        }
    };
    let mut text = String::new();
    whole.render(&mut text);
    Ok(Statement {
        file: file.to_string(),
        line,
        text,
        source,
        target,
        target_self,
        perms,
        xperms,
    })
}

/// A CIL name or set expression: `name`, `(a b c)`, `(and …)`, `(or …)`, `(xor …)`,
/// `(not …)`, `(all)`.
fn cil_set(file: &str, sx: &Sexp) -> Result<NameSet, NeverallowError> {
    match sx {
        Sexp::Atom(a, line) => {
            if is_ident(a) {
                Ok(NameSet::Name(a.clone()))
            } else {
                Err(err(file, *line, format!("'{a}' is not a name")))
            }
        }
        Sexp::List(items, line) => {
            let op = items.first().and_then(Sexp::atom);
            let args = || -> Result<Vec<NameSet>, NeverallowError> {
                items[1..].iter().map(|x| cil_set(file, x)).collect()
            };
            match op {
                Some("all") if items.len() == 1 => Ok(NameSet::All),
                Some("not") if items.len() == 2 => {
                    Ok(NameSet::Not(Box::new(cil_set(file, &items[1])?)))
                }
                Some("and") if items.len() >= 3 => Ok(NameSet::And(args()?)),
                Some("or") if items.len() >= 3 => Ok(NameSet::Or(args()?)),
                Some("xor") if items.len() >= 3 => Ok(NameSet::Xor(args()?)),
                Some("all" | "not" | "and" | "or" | "xor") => Err(err(
                    file,
                    *line,
                    format!("wrong number of operands to '{}'", op.unwrap_or("")),
                )),
                _ => Ok(NameSet::Or(
                    items
                        .iter()
                        .map(|x| cil_set(file, x))
                        .collect::<Result<_, _>>()?,
                )),
            }
        }
    }
}

/// A CIL extended-permission expression: `(0x8901 (range 0x8900 0x89ff))`, `(not …)`, ….
fn cil_xperms(file: &str, sx: &Sexp) -> Result<XpermSet, NeverallowError> {
    match sx {
        Sexp::Atom(_, line) => {
            let t = Tok {
                text: sx.atom().unwrap_or("").to_string(),
                line: *line,
            };
            let v = number(file, &t)?;
            Ok(XpermSet::Range(v, v))
        }
        Sexp::List(items, line) => {
            let op = items.first().and_then(Sexp::atom);
            let args = || -> Result<Vec<XpermSet>, NeverallowError> {
                items[1..].iter().map(|x| cil_xperms(file, x)).collect()
            };
            match op {
                Some("all") if items.len() == 1 => Ok(XpermSet::All),
                Some("not") if items.len() == 2 => {
                    Ok(XpermSet::Not(Box::new(cil_xperms(file, &items[1])?)))
                }
                Some("and") if items.len() >= 3 => Ok(XpermSet::And(args()?)),
                Some("or") if items.len() >= 3 => Ok(XpermSet::Or(args()?)),
                Some("xor") if items.len() >= 3 => Ok(XpermSet::Xor(args()?)),
                Some("range") if items.len() == 3 => {
                    let (XpermSet::Range(lo, _), XpermSet::Range(hi, _)) =
                        (cil_xperms(file, &items[1])?, cil_xperms(file, &items[2])?)
                    else {
                        return Err(err(file, *line, "expected (range LOW HIGH)"));
                    };
                    if hi < lo {
                        return Err(err(file, *line, "ioctl range ends below its start"));
                    }
                    Ok(XpermSet::Range(lo, hi))
                }
                Some("all" | "not" | "and" | "or" | "xor" | "range") => Err(err(
                    file,
                    *line,
                    format!("wrong number of operands to '{}'", op.unwrap_or("")),
                )),
                _ => Ok(XpermSet::Or(
                    items
                        .iter()
                        .map(|x| cil_xperms(file, x))
                        .collect::<Result<_, _>>()?,
                )),
            }
        }
    }
}
