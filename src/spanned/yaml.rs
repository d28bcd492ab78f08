//! A YAML file read into the same spanned tree as a TOML one, so one reader serves both formats.
//!
//! YAML 1.2's core schema decides what a plain scalar is: `true`/`false` (and their capitalised forms)
//! are booleans, `yes`, `no`, `on` and `off` stay strings; `42`, `0x2A`, `0o52` are integers, `1.5`,
//! `1e3`, `.inf`, `.nan` floats; `~`, `null` and nothing are null; a quoted or block scalar is always a
//! string. TOML has no null, so a key or list item without a value is a problem of its own, and so is
//! what TOML cannot say or the suite has no use for: a key written twice, a second document, anchors
//! and aliases, tags other than `!!str`, a key that is not text.
//!
//! The tree borrows from a [`YamlDocument`] (TOML's value types hold their text by reference and cannot be
//! built from an owned number), which the caller keeps while it reads the tree.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span, StrInput, Tag};
use toml::Spanned;
use toml::de::{DeArray, DeTable, DeValue};

use super::{Node, Problem};

/// How deep lists and mappings may nest: deeper is no suite, and the readers walk the tree recursively.
const MAX_DEPTH: usize = 64;

/// How to fix a syntax error: the usual slips first.
const SYNTAX_FIX: &str = "correct the YAML at this position (indent with spaces, not tabs; a list item is `- ` \
                          then the value; quote a string that holds `: ` or ` #`, or starts with `{`, `[`, `*`, \
                          `&`, `!`, `|`, `>`, `%`, `@` or a backtick)";

/// A read YAML file: its one document, if it has one.
#[derive(Debug)]
pub(crate) struct YamlDocument {
    root: Option<Tree>,
    /// The key paths of the values left out (a null, an alias, a tagged value): their problem is
    /// noted, and what the reader would say of their absence is not.
    pub left_out: Vec<String>,
}

/// A value of the document and where it is (bytes).
#[derive(Debug)]
struct Tree {
    span: Range<usize>,
    value: Value,
}

#[derive(Debug)]
enum Value {
    String(String),
    /// An integer or float as a TOML literal, so TOML's reader parses it.
    Number(String),
    Boolean(bool),
    List(Vec<Tree>),
    Mapping(Vec<(Spanned<String>, Tree)>),
}

/// What a scalar is under the core schema.
enum Scalar {
    Null,
    Boolean(bool),
    Number(String),
    String,
}

impl YamlDocument {
    /// Reads `text`. `Err` is a syntax error (or a structure too deep), which ends the reading;
    /// otherwise the problems found (a duplicate key, a null, ...) come with the document, whose
    /// offending parts are left out.
    pub fn read(text: &str) -> Result<(Self, Vec<Problem>), Problem> {
        let mut builder = Builder {
            text,
            parser: Parser::new_from_str(text),
            offsets: Offsets::new(text),
            problems: Vec::new(),
            left_out: Vec::new(),
        };
        let root = builder.document()?;
        let document = Self {
            root,
            left_out: builder.left_out,
        };
        Ok((document, builder.problems))
    }

    /// The top-level mapping as a spanned table (an empty file or one of comments is an empty one).
    pub fn table(&self) -> Result<Spanned<DeTable<'_>>, Problem> {
        let Some(root) = &self.root else {
            return Ok(Spanned::new(0..0, DeTable::new()));
        };
        match root.node().into_inner() {
            DeValue::Table(table) => Ok(Spanned::new(root.span.clone(), table)),
            other => Err(Problem::new(
                root.span.clone(),
                "",
                format!(
                    "the file holds {}, not a mapping of keys",
                    super::a_type(&other)
                ),
                "write the suite as keys at the top level: `prompt: ...`, `cases:` and the case items below it",
            )),
        }
    }
}

impl Tree {
    /// This value as the TOML reader's node, borrowing its text.
    fn node(&self) -> Node<'_> {
        let value = match &self.value {
            Value::String(s) => DeValue::String(Cow::Borrowed(s)),
            Value::Boolean(b) => DeValue::Boolean(*b),
            // Only literals TOML reads are kept (see `number`), so this does not fall back in practice.
            Value::Number(literal) => DeValue::parse(literal).map_or_else(
                |_| DeValue::String(Cow::Borrowed(literal)),
                Spanned::into_inner,
            ),
            Value::List(items) => {
                let mut array = DeArray::new();
                for item in items {
                    array.push(item.node());
                }
                DeValue::Array(array)
            }
            Value::Mapping(entries) => {
                let mut table = DeTable::new();
                for (key, value) in entries {
                    let key = Spanned::new(key.span(), Cow::Borrowed(key.get_ref().as_str()));
                    table.insert(key, value.node());
                }
                DeValue::Table(table)
            }
        };
        Spanned::new(self.span.clone(), value)
    }
}

/// Byte offsets of the parser's character indices.
struct Offsets {
    /// The byte offset of each character and of the end; empty when the text is ASCII (the same).
    bytes: Vec<usize>,
    len: usize,
}

impl Offsets {
    fn new(text: &str) -> Self {
        let bytes = if text.is_ascii() {
            Vec::new()
        } else {
            text.char_indices()
                .map(|(i, _)| i)
                .chain([text.len()])
                .collect()
        };
        Self {
            bytes,
            len: text.len(),
        }
    }

    fn byte(&self, index: usize) -> usize {
        if self.bytes.is_empty() {
            index.min(self.len)
        } else {
            self.bytes.get(index).copied().unwrap_or(self.len)
        }
    }

    fn span(&self, span: Span) -> Range<usize> {
        self.byte(span.start.index())..self.byte(span.end.index())
    }
}

struct Builder<'t> {
    text: &'t str,
    parser: Parser<'t, StrInput<'t>>,
    offsets: Offsets,
    problems: Vec<Problem>,
    left_out: Vec<String>,
}

/// `path` followed by `key`, as the suite reader writes key paths.
fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

impl<'t> Builder<'t> {
    fn syntax(&self, e: &ScanError) -> Problem {
        let at = self.offsets.byte(e.marker().index());
        Problem::new(
            at..at,
            "",
            format!("YAML syntax error: {}", e.info()),
            SYNTAX_FIX,
        )
    }

    fn next(&mut self) -> Result<(Event<'t>, Range<usize>), Problem> {
        match self.parser.next_event() {
            Some(Ok((event, span))) => Ok((event, self.offsets.span(span))),
            Some(Err(e)) => Err(self.syntax(&e)),
            None => Err(Problem::new(
                self.offsets.len..self.offsets.len,
                "",
                "YAML syntax error: the file ends early",
                SYNTAX_FIX,
            )),
        }
    }

    /// The stream's one document; a second is a problem (it is not read).
    fn document(&mut self) -> Result<Option<Tree>, Problem> {
        let mut root = None;
        loop {
            let (event, span) = self.next()?;
            match event {
                Event::StreamStart | Event::DocumentEnd | Event::Nothing => {}
                Event::StreamEnd => return Ok(root),
                Event::DocumentStart(_) if root.is_some() => {
                    self.problems.push(Problem::new(
                        span,
                        "",
                        "a second YAML document: a suite file holds one",
                        "remove this `---` and what follows it, or move that into a suite file of its own",
                    ));
                    // What follows is not read, but a syntax error in it is still the file's.
                    while !matches!(self.next()?.0, Event::StreamEnd) {}
                    return Ok(root);
                }
                Event::DocumentStart(_) => {
                    let (event, span) = self.next()?;
                    let empty = Tree {
                        span: 0..0,
                        value: Value::Mapping(Vec::new()),
                    };
                    // A document of comments only is null: an empty suite, as an empty TOML file is.
                    root = Some(match event {
                        Event::Scalar(ref text, style, 0, None)
                            if matches!(resolve(text, style), Scalar::Null) =>
                        {
                            empty
                        }
                        _ => self.value(event, span, "", 0)?.unwrap_or(empty),
                    });
                }
                _ => return Err(self.unexpected(span)),
            }
        }
    }

    /// A scalar's span without the blank a flow scalar's may take after it.
    fn trimmed(&self, span: Range<usize>) -> Range<usize> {
        let len = self
            .text
            .get(span.clone())
            .map_or(0, |t| t.trim_end().len());
        span.start..span.start + len
    }

    fn unexpected(&self, span: Range<usize>) -> Problem {
        Problem::new(
            span,
            "",
            "YAML syntax error: unexpected content",
            SYNTAX_FIX,
        )
    }

    /// Notes an anchor (`&name`) or alias (`*name`): the suite reader does not expand them.
    fn anchor(&mut self, span: Range<usize>, path: &str) {
        self.problems.push(Problem::new(
            span,
            path,
            "YAML anchors (`&name`) and aliases (`*name`) are not supported",
            "write the value out; what every case shares goes at the top of the suite (`assert`, `provider`, \
             `runs`, ...), which each case may override",
        ));
    }

    /// Notes a tag other than `!!str` on a scalar, `!!seq` on a list, `!!map` on a mapping; true when
    /// the tag is one of those.
    fn tag(&mut self, tag: Option<&Tag>, allowed: &str, span: &Range<usize>, path: &str) -> bool {
        match tag {
            None => true,
            Some(t) if t.is_yaml_core_schema() && t.suffix == allowed => true,
            Some(t) => {
                self.left_out.push(path.to_string());
                self.problems.push(Problem::new(
                    span.clone(),
                    path,
                    format!("the YAML tag `{t}` is not supported here"),
                    "remove the tag; quote a value to keep it a string (or tag it `!!str`)",
                ));
                false
            }
        }
    }

    /// The value that starts with `event`, or `None` when it is null or unusable (noted).
    fn value(
        &mut self,
        event: Event<'t>,
        span: Range<usize>,
        path: &str,
        depth: usize,
    ) -> Result<Option<Tree>, Problem> {
        if depth > MAX_DEPTH {
            return Err(Problem::new(
                span,
                path,
                format!("lists and mappings nest more than {MAX_DEPTH} deep"),
                "flatten the value",
            ));
        }
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                let span = self.trimmed(span);
                if anchor > 0 {
                    self.anchor(span.clone(), path);
                }
                if !self.tag(tag.as_deref(), "str", &span, path) {
                    return Ok(None);
                }
                let scalar = if tag.is_some() {
                    Scalar::String
                } else {
                    resolve(&text, style)
                };
                let value = match scalar {
                    Scalar::String => Value::String(text.into_owned()),
                    Scalar::Boolean(b) => Value::Boolean(b),
                    Scalar::Number(literal) => Value::Number(literal),
                    Scalar::Null => {
                        self.null(span, path);
                        return Ok(None);
                    }
                };
                Ok(Some(Tree { span, value }))
            }
            Event::Alias(_) => {
                self.anchor(span, path);
                self.left_out.push(path.to_string());
                Ok(None)
            }
            Event::SequenceStart(anchor, tag) => {
                if anchor > 0 {
                    self.anchor(span.clone(), path);
                }
                let tagged = self.tag(tag.as_deref(), "seq", &span, path);
                let mut items = Vec::new();
                let mut end = span.end;
                for i in 0.. {
                    let (event, at) = self.next()?;
                    if let Event::SequenceEnd = event {
                        end = at.end.max(end);
                        break;
                    }
                    end = at.end.max(end);
                    if let Some(item) = self.value(event, at, &format!("{path}[{i}]"), depth + 1)? {
                        end = item.span.end.max(end);
                        items.push(item);
                    }
                }
                Ok(tagged.then_some(Tree {
                    span: span.start..end,
                    value: Value::List(items),
                }))
            }
            Event::MappingStart(anchor, tag) => {
                if anchor > 0 {
                    self.anchor(span.clone(), path);
                }
                let tagged = self.tag(tag.as_deref(), "map", &span, path);
                let entries = self.mapping(path, depth)?;
                let end = entries
                    .last()
                    .map_or(span.end, |(_, value)| value.span.end.max(span.end));
                Ok(tagged.then_some(Tree {
                    span: span.start..end,
                    value: Value::Mapping(entries),
                }))
            }
            _ => Err(self.unexpected(span)),
        }
    }

    /// The entries of a mapping whose start was read, up to its end.
    fn mapping(
        &mut self,
        path: &str,
        depth: usize,
    ) -> Result<Vec<(Spanned<String>, Tree)>, Problem> {
        let mut entries: Vec<(Spanned<String>, Tree)> = Vec::new();
        let mut first_at: BTreeMap<String, usize> = BTreeMap::new();
        loop {
            let (event, span) = self.next()?;
            let key = match event {
                Event::MappingEnd => return Ok(entries),
                Event::Scalar(text, _, anchor, tag) => {
                    let span = self.trimmed(span);
                    let key = text.into_owned();
                    if anchor > 0 {
                        self.anchor(span.clone(), &join(path, &key));
                    }
                    self.tag(tag.as_deref(), "str", &span, &join(path, &key));
                    Some(Spanned::new(span, key))
                }
                other => {
                    // A list or mapping as a key: read past it.
                    let shown = if matches!(other, Event::Alias(_)) {
                        "an alias"
                    } else {
                        "a list or mapping"
                    };
                    self.problems.push(Problem::new(
                        span.clone(),
                        path,
                        format!("a key is {shown}, not text"),
                        "write each key as text: `name: value`",
                    ));
                    let noted = self.problems.len();
                    self.value(other, span, path, depth + 1)?;
                    // What is inside it is not read: only the key is the problem.
                    self.problems.truncate(noted);
                    None
                }
            };
            let (event, at) = self.next()?;
            let key_path = key
                .as_ref()
                .map_or_else(|| path.to_string(), |k| join(path, k.get_ref()));
            let value = self.value(event, at, &key_path, depth + 1)?;
            let (Some(key), Some(value)) = (key, value) else {
                continue;
            };
            let name = key.get_ref().clone();
            if let Some(&first) = first_at.get(&name) {
                let (line, _) = super::line_column(self.text, entries[first].0.span().start);
                self.problems.push(Problem::new(
                    key.span(),
                    key_path,
                    format!(
                        "the key `{name}` is written twice in this mapping (first on line {line})"
                    ),
                    "keep one of them",
                ));
                continue;
            }
            first_at.insert(name, entries.len());
            entries.push((key, value));
        }
    }

    /// Notes a key or list item without a value.
    fn null(&mut self, span: Range<usize>, path: &str) {
        let (message, fix) = if path.ends_with(']') {
            (
                "this list item has no value",
                "write the value after `- `, or remove the item".to_string(),
            )
        } else {
            let key = super::last_key(path);
            (
                "no value (YAML reads an empty value, `~` or `null` as null)",
                format!(
                    "write a value after `{key}:` (an empty string is `\"\"`), or remove the key"
                ),
            )
        };
        self.left_out.push(path.to_string());
        self.problems.push(Problem::new(span, path, message, fix));
    }
}

/// What a scalar written in `style` is under the core schema.
fn resolve(text: &str, style: ScalarStyle) -> Scalar {
    if style != ScalarStyle::Plain {
        return Scalar::String;
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => Scalar::Null,
        "true" | "True" | "TRUE" => Scalar::Boolean(true),
        "false" | "False" | "FALSE" => Scalar::Boolean(false),
        _ => number(text).map_or(Scalar::String, Scalar::Number),
    }
}

/// The TOML literal of a core-schema integer or float, or `None` when `text` is not one.
fn number(text: &str) -> Option<String> {
    let digits = |s: &str, radix: u32| !s.is_empty() && s.chars().all(|c| c.is_digit(radix));
    if let Some(octal) = text.strip_prefix("0o") {
        return digits(octal, 8).then(|| text.to_string());
    }
    if let Some(hex) = text.strip_prefix("0x") {
        return digits(hex, 16).then(|| text.to_string());
    }
    let (sign, unsigned) = match text.as_bytes().first() {
        Some(b'-') => ("-", &text[1..]),
        Some(b'+') => ("+", &text[1..]),
        _ => ("", text),
    };
    match unsigned {
        ".inf" | ".Inf" | ".INF" => return Some(format!("{sign}inf")),
        ".nan" | ".NaN" | ".NAN" if sign.is_empty() => return Some("nan".to_string()),
        _ => {}
    }
    if digits(unsigned, 10) {
        // TOML has no leading zeros: `007` is 7.
        let trimmed = unsigned.trim_start_matches('0');
        return Some(format!(
            "{sign}{}",
            if trimmed.is_empty() { "0" } else { trimmed }
        ));
    }
    // `[0-9]+(\.[0-9]*)?` or `\.[0-9]+`, then an optional exponent.
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (mantissa, None),
    };
    let mantissa_ok = match fraction {
        None => digits(whole, 10),
        Some(f) => {
            (digits(whole, 10) && (f.is_empty() || digits(f, 10)))
                || (whole.is_empty() && digits(f, 10))
        }
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e), 10));
    if !mantissa_ok || !exponent_ok {
        return None;
    }
    // Written as TOML writes it, when it is already (`1.5`, `2e3`); else as Rust writes the value.
    let toml_form = matches!(
        DeValue::parse(text).map(Spanned::into_inner),
        Ok(DeValue::Float(_))
    );
    if toml_form {
        return Some(text.to_string());
    }
    // Rust reads `1.`, `.5` and `+1e3` as YAML does.
    let value: f64 = text.parse().ok()?;
    Some(if value.is_infinite() {
        format!("{sign}inf")
    } else {
        format!("{value:?}")
    })
}

#[cfg(test)]
mod tests;
