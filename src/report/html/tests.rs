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

/// An image part record of `bytes` PNG-signed bytes (its preview as `MediaRecord::of` makes it).
fn with_image(name: &str, fill: u8, len: usize) -> TrialRecord {
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.resize(len, fill);
    let part = crate::completion::Media::bytes("r.png", bytes)
        .load()
        .unwrap();
    let mut r = record(name, 1, 1);
    r.media = vec![crate::record::MediaRecord::of("receipt", &part)];
    r
}

#[test]
fn an_image_is_previewed_once_and_the_previews_are_bounded() {
    let small = with_image("a", 1, 100);
    let again = with_image("b", 1, 100);
    let big = with_image("c", 2, crate::record::PREVIEW_MAX_BYTES + 1);
    assert!(big.media[0].preview.is_none(), "over the cap: named only");
    let d = data(
        &[small.clone(), again, big],
        &run(None, 0.0, 1.0),
        &Extras::default(),
    );
    let previews = d["previews"].as_object().unwrap();
    assert_eq!(previews.len(), 1, "the same image once");
    assert_eq!(
        previews[&small.media[0].sha256],
        json!(small.media[0].preview.clone().unwrap())
    );
    assert_eq!(
        d["records"][2]["media"][0]["shown"],
        "image r.png (image/png, 64 KB)"
    );
    // The previews of one report stop at PREVIEWS_MAX_BYTES: past it, images are named only.
    let many: Vec<TrialRecord> = (0..40u8)
        .map(|i| with_image(&format!("t{i}"), i, 40 * 1024))
        .collect();
    let d = data(&many, &run(None, 0.0, 1.0), &Extras::default());
    let total: usize = d["previews"]
        .as_object()
        .unwrap()
        .values()
        .map(|p| p.as_str().unwrap().len())
        .sum();
    assert!(total <= PREVIEWS_MAX_BYTES, "{total}");
    assert!(d["previews"].as_object().unwrap().len() < 40);
    // No media, no previews: the page of a run without media is as it was.
    assert!(
        data(
            &[record("t", 1, 1)],
            &run(None, 0.0, 1.0),
            &Extras::default()
        )
        .get("previews")
        .is_none()
    );
}
