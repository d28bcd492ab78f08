//! What `init` adds to the crate's `Cargo.toml` and `.config/nextest.toml`, as text in and text out:
//! `toml_edit` keeps every byte the user wrote (comments, order, spacing) and adds only the new keys
//! and tables.

use toml_edit::{ArrayOfTables, DocumentMut, InlineTable, Item, Table, TableLike, value};

use super::template::{MAX_THREADS, NEXTEST_COMMENT, TEST_GROUP};

/// Where the prompt-tester dependency comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// crates.io, at this version requirement (`"0.1"`).
    Version(String),
    /// A checkout at this path (`{ path = "..." }`).
    Path(String),
}

/// Why a file cannot take the additions: said as "FILE: why", so the refusal names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict(pub String);

/// What the manifest gained, for the lines `init` prints.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Added {
    /// The dev-dependencies added, in order.
    pub dependencies: Vec<&'static str>,
}

/// The manifest `text` with the test target `target` (at `path`, `harness = false`) and the
/// dependencies the template needs that it lacks: `prompt-tester` from `source` and `anyhow`, as
/// dev-dependencies. A dependency the crate already has (normal or dev) is left as it is.
pub fn edit_manifest(
    text: &str,
    target: &str,
    path: &str,
    source: &Source,
) -> Result<(String, Added), Conflict> {
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e| Conflict(format!("Cargo.toml is not valid TOML: {e}")))?;
    if doc.get("package").is_none() {
        return Err(Conflict(
            "Cargo.toml has no [package]: run `cargo prompt-tester init` in the package that has the \
             prompts (or name its manifest with --manifest-path), not at a workspace's root"
                .into(),
        ));
    }
    if let Some(tests) = doc.get("test").and_then(Item::as_array_of_tables)
        && tests
            .iter()
            .any(|t| t.get("name").and_then(Item::as_str) == Some(target))
    {
        return Err(Conflict(format!(
            "Cargo.toml already has a test target named `{target}` ([[test]] name = \"{target}\")"
        )));
    }

    let mut added = Added::default();
    let has = |doc: &DocumentMut, name: &str| {
        ["dependencies", "dev-dependencies"].iter().any(|table| {
            doc.get(table)
                .and_then(Item::as_table_like)
                .is_some_and(|t| t.contains_key(name))
        })
    };
    let mut wanted: Vec<(&'static str, Item)> = Vec::new();
    if !has(&doc, "prompt-tester") {
        let item = match source {
            Source::Version(v) => value(v.as_str()),
            Source::Path(p) => {
                let mut inline = InlineTable::new();
                inline.insert("path", p.as_str().into());
                value(inline)
            }
        };
        wanted.push(("prompt-tester", item));
    }
    if !has(&doc, "anyhow") {
        wanted.push(("anyhow", value("1")));
    }
    if !wanted.is_empty() {
        let dev = doc
            .entry("dev-dependencies")
            .or_insert_with(|| Item::Table(Table::new()));
        let Some(dev) = dev.as_table_like_mut() else {
            return Err(Conflict(
                "Cargo.toml: `dev-dependencies` is not a table".into(),
            ));
        };
        for (name, item) in wanted {
            dev.insert(name, item);
            added.dependencies.push(name);
        }
    }

    let mut test = Table::new();
    test.insert("name", value(target));
    test.insert("path", value(path));
    test.insert("harness", value(false));
    if !push_table(doc.as_table_mut(), "test", test) {
        return Err(Conflict(
            "Cargo.toml: `test` is not an array of tables ([[test]])".into(),
        ));
    }
    Ok((doc.to_string(), added))
}

/// `.config/nextest.toml` (`existing`, when there is one) with the test group that caps how many of
/// target `target`'s processes run at once, and the override that puts the target in it.
pub fn edit_nextest(existing: Option<&str>, target: &str) -> Result<String, Conflict> {
    let file = ".config/nextest.toml";
    let mut doc: DocumentMut = match existing {
        Some(text) => text
            .parse()
            .map_err(|e| Conflict(format!("{file} is not valid TOML: {e}")))?,
        None => DocumentMut::new(),
    };
    let groups = doc
        .entry("test-groups")
        .or_insert_with(|| Item::Table(Table::new()));
    let Some(groups) = groups.as_table_like_mut() else {
        return Err(Conflict(format!("{file}: `test-groups` is not a table")));
    };
    if groups.contains_key(TEST_GROUP) {
        return Err(Conflict(format!(
            "{file} already has the test group `{TEST_GROUP}` ([test-groups])"
        )));
    }
    let mut group = InlineTable::new();
    group.insert("max-threads", MAX_THREADS.into());
    groups.insert(TEST_GROUP, value(group));
    if existing.is_none()
        && let Some(table) = doc.get_mut("test-groups").and_then(Item::as_table_mut)
    {
        table.decor_mut().set_prefix(NEXTEST_COMMENT);
    }

    let mut override_ = Table::new();
    override_.insert("filter", value(format!("binary({target})")));
    override_.insert("test-group", value(TEST_GROUP));
    let profile = doc
        .entry("profile")
        .or_insert_with(|| Item::Table(implicit()));
    let Some(profile) = profile.as_table_like_mut() else {
        return Err(Conflict(format!("{file}: `profile` is not a table")));
    };
    let default = profile
        .entry("default")
        .or_insert_with(|| Item::Table(implicit()));
    let Some(default) = default.as_table_like_mut() else {
        return Err(Conflict(format!(
            "{file}: `profile.default` is not a table"
        )));
    };
    if !push_table(default, "overrides", override_) {
        return Err(Conflict(format!(
            "{file}: `profile.default.overrides` is not an array of tables ([[profile.default.overrides]])"
        )));
    }
    Ok(doc.to_string())
}

/// Appends `table` to the array of tables `key` of `parent`, made when there is none; `false` when
/// `key` holds something else.
fn push_table(parent: &mut dyn TableLike, key: &str, table: Table) -> bool {
    match parent.get_mut(key) {
        None => {
            let mut tables = ArrayOfTables::new();
            tables.push(table);
            parent.insert(key, Item::ArrayOfTables(tables));
        }
        Some(Item::ArrayOfTables(tables)) => tables.push(table),
        Some(_) => return false,
    }
    true
}

/// A table that is only a path to the ones inside it (no `[profile]` header of its own).
fn implicit() -> Table {
    let mut table = Table::new();
    table.set_implicit(true);
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERSION: fn() -> Source = || Source::Version("0.1".into());

    /// A manifest written by hand: comments, odd spacing, keys out of order, a dev-dependency.
    const HAND_WRITTEN: &str = "\
# my crate
[package]
name    = \"mine\"   # the name
version = \"0.3.0\"
edition = \"2024\"

[dependencies]
serde = { version = \"1\", features = [\"derive\"] }  # serde

[dev-dependencies]
# for the tests
insta = \"1\"

[features]
default = []
";

    #[test]
    fn a_hand_written_manifest_keeps_every_byte_and_gains_only_the_additions() {
        let (edited, added) =
            edit_manifest(HAND_WRITTEN, "prompts", "prompt-tests/main.rs", &VERSION()).unwrap();
        assert_eq!(added.dependencies, ["prompt-tester", "anyhow"]);
        let expected = HAND_WRITTEN.replace(
            "insta = \"1\"\n",
            "insta = \"1\"\nprompt-tester = \"0.1\"\nanyhow = \"1\"\n",
        ) + "\n[[test]]\nname = \"prompts\"\npath = \"prompt-tests/main.rs\"\nharness = false\n";
        assert_eq!(edited, expected);
    }

    #[test]
    fn cargo_init_s_manifest_gains_the_dev_dependencies_table_and_the_target() {
        let new = "[package]\nname = \"newcomer\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\n";
        let (edited, _) = edit_manifest(
            new,
            "evals",
            "prompt-tests/main.rs",
            &Source::Path("/src/prompt-tester".into()),
        )
        .unwrap();
        assert_eq!(
            edited,
            format!(
                "{new}\n[dev-dependencies]\nprompt-tester = {{ path = \"/src/prompt-tester\" }}\nanyhow = \"1\"\n\n\
                 [[test]]\nname = \"evals\"\npath = \"prompt-tests/main.rs\"\nharness = false\n"
            )
        );
    }

    #[test]
    fn dependencies_the_crate_has_are_left_as_they_are() {
        let text = "[package]\nname = \"a\"\n\n[dependencies]\nanyhow = \"1.0.80\"\n\n\
                    [dev-dependencies]\nprompt-tester = { path = \"../pt\" }\n\n[[test]]\nname = \"unit\"\npath = \"t.rs\"\n";
        let (edited, added) = edit_manifest(text, "prompts", "p.rs", &VERSION()).unwrap();
        assert!(added.dependencies.is_empty());
        assert_eq!(
            edited,
            format!("{text}\n[[test]]\nname = \"prompts\"\npath = \"p.rs\"\nharness = false\n")
        );
    }

    #[test]
    fn a_target_of_that_name_or_a_workspace_root_is_refused() {
        let text = "[package]\nname = \"a\"\n[[test]]\nname = \"prompts\"\npath = \"x.rs\"\n";
        assert_eq!(
            edit_manifest(text, "prompts", "p.rs", &VERSION()).unwrap_err(),
            Conflict(
                "Cargo.toml already has a test target named `prompts` ([[test]] name = \"prompts\")"
                    .into()
            )
        );
        let workspace = "[workspace]\nmembers = [\"a\"]\n";
        let refused = edit_manifest(workspace, "prompts", "p.rs", &VERSION()).unwrap_err();
        assert!(
            refused.0.starts_with("Cargo.toml has no [package]"),
            "{refused:?}"
        );
    }

    #[test]
    fn a_key_that_should_be_an_array_of_tables_and_is_not_is_refused() {
        let text = "test = 1\n[package]\nname = \"a\"\n";
        assert_eq!(
            edit_manifest(text, "prompts", "p.rs", &VERSION()).unwrap_err(),
            Conflict("Cargo.toml: `test` is not an array of tables ([[test]])".into())
        );
        let nextest = "[profile.default]\noverrides = \"x\"\n";
        assert_eq!(
            edit_nextest(Some(nextest), "prompts").unwrap_err().0,
            ".config/nextest.toml: `profile.default.overrides` is not an array of tables \
             ([[profile.default.overrides]])"
        );
    }

    #[test]
    fn a_new_nextest_file_holds_the_group_and_its_override() {
        assert_eq!(
            edit_nextest(None, "evals").unwrap(),
            format!(
                "{NEXTEST_COMMENT}[test-groups]\nprompt-tests = {{ max-threads = 4 }}\n\n\
                 [[profile.default.overrides]]\nfilter = \"binary(evals)\"\ntest-group = \"prompt-tests\"\n"
            )
        );
    }

    #[test]
    fn an_existing_nextest_file_keeps_its_bytes_and_gains_the_group() {
        let text = "# mine\n[profile.default]\nretries = 2   # flaky network\n\n[test-groups]\nserial = { max-threads = 1 }\n";
        let edited = edit_nextest(Some(text), "prompts").unwrap();
        assert_eq!(
            edited,
            "# mine\n[profile.default]\nretries = 2   # flaky network\n\n[[profile.default.overrides]]\n\
             filter = \"binary(prompts)\"\ntest-group = \"prompt-tests\"\n\n[test-groups]\nserial = { max-threads = 1 }\n\
             prompt-tests = { max-threads = 4 }\n"
        );
        let again = edit_nextest(Some(&edited), "prompts").unwrap_err();
        assert_eq!(
            again.0,
            ".config/nextest.toml already has the test group `prompt-tests` ([test-groups])"
        );
    }
}
