//! The estimate scenario: `--estimate` over a suite whose cassette holds 5,000 recorded entries (1,000
//! cases x 5 runs, the same in quick mode), with no server at all: it must call nothing.
//! (`estimate_ms`)

use crate::Bench;
use crate::app_calls::TRIALS;
use crate::common::{Size, ms};
use crate::judge::JUDGE_TRIAL;
use crate::replay::write_cassette;
use crate::results::{Figure, Report, Target};

impl Bench {
    pub(crate) fn estimate(&self) -> Result<Report, String> {
        let size = Size::new(1_000, 5);
        let entries = size.calls();
        eprintln!("[estimate] --estimate over {entries} recorded entries ({size}), no server");
        let root = self.crate_root("estimate", "http://127.0.0.1:9/v1", size)?;
        write_cassette(&root, size)?;
        let run = self.run_child(
            "estimate",
            &root,
            &[],
            &["--estimate", "--skip", JUDGE_TRIAL, "--skip", TRIALS],
        )?;
        let stderr = std::fs::read_to_string(root.join("stderr.txt")).unwrap_or_default();
        let want = format!("estimate: {entries} model calls; total cost $");
        if !stderr.contains(&want) {
            return Err(format!(
                "estimate: expected {want:?} in the harness's output:\n{stderr}"
            ));
        }
        let inside = run.measured["harness_wall_ms"].as_f64().unwrap_or(f64::NAN);
        let figure = Figure::new("estimate_ms", ms(run.wall), 0)
            .target(Target::Below(1000.0))
            .json(1);
        Ok(Report::new("estimate", vec![figure]).line(format!(
            "estimate: {entries} recorded entries estimated in {:.0} ms ({inside:.0} ms inside the harness), \
             no call made",
            ms(run.wall)
        )))
    }
}
