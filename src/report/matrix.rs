//! The matrix view: one row per test or case, one column per model or prompt variant, each cell the
//! pass rate (with its 95% Wilson interval), the cost and the mean latency of that trial, and a total
//! per column. [`compute`] is pure, from the [`TrialRecord`]s; [`render`] is the summary's text.

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::case::Column;
use crate::record::{Latency, Status, TrialRecord};
use crate::stats::{Interval, wilson};
use crate::usage::Cost;

/// The matrix of a run: its columns (each with its total) and its rows.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Matrix {
    /// The columns, in the order the tests name them.
    pub columns: Vec<MatrixColumn>,
    /// One row per test or case, by name.
    pub rows: Vec<MatrixRow>,
}

/// One column: a model, a prompt variant, or both.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MatrixColumn {
    /// `provider/model`, the variant, or `provider/model|variant`: the cell keys of the rows.
    pub label: String,
    /// The model and the prompt variant.
    #[serde(flatten)]
    pub column: Column,
    /// Every row's cell of this column, added up.
    pub total: CellStats,
}

/// One row: a test or a suite case.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixRow {
    /// The test or case (its trial name without the column).
    pub name: String,
    /// Its cells, aligned with the matrix's columns (`None` where it has no trial in a column).
    pub cells: Vec<Option<CellStats>>,
    labels: Vec<String>,
}

// A row is `{ "name": ..., "cells": { label: cell, ... } }`: cells keyed by column label, in column
// order, without the columns the row has no trial in.
impl Serialize for MatrixRow {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Cells<'a>(&'a MatrixRow);
        impl Serialize for Cells<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(None)?;
                for (label, cell) in self.0.labels.iter().zip(&self.0.cells) {
                    if let Some(cell) = cell {
                        map.serialize_entry(label, cell)?;
                    }
                }
                map.end()
            }
        }
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("name", &self.name)?;
        map.serialize_entry("cells", &Cells(self))?;
        map.end()
    }
}

/// What the trials of one cell (or a column's total) did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CellStats {
    /// Samples that passed.
    pub runs_passed: u32,
    /// Samples taken (errored ones count, not passed).
    pub runs_total: u32,
    cost: Cost,
    latency: Latency,
}

impl CellStats {
    /// `runs_passed / runs_total`, `None` without samples.
    pub fn pass_rate(&self) -> Option<f64> {
        (self.runs_total > 0).then(|| f64::from(self.runs_passed) / f64::from(self.runs_total))
    }

    /// The 95% Wilson interval of the pass rate.
    pub fn interval(&self) -> Option<Interval> {
        wilson(self.runs_passed, self.runs_total)
    }

    /// Subject and judge cost in USD, `None` when a call had no price (its cost is unknown).
    pub fn cost_usd(&self) -> Option<f64> {
        self.cost.known()
    }

    /// The subject's mean latency in seconds over the samples that got an answer.
    pub fn mean_latency_s(&self) -> Option<f64> {
        self.latency.mean_secs()
    }

    fn add(&mut self, other: &CellStats) {
        self.runs_passed += other.runs_passed;
        self.runs_total += other.runs_total;
        self.cost += other.cost;
        self.latency += other.latency;
    }
}

impl Serialize for CellStats {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(6))?;
        map.serialize_entry("runs_passed", &self.runs_passed)?;
        map.serialize_entry("runs_total", &self.runs_total)?;
        map.serialize_entry("pass_rate", &self.pass_rate())?;
        map.serialize_entry("pass_rate_95", &self.interval())?;
        map.serialize_entry("cost_usd", &self.cost_usd())?;
        map.serialize_entry("mean_latency_s", &self.mean_latency_s())?;
        map.end()
    }
}

/// The matrix of `records`: `None` when no trial sits in one. Trials that did not run (ignored, live
/// only) add nothing; a numbered run (`::run_N`) adds its sample to its test's row.
pub fn compute(records: &[TrialRecord]) -> Option<Matrix> {
    let placed: Vec<(&TrialRecord, &crate::case::Cell)> = records
        .iter()
        .filter_map(|r| r.cell.as_ref().map(|c| (r, c)))
        .collect();
    if placed.is_empty() {
        return None;
    }
    let mut columns: Vec<Column> = Vec::new();
    let mut rows: Vec<String> = Vec::new();
    for (_, cell) in &placed {
        if !columns.contains(&cell.column) {
            columns.push(cell.column.clone());
        }
        if !rows.contains(&cell.row) {
            rows.push(cell.row.clone());
        }
    }
    // Columns in the order they first appear (records come sorted by trial name); rows by name.
    rows.sort();
    let labels: Vec<String> = columns.iter().map(Column::label).collect();
    let mut grid = vec![vec![None::<CellStats>; columns.len()]; rows.len()];
    let mut totals = vec![CellStats::default(); columns.len()];
    for (record, cell) in placed {
        if matches!(record.status, Status::Ignored | Status::LiveOnly) {
            continue;
        }
        let stats = CellStats {
            runs_passed: record.runs_passed,
            runs_total: record.runs_total,
            cost: record.usage.total().cost,
            latency: record.latency,
        };
        let (Some(row), Some(col)) = (
            rows.iter().position(|r| *r == cell.row),
            columns.iter().position(|c| *c == cell.column),
        ) else {
            continue;
        };
        grid[row][col]
            .get_or_insert_with(CellStats::default)
            .add(&stats);
        totals[col].add(&stats);
    }
    Some(Matrix {
        columns: columns
            .into_iter()
            .zip(&labels)
            .zip(totals)
            .map(|((column, label), total)| MatrixColumn {
                label: label.clone(),
                column,
                total,
            })
            .collect(),
        rows: rows
            .into_iter()
            .zip(grid)
            .map(|(name, cells)| MatrixRow {
                name,
                cells,
                labels: labels.clone(),
            })
            .collect(),
    })
}

/// The matrix as the HTML report's table: the summary's cell texts.
pub fn table(matrix: &Matrix) -> crate::report::table::Table {
    crate::report::table::Table {
        title: "Matrix: samples passed, pass rate [95% interval], cost, mean latency".to_string(),
        columns: std::iter::once("test".to_string())
            .chain(matrix.columns.iter().map(|c| c.label.clone()))
            .collect(),
        rows: matrix
            .rows
            .iter()
            .map(|row| {
                std::iter::once(row.name.clone())
                    .chain(row.cells.iter().map(|c| cell_text(c.as_ref())))
                    .collect()
            })
            .chain(std::iter::once(
                std::iter::once("total".to_string())
                    .chain(matrix.columns.iter().map(|c| cell_text(Some(&c.total))))
                    .collect(),
            ))
            .collect(),
    }
}

/// A cell as the summary shows it: `2/3 67% [21-94%] $0.00012 0.51s`; `-` where nothing ran.
fn cell_text(cell: Option<&CellStats>) -> String {
    let Some(c) = cell.filter(|c| c.runs_total > 0) else {
        return "-".to_string();
    };
    let rate = c.pass_rate().unwrap_or_default();
    let interval = c
        .interval()
        .map(|i| format!(" [{:.0}-{:.0}%]", 100.0 * i.low, 100.0 * i.high))
        .unwrap_or_default();
    let cost = match c.cost_usd() {
        Some(usd) => format!("${usd:.5}"),
        None => "unpriced".to_string(),
    };
    let latency = c
        .mean_latency_s()
        .map_or_else(|| "-".to_string(), |s| format!("{s:.2}s"));
    format!(
        "{}/{} {:.0}%{interval} {cost} {latency}",
        c.runs_passed,
        c.runs_total,
        100.0 * rate
    )
}

/// The matrix section of the summary: empty when no trial sits in a matrix.
pub fn render(records: &[TrialRecord]) -> String {
    let Some(matrix) = compute(records) else {
        return String::new();
    };
    let table = table(&matrix);
    let lines: Vec<Vec<String>> = std::iter::once(table.columns).chain(table.rows).collect();
    let widths: Vec<usize> = (0..lines[0].len())
        .map(|i| {
            lines
                .iter()
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::from(
        "\nprompt-tester matrix: samples passed, pass rate [95% interval], cost, mean latency\n",
    );
    for line in lines {
        let cells: Vec<String> = line
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (text, &w))| {
                if i == 0 {
                    format!("{text:<w$}")
                } else {
                    format!("{text:>w$}")
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::case::Cell;
    use crate::completion::CompletionResult;
    use crate::role::CallRole;
    use crate::usage::Usage;

    fn record(name: &str, row: &str, label: (&str, &str), passed: u32, total: u32) -> TrialRecord {
        let mut usage = Usage::default();
        for _ in 0..total {
            let mut result = CompletionResult::new("", 10, 5);
            result.cost_usd = Some(0.001);
            usage.add_call(CallRole::Subject, "fake", "m", &result, true);
        }
        TrialRecord {
            name: name.into(),
            status: if passed == total {
                Status::Passed
            } else {
                Status::Failed
            },
            message: None,
            runs_passed: passed,
            runs_errored: 0,
            runs_total: total,
            runs_required: total,
            pass_threshold: 1.0,
            usage,
            duration: Duration::ZERO,
            output_preview: None,
            case: None,
            cell: Some(Cell {
                row: row.into(),
                column: Column {
                    subject: Some(label.0.parse().unwrap()),
                    prompt: Some(label.1.into()).filter(|p: &String| !p.is_empty()),
                },
            }),
            latency: Latency::of((0..total).map(|_| Duration::from_millis(500))),
            runs_skipped: 0,
            prompt: None,
            media: Vec::new(),
            samples: Vec::new(),
            gate: None,
            attempts: None,
        }
    }

    #[test]
    fn no_matrix_without_a_trial_in_one() {
        let mut plain = record("t", "t", ("fake/a", ""), 1, 1);
        plain.cell = None;
        assert_eq!(compute(&[plain.clone()]), None);
        assert_eq!(render(&[plain]), "");
    }

    #[test]
    fn cells_and_column_totals_add_up_samples_cost_and_latency() {
        let records = [
            record("s::b[fake/a|v1]", "s::b", ("fake/a", "v1"), 1, 1),
            record("s::b[fake/b|v1]", "s::b", ("fake/b", "v1"), 0, 1),
            record("s::a[fake/a|v1]", "s::a", ("fake/a", "v1"), 3, 4),
            record("s::a[fake/b|v1]::run_2", "s::a", ("fake/b", "v1"), 1, 1),
        ];
        let m = compute(&records).unwrap();
        let labels: Vec<&str> = m.columns.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["fake/a|v1", "fake/b|v1"]);
        let names: Vec<&str> = m.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["s::a", "s::b"]);
        let a = m.rows[0].cells[0].unwrap();
        assert_eq!(
            (a.runs_passed, a.runs_total, a.pass_rate()),
            (3, 4, Some(0.75))
        );
        let total = m.columns[0].total;
        assert_eq!((total.runs_passed, total.runs_total), (4, 5));
        assert!((total.cost_usd().unwrap() - 0.005).abs() < 1e-12);
        assert_eq!(total.mean_latency_s(), Some(0.5));
        let i = total.interval().unwrap();
        assert!(
            (i.low - 0.3755).abs() < 1e-3 && (i.high - 0.9638).abs() < 1e-3,
            "{i:?}"
        );
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["columns"][1]["model"], "fake/b");
        assert_eq!(json["columns"][1]["prompt"], "v1");
        assert_eq!(json["rows"][1]["cells"]["fake/b|v1"]["pass_rate"], 0.0);
        assert_eq!(json["rows"][0]["cells"]["fake/a|v1"]["runs_total"], 4);
        assert_eq!(json["columns"][0]["total"]["mean_latency_s"], 0.5);
    }

    #[test]
    fn ignored_trials_add_nothing_and_an_empty_cell_shows_a_dash() {
        let mut ignored = record("s::c[fake/b|v1]", "s::c", ("fake/b", "v1"), 0, 1);
        ignored.status = Status::Ignored;
        let records = [
            record("s::c[fake/a|v1]", "s::c", ("fake/a", "v1"), 1, 1),
            ignored,
        ];
        let text = render(&records);
        assert_eq!(
            text,
            "\nprompt-tester matrix: samples passed, pass rate [95% interval], cost, mean latency\n\
             test                           fake/a|v1  fake/b|v1\n\
             s::c   1/1 100% [21-100%] $0.00100 0.50s          -\n\
             total  1/1 100% [21-100%] $0.00100 0.50s          -\n"
        );
        let m = compute(&records).unwrap();
        assert_eq!(m.columns[1].total.runs_total, 0);
        assert_eq!(
            serde_json::to_value(m.columns[1].total).unwrap()["pass_rate"],
            serde_json::Value::Null
        );
    }
}
