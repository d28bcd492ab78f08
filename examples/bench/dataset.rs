//! The dataset scenario: a 5,000-row JSON Lines golden dataset listed whole, then with `--exact`
//! naming one row. (`dataset_list_ms`, `dataset_exact_ms`)

use std::fmt::Write as _;
use std::path::Path;

use serde_json::json;

use crate::Bench;
use crate::common::{ChildRun, Size, case_inputs, case_name, ms, write_file};
use crate::results::{Figure, Report, Target};

/// Rows in the dataset scenario (both modes: listing them is the figure, and it is quick).
pub(crate) const DATASET_ROWS: usize = 5_000;

impl Bench {
    /// A 5,000-row golden dataset listed whole, then with `--exact` naming one row.
    pub(crate) fn dataset(&self) -> Result<Report, String> {
        let rows = DATASET_ROWS;
        eprintln!("[dataset] a {rows}-row JSON Lines dataset listed, then one row with --exact");
        let root = self.crate_root("dataset", "http://127.0.0.1:9/v1", Size::new(1, 1))?;
        let suites = root.join("prompt-tests");
        write_file(
            &suites.join("golden.evals.toml"),
            "# Written by examples/bench.\nprompt = \"Case {n}: {text}\"\ncases_file = \"golden.jsonl\"\n\
             assert = [{ icontains = \"{expected}\" }, { regex = '^Case {n}:' }, { max_words = 40 }]\n",
        )?;
        let mut jsonl = String::from("{\"dataset_version\": \"bench\"}\n");
        for i in 1..=rows {
            let (n, text) = case_inputs(i);
            let mut row = json!({ "id": case_name(i), "category": format!("c{}", i % 7), "expected": format!("A-{i:05}"), "n": n, "text": text });
            if i % 2 == 0 {
                row["assert"] = json!([{ "contains": "{n}" }, { "not_contains": "refund" }]);
            }
            writeln!(jsonl, "{row}").ok();
        }
        write_file(&suites.join("golden.jsonl"), &jsonl)?;
        let listed = |run: &ChildRun, stdout: &str, want: usize| -> Result<(), String> {
            let n = stdout
                .lines()
                .filter(|l| l.starts_with("golden::") && l.ends_with(": test"))
                .count();
            if n == want {
                Ok(())
            } else {
                Err(format!(
                    "dataset: listed {n} rows, expected {want} (wall {:?})",
                    run.wall
                ))
            }
        };
        let stdout =
            |root: &Path| std::fs::read_to_string(root.join("stdout.txt")).unwrap_or_default();
        let list = self.run_child("dataset", &root, &[], &["--list"])?;
        listed(&list, &stdout(&root), rows)?;
        let last = format!("golden::{}", case_name(rows));
        let exact = self.run_child("dataset", &root, &[], &["--list", "--exact", &last])?;
        listed(&exact, &stdout(&root), 1)?;
        let harness_ms =
            |run: &ChildRun| run.measured["harness_wall_ms"].as_f64().unwrap_or(f64::NAN);
        let figures = vec![
            Figure::new("dataset_list_ms", ms(list.wall), 0)
                .target(Target::Below(500.0))
                .json(1),
            Figure::new("dataset_exact_ms", ms(exact.wall), 0)
                .target(Target::Below(100.0))
                .json(1),
        ];
        Ok(Report::new("dataset", figures).line(format!(
            "dataset:  {rows} JSON Lines rows listed in {:.0} ms ({:.0} ms inside the harness); --exact one row \
             {:.0} ms ({:.1} ms inside)",
            ms(list.wall),
            harness_ms(&list),
            ms(exact.wall),
            harness_ms(&exact)
        )))
    }
}
