//! The Markdown summary of a run, for the people who read a pull request: the counts; each failed or
//! errored test with its pass rate, interval and first failure line (marked when a failing advisory
//! judge verdict failed it); the tests with advisory judge verdicts; flaky tests; regressions against
//! a baseline; pending recordings; calls, tokens and cost. `--markdown PATH` (`PROMPT_TESTER_MARKDOWN`)
//! writes it, and a `cargo test` run appends it to GitHub's step summary (`GITHUB_STEP_SUMMARY`).
//!
//! [`render`] is pure. What comes from a model, a file or a provider (names, messages, outputs) stays
//! text: in a line or a table cell it is escaped (`&`, `<` and `>` as entities, Markdown's punctuation
//! behind a backslash, a line break as a space), an output is a fenced code block whose fence is longer
//! than any run of backticks in it, and secrets are redacted. The text is bounded: [`MAX_LISTED`]
//! entries per list, then "and N more", and [`MAX_BYTES`] in all; appended to a step summary, it is
//! cut further to what the step has left of GitHub's [`STEP_SUMMARY_LIMIT`] (several test targets may
//! append to one step).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::budget::BudgetReport;
use crate::cassette::pending::PendingFile;
use crate::record::{Status, TrialRecord};
use crate::redact::{for_terminal, redact};
use crate::render::shorten;
use crate::report::baseline::{self, Comparison};
use crate::report::summary::{pooled, rate, usd};
use crate::usage::{Tally, Usage};

mod destination;
pub use destination::{MARKDOWN, Markdown, MarkdownSetting};

/// The most entries a list of the summary shows (failures, flaky tests, regressions, pending tests,
/// outputs); the rest are counted.
pub const MAX_LISTED: usize = 50;

/// The most bytes a summary takes.
pub const MAX_BYTES: usize = 128 * 1024;

/// GitHub's limit on one step's summary (a larger one shows nothing): the step's file stays under it
/// whatever the number of test targets that append to it.
pub const STEP_SUMMARY_LIMIT: usize = 1024 * 1024;

/// The characters a test name or a line of a message is shortened to.
const NAME_CHARS: usize = 200;
const LINE_CHARS: usize = 300;

/// What the summary says when it stops at [`MAX_BYTES`].
const CUT: &str = "\n*The summary stops here, at its size limit; the JUnit, JSON and HTML reports hold \
                   every trial.*\n";

/// A baseline to compare the records with.
#[derive(Debug, Clone, Copy)]
pub struct Baseline<'a> {
    /// Its file, as given.
    pub path: &'a Path,
    /// The run against it (its significance level included).
    pub comparison: &'a Comparison,
}

/// What the summary says beside the records.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    /// The test target, named in the heading (several may append to one step summary).
    pub target: Option<&'a str>,
    /// The baseline the run is compared with (`--baseline`).
    pub baseline: Option<Baseline<'a>>,
    /// The recordings waiting for review.
    pub pending: &'a [PendingFile],
    /// What the run spent against its budget (`--budget`).
    pub budget: Option<&'a BudgetReport>,
}

/// The summary of `records` as Markdown.
pub fn render(records: &[TrialRecord], context: &Context<'_>) -> String {
    render_within(records, context, MAX_BYTES)
}

/// The summary, at most `cap` bytes.
fn render_within(records: &[TrialRecord], context: &Context<'_>, cap: usize) -> String {
    let mut out = Bounded::new(cap);
    out.push(&heading(records, context.target));
    if records.is_empty() {
        return out.finish();
    }
    out.push(&counts(records));
    failures(&mut out, records);
    outputs(&mut out, records);
    advisory(&mut out, records);
    flaky(&mut out, records);
    if let Some(b) = &context.baseline {
        regressions(&mut out, b);
    }
    pending(&mut out, context.pending);
    usage(&mut out, records, context.budget);
    out.finish()
}

/// Text that stops adding parts once the next would take it over its cap.
struct Bounded {
    text: String,
    cap: usize,
    cut: bool,
}

impl Bounded {
    fn new(cap: usize) -> Self {
        Self {
            text: String::new(),
            cap,
            cut: false,
        }
    }

    /// Appends `part` if it fits; false (and nothing more is added) when it does not.
    fn push(&mut self, part: &str) -> bool {
        self.push_reserving(part, 0)
    }

    /// Appends `part` if it fits with `reserve` bytes still to come (a closing tag).
    fn push_reserving(&mut self, part: &str, reserve: usize) -> bool {
        if self.cut || self.text.len() + part.len() + reserve + CUT.len() > self.cap {
            self.cut = true;
            return false;
        }
        self.text.push_str(part);
        true
    }

    /// Appends what an earlier `push_reserving` reserved room for.
    fn close(&mut self, part: &str) {
        self.text.push_str(part);
    }

    /// The text, ending in one line break.
    fn finish(mut self) -> String {
        if self.cut {
            self.text.push_str(CUT);
        }
        self.text.truncate(self.text.trim_end().len());
        self.text.push('\n');
        self.text
    }
}

/// `text` as inline Markdown that shows as written, in a line or a table cell: secrets redacted,
/// control characters shown escaped, a line break as a space, `&`, `<` and `>` as HTML entities (no
/// tag can open or close), and Markdown's punctuation behind a backslash (a `|` cannot end a cell, a
/// backtick cannot open code, a `$` cannot open math).
fn inline(text: &str) -> String {
    let text = redact(text);
    let text = for_terminal(&text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' | '\t' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '$' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` as a fenced code block: shown verbatim, its fence longer than any run of backticks in it, so
/// nothing in it closes the block (secrets redacted, control characters shown escaped).
fn code_block(text: &str) -> String {
    let text = redact(text);
    let text = for_terminal(&text);
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}text\n{}\n{fence}\n", text.trim_end())
}

/// A row of a table: each cell as given (already escaped).
fn row(cells: &[&str]) -> String {
    format!("| {} |\n", cells.join(" | "))
}

/// A test's name as a cell: shortened, escaped.
fn name(name: &str) -> String {
    inline(&shorten(name, NAME_CHARS))
}

/// What a list of the summary holds, and where the whole of it is when the summary shows only the
/// first [`MAX_LISTED`].
struct List {
    what: &'static str,
    whole: &'static str,
}

/// `and N more …: … lists every one.` after a list shown up to [`MAX_LISTED`].
fn more(total: usize, list: &List) -> Option<String> {
    (total > MAX_LISTED).then(|| {
        format!(
            "\nand {} more {}: {} every one.\n",
            total - MAX_LISTED,
            list.what,
            list.whole
        )
    })
}

/// A section: its title and table head, then a row per item (up to [`MAX_LISTED`]), then how many
/// more; stops where the summary's cap does.
fn section(
    out: &mut Bounded,
    head: &str,
    rows: impl Iterator<Item = String>,
    total: usize,
    list: &List,
) {
    if !out.push(head) {
        return;
    }
    for r in rows.take(MAX_LISTED) {
        if !out.push(&r) {
            return;
        }
    }
    if let Some(more) = more(total, list) {
        out.push(&more);
    }
}

fn is_failure(r: &TrialRecord) -> bool {
    matches!(r.status, Status::Failed | Status::Errored)
}

/// The trials each status counts.
#[derive(Default)]
struct Tallies {
    passed: usize,
    failed: usize,
    errored: usize,
    ignored: usize,
    live_only: usize,
}

impl Tallies {
    fn of(records: &[TrialRecord]) -> Self {
        let mut t = Self::default();
        for r in records {
            *match r.status {
                Status::Passed => &mut t.passed,
                Status::Failed => &mut t.failed,
                Status::Errored => &mut t.errored,
                Status::Ignored => &mut t.ignored,
                Status::LiveOnly => &mut t.live_only,
            } += 1;
        }
        t
    }
}

/// `## prompt-tester · prompts: ❌ 2 failed, 1 errored`.
fn heading(records: &[TrialRecord], target: Option<&str>) -> String {
    let t = Tallies::of(records);
    let target = target.map_or_else(String::new, |t| format!(" · {}", inline(t)));
    let verdict = if records.is_empty() {
        "no trial ran".to_string()
    } else if t.failed + t.errored > 0 {
        format!("❌ {} failed, {} errored", t.failed, t.errored)
    } else {
        format!("✅ {} passed", t.passed)
    };
    format!("## prompt-tester{target}: {verdict}\n\n")
}

/// The table of counts: trials by status, and the samples of the trials that ran.
fn counts(records: &[TrialRecord]) -> String {
    let t = Tallies::of(records);
    let mut samples = crate::stats::Counts::default();
    for r in records.iter().filter(|r| !skipped(r)) {
        samples =
            crate::stats::Counts::new(samples.passed + r.runs_passed, samples.total + r.runs_total);
    }
    let numbers = [t.passed, t.failed, t.errored, t.ignored, t.live_only].map(|n| n.to_string());
    let mut cells: Vec<&str> = numbers.iter().map(String::as_str).collect();
    let pooled = pooled(samples);
    cells.push(&pooled);
    format!(
        "{}{}{}\n",
        row(&[
            "passed",
            "failed",
            "errored",
            "ignored",
            "live only",
            "samples passed"
        ]),
        row(&["---:"; 6]),
        row(&cells)
    )
}

/// Ignored and live only: no samples taken.
fn skipped(r: &TrialRecord) -> bool {
    matches!(r.status, Status::Ignored | Status::LiveOnly)
}

/// A trial's rate and interval, `-` without samples (a broken file).
fn rate_cell(r: &TrialRecord) -> String {
    match r.counts() {
        c if c.total == 0 => "-".to_string(),
        c => rate(c),
    }
}

/// The first line of a trial's message that says something, with the next when it ends in a colon
/// (a panic's location, then its message).
fn first_line(r: &TrialRecord) -> String {
    let mut lines = r
        .message
        .as_deref()
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty());
    match (lines.next(), lines.next()) {
        (None, _) => "-".to_string(),
        (Some(first), Some(next)) if first.ends_with(':') => {
            inline(&shorten(&format!("{first} {next}"), LINE_CHARS))
        }
        (Some(first), _) => inline(&shorten(first, LINE_CHARS)),
    }
}

/// Each failed or errored trial: status, rate and interval, first failure line.
fn failures(out: &mut Bounded, records: &[TrialRecord]) {
    let failed: Vec<&TrialRecord> = records.iter().filter(|r| is_failure(r)).collect();
    if failed.is_empty() {
        return;
    }
    let head = format!(
        "### Failed and errored ({})\n\n{}{}",
        failed.len(),
        row(&[
            "test",
            "status",
            "samples passed (95% CI)",
            "first failure line"
        ]),
        row(&[":---", ":---", "---:", ":---"]),
    );
    let rows = failed.iter().map(|r| {
        let status = match r.status {
            Status::Errored => "errored",
            // A "no" nothing measures failed a sample: the failure is only as sure as that judge.
            _ if failed_on_advisory(r) => "failed (advisory verdict)",
            _ => "failed",
        };
        row(&[&name(&r.name), status, &rate_cell(r), &first_line(r)])
    });
    let list = List {
        what: "failed or errored",
        whole: "the JUnit, JSON and HTML reports list",
    };
    section(out, &head, rows, failed.len(), &list);
    out.push("\n");
}

/// The output of each failed trial that has one, folded away, after the media its prompt placed.
fn outputs(out: &mut Bounded, records: &[TrialRecord]) {
    let shown: Vec<&TrialRecord> = records
        .iter()
        .filter(|r| is_failure(r) && (r.output_preview.is_some() || !r.media.is_empty()))
        .take(MAX_LISTED)
        .collect();
    if shown.is_empty() {
        return;
    }
    const CLOSE: &str = "</details>\n\n";
    let open = "<details><summary>Outputs of the failed trials (the first failed sample's, shortened)</summary>\n\n";
    if !out.push_reserving(open, CLOSE.len()) {
        return;
    }
    for r in shown {
        let media: String = r
            .media
            .iter()
            .map(|m| {
                let var = inline(&format!("{{{}}}", m.var));
                format!("- {var}: {}\n", inline(&m.described()))
            })
            .collect();
        let media = if media.is_empty() {
            media
        } else {
            format!("{media}\n")
        };
        let output = r
            .output_preview
            .as_deref()
            .map(code_block)
            .unwrap_or_default();
        let part = format!("**{}**\n\n{media}{output}\n", name(&r.name));
        if !out.push_reserving(&part, CLOSE.len()) {
            break;
        }
    }
    out.close(CLOSE);
}

/// Whether a failed sample of `r` had a failing advisory judge answer.
fn failed_on_advisory(r: &TrialRecord) -> bool {
    r.samples
        .iter()
        .filter(|s| s.status() == crate::checks::SampleStatus::Failed)
        .any(|s| s.judge.iter().any(|j| !j.passed && j.advisory.is_some()))
}

/// The trials with advisory judge verdicts (their judge not measured well enough on the question's
/// type): how many of their judge answers are, and why the first is.
fn advisory(out: &mut Bounded, records: &[TrialRecord]) {
    let marked: Vec<(&TrialRecord, usize, usize, String)> = records
        .iter()
        .filter_map(|r| {
            let answers = r.samples.iter().flat_map(|s| &s.judge);
            let advisory: Vec<&crate::stats::trust::Advisory> = answers
                .clone()
                .filter_map(|j| j.advisory.as_ref())
                .collect();
            let why = advisory.first()?.to_string();
            let why = why.strip_prefix("advisory: ").unwrap_or(&why).to_string();
            Some((r, advisory.len(), answers.count(), why))
        })
        .collect();
    if marked.is_empty() {
        return;
    }
    let head = format!(
        "### Advisory judge verdicts ({} test(s))\n\nThese judge answers come from a judge not measured well \
         enough on their type of question: they decide nothing surely until a calibration set of that type \
         measures it.\n\n{}{}",
        marked.len(),
        row(&["test", "status", "advisory answers", "why (the first)"]),
        row(&[":---", ":---", "---:", ":---"]),
    );
    let rows = marked.iter().map(|(r, advisory, answers, why)| {
        let mut status = format!("{:?}", r.status).to_lowercase();
        // `[judge] advisory = "warn"`: a "no" its sample passed with.
        let noes = r.advisory_noes().count();
        if noes > 0 {
            status.push_str(&format!(" ({noes} \"no\" not counted)"));
        }
        row(&[
            &name(&r.name),
            &status,
            &format!("{advisory}/{answers}"),
            &inline(&shorten(why, LINE_CHARS)),
        ])
    });
    let list = List {
        what: "tests with advisory verdicts",
        whole: "the JSON and HTML reports mark",
    };
    section(out, &head, rows, marked.len(), &list);
    out.push("\n");
}

/// Trials some of whose samples passed and some failed.
fn flaky(out: &mut Bounded, records: &[TrialRecord]) {
    let flaky: Vec<&TrialRecord> = records.iter().filter(|r| r.is_flaky()).collect();
    if flaky.is_empty() {
        return;
    }
    let head = format!(
        "### Flaky ({}): some samples passed, some failed\n\n{}{}",
        flaky.len(),
        row(&["test", "verdict", "samples passed (95% CI)"]),
        row(&[":---", ":---", "---:"]),
    );
    let rows = flaky.iter().map(|r| {
        let verdict = format!("{:?}", r.status).to_lowercase();
        row(&[&name(&r.name), &verdict, &rate_cell(r)])
    });
    let list = List {
        what: "flaky",
        whole: "the JSON and HTML reports show",
    };
    section(out, &head, rows, flaky.len(), &list);
    out.push("\n");
}

/// The significant regressions since the baseline, with how many moved either way.
fn regressions(out: &mut Bounded, b: &Baseline<'_>) {
    let comparison = b.comparison;
    let regressions: Vec<&baseline::Change> = comparison.regressions().collect();
    let improvements = comparison
        .changes
        .iter()
        .filter(|c| c.verdict == baseline::Shift::Improvement)
        .count();
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut head = format!(
        "### Against the baseline {}\n\n{} significant regression{}, {} significant improvement{} \
         (Fisher's exact test, two-sided, significant at p ≤ {}; no multiple-comparison correction); \
         {} compared, {} unchanged, {} in the baseline only, {} new.\n\n",
        inline(&b.path.display().to_string()),
        regressions.len(),
        plural(regressions.len()),
        improvements,
        plural(improvements),
        comparison.alpha,
        comparison.changes.len() + comparison.unchanged,
        comparison.unchanged,
        comparison.baseline_only,
        comparison.new,
    );
    if regressions.is_empty() {
        out.push(&head);
        return;
    }
    head.push_str(&row(&["regression", "then", "now", "p"]));
    head.push_str(&row(&[":---", "---:", "---:", "---:"]));
    let share = |c: crate::stats::Counts| format!("{}/{} {:.0}%", c.passed, c.total, c.percent());
    let rows = regressions.iter().map(|c| {
        row(&[
            &inline(&shorten(&c.subject.to_string(), NAME_CHARS)),
            &share(c.then),
            &share(c.now),
            &format!("{:.4}", c.p_value),
        ])
    });
    let list = List {
        what: "regressions",
        whole: "the run's output and its HTML report list",
    };
    section(out, &head, rows, regressions.len(), &list);
    out.push("\n");
}

/// The tests with recordings waiting for review, and how many samples each.
fn pending(out: &mut Bounded, files: &[PendingFile]) {
    let mut tests: BTreeMap<&str, usize> = BTreeMap::new();
    for s in files.iter().flat_map(|f| &f.samples) {
        *tests.entry(s.id.test.as_str()).or_default() += 1;
    }
    if tests.is_empty() {
        return;
    }
    let samples: usize = tests.values().sum();
    let head = format!(
        "### Pending recordings: {} test(s), {samples} sample(s)\n\nNew answers wait for review: `{}`.\n\n{}{}",
        tests.len(),
        crate::commands::REVIEW,
        row(&["test", "samples"]),
        row(&[":---", "---:"]),
    );
    let rows = tests
        .iter()
        .map(|(test, n)| row(&[&name(test), &n.to_string()]));
    let list = List {
        what: "tests with pending recordings",
        whole: "`cargo prompt-tester pending` lists",
    };
    section(out, &head, rows, tests.len(), &list);
    out.push("\n");
}

/// Calls, tokens and cost: the subject's, the judge's and the embeddings', and their total.
fn usage(out: &mut Bounded, records: &[TrialRecord], budget: Option<&BudgetReport>) {
    let mut total = Usage::default();
    for r in records {
        total += &r.usage;
    }
    let mut text = format!(
        "### Calls, tokens and cost\n\n{}{}",
        row(&[
            "role",
            "calls",
            "replayed",
            "tokens in",
            "tokens out",
            "cost"
        ]),
        row(&[":---", "---:", "---:", "---:", "---:", "---:"]),
    );
    let line = |label: &str, t: &Tally| {
        row(&[
            label,
            &t.calls.to_string(),
            &t.replayed.to_string(),
            &t.tokens.input.to_string(),
            &t.tokens.output.to_string(),
            &inline(&usd(t)),
        ])
    };
    for (label, tally) in [
        ("subject", &total.subject),
        ("judge", &total.judge),
        ("embeddings", &total.embedding),
    ] {
        if tally.calls > 0 {
            text.push_str(&line(label, tally));
        }
    }
    text.push_str(&line("**total**", &total.total()));
    text.push('\n');
    let unpriced = crate::usage::unpriced_models_line(&total.unpriced);
    if !unpriced.is_empty() {
        text.push_str(&format!("{}\n\n", inline(unpriced.trim_end())));
    }
    if let Some(b) = budget {
        text.push_str(&format!(
            "Budget: {} spent of {}{}; {} call(s) refused.\n\n",
            inline(&format!("${:.5}", b.spent_usd)),
            inline(&format!("${:.5}", b.limit_usd)),
            if b.whole_nextest_run {
                " (the whole nextest run)"
            } else {
                ""
            },
            b.refused_calls
        ));
    }
    out.push(&text);
}

/// Writes the summary of `records` where `to` says: its file replaced (atomically); GitHub's step
/// summary, when a trial ran, appended to in one write, after a blank line when it holds something
/// already, cut to what the step has left (nothing when not even the cut summary fits). Each file not
/// written, with why.
pub fn write(
    to: &Markdown,
    records: &[TrialRecord],
    context: &Context<'_>,
) -> Vec<(PathBuf, std::io::Error)> {
    let step_summary = to.step_summary.as_ref().filter(|_| !records.is_empty());
    if to.file.is_none() && step_summary.is_none() {
        return Vec::new();
    }
    let text = render(records, context);
    let mut errors = Vec::new();
    if let Some(path) = &to.file
        && let Err(e) = crate::shared::replace(path, text.trim_end().as_bytes())
    {
        errors.push((path.clone(), e));
    }
    if let Some(path) = step_summary
        && let Err(e) = append(path, &text, |left| render_within(records, context, left))
    {
        errors.push((path.clone(), e));
    }
    errors
}

/// Appends `text` to the step summary `path` in one write, creating it; when the file would reach
/// [`STEP_SUMMARY_LIMIT`], `cut(left)`'s text (at most `left` bytes) instead, or nothing if it does
/// not fit.
fn append(path: &Path, text: &str, cut: impl FnOnce(usize) -> String) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let size = usize::try_from(file.metadata()?.len()).unwrap_or(usize::MAX);
    let gap = if size > 0 { "\n" } else { "" };
    // Under the limit by a byte, after the gap; the text ends in the line break written after it.
    let left = STEP_SUMMARY_LIMIT.saturating_sub(size.saturating_add(gap.len() + 1));
    let cut_text;
    let text = if text.len() <= left {
        text
    } else {
        cut_text = cut(left);
        &cut_text
    };
    if text.len() > left {
        return Ok(());
    }
    file.write_all(format!("{gap}{}\n", text.trim_end()).as_bytes())
}

#[cfg(test)]
mod tests;
