//! The files under the suite roots, walked once per run: the suites, the calibration sets and the
//! labels beside them are all looked for in one walk, which lists the cassette folder (most often under
//! `prompt-tests/`) for the cassette store too.

use std::path::{Path, PathBuf};

use super::{SUFFIXES, SuiteFile};
use crate::config::Config;

/// Every file under the suite roots (hidden folders and `target` left out), walked once per run and
/// shared by what looks in them for suites, calibration sets and labels: a root holds the cassette
/// folder too, and each walk listed it again.
#[derive(Debug, Clone, Default)]
pub struct Walked {
    /// Each root that is a directory, with the files under it.
    roots: Vec<(PathBuf, Vec<PathBuf>)>,
    /// The failing trials of roots that do not exist (the default `prompt-tests/` may be absent: a
    /// crate without suites).
    problems: Vec<(String, String)>,
}

impl Walked {
    /// The suite roots of `config`, walked.
    pub fn of(config: &Config) -> Self {
        let mut walked = Self::default();
        let default_root = crate::defaults::suite_root(&config.root);
        for root in &config.suite_roots {
            if !root.is_dir() {
                if *root != default_root {
                    let shown = crate::engine::display_path(root, &config.root);
                    walked.problems.push((
                        format!("suite_roots::{}", shown.replace(['/', '\\'], "::")),
                        format!(
                            "the suite root `{shown}` in suite_roots of {} is not a directory; create it or \
                             correct suite_roots",
                            crate::config::CONFIG_FILE
                        ),
                    ));
                }
                continue;
            }
            let mut found = Vec::new();
            walk(root, &mut found);
            walked.roots.push((root.clone(), found));
        }
        walked
    }

    /// The files directly in `dir` when the walk listed it (a folder under a root, in no hidden folder
    /// nor `target`): the cassette folder, most often.
    pub fn files_in(&self, dir: &Path) -> Option<Vec<PathBuf>> {
        let (_, found) = self.roots.iter().find(|(root, _)| {
            dir.strip_prefix(root).is_ok_and(|below| {
                below.components().all(|c| {
                    let name = c.as_os_str().to_string_lossy();
                    matches!(c, std::path::Component::Normal(_))
                        && !name.starts_with('.')
                        && name != "target"
                })
            })
        })?;
        Some(
            found
                .iter()
                .filter(|p| p.parent() == Some(dir))
                .cloned()
                .collect(),
        )
    }

    /// Suite files, sorted by path, and the failing trials of roots that do not exist.
    pub fn suites(&self, config: &Config) -> (Vec<SuiteFile>, Vec<(String, String)>) {
        (self.ending_in(config, SUFFIXES), self.problems.clone())
    }

    /// The files ending in one of `suffixes` (suites, calibration sets), sorted by path, each named by
    /// its path under its root without the suffix.
    pub(crate) fn ending_in(&self, config: &Config, suffixes: &[&str]) -> Vec<SuiteFile> {
        let mut files = Vec::new();
        for (root, found) in &self.roots {
            for path in found {
                let Ok(relative) = path.strip_prefix(root) else {
                    continue;
                };
                let relative = relative.to_string_lossy().replace('\\', "/");
                let Some(stem) = suffixes.iter().find_map(|s| relative.strip_suffix(s)) else {
                    continue;
                };
                files.push(SuiteFile {
                    name: stem.replace('/', "::"),
                    display: crate::engine::display_path(path, &config.root),
                    path: path.clone(),
                });
            }
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        files.dedup_by(|a, b| a.path == b.path);
        files
    }
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if path.is_dir() {
            walk(&path, found);
        } else {
            found.push(path);
        }
    }
}
