//! The baseline comparison's tests: reading reports, comparing figures, the rendered table.
use super::*;

#[test]
fn counts_a_run_cannot_have_are_refused_before_any_arithmetic() {
    let report = |passed: u64, total: u64| {
        format!(
            r#"{{"suites": [], "tests": [{{"name": "t", "runs_passed": {passed}, "runs_total": {total}}}]}}"#
        )
    };
    for (passed, total, says) in [
        (
            1,
            4_000_000_000,
            "runs_total 4000000000 is more than 10000000",
        ),
        (6, 5, "runs_passed 6 is more than runs_total 5"),
    ] {
        let err = figures_of_json(&report(passed, total))
            .unwrap_err()
            .to_string();
        assert!(err.contains(says), "{err}");
    }
    assert!(figures_of_json(&report(4, 5)).is_ok());
}

fn test(name: &str) -> Subject {
    Subject::Test(name.into())
}

/// A subject's `(passed, total)` in one report; `None` where the report lacks it.
type Seen = Option<(u32, u32)>;

/// The baseline's figures and today's, from one row a subject: `(subject, then, now)`.
fn then_and_now(history: &[(Subject, Seen, Seen)]) -> (Figures, Figures) {
    let side = |pick: fn(&(Subject, Seen, Seen)) -> Seen| -> Figures {
        history
            .iter()
            .filter_map(|row| {
                pick(row).map(|(passed, total)| (row.0.clone(), Counts::new(passed, total)))
            })
            .collect()
    };
    (side(|row| row.1), side(|row| row.2))
}

#[test]
fn significant_changes_come_first_and_only_sampled_subjects_compare() {
    let category = Subject::Category {
        suite: "s".into(),
        category: "c".into(),
    };
    let (then, now) = then_and_now(&[
        (test("dropped"), Some((10, 10)), Some((2, 10))),
        (test("dipped"), Some((5, 5)), Some((3, 5))),
        (test("same"), Some((4, 5)), Some((8, 10))),
        (test("gone"), Some((3, 3)), None),
        (test("was_ignored"), Some((0, 0)), Some((1, 1))),
        (test("added"), None, Some((1, 1))),
        (test("ignored_now"), None, Some((0, 0))),
        (category.clone(), Some((2, 10)), Some((9, 10))),
    ]);
    let c = compare(&then, &now, 0.05);
    let rows: Vec<(String, Shift)> = c
        .changes
        .iter()
        .map(|c| (c.subject.to_string(), c.verdict))
        .collect();
    assert_eq!(
        rows,
        [
            ("test dropped".to_string(), Shift::Regression),
            ("category s/c".to_string(), Shift::Improvement),
            ("test dipped".to_string(), Shift::NotSignificant),
        ]
    );
    // 10/10 -> 2/10: p = 0.000714 (exact sum); 5/5 -> 3/5: p = 0.4444.
    assert!((c.changes[0].p_value - 0.000_714_3).abs() < 1e-6, "{c:?}");
    assert!((c.changes[2].p_value - 0.444_444_4).abs() < 1e-6, "{c:?}");
    assert_eq!((c.unchanged, c.baseline_only, c.new), (1, 1, 2));
    let failure = c.failure().expect("a regression fails");
    assert!(
        failure.contains("1 significant regression since the baseline (test dropped)"),
        "{failure}"
    );

    // A stricter alpha: 0.0007 is still significant at 0.001, 0.0055 (2/10 -> 9/10) is not.
    let strict = compare(&then, &now, 0.001);
    assert_eq!(strict.regressions().count(), 1);
    assert!(
        strict
            .changes
            .iter()
            .all(|c| c.verdict != Shift::Improvement)
    );
    assert_eq!(compare(&then, &then, 0.05).failure(), None);
}

#[test]
fn the_rendering_gives_rates_then_and_now_and_the_p_value() {
    let (then, now) = then_and_now(&[
        (test("t"), Some((10, 10)), Some((2, 10))),
        (test("u"), Some((1, 2)), Some((1, 2))),
    ]);
    let text = compare(&then, &now, 0.05).render(Path::new("base.json"));
    assert_eq!(
        text,
        "\nbaseline base.json: 1 significant regression, 0 significant improvements (Fisher's exact test, \
             two-sided, significant at p ≤ 0.05; no multiple-comparison correction)\n  REGRESSION   test t: \
             10/10 (100%) then, 2/10 (20%) now, p = 0.0007\n  2 compared: 1 changed, 1 unchanged; not \
             compared: 0 in the baseline only, 0 new\n"
    );
}

#[test]
fn settings_name_the_flag_or_variable_of_a_bad_value() {
    let flag = |n: &'static str, v: &str| Some((n, v.to_string()));
    let settings = |p, a, f| settings(p, a, f, &Commands::default());
    let s = settings(flag("--baseline", "b.json"), None, None)
        .unwrap()
        .unwrap();
    assert_eq!((s.alpha, s.fail_on_regression), (DEFAULT_ALPHA, false));
    let s = settings(
        flag("PROMPT_TESTER_BASELINE", "b.json"),
        flag("--baseline-alpha", "0.01"),
        flag("PROMPT_TESTER_FAIL_ON_REGRESSION", "true"),
    )
    .unwrap()
    .unwrap();
    assert_eq!((s.alpha, s.fail_on_regression), (0.01, true));
    for bad in ["0", "1", "1.5", "-0.1", "abc", "NaN"] {
        let e = settings(
            flag("--baseline", "b"),
            flag("PROMPT_TESTER_BASELINE_ALPHA", bad),
            None,
        )
        .unwrap_err();
        assert!(
            matches!(
                &e,
                ReportError::Alpha {
                    name: "PROMPT_TESTER_BASELINE_ALPHA",
                    value,
                } if value == bad
            ),
            "{e:?}"
        );
        assert!(
            e.to_string().starts_with(&format!(
                "PROMPT_TESTER_BASELINE_ALPHA is {bad:?}; it must be"
            )),
            "{e}"
        );
    }
    let e = settings(
        flag("--baseline", "b"),
        None,
        flag("PROMPT_TESTER_FAIL_ON_REGRESSION", "yes please"),
    )
    .unwrap_err();
    assert!(matches!(e, ReportError::Switch { .. }), "{e:?}");
    assert!(
        e.to_string()
            .starts_with("PROMPT_TESTER_FAIL_ON_REGRESSION is \"yes please\""),
        "{e}"
    );
    let e = settings(None, None, flag("--fail-on-regression", "1")).unwrap_err();
    assert!(
        matches!(
            e,
            ReportError::NoBaseline {
                name: "--fail-on-regression",
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .starts_with("--fail-on-regression needs a baseline: add --baseline PATH"),
        "{e}"
    );
    assert!(matches!(
        settings(None, None, flag("PROMPT_TESTER_FAIL_ON_REGRESSION", "0")),
        Ok(None)
    ));
}

#[test]
fn a_file_that_is_not_a_report_is_named_with_what_is_missing() {
    let dir = crate::test_support::Scratch::new("baseline-unit");
    let missing = dir.path().join("missing.json");
    let e = load(&missing, &Commands::new(Some("evals")))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!("cannot read the baseline {}:", missing.display())),
        "{e}"
    );
    assert!(
        e.ends_with("write one with `cargo test --test evals -- --report PATH`"),
        "{e}"
    );
    let junk = dir.file(
        "junk.json",
        "{\"suites\": [], \"tests\": [{\"name\": \"t\"}]}",
    );
    let e = load(&junk, &Commands::default()).unwrap_err().to_string();
    assert!(
        e.contains("is not a prompt-tester JSON report (missing field `runs_passed`"),
        "{e}"
    );
}

#[test]
fn a_gate_is_compared_by_its_rows() {
    let report = |passed: u32| {
        format!(
            r#"{{"suites": [{{"suite": "golden", "runs_passed": 0, "runs_total": 0, "cases": [],
                "by_category": {{}}, "gates": [{{"gate": "gate::capital", "rows_passed": {passed},
                "rows_total": 140}}]}}], "tests": []}}"#
        )
    };
    let (then, now) = (
        figures_of_json(&report(100)).unwrap(),
        figures_of_json(&report(70)).unwrap(),
    );
    let gate = Subject::Gate {
        suite: "golden".into(),
        gate: "gate::capital".into(),
    };
    assert_eq!(now[&gate], Counts::new(70, 140));
    let c = compare(&then, &now, 0.05);
    assert_eq!(
        c.changes[0].subject.to_string(),
        "gate golden::gate::capital"
    );
    assert_eq!(c.changes[0].verdict, Shift::Regression);
    // A report from before gates has none; a gate's counts are checked like a test's.
    assert!(figures_of_json(r#"{"suites": [{"suite": "s", "runs_passed": 0, "runs_total": 0, "cases": [], "by_category": {}}], "tests": []}"#).is_ok());
    let err = figures_of_json(&report(141)).unwrap_err().to_string();
    assert!(
        err.contains("rows_passed 141 is more than rows_total 140"),
        "{err}"
    );
}
