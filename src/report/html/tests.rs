use super::*;
use crate::record::Status;
use serde_json::json;

fn record(name: &str, passed: u32, total: u32) -> TrialRecord {
    let mut r = TrialRecord::unrun(name.into(), Status::Passed, "", None);
    r.message = None;
    (r.runs_passed, r.runs_total) = (passed, total);
    r
}

fn run(nextest: Option<&str>, started: f64, wall: f64) -> RunInfo {
    RunInfo {
        date: "2026-01-01T00:00:00Z".into(),
        cassette_mode: "auto".into(),
        started_unix: started,
        wall_secs: wall,
        nextest_run: nextest.map(str::to_string),
        ..RunInfo::default()
    }
}

#[test]
fn markup_in_the_data_cannot_close_the_block() {
    let mut r = record("t", 1, 1);
    r.output_preview = Some("</script><script>alert(1)</script><!-- & -->".into());
    let html = page(&data(&[r], &run(None, 0.0, 1.0), &Extras::default()));
    let block = &html[html.find(page::DATA_OPEN).unwrap()..];
    let block = &block[..block.find("</script>").unwrap()];
    assert!(!block[page::DATA_OPEN.len()..].contains('<'), "{block}");
    // The block reads back to the same text.
    let back = read_data(&html).expect("data block");
    assert_eq!(
        back["records"][0]["output_preview"],
        "</script><script>alert(1)</script><!-- & -->"
    );
}

#[test]
fn the_page_loads_nothing_from_elsewhere() {
    let html = page(&data(&[], &run(None, 0.0, 1.0), &Extras::default()));
    for bad in ["http://", "https://", "url(", "@import", " src="] {
        // The SVG namespace is an identifier, not a fetch.
        let hits = html.matches(bad).count()
            - html.matches("http://www.w3.org/2000/svg").count() * usize::from(bad == "http://");
        assert_eq!(hits, 0, "{bad} in the page");
    }
}

#[test]
fn records_get_their_wilson_interval_unless_they_have_one() {
    let d = data(
        &[record("t", 4, 5), record("u", 0, 0)],
        &run(None, 0.0, 1.0),
        &Extras::default(),
    );
    let ci = crate::stats::wilson(4, 5).unwrap();
    assert_eq!(d["records"][0]["ci_low"], json!(ci.low));
    assert_eq!(d["records"][0]["ci_high"], json!(ci.high));
    assert!(d["records"][1].get("ci_low").is_none());
    assert!(d.get("matrix").is_none() && d.get("baseline").is_none());
}

#[test]
fn extras_appear_when_they_exist() {
    let table = Table {
        title: "Model matrix".into(),
        columns: vec!["case".into(), "a".into()],
        rows: vec![vec!["x".into(), "100%".into()]],
    };
    let extras = Extras {
        matrix: Some(table.clone()),
        baseline: None,
        pending: None,
    };
    let d = data(&[], &run(None, 0.0, 1.0), &extras);
    assert_eq!(d["matrix"], serde_json::to_value(&table).unwrap());
    assert!(d.get("baseline").is_none());
}
