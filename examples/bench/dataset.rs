//! The dataset scenario: a 5,000-row JSON Lines golden dataset listed whole, then with `--exact`
//! naming one row, then run (one trial per row); then the same rows gated (`[gate]` over every row and
//! per category: 8 gates), listed and run. (`dataset_list_ms`, `dataset_exact_ms`, `dataset_run_ms`,
//! `gate_list_ms`, `gate_run_ms`)

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use prompt_tester_testkit::Wire;
use serde_json::json;

use crate::Bench;
use crate::common::{
    ChildRun, Size, case_inputs, case_name, counting_server, expect_passed, expect_requests, ms,
    write_file,
};
use crate::results::{Figure, Report, Target};

/// Rows in the dataset scenario (both modes: listing them is the figure, and it is quick).
pub(crate) const DATASET_ROWS: usize = 5_000;

/// The categories of the rows (`c0` to `c6`): the gated suite has a gate for each, and one for all.
const CATEGORIES: usize = 7;

/// The dataset suite: every row's `{expected}` and inputs in its assertions (the server's echo of the
/// prompt, `echo: Case ...`, passes them all), with `gate` after it.
fn suite(gate: &str) -> String {
    format!(
        "# Written by examples/bench.\nprompt = \"Case {{n}}: {{text}}\"\ncases_file = \"golden.jsonl\"\n\
         assert = [{{ icontains = \"{{expected}}\" }}, {{ regex = '^echo: Case {{n}}:' }}, {{ max_words = 40 }}]\n{gate}"
    )
}

impl Bench {
    /// A 5,000-row golden dataset listed whole, then with `--exact` naming one row.
    pub(crate) fn dataset(&self) -> Result<Report, String> {
        let rows = DATASET_ROWS;
        eprintln!("[dataset] a {rows}-row JSON Lines dataset listed, then one row with --exact");
        // The echo at zero latency: every row passes, and a run costs what the harness adds.
        let server = counting_server(Duration::ZERO);
        let url = server.base_url(Wire::OpenAi);
        let root = self.crate_root("dataset", &url, Size::new(1, 1))?;
        let suites = root.join("prompt-tests");
        write_file(&suites.join("golden.evals.toml"), &suite(""))?;
        let mut jsonl = String::from("{\"dataset_version\": \"bench\"}\n");
        for i in 1..=rows {
            let (n, text) = case_inputs(i);
            let mut row = json!({ "id": case_name(i), "category": format!("c{}", i % CATEGORIES), "expected": format!("A-{i:05}"), "n": n, "text": text });
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
        // Every row a trial, run: the figure a gate's run is set against.
        let filter = ["--no-cassette", "golden::"];
        let run = self.run_child("dataset", &root, &[], &filter)?;
        expect_passed("dataset", &run, rows)?;
        expect_requests("dataset", &server, rows)?;

        // The same rows gated: one gate for all, one per category.
        let gated = self.crate_root("dataset_gated", &url, Size::new(1, 1))?;
        let mut gate = String::from("\n[gate]\npass_threshold = 0.9\n\n[gate.categories]\n");
        for c in 0..CATEGORIES {
            writeln!(gate, "c{c} = 0.9").ok();
        }
        write_file(&gated.join("prompt-tests/golden.evals.toml"), &suite(&gate))?;
        write_file(&gated.join("prompt-tests/golden.jsonl"), &jsonl)?;
        let gates = CATEGORIES + 1;
        let gate_list = self.run_child("dataset", &gated, &[], &["--list"])?;
        listed(&gate_list, &stdout(&gated), gates)?;
        let gate_run = self.run_child("dataset", &gated, &[], &filter)?;
        expect_passed("dataset gated", &gate_run, gates)?;
        // The gates share their rows: each is called once, not once per gate that counts it.
        expect_requests("dataset gated", &server, 2 * rows)?;

        let figures = vec![
            Figure::new("dataset_list_ms", ms(list.wall), 0)
                .target(Target::Below(500.0))
                .json(1),
            Figure::new("dataset_exact_ms", ms(exact.wall), 0)
                .target(Target::Below(100.0))
                .json(1),
            Figure::new("dataset_run_ms", ms(run.wall), 0).json(1),
            Figure::new("gate_list_ms", ms(gate_list.wall), 0)
                .target(Target::Below(500.0))
                .json(1),
            Figure::new("gate_run_ms", ms(gate_run.wall), 0).json(1),
        ];
        let line = [
            format!(
                "dataset:  {rows} JSON Lines rows listed in {:.0} ms ({:.0} ms inside the harness); --exact one \
                 row {:.0} ms ({:.1} ms inside); run as {rows} trials in {:.0} ms",
                ms(list.wall),
                harness_ms(&list),
                ms(exact.wall),
                harness_ms(&exact),
                ms(run.wall),
            ),
            format!(
                "gate:     the same rows gated ({gates} gates: all rows and {CATEGORIES} categories) listed in \
                 {:.0} ms ({:.0} ms inside); run in {:.0} ms ({:.0} ms inside), each row called once",
                ms(gate_list.wall),
                harness_ms(&gate_list),
                ms(gate_run.wall),
                harness_ms(&gate_run),
            ),
        ];
        Ok(Report::new("dataset", figures).line(line.join("\n")))
    }
}
