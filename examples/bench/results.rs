//! The scenarios' figures as data (each scenario's `Report`: its `Figure`s, the JSON it adds, its
//! explanatory line), and what is rendered from them: the table with the lines below it, then the JSON
//! object of the last line.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::Options;

/// The table's order, by report name (the lines below it and the JSON line keep the order of
/// `Results`).
const TABLE: [&str; 11] = [
    "inflight",
    "ratelimit",
    "overhead",
    "replay",
    "peak_rss",
    "dataset",
    "record",
    "app_calls",
    "sampling",
    "judge",
    "html",
];

/// A figure's target, in the unit the table shows it in.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target {
    AtLeast(f64),
    AtMost(f64),
    Below(f64),
}

impl Target {
    fn split(self) -> (&'static str, f64) {
        match self {
            Self::AtLeast(bound) => (">=", bound),
            Self::AtMost(bound) => ("<=", bound),
            Self::Below(bound) => ("<", bound),
        }
    }

    fn met(self, shown: f64) -> bool {
        match self {
            Self::AtLeast(bound) => shown >= bound,
            Self::AtMost(bound) => shown <= bound,
            Self::Below(bound) => shown < bound,
        }
    }
}

/// One row of the table, and (most of them) one number of the JSON line.
#[derive(Debug)]
pub(crate) struct Figure {
    /// The table's name for it, also its path in the JSON line (`judge_ms.ask` nests `ask` in
    /// `judge_ms`) unless `json_at` names another.
    key: String,
    /// Said after the key in the table: `(info)`, `(5 sequential)`.
    note: Option<String>,
    /// `None`: not measured on this machine, `n/a` in the table and `null` in the JSON line.
    value: Option<f64>,
    /// The table shows `value` times `scale` with `places` decimals and `unit`; its target is in
    /// that unit.
    scale: f64,
    places: usize,
    unit: &'static str,
    target: Option<Target>,
    /// Its path in the JSON line and the decimals it is rounded to there; `None`: the table only.
    json: Option<(String, i32)>,
}

impl Figure {
    /// `value` shown with `places` decimals: no target, not in the JSON line.
    pub(crate) fn new(
        key: impl Into<String>,
        value: impl Into<Option<f64>>,
        places: usize,
    ) -> Self {
        Self {
            key: key.into(),
            note: None,
            value: value.into(),
            scale: 1.0,
            places,
            unit: "",
            target: None,
            json: None,
        }
    }

    /// A share shown as a percentage (its target in percent); the JSON line keeps the share.
    pub(crate) fn percent(self) -> Self {
        Self {
            scale: 100.0,
            unit: "%",
            ..self
        }
    }

    pub(crate) fn note(self, note: impl Into<String>) -> Self {
        Self {
            note: Some(note.into()),
            ..self
        }
    }

    pub(crate) fn target(self, target: Target) -> Self {
        Self {
            target: Some(target),
            ..self
        }
    }

    /// In the JSON line under its key, rounded to `places` decimals.
    pub(crate) fn json(self, places: i32) -> Self {
        let path = self.key.clone();
        self.json_at(path, places)
    }

    /// In the JSON line at `path`, rounded to `places` decimals.
    pub(crate) fn json_at(self, path: impl Into<String>, places: i32) -> Self {
        Self {
            json: Some((path.into(), places)),
            ..self
        }
    }

    /// The table's row: figure, value, target, ok.
    fn row(&self) -> [String; 4] {
        let name = match &self.note {
            Some(note) => format!("{} {note}", self.key),
            None => self.key.clone(),
        };
        let shown = self.value.map(|v| v * self.scale);
        let value = shown.map_or("n/a".into(), |v| {
            format!("{v:.places$}{}", self.unit, places = self.places)
        });
        let (target, ok) = match self.target {
            None => ("-".into(), "-"),
            Some(t) => {
                let (op, bound) = t.split();
                let ok = shown.map_or("n/a", |v| if t.met(v) { "yes" } else { "NO" });
                (format!("{op} {bound}{}", self.unit), ok)
            }
        };
        [name, value, target, ok.into()]
    }
}

/// What one scenario reports.
#[derive(Debug)]
pub(crate) struct Report {
    /// Where its rows stand in the table: see `TABLE`.
    name: &'static str,
    figures: Vec<Figure>,
    /// What it adds to the JSON line before its figures: top-level keys and their values.
    data: Map<String, Value>,
    /// Below the table (none for some).
    line: Option<String>,
}

impl Report {
    pub(crate) fn new(name: &'static str, figures: Vec<Figure>) -> Self {
        Self {
            name,
            figures,
            data: Map::new(),
            line: None,
        }
    }

    /// Adds `key: value` to the JSON line, ahead of the figures (which may nest in it).
    pub(crate) fn data(mut self, key: &str, value: Value) -> Self {
        self.data.insert(key.into(), value);
        self
    }

    pub(crate) fn line(self, line: String) -> Self {
        Self {
            line: Some(line),
            ..self
        }
    }
}

/// Every scenario's report, in the order of the lines below the table and of the JSON line.
pub(crate) struct Results(pub(crate) Vec<Report>);

impl Results {
    pub(crate) fn table(&self, o: &Options) -> String {
        let mut reports: Vec<&Report> = self.0.iter().collect();
        reports.sort_by_key(|r| {
            TABLE
                .iter()
                .position(|n| *n == r.name)
                .unwrap_or(TABLE.len())
        });
        let mut out = String::from("\n");
        writeln!(
            out,
            "{:<30} {:>10}  {:>8}  {:>3}",
            "figure", "value", "target", "ok"
        )
        .ok();
        writeln!(out, "{}", "-".repeat(57)).ok();
        for figure in reports.iter().flat_map(|r| &r.figures) {
            let [figure, value, target, ok] = figure.row();
            writeln!(out, "{figure:<30} {value:>10}  {target:>8}  {ok:>3}").ok();
        }
        writeln!(out).ok();
        for line in self.0.iter().filter_map(|r| r.line.as_ref()) {
            writeln!(out, "{line}").ok();
        }
        if o.quick {
            writeln!(
                out,
                "(quick mode: smaller counts; the figures are indicative, see docs/benchmarks.md)"
            )
            .ok();
        }
        out
    }

    pub(crate) fn json(&self, mode: &str) -> Value {
        let mut out = Map::new();
        for report in &self.0 {
            out.extend(report.data.clone());
            for figure in &report.figures {
                if let Some((path, places)) = &figure.json {
                    let value = figure.value.map(|v| round(v, *places));
                    insert(&mut out, path, value.into());
                }
            }
        }
        out.insert("mode".into(), mode.into());
        Value::Object(out)
    }
}

/// Sets `path` (`a.b` for `b` in the object `a`) in `map`.
fn insert(map: &mut Map<String, Value>, path: &str, value: Value) {
    match path.split_once('.') {
        Some((outer, inner)) => {
            let entry = map
                .entry(outer)
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(nested) = entry {
                insert(nested, inner, value);
            }
        }
        None => {
            map.insert(path.into(), value);
        }
    }
}

/// `x` rounded to `places` decimals.
pub(crate) fn round(x: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (x * f).round() / f
}
