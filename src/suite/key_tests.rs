//! Every key the table gives a suite or a case is read there, in each format the same way: a value of
//! the wrong type is reported at the key (a key the reader ignored would be silently accepted), and
//! none is unknown.

use std::fmt::Display;
use std::path::Path;

use prompt_tester_keys::{Key, Kind, Place, keys_in};

use super::parse::{parse, report};

/// How a format writes the suites of this test.
struct Format {
    file: &'static str,
    /// The suite's prompt, as a line.
    prompt: &'static str,
    /// The line that opens the cases.
    cases: &'static str,
    /// What stands before a case's first key, and before its other keys.
    first: &'static str,
    indent: &'static str,
    /// Between a key and its value.
    assign: &'static str,
    /// The case's name and inputs, as values.
    name: &'static str,
    inputs: &'static str,
    /// A value of the wrong type for a key that takes a table, and for any other key.
    not_a_table: &'static str,
    a_table: &'static str,
}

const TOML: Format = Format {
    file: "s.evals.toml",
    prompt: "prompt = \"Say {x}\"\n",
    cases: "[[cases]]\n",
    first: "",
    indent: "",
    assign: " = ",
    name: "\"a\"",
    inputs: "{ x = \"1\" }",
    not_a_table: "\"not a table\"",
    a_table: "{ not = \"this\" }",
};

#[cfg(feature = "yaml")]
const YAML: Format = Format {
    file: "prompt-tests/support.evals.yaml",
    prompt: "prompt: Say {x}\n",
    cases: "cases:\n",
    first: "  - ",
    indent: "    ",
    assign: ": ",
    name: "a",
    inputs: "{ x: \"1\" }",
    not_a_table: "not a table",
    a_table: "{ not: this }",
};

impl Format {
    /// The report of a suite that has problems.
    fn problems(&self, text: &str) -> String {
        match parse("s", self.file, Path::new("/nonexistent"), text) {
            Ok(_) => panic!("no problem in\n{text}"),
            Err(problems) => report(self.file, text, &problems),
        }
    }

    /// `key` set to `value`, as a line after `before`.
    fn line(&self, before: &str, key: impl Display, value: &str) -> String {
        format!("{before}{key}{}{value}\n", self.assign)
    }

    /// A value of the wrong type for `key`.
    fn wrong(&self, key: Key) -> &'static str {
        match key.row().kind {
            Kind::Table => self.not_a_table,
            _ => self.a_table,
        }
    }

    fn every_key_is_read(&self) {
        let name = self.line(self.first, "name", self.name);
        let inputs = self.line(self.indent, "inputs", self.inputs);
        let case = format!("{}{name}{inputs}", self.cases);
        for key in keys_in(Place::Suite) {
            let line = self.line("", key, self.wrong(key));
            let text = match key {
                Key::Prompt | Key::Prompts => format!("{line}{case}"),
                Key::Cases => format!("{}{line}", self.prompt),
                _ => format!("{}{line}{case}", self.prompt),
            };
            let report = self.problems(&text);
            assert!(report.contains(&format!(": `{key}")), "{key}:\n{report}");
            assert!(!report.contains("unknown key"), "{key}:\n{report}");
        }
        for key in keys_in(Place::Case) {
            let line = |before| self.line(before, key, self.wrong(key));
            let case = match key {
                Key::Name => line(self.first),
                Key::Inputs => format!("{name}{}", line(self.indent)),
                _ => format!("{name}{inputs}{}", line(self.indent)),
            };
            let report = self.problems(&format!("{}{}{case}", self.prompt, self.cases));
            assert!(
                report.contains(&format!(": `cases[0].{key}")),
                "{key}:\n{report}"
            );
            assert!(!report.contains("unknown key"), "{key}:\n{report}");
        }
    }
}

#[test]
fn every_key_of_the_table_is_read() {
    TOML.every_key_is_read();
}

#[cfg(feature = "yaml")]
#[test]
fn every_key_of_the_table_is_read_in_yaml() {
    YAML.every_key_is_read();
}
