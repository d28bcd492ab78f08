//! A dataset row as a suite case, built only for a row whose trial is wanted: its placeholders are
//! checked and its assertions (the suite's, then its own) filled in here, not when the file is read.

use super::InvalidRow;
use super::dataset::{Row, RowProblem};
use super::parse::{Case, Rows};
use super::template::{self, TemplateSource};

impl Rows {
    /// The case of `row`, or why it cannot run.
    pub fn case(&self, row: &Row) -> Result<Case, InvalidRow> {
        let file = &self.dataset.file;
        if !row.problems.is_empty() {
            return Err(InvalidRow::new(file, row, row.problems.clone()));
        }
        let mut problems = Vec::new();
        for p in &self.placeholders {
            if !row.inputs.iter().any(|(k, _)| k == p) {
                problems.push(RowProblem::new(
                    "",
                    format!("no input `{p}` for the placeholder {{{p}}} of the prompt"),
                    format!("add a `{p}` column (CSV) or key (JSON Lines) with this row's value"),
                ));
            }
        }
        // A media column's value is a file, relative to the dataset file.
        let mut inputs = Vec::new();
        let mut media = std::collections::BTreeMap::new();
        for (k, v) in &row.inputs {
            match self.media.iter().find(|(column, _)| column == k) {
                None => inputs.push((k.clone(), v.clone())),
                Some((_, kind)) => match super::parse::media::load(&self.dataset_dir, v, *kind) {
                    Ok(part) => {
                        media.insert(k.clone(), part);
                    }
                    Err((message, fix)) => {
                        problems.push(RowProblem::new(format!("`{k}`"), message, fix));
                    }
                },
            }
        }
        let mut pending = self.asserts.clone();
        let at = format!("{file}:{}", row.line);
        if let Some(json) = &row.asserts {
            match template::json_to_toml(json, "assert") {
                Ok(value) => pending.extend(template::row_templates(&value, &at)),
                Err(path) => problems.push(RowProblem::new(
                    format!("`{path}`"),
                    "null is not a value an assertion takes",
                    "remove it, or write the value (a string, number, boolean, array or object)",
                )),
            }
        }
        let vars = template::vars(
            row.expected.as_deref(),
            &super::parse::with_file_names(&inputs, &media),
        );
        let src = TemplateSource {
            file: &self.suite_file,
            dir: &self.dir,
        };
        let asserts = match template::instantiate(&pending, &vars, src) {
            Ok(asserts) => asserts,
            Err(found) => {
                problems.extend(
                    found
                        .into_iter()
                        .map(|p| RowProblem::new(format!("`{}`", p.key), p.message, p.fix)),
                );
                Vec::new()
            }
        };
        if let Some(problem) = super::parse::unweighted(self.settings.min_score, &asserts) {
            problems.push(RowProblem::new(
                "`assert`",
                problem,
                super::parse::UNWEIGHTED_FIX,
            ));
        }
        for (a, turn) in asserts.iter().filter_map(|a| Some((a, a.turn.as_ref()?))) {
            if turn.n > 1 {
                problems.push(RowProblem::new(
                    format!("`{}`", turn.key),
                    format!(
                        "the assertion at {} checks turn {}, but a row has one reply (rows have no `turns`)",
                        a.at, turn.n
                    ),
                    "remove `turn`, or write the conversation as a case with `turns` in the suite",
                ));
            }
        }
        if problems.is_empty()
            && let Err((name, problem)) =
                super::parse::media::placed(&self.settings, &[], &inputs, &media)
        {
            problems.push(RowProblem::new(
                format!("`{name}`"),
                problem,
                super::parse::media::WHERE,
            ));
        }
        if !problems.is_empty() {
            return Err(InvalidRow::new(file, row, problems));
        }
        let used: Vec<&str> = template::names_used(&pending).collect();
        let unused_inputs = row
            .inputs
            .iter()
            .filter(|(k, _)| !self.placeholders.contains(k) && !used.contains(&k.as_str()))
            .map(|(k, _)| k.clone())
            .collect();
        Ok(Case {
            name: row.name.clone(),
            category: row.category.clone(),
            inputs,
            media,
            turns: Vec::new(),
            asserts,
            skip: None,
            settings: self.settings.clone(),
            unused_inputs,
        })
    }
}
