use std::time::Duration;

use super::*;
use crate::record::Status;
use crate::test_support::Scratch;

fn record(name: &str, status: Status) -> TrialRecord {
    let passed = status == Status::Passed;
    let mut r = TrialRecord::unrun(name.into(), status, "", None);
    r.message = None;
    (r.runs_passed, r.runs_total) = if passed { (1, 1) } else { (0, 1) };
    r.latency = Latency::of([Duration::from_millis(250)]);
    r
}

fn fragment(run: &str, started: f64, attempt: Option<u32>, records: &[TrialRecord]) -> Fragment {
    Fragment {
        format: FORMAT,
        process: Process {
            run: run.into(),
            nextest: true,
            attempt,
            started_unix: started,
            wall_secs: 1.0,
            date: format!("2026-01-01T00:00:{:02}Z", started as u32 % 60),
            cassette_mode: "auto".into(),
            ..Process::default()
        },
        records: records.iter().map(Stored::from).collect(),
        observations: Vec::new(),
        budget: None,
    }
}

fn partition_of(folder: &str, fragments: Vec<Fragment>) -> Partition {
    Partition {
        folder: folder.into(),
        fragments,
    }
}

#[test]
fn partitions_merge_into_every_trial_once_sorted_with_the_span_of_the_run() {
    let a = partition_of(
        "a",
        vec![
            fragment("r1", 10.0, None, &[record("s::b", Status::Passed)]),
            fragment("r1", 11.0, None, &[record("s::a", Status::Failed)]),
        ],
    );
    let b = partition_of(
        "b",
        vec![fragment("r2", 5.0, None, &[record("s::c", Status::Passed)])],
    );
    let merged = merge(vec![a, b]).unwrap();
    let names: Vec<_> = merged
        .records
        .iter()
        .map(|r| (r.name.as_str(), r.status.clone()))
        .collect();
    assert_eq!(
        names,
        [
            ("s::a", Status::Failed),
            ("s::b", Status::Passed),
            ("s::c", Status::Passed)
        ]
    );
    assert_eq!(merged.run.run, "r1+r2");
    assert_eq!(merged.run.started_unix, 5.0);
    assert_eq!(merged.run.wall_secs, 7.0);
    // The latencies the reports leave out come back (the matrix's mean needs them).
    assert_eq!(merged.records[0].latency.samples, 1);
    assert!(merged.records.iter().all(|r| r.attempts.is_none()));
}

#[test]
fn a_trial_in_two_partitions_is_an_error_naming_both() {
    let a = partition_of(
        "ci/part-1",
        vec![fragment("r1", 1.0, None, &[record("s::x", Status::Passed)])],
    );
    let b = partition_of(
        "ci/part-2",
        vec![fragment("r2", 1.0, None, &[record("s::x", Status::Passed)])],
    );
    let error = merge(vec![a, b]).unwrap_err().to_string();
    crate::test_support::assert_contains(
        &error,
        &[
            "trial `s::x` is in two partitions, ci/part-1 and ci/part-2",
            "--partition",
        ],
    );
}

#[test]
fn a_retried_trial_counts_its_last_attempt_flagged_flaky_when_it_passed() {
    // The attempts' files may be read in any order: the attempt number decides.
    let one = partition_of(
        "r",
        vec![
            fragment("r", 20.0, Some(2), &[record("s::x", Status::Passed)]),
            fragment("r", 10.0, Some(1), &[record("s::x", Status::Failed)]),
            fragment("r", 15.0, Some(1), &[record("s::y", Status::Failed)]),
            fragment("r", 25.0, Some(2), &[record("s::y", Status::Failed)]),
        ],
    );
    let merged = merge(vec![one]).unwrap();
    let x = &merged.records[0];
    assert_eq!((x.status.clone(), x.attempts), (Status::Passed, Some(2)));
    assert!(x.is_flaky(), "passed on a retry: flaky, as nextest says");
    let y = &merged.records[1];
    assert_eq!((y.status.clone(), y.attempts), (Status::Failed, Some(2)));
    assert!(!y.is_flaky(), "failed every attempt");
}

#[test]
fn budgets_are_the_last_seen_in_a_partition_and_summed_across_partitions() {
    let budget = |spent: f64, refused: u64| BudgetReport {
        limit_usd: 1.0,
        spent_usd: spent,
        refused_calls: refused,
        whole_nextest_run: true,
        unknown: None,
    };
    let with = |mut f: Fragment, b: BudgetReport| {
        f.budget = Some(b);
        f
    };
    let a = partition_of(
        "a",
        vec![
            with(fragment("r1", 1.0, None, &[]), budget(0.5, 1)),
            with(fragment("r1", 2.0, None, &[]), budget(0.25, 0)),
        ],
    );
    let b = partition_of(
        "b",
        vec![with(fragment("r2", 1.0, None, &[]), budget(0.125, 0))],
    );
    let merged = merge(vec![a, b]).unwrap();
    assert_eq!(merged.budget, Some(budget(0.625, 1)));
}

#[test]
fn fragments_written_by_processes_read_back_as_the_latest_run_and_old_runs_go() {
    let dir = Scratch::new("results-folder");
    let results = dir.path().join("results");
    for run in 0..(KEPT_RUNS + 2) {
        let f = fragment(&format!("old/{run}"), run as f64, None, &[]);
        write(&results, &f).unwrap();
        // Folder times order the runs: keep them apart.
        std::thread::sleep(Duration::from_millis(20));
    }
    let latest = [
        fragment("latest", 100.0, None, &[record("s::a", Status::Passed)]),
        fragment("latest", 101.0, None, &[record("s::b", Status::Failed)]),
    ];
    for f in &latest {
        write(&results, f).unwrap();
    }
    let runs = runs_in(&results);
    assert_eq!(
        runs.len(),
        KEPT_RUNS,
        "the oldest runs beyond the kept ones go"
    );
    assert!(!results.join("old_0").exists() && !results.join("old_1").exists());
    // A results folder gives its latest run; the run's own folder gives the same.
    let from_results = partition(&results).unwrap();
    assert_eq!(from_results.folder, results.join("latest"));
    let from_run = partition(&results.join("latest")).unwrap();
    for p in [from_results, from_run] {
        let merged = merge(vec![p]).unwrap();
        let names: Vec<_> = merged.records.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["s::a", "s::b"]);
    }
}

#[test]
fn an_empty_folder_and_a_foreign_file_are_errors_naming_them() {
    let dir = Scratch::new("results-errors");
    let empty = partition(dir.path()).unwrap_err().to_string();
    crate::test_support::assert_contains(
        &empty,
        &[&dir.path().display().to_string(), "no results in it"],
    );
    let run = dir.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("1-1.json"), "{\"format\": 99}").unwrap();
    let foreign = partition(&run).unwrap_err().to_string();
    crate::test_support::assert_contains(
        &foreign,
        &["1-1.json", "not a results fragment", "format 99"],
    );
}

#[test]
fn pruning_takes_only_marked_runs_and_leaves_what_else_the_folder_holds_said_once() {
    let dir = Scratch::new("results-shared");
    // A results folder pointed at a folder that holds other things (`target`, `.`).
    let results = dir.path().join("target");
    for user in ["debug", "artifacts", "notes"] {
        std::fs::create_dir_all(results.join(user).join("deep")).unwrap();
        std::fs::write(results.join(user).join("deep/keep.txt"), user).unwrap();
    }
    std::fs::write(results.join("Cargo.lock"), "lock").unwrap();
    let mut notices = Vec::new();
    for run in 0..(KEPT_RUNS + 3) {
        let f = fragment(&format!("run-{run}"), run as f64, None, &[]);
        // Two processes of one run: only the one that makes the folder prunes and warns.
        for _ in 0..2 {
            notices.extend(write(&results, &f).unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for user in ["debug", "artifacts", "notes"] {
        assert_eq!(
            std::fs::read_to_string(results.join(user).join("deep/keep.txt")).unwrap(),
            user,
            "a folder prompt-tester did not make survives"
        );
    }
    assert!(results.join("Cargo.lock").is_file());
    assert_eq!(runs_in(&results).len(), KEPT_RUNS);
    for gone in 0..3 {
        assert!(!results.join(format!("run-{gone}")).exists(), "old runs go");
    }
    assert!(
        results
            .join(format!("run-{}", KEPT_RUNS + 2))
            .join(RUN_MARKER)
            .is_file()
    );
    // Said once per run, never once per folder or per process.
    assert_eq!(notices.len(), KEPT_RUNS + 3);
    crate::test_support::assert_contains(
        &notices[0],
        &[
            &format!(
                "the results folder {} holds other things",
                results.display()
            ),
            "(`Cargo.lock`, `artifacts`, `debug` and 1 more)",
            "left alone",
            RESULTS_VAR,
        ],
    );
    // The latest run is found among the other folders, whatever their times.
    std::fs::write(results.join("debug").join("touched"), "").unwrap();
    assert_eq!(
        partition(&results).unwrap().folder,
        results.join(format!("run-{}", KEPT_RUNS + 2)),
        "no user folder is read as a run"
    );
    // A folder holding only runs says nothing.
    let clean = dir.path().join("clean");
    let f = fragment("only", 1.0, None, &[]);
    assert!(write(&clean, &f).unwrap().is_none());
}

#[test]
fn a_retried_trial_feeds_calibration_from_its_last_attempt_alone() {
    let verdict = |item: &str, judged: bool| Observation {
        trial: "calibration::s".into(),
        set: "s".into(),
        item: item.into(),
        kind: None,
        expected: true,
        judged,
        judge_provider: "p".into(),
        judge_model: "m".into(),
    };
    let attempt = |n: u32, started: f64, judged: bool| {
        let mut f = fragment(
            "r",
            started,
            Some(n),
            &[record("calibration::s", Status::Passed)],
        );
        f.observations = vec![verdict("a", judged), verdict("b", judged)];
        f
    };
    // The first attempt's file read first, as a directory listing may give it.
    let one = partition_of("r", vec![attempt(1, 10.0, false), attempt(2, 20.0, true)]);
    let merged = merge(vec![one]).unwrap();
    assert_eq!(merged.records[0].attempts, Some(2));
    assert_eq!(
        merged.observations,
        [verdict("a", true), verdict("b", true)],
        "the verdicts of the attempt the record keeps"
    );
}

#[test]
fn a_junit_path_is_refused_before_the_run_by_a_build_without_the_feature() {
    let asked = Asked {
        junit: Some("j.xml".into()),
        ..Asked::default()
    };
    let writable = asked.clone().writable();
    if cfg!(feature = "junit") {
        assert_eq!(writable.unwrap(), asked);
    } else {
        let e = writable.unwrap_err().to_string();
        assert!(
            e.contains("`junit` feature") && e.contains("--junit"),
            "{e}"
        );
    }
    let html = Asked {
        html: Some("r.html".into()),
        ..Asked::default()
    };
    assert_eq!(html.clone().writable().unwrap(), html);
}
