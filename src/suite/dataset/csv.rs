//! A dataset in CSV: a header row, then one row a line.

use super::{CSV_KEYS, FileProblem, Row, RowProblem, name_problem};

/// The rows of a CSV file with a header row.
pub(super) fn csv_rows(bytes: &[u8]) -> Result<Vec<Row>, FileProblem> {
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(bytes);
    let header_fix = "write a header row first: name,category,expected,<one column per input>";
    let headers = match reader.headers() {
        Ok(h) => h.clone(),
        Err(e) => {
            return Err(FileProblem {
                line: 1,
                message: format!("cannot read the header row: {e}"),
                fix: header_fix.into(),
            });
        }
    };
    let header_problem = |message: String, fix: &str| FileProblem {
        line: 1,
        message,
        fix: fix.into(),
    };
    if headers.is_empty() {
        return Err(header_problem("the file is empty".into(), header_fix));
    }
    let mut seen: Vec<&str> = Vec::new();
    for (i, h) in headers.iter().enumerate() {
        if h.trim().is_empty() {
            return Err(header_problem(
                format!("column {} has no name in the header row", i + 1),
                "name every column in the header row",
            ));
        }
        if seen.contains(&h) {
            return Err(header_problem(
                format!("column {} repeats the column name `{h}`", i + 1),
                "give every column a distinct name",
            ));
        }
        if h == "inputs" || h == "assert" {
            return Err(header_problem(
                format!("column {} is `{h}`: a CSV row cannot carry {h}", i + 1),
                "every column other than name/id, category, skip and expected is an input; put assertions in \
                 the suite's `assert` (or use JSON Lines, whose rows may have \"assert\")",
            ));
        }
        seen.push(h);
    }
    let name_column = match (seen.contains(&"name"), seen.contains(&"id")) {
        (true, true) => {
            return Err(header_problem(
                "the header has both a `name` and an `id` column".into(),
                "keep one of them: it names the trial `<suite>::<name>`",
            ));
        }
        (false, false) => {
            return Err(header_problem(
                "the header has no `name` or `id` column".into(),
                "add a `name` column (the trial is `<suite>::<name>`)",
            ));
        }
        (true, false) => "name",
        (false, true) => "id",
    };
    let column = |key: &str| seen.iter().position(|h| *h == key);
    let (name_at, category_at, skip_at, expected_at) = (
        column(name_column),
        column("category"),
        column("skip"),
        column("expected"),
    );
    let input_columns: Vec<(usize, String)> = seen
        .iter()
        .enumerate()
        .filter(|(_, h)| !CSV_KEYS.contains(h))
        .map(|(i, h)| (i, h.to_string()))
        .collect();
    let place = |i: usize| format!("column {} (`{}`)", i + 1, seen[i]);
    let mut rows = Vec::new();
    let mut record = csv::StringRecord::new();
    loop {
        let line = reader.position().line() as usize;
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                let line = e.position().map_or(line, |p| p.line() as usize);
                rows.push(Row {
                    line,
                    name: Row::line_name(line),
                    problems: vec![RowProblem::new(
                        "",
                        format!("cannot read the row: {e}"),
                        "save the file as UTF-8 CSV (quote fields that hold commas, quotes or line breaks)",
                    )],
                    ..Row::default()
                });
                // The reader cannot go on after an invalid record in every case: stop at a repeat.
                if reader.is_done() {
                    break;
                }
                continue;
            }
        }
        let line = record.position().map_or(line, |p| p.line() as usize);
        let mut row = Row {
            line,
            name: Row::line_name(line),
            ..Row::default()
        };
        if record.len() != headers.len() {
            row.problems.push(RowProblem::new(
                "",
                format!(
                    "the row has {} fields; the header has {}",
                    record.len(),
                    headers.len()
                ),
                "give every row one field per column (quote fields that hold commas)",
            ));
            rows.push(row);
            continue;
        }
        let cell = |at: Option<usize>| at.map(|i| &record[i]).filter(|v| !v.is_empty());
        match cell(name_at) {
            None => row.problems.push(RowProblem::new(
                place(name_at.unwrap_or(0)),
                "the row has no name",
                "write the case's name in this column (the trial is `<suite>::<name>`)",
            )),
            Some(n) => match name_problem(n) {
                None => row.name = n.to_string(),
                Some(why) => row.problems.push(RowProblem::new(
                    place(name_at.unwrap_or(0)),
                    format!("{n:?} is not a usable name: {why}"),
                    "use a non-empty name without `::`, control characters or leading or trailing spaces",
                )),
            },
        }
        if !row.problems.is_empty() {
            row.name = Row::line_name(line);
        }
        row.category = cell(category_at).map(str::to_string);
        row.expected = cell(expected_at).map(str::to_string);
        row.skip = match cell(skip_at) {
            None => None,
            Some(v) if v.eq_ignore_ascii_case("false") => None,
            Some(v) if v.eq_ignore_ascii_case("true") => Some("skipped in the dataset".into()),
            Some(reason) => Some(reason.to_string()),
        };
        row.inputs = input_columns
            .iter()
            .map(|(i, h)| (h.clone(), record[*i].to_string()))
            .collect();
        rows.push(row);
    }
    Ok(rows)
}
