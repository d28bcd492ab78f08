//! CSV datasets: a header row names the columns (`name` or `id`, `category`, `skip`, `expected`, and one
//! column per input), each further record is a row. Built with the `csv` feature.

use super::{FileProblem, Row, RowProblem, name_problem};

/// Columns that are not inputs.
const CSV_KEYS: [&str; 5] = ["name", "id", "category", "skip", "expected"];

/// The rows of a CSV file with a header row.
pub(super) fn rows(bytes: &[u8]) -> Result<Vec<Row>, FileProblem> {
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
                    "use a non-empty name without `::` and without leading or trailing spaces",
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

#[cfg(test)]
mod tests {
    use super::super::{Format, Row, read};

    fn rows(format: Format, text: &str) -> Vec<Row> {
        read(format, "d", text.as_bytes()).unwrap().rows
    }

    #[test]
    fn csv_rows_read_columns_as_inputs() {
        let text = "name,category,expected,skip,city\nparis,geo,Paris,,\"Paris, France\"\nrome,geo,,true,Rome\n";
        let rows = rows(Format::Csv, text);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].line, rows[0].name.as_str()), (2, "paris"));
        assert_eq!(
            rows[0].inputs,
            vec![("city".into(), "Paris, France".into())]
        );
        assert_eq!(rows[0].expected.as_deref(), Some("Paris"));
        assert_eq!(rows[0].skip, None);
        assert_eq!(rows[1].expected, None);
        assert_eq!(rows[1].skip.as_deref(), Some("skipped in the dataset"));
    }

    #[test]
    fn csv_problems_name_the_line_and_column() {
        let text = "id,expected,q\n,x,y\na::b,x,y\nok,x\n\"multi\nline\",x,y\nlast,x,y\n";
        let rows = rows(Format::Csv, text);
        let got: Vec<(usize, &str)> = rows.iter().map(|r| (r.line, r.name.as_str())).collect();
        assert_eq!(
            got,
            [
                (2, "line_2"),
                (3, "line_3"),
                (4, "line_4"),
                (5, "line_5"),
                (7, "last")
            ]
        );
        assert_eq!(rows[0].problems[0].place, "column 1 (`id`)");
        assert!(rows[1].problems[0].message.contains("`::`"));
        assert!(
            rows[2].problems[0]
                .message
                .contains("2 fields; the header has 3")
        );
    }

    #[test]
    fn csv_header_problems_are_file_problems() {
        for (text, want) in [
            ("category,q\nx,y\n", "no `name` or `id` column"),
            ("name,id\na,b\n", "both a `name` and an `id`"),
            ("name,q,q\na,b,c\n", "column 3 repeats"),
            ("name,,q\na,b,c\n", "column 2 has no name"),
            ("name,assert\na,b\n", "cannot carry assert"),
            ("", "the file is empty"),
        ] {
            let e = read(Format::Csv, "d", text.as_bytes()).unwrap_err();
            assert_eq!(e.line, 1);
            assert!(e.message.contains(want), "{text:?}: {e}");
        }
    }
}
