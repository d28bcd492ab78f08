//! The YAML reader: the core schema, spans, and what TOML cannot say.

use super::*;

/// `text` read, its problems as `line:column key: message`.
fn read(text: &str) -> (YamlDocument, Vec<String>) {
    let (document, problems) = YamlDocument::read(text).unwrap_or_else(|p| panic!("{p:?}"));
    let shown = problems
        .iter()
        .map(|p| {
            let (line, column) = super::super::line_column(text, p.span.start);
            format!("{line}:{column} {}: {}", p.key, p.message)
        })
        .collect();
    (document, shown)
}

fn syntax_error(text: &str) -> (usize, usize, String) {
    let problem = YamlDocument::read(text).expect_err("a syntax error");
    let (line, column) = super::super::line_column(text, problem.span.start);
    (line, column, problem.message)
}

#[test]
fn plain_scalars_follow_the_core_schema() {
    let text = "a: yes\nb: no\nc: on\nd: true\ne: FALSE\nf: 400\ng: 0x1F\nh: 1.5\ni: .5\nj: .inf\n\
                k: 007\nl: \"400\"\nm: '1.5'\nn: !!str 12\no: 1e3\np: A-1042\nq: 2024-01-01\nr: 1_000\n";
    let (document, problems) = read(text);
    assert!(problems.is_empty(), "{problems:?}");
    let root = document.table().unwrap();
    let table = root.get_ref();
    let get = |k: &str| table.get(k).unwrap().get_ref().clone();
    for key in ["a", "b", "c", "l", "m", "n", "p", "q", "r"] {
        assert!(
            matches!(get(key), DeValue::String(_)),
            "{key}: {:?}",
            get(key)
        );
    }
    assert_eq!(get("a").as_str(), Some("yes"));
    assert_eq!(get("d").as_bool(), Some(true));
    assert_eq!(get("e").as_bool(), Some(false));
    assert_eq!(super::super::integer(&get("f")), Some(400));
    assert_eq!(super::super::integer(&get("g")), Some(31));
    assert_eq!(super::super::integer(&get("k")), Some(7));
    assert_eq!(super::super::number(&get("h")), Some(1.5));
    assert_eq!(super::super::number(&get("i")), Some(0.5));
    assert_eq!(super::super::number(&get("j")), Some(f64::INFINITY));
    assert_eq!(super::super::number(&get("o")), Some(1000.0));
    // A number as an input keeps what was written where TOML writes it the same way.
    assert_eq!(super::super::scalar_text(&get("h")).as_deref(), Some("1.5"));
    assert_eq!(super::super::scalar_text(&get("i")).as_deref(), Some("0.5"));
}

#[test]
fn spans_are_bytes_of_the_key_and_the_value() {
    let text = "é: 1\ncases:\n  - name: ça va\n    inputs: { x: \"y\" }\n";
    let (document, problems) = read(text);
    assert!(problems.is_empty(), "{problems:?}");
    let root = document.table().unwrap();
    let table = root.get_ref();
    let (key, value) = table.get_key_value("é").unwrap();
    assert_eq!(&text[key.span()], "é");
    assert_eq!(&text[value.span()], "1");
    let DeValue::Array(cases) = table.get("cases").unwrap().get_ref() else {
        panic!("cases is a list");
    };
    let case = cases.iter().next().unwrap();
    assert_eq!(super::super::line_column(text, case.span().start), (3, 5));
    let DeValue::Table(case) = case.get_ref() else {
        panic!("a case is a mapping");
    };
    assert_eq!(&text[case.get("name").unwrap().span()], "ça va");
    let inputs = case.get("inputs").unwrap();
    assert!(
        text[inputs.span()].starts_with("{ x"),
        "{:?}",
        &text[inputs.span()]
    );
    let DeValue::Table(inputs) = inputs.get_ref() else {
        panic!("inputs is a mapping");
    };
    assert_eq!(&text[inputs.get("x").unwrap().span()], "\"y\"");
}

#[test]
fn what_toml_cannot_say_is_a_located_problem() {
    let (_, problems) =
        read("a: 1\nb:\nc:\n  - x\n  -\na: 2\nd: &anchor 3\ne: *anchor\nf: !custom 4\n");
    assert_eq!(
        problems,
        [
            "2:2 b: no value (YAML reads an empty value, `~` or `null` as null)",
            "5:4 c[1]: this list item has no value",
            "6:1 a: the key `a` is written twice in this mapping (first on line 1)",
            "7:4 d: YAML anchors (`&name`) and aliases (`*name`) are not supported",
            "8:4 e: YAML anchors (`&name`) and aliases (`*name`) are not supported",
            "9:4 f: the YAML tag `!custom` is not supported here",
        ]
    );
}

#[test]
fn a_second_document_is_a_problem_and_a_list_key_one_too() {
    let (document, problems) = read("a: 1\n---\nb: 2\n");
    assert_eq!(
        problems,
        ["2:1 : a second YAML document: a suite file holds one"]
    );
    assert!(document.table().unwrap().get_ref().get("b").is_none());
    let (_, problems) = read("? [a, b]\n: 1\nc: 2\n");
    assert_eq!(problems, ["1:3 : a key is a list or mapping, not text"]);
}

#[test]
fn syntax_errors_and_tabs_are_located() {
    let (line, column, message) = syntax_error("a:\n\tb: 1\n");
    assert_eq!((line, column), (2, 2), "{message}");
    assert!(message.starts_with("YAML syntax error: tabs"), "{message}");
    let (line, column, message) = syntax_error("a: b: c\n");
    assert_eq!((line, column), (1, 5));
    assert_eq!(
        message,
        "YAML syntax error: mapping values are not allowed in this context"
    );
    // Past the first document too.
    let (line, ..) = syntax_error("a: 1\n---\nb: [\n");
    assert_eq!(line, 4);
}

#[test]
fn the_top_is_a_mapping_and_an_empty_file_an_empty_one() {
    for empty in ["", "# only a comment\n", "---\n"] {
        let (document, problems) = read(empty);
        assert!(problems.is_empty(), "{problems:?}");
        assert!(document.table().unwrap().get_ref().is_empty());
    }
    let (document, _) = read("- a\n- b\n");
    let problem = document.table().expect_err("a list at the top");
    assert_eq!(
        problem.message,
        "the file holds an array, not a mapping of keys"
    );
}

#[test]
fn deep_nesting_is_refused_not_a_stack_overflow() {
    let text = format!("a: {}{}\n", "[".repeat(200), "]".repeat(200));
    let problem = YamlDocument::read(&text).expect_err("too deep");
    assert!(
        problem.message.contains("nest more than 64 deep"),
        "{}",
        problem.message
    );
}
