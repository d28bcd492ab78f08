//! The HTML report, opened in headless Chromium through WebDriver: a real run against the loopback
//! provider (a failing case, judge verdicts with snippets, an output holding markup), checked through
//! the DOM; then the benchmark's 1,000-trial report, timed as it loads; and an image input's preview.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use prompt_tester_testkit::{FakeProvider, Reply, Wire};
use serde_json::{Value, json};

use super::*;

/// What the model answers when asked for markup: it must show as text and run nothing.
const MARKUP: &str =
    "<script>window.__pwned = 1</script></div><img src=x onerror=\"window.__pwned = 2\"> done";

/// A judge verdict quoting `snippet`.
fn verdict(answer: &str, reasoning: &str, snippet: &str) -> Value {
    json!({"index": 1, "question_type": "style", "reasoning": reasoning, "snippet": snippet, "answer": answer})
}

/// The suite [`SUITE`] in a crate calling a fake that serves tea politely, coffee rudely and markup as
/// asked (and anything else with the key, which the page must not show), and whose judge quotes each
/// answer; cassettes off.
fn serving(name: &str) -> (FakeProvider, Fixture) {
    let fake = FakeProvider::builder()
        .answer_prompt("Serve tea", "Here is your tea, please enjoy.")
        .answer_prompt("Serve coffee", "Coffee. Now.")
        .answer_prompt("Serve markup", MARKUP)
        .respond_with(|request| {
            let body = String::from_utf8_lossy(&request.body).into_owned();
            if request.model().as_deref() == Some(JUDGE_MODEL) {
                let v = if body.contains("Coffee. Now.") {
                    verdict("no", "It barks an order.", "Coffee. Now.")
                } else {
                    verdict("yes", "It says please.", "please enjoy")
                };
                return Reply::text(
                    Wire::OpenAi,
                    JUDGE_MODEL,
                    &json!({ "verdicts": [v] }).to_string(),
                    prompt_tester_testkit::Usage::new(100, 10),
                );
            }
            Reply::answer(request, &format!("Water, and the key {SECRET}."))
        })
        .start();
    let f = Fixture::calling(name, &fake, "off");
    f.file("prompt-tests/serve.evals.toml", SUITE);
    (fake, f)
}

const SUITE: &str = r#"prompt = "Serve {thing}"

[[cases]]
name = "polite_tea"
category = "manners"
inputs = { thing = "tea" }
runs = 3
assert = [{ contains = "tea" }, { judge = "Is it polite?" }]

[[cases]]
name = "rude_coffee"
category = "manners"
inputs = { thing = "coffee" }
assert = [{ judge = "Is it polite?" }]

[[cases]]
name = "markup"
category = "safety"
inputs = { thing = "markup" }
assert = [{ contains = "done" }]

[[cases]]
name = "water"
category = "safety"
inputs = { thing = "water" }
assert = [{ max_words = 100 }]
"#;

/// chromedriver on a free port, killed (this child only) when dropped, with a fresh profile.
struct Driver {
    child: std::process::Child,
    port: u16,
    profile: PathBuf,
    chromium: PathBuf,
}

impl Driver {
    fn start(chromium: PathBuf, chromedriver: &Path) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", chromedriver.display()));
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "chromedriver did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let profile =
            std::env::temp_dir().join(format!("pt-chromium-{}-{port}", std::process::id()));
        Self {
            child,
            port,
            profile,
            chromium,
        }
    }

    async fn session(&self) -> Client {
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--window-size=1200,900",
        ]
        .map(String::from)
        .into_iter()
        .chain([format!("--user-data-dir={}", self.profile.display())])
        .collect::<Vec<_>>();
        let caps = json!({"goog:chromeOptions": {"binary": self.chromium, "args": args}});
        let caps = caps.as_object().unwrap().clone();
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{}", self.port))
            .await
            .expect("a WebDriver session")
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// Opens `page` and waits until its script has drawn it; the navigation timing's load time, in ms.
async fn open(c: &Client, page: &Path) -> f64 {
    c.goto(&format!("file://{}", page.display())).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ready = c
            .execute(
                "return document.documentElement.dataset.ready || null",
                vec![],
            )
            .await
            .unwrap();
        if ready == json!("1") {
            break;
        }
        assert!(Instant::now() < deadline, "the page never finished drawing");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let load = c
        .execute(
            "const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime;",
            vec![],
        )
        .await
        .unwrap();
    load.as_f64().unwrap_or(f64::NAN)
}

async fn js(c: &Client, script: &str) -> Value {
    c.execute(script, vec![]).await.unwrap()
}

async fn text(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// A model matrix and a baseline comparison, as the features that compute them would hand them over.
fn extras() -> prompt_tester::testing::Extras {
    use prompt_tester::testing::Table;
    let table = |title: &str, columns: &[&str], row: &[&str]| Table {
        title: title.into(),
        columns: columns.iter().map(|c| c.to_string()).collect(),
        rows: vec![row.iter().map(|c| c.to_string()).collect()],
    };
    prompt_tester::testing::Extras {
        matrix: Some(table(
            "Model matrix",
            &["case", "model-a", "model-b"],
            &["suite_0::case_0000", "80%", "100%"],
        )),
        baseline: Some(table(
            "Baseline comparison",
            &["case", "delta", "significance"],
            &["suite_0::case_0000", "+20 pp", "p = 0.03"],
        )),
        pending: Some(table(
            "Pending changes",
            &prompt_tester::testing::PENDING_COLUMNS,
            &[
                "suite_0::case_0000",
                "1",
                "Hi Ann.",
                "Hello, Ann!",
                "passed\n✓ contains",
                "failed\n✗ contains",
            ],
        )),
    }
}

#[test]
fn the_html_report_works_in_a_real_browser() {
    let (_fake, f) = serving("html");
    let page = f.root.join("out/report.html");
    let out = f.run(&["--html", &page.display().to_string()]);
    out.assert_statuses(&[
        ("serve::polite_tea", "ok"),
        ("serve::rude_coffee", "FAILED"),
    ]);
    let html = std::fs::read_to_string(&page)
        .unwrap_or_else(|e| panic!("no page: {e}\n{}", out.context()));
    assert!(!html.contains(SECRET), "the page leaks the key");
    assert!(
        html.contains("[REDACTED:PT_FAKE_API_KEY]"),
        "the water answer is redacted"
    );
    // The page shows the JSON report's per-sample detail: each assertion and judge answer.
    let rude = child::entry(&out.suite("serve")["cases"], "case_id", "rude_coffee");
    let sample = &rude["samples"][0];
    assert_eq!(sample["status"], "failed");
    assert_eq!(sample["output"], "Coffee. Now.");
    assert_eq!(sample["assertions"][0]["kind"], "judge");
    assert_eq!(sample["assertions"][0]["passed"], false);
    assert_eq!(sample["judge"][0]["snippet"], "Coffee. Now.");
    assert_eq!(sample["judge"][0]["reasoning"], "It barks an order.");
    // Nothing measures this judge: its answers are advisory, in the report and on the page.
    assert_eq!(
        sample["judge"][0]["advisory"],
        json!({"reason": "unmeasured", "question_type": "style"})
    );

    let test = "the_html_report_works_in_a_real_browser";
    let Some((chromium, chromedriver)) = prereq::browser(test) else {
        return;
    };

    let big = f.root.join("out/big.html");
    let mut records = big_report::records(1000, 5);
    // The first trial's judge asked each question three times (`judge_samples = 3`): 3/3 agreed on its
    // first sample, 2/3 on its second, below min_agreement (advisory); its third gave no question type.
    {
        use prompt_tester::judge::{Advisory, Votes};
        let samples = &mut records[0].samples;
        samples[0].judge[0].votes = Some(Votes {
            agreeing: 3,
            asked: 3,
        });
        let split = Votes {
            agreeing: 2,
            asked: 3,
        };
        samples[1].judge[0].votes = Some(split);
        samples[1].judge[0].advisory = Some(Advisory::LowAgreement {
            votes: split,
            min_agreement: 0.8,
        });
        samples[2].judge[0].advisory = Some(Advisory::Unmeasured {
            question_type: None,
        });
        // Its first sample ran a tool loop: its steps, the second's answer holding markup.
        samples[0].steps = serde_json::from_value(json!([
            {"provider": "openai", "model": "gpt-4o-mini", "sent_back": [], "answer": "",
             "requested": [{"id": "call_1", "name": "lookup_order", "arguments": {"order_id": "42"}}],
             "input_tokens": 11, "output_tokens": 5, "latency_ms": 400, "replayed": true},
            {"provider": "openai", "model": "gpt-4o-mini", "requested": [],
             "sent_back": [{"id": "call_1", "name": "lookup_order", "content": "shipped"}],
             "answer": "<b>Monday</b>", "input_tokens": 23, "output_tokens": 7, "latency_ms": 1500,
             "replayed": false}
        ]))
        .unwrap();
    }
    let started = Instant::now();
    // A run under a budget: the page says what was spent against it.
    let info = prompt_tester::testing::RunInfo {
        budget: Some(prompt_tester::testing::BudgetReport {
            limit_usd: 0.05,
            spent_usd: 0.0123,
            refused_calls: 2,
            whole_nextest_run: true,
            unknown: None,
        }),
        ..Default::default()
    };
    prompt_tester::testing::write_html(&big, &records, &info, &extras()).unwrap();
    let wrote = started.elapsed();

    let driver = Driver::start(chromium, &chromedriver);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let c = driver.session().await;
        open(&c, &page).await;
        // The counts.
        assert_eq!(text(&c, "#count-passed .n").await, "3");
        assert_eq!(text(&c, "#count-failed .n").await, "1");
        assert_eq!(text(&c, "#count-errored .n").await, "0");
        // No budget in this run: no such fact.
        assert_eq!(js(&c, "return document.querySelectorAll(\"[data-fact='budget']\").length").await, 0);
        // No matrix or baseline in this run: no such sections.
        assert_eq!(js(&c, "return document.querySelectorAll('#model-matrix, #baseline-comparison, #pending-changes').length").await, 0);
        // Failures first.
        let first = js(&c, "return document.querySelector('.trial').dataset.name").await;
        assert_eq!(first, "serve::rude_coffee");
        // The failing row opens to its sample, the judge's snippet highlighted inside the output.
        c.find(Locator::Css(".trial.failed .row")).await.unwrap().click().await.unwrap();
        let sample = text(&c, ".trial.failed .sample").await;
        assert!(sample.contains("It barks an order."), "{sample}");
        assert_eq!(text(&c, ".trial.failed .sample .advisory").await, "advisory");
        assert_eq!(
            text(&c, ".trial.failed .sample .trust").await,
            "advisory: this judge is not measured on style questions"
        );
        assert_eq!(text(&c, ".trial.failed .sample pre.output mark.snippet").await, "Coffee. Now.");
        // The markup shows as text; nothing of it ran or became an element.
        c.find(Locator::Css("[data-name='serve::markup'] .row")).await.unwrap().click().await.unwrap();
        let shown = js(&c, "return document.querySelector(\"[data-name='serve::markup'] pre.output\").textContent").await;
        assert_eq!(shown, MARKUP);
        assert_eq!(js(&c, "return typeof window.__pwned").await, "undefined");
        assert_eq!(js(&c, "return document.querySelectorAll('main img, main script').length").await, 0);
        // The filter hides the rows that do not match.
        let visible = "return [...document.querySelectorAll('.trial')].filter(t => !t.hidden).map(t => t.dataset.name)";
        c.find(Locator::Css("#filter")).await.unwrap().send_keys("tea").await.unwrap();
        assert_eq!(js(&c, visible).await, json!(["serve::polite_tea"]));
        c.find(Locator::Css("#filter")).await.unwrap().clear().await.unwrap();
        js(&c, "document.getElementById('filter').dispatchEvent(new Event('input'))").await;
        c.find(Locator::Css("#failed-only")).await.unwrap().click().await.unwrap();
        assert_eq!(js(&c, visible).await, json!(["serve::rude_coffee"]));
        c.find(Locator::Css("#failed-only")).await.unwrap().click().await.unwrap();
        // The keyboard: `/` focuses the filter, `j` / `k` move between the visible rows, Enter opens one.
        let key = |k: &str| format!("(document.activeElement || document).dispatchEvent(new KeyboardEvent('keydown', {{ key: '{k}', bubbles: true }}))");
        let focused = "return document.activeElement.closest('.trial') ? document.activeElement.closest('.trial').dataset.name : document.activeElement.id";
        js(&c, "document.activeElement.blur()").await;
        js(&c, &key("/")).await;
        assert_eq!(js(&c, focused).await, "filter");
        js(&c, "document.activeElement.blur()").await;
        js(&c, &key("j")).await;
        assert_eq!(js(&c, focused).await, "serve::rude_coffee");
        js(&c, &key("j")).await;
        let second = js(&c, focused).await;
        assert_ne!(second, "serve::rude_coffee");
        js(&c, &key("k")).await;
        assert_eq!(js(&c, focused).await, "serve::rude_coffee");
        js(&c, &key("j")).await;
        js(&c, &key("Enter")).await;
        let opened = format!("return document.querySelector(\"[data-name='{}'] .detail\") !== null", second.as_str().unwrap());
        assert_eq!(js(&c, &opened).await, true, "Enter did not open {second}");
        // Unticking a category hides its rows.
        let categories = js(&c, "return [...document.querySelectorAll('#categories input')].map(i => i.dataset.category)").await;
        let first_category = categories[0].as_str().expect("a category toggle").to_string();
        c.find(Locator::Css(&format!("#categories input[data-category='{first_category}']"))).await.unwrap().click().await.unwrap();
        let shown_categories = "return [...document.querySelectorAll('.trial')].filter(t => !t.hidden).map(t => t.closest('section').dataset.category || '')";
        let left = js(&c, shown_categories).await;
        assert!(left.as_array().unwrap().iter().all(|c| c != first_category.as_str()), "{first_category} still shown: {left}");
        c.find(Locator::Css(&format!("#categories input[data-category='{first_category}']"))).await.unwrap().click().await.unwrap();
        // Print opens every visible row, so the paper holds each sample.
        js(&c, "window.dispatchEvent(new Event('beforeprint'))").await;
        let closed = "return [...document.querySelectorAll('.trial')].filter(t => !t.hidden && !t.querySelector('.detail')).length";
        assert_eq!(js(&c, closed).await, 0);
        // A narrow window: nothing runs off the side.
        c.set_window_size(420, 900).await.unwrap();
        let overflow = js(&c, "return document.documentElement.scrollWidth - document.documentElement.clientWidth").await;
        assert!(overflow.as_i64() <= Some(0), "{overflow} px off the side at 420 px");
        c.set_window_size(1280, 900).await.unwrap();
        // The pass rate's 95% interval is drawn.
        assert!(js(&c, "return document.querySelectorAll('svg.bar .ci').length").await.as_u64() >= Some(4));
        if let Some(shot) = std::env::var_os("PROMPT_TESTER_SCREENSHOT") {
            let png = c.screenshot().await.unwrap();
            let path = prompt_tester_testkit::child::repo_root().join(shot);
            std::fs::write(&path, png).unwrap();
            eprintln!("screenshot written to {}", path.display());
        }

        let load_ms = open(&c, &big).await;
        let rows = js(&c, "return document.querySelectorAll('.trial').length").await;
        assert_eq!(rows, 1000);
        // Each judge answer says how far to trust it: its agreement with itself, and why it is advisory
        // (samples in run order; the page shows the failed ones first).
        c.find(Locator::Css("[data-name='suite_0::case_0000'] .row")).await.unwrap().click().await.unwrap();
        let trust = "return [...document.querySelectorAll(\"[data-name='suite_0::case_0000'] .sample\")].sort((a, b) => a.dataset.run - b.dataset.run).map(s => (s.querySelector('.trust') || {}).textContent || '')";
        assert_eq!(
            js(&c, trust).await,
            json!([
                "the judge agreed with itself on 3/3 answers",
                "advisory: the judge agreed with itself on 2/3 answers, below min_agreement 80%",
                "advisory: the judge gave no question type, and no measurement applies",
                "",
                ""
            ])
        );
        // The tool loop's steps, a list item each, in order; the answer's markup shown as text.
        let steps = "return [...document.querySelectorAll(\"[data-name='suite_0::case_0000'] .sample[data-run='1'] ol.steps > li\")].map(li => [...li.children].map(e => e.textContent))";
        assert_eq!(
            js(&c, steps).await,
            json!([
                ["openai/gpt-4o-mini", " 11 in / 5 out tokens, 400 ms, replayed", "requested lookup_order({\"order_id\":\"42\"})"],
                ["openai/gpt-4o-mini", " 23 in / 7 out tokens, 1.50 s", "sent back lookup_order: shipped", "<b>Monday</b>"]
            ])
        );
        // The other samples made one plain call: no steps.
        assert_eq!(js(&c, "return document.querySelectorAll(\"[data-name='suite_0::case_0000'] ol.steps\").length").await, 1);
        assert_eq!(
            text(&c, "[data-fact='budget'] dd").await,
            "$0.0123 spent of $0.0500 (the whole nextest run); 2 calls were not made for it"
        );
        // The matrix, the baseline comparison and the pending changes appear when their data exists.
        let cells = "return [...document.querySelectorAll('#model-matrix td, #baseline-comparison td')].map(t => t.textContent)";
        assert_eq!(js(&c, cells).await, json!(["suite_0::case_0000", "80%", "100%", "suite_0::case_0000", "+20 pp", "p = 0.03"]));
        let pending = "return [...document.querySelectorAll('#pending-changes td')].map(t => t.textContent)";
        assert_eq!(
            js(&c, pending).await,
            json!(["suite_0::case_0000", "1", "Hi Ann.", "Hello, Ann!", "passed\n✓ contains", "failed\n✗ contains"])
        );
        let headers = "return [...document.querySelectorAll('#pending-changes th')].map(t => t.textContent)";
        assert_eq!(js(&c, headers).await, json!(prompt_tester::testing::PENDING_COLUMNS));
        let size = std::fs::metadata(&big).unwrap().len();
        // Printed for the record (`--nocapture`); the bound only catches a page gone badly wrong.
        println!(
            "1,000-trial, 5-sample report: {:.1} MB, written in {:.0} ms, loaded in {load_ms:.0} ms",
            size as f64 / 1e6,
            wrote.as_secs_f64() * 1000.0
        );
        assert!(load_ms < 15_000.0, "the page took {load_ms} ms to load");
        c.close().await.unwrap();
    });
}

/// Under nextest every trial is its own process: processes of one run (`NEXTEST_RUN_ID`) running at
/// once each leave their results in the run's folder and write no report; the page, the JSON report
/// and JUnit rendered from the folder (`cargo prompt-tester report`) each hold every trial, at the
/// paths the run asked for; a later run is rendered alone. The results are redacted like the reports.
#[test]
fn processes_of_one_nextest_run_fill_one_page_and_one_report() {
    let (_fake, f) = serving("html-nextest");
    let page = f.root.join("out/merged.html");
    let page_arg = page.display().to_string();
    let report = f.root.join("out/merged.json");
    let report_arg = report.display().to_string();
    let junit = f.root.join("out/merged.xml");
    let junit_arg = junit.display().to_string();
    let trials = [
        "serve::polite_tea",
        "serve::rude_coffee",
        "serve::markup",
        "serve::water",
    ];
    let run = |trial: &str, run_id: &str| {
        Child::harness(
            CHILD_ARGS,
            &[
                "prompts",
                "--exact",
                trial,
                "--html",
                &page_arg,
                "--report",
                &report_arg,
                "--junit",
                &junit_arg,
            ],
        )
        .root(&f.root)
        .env("PROMPT_TESTER_CASSETTE", "off")
        .env("PT_FAKE_API_KEY", SECRET)
        .env("NEXTEST_RUN_ID", run_id)
        .run()
    };
    // One thread per child process, so the processes overlap.
    std::thread::scope(|s| {
        for trial in trials {
            s.spawn(move || run(trial, "run-1"));
        }
    });
    let names = |page: &Path| -> Vec<String> {
        let html = std::fs::read_to_string(page).expect("the page");
        let start = html
            .find(r#"<script id="data" type="application/json">"#)
            .unwrap();
        let block = &html[start..];
        let json = &block[block.find('>').unwrap() + 1..block.find("</script>").unwrap()];
        let data: Value = serde_json::from_str(json).unwrap();
        data["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap().to_string())
            .collect()
    };
    // The JSON report's cases and the JUnit testcases, by trial name.
    let reported = |report: &Path| -> Vec<String> {
        let json: Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
        let mut names: Vec<String> = json["suites"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["cases"].as_array().unwrap().iter())
            .map(|c| format!("serve::{}", c["case_id"].as_str().unwrap()))
            .collect();
        names.sort();
        names
    };
    let testcases = |junit: &Path| -> usize {
        std::fs::read_to_string(junit)
            .unwrap()
            .matches("<testcase ")
            .count()
    };
    let mut want: Vec<String> = trials.iter().map(|t| t.to_string()).collect();
    want.sort();
    assert!(
        !page.exists(),
        "no process of a nextest run writes the merged page"
    );
    let render = || {
        let request = prompt_tester::_cargo_prompt_tester_support::ReportRequest {
            root: f.root.clone(),
            ..Default::default()
        };
        prompt_tester::_cargo_prompt_tester_support::report(&request).unwrap()
    };
    let done = render();
    assert_eq!(done.trials, trials.len());
    assert_eq!(done.written, [junit.clone(), report.clone(), page.clone()]);
    assert_eq!(names(&page), want);
    assert_eq!(reported(&report), want);
    assert_eq!(testcases(&junit), trials.len());
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let suite = &json["suites"][0];
    assert_eq!(suite["total"], json!(trials.len()), "{suite}");
    assert_eq!(
        json["totals"]["total"],
        json!(trials.len()),
        "{}",
        json["totals"]
    );
    let run_1 = f.root.join(".prompt-tester/results/run-1");
    let fragments: Vec<PathBuf> = std::fs::read_dir(&run_1)
        .unwrap()
        .map(|e| e.unwrap().path())
        // The run folder's marker (what prune may remove) is not a fragment.
        .filter(|p| p.file_name() != Some(std::ffi::OsStr::new("prompt-tester-run")))
        .collect();
    assert_eq!(fragments.len(), trials.len(), "a fragment per process");
    for kept in fragments {
        let text = std::fs::read_to_string(&kept).unwrap();
        assert!(text.contains("serve::"), "{}", kept.display());
        assert!(!text.contains(SECRET), "{} holds the key", kept.display());
    }
    run("serve::water", "run-2");
    render();
    assert_eq!(names(&page), ["serve::water"]);
    assert_eq!(reported(&report), ["serve::water"]);
    assert_eq!(testcases(&junit), 1);
}

/// A prompt test placing an image (`media_fixture`'s `image_openai`, the 2x2 receipt): its row opens to
/// the image named under the prompt and shown from the page's own data, nothing loaded from elsewhere.
#[test]
fn an_image_input_shows_as_a_preview_in_a_real_browser() {
    let test = "an_image_input_shows_as_a_preview_in_a_real_browser";
    let Some((chromium, chromedriver)) = prereq::browser(test) else {
        return;
    };
    let fake = FakeProvider::start();
    let scratch = child::Scratch::new("html", "media");
    let run = scratch
        .example("media_fixture")
        .args(["--no-cassette", "--html", "r.html", "image_openai"])
        .base_urls(&fake)
        .run();
    run.assert_success();
    let page = scratch.path().join("r.html");
    let driver = Driver::start(chromium, &chromedriver);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let c = driver.session().await;
        open(&c, &page).await;
        c.find(Locator::Css("[data-name='image_openai'] .row"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        assert_eq!(
            text(&c, "[data-name='image_openai'] ul.media li").await,
            "{receipt} image receipt.png (image/png, 2x2, 75 B)"
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        let loaded = "const i = document.querySelector('ul.media img.preview'); \
                      return i && i.complete ? [i.naturalWidth, i.naturalHeight, i.src.slice(0, 22)] : null";
        let mut shown = js(&c, loaded).await;
        while shown.is_null() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
            shown = js(&c, loaded).await;
        }
        assert_eq!(shown, json!([2, 2, "data:image/png;base64,"]));
        c.close().await.unwrap();
    });
}
