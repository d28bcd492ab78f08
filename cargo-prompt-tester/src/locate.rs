//! Where the crate is, and so its cassettes and pending recordings: the crate root cargo would use,
//! then its `prompt-tester.toml` as the harness reads it (the library's `Layout`).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use prompt_tester::_cargo_prompt_tester_support::Layout;

/// The crate worked on, and where its recordings are.
#[derive(Debug)]
pub struct Place {
    /// The current folder, which paths are shown relative to.
    pub cwd: PathBuf,
    /// The cassette and pending folders.
    pub layout: Layout,
}

impl Place {
    /// The crate of `manifest_path` (else the one the current folder is in); pending recordings in
    /// `pending_dir` (relative to the current folder) when given.
    pub fn find(manifest_path: Option<&Path>, pending_dir: Option<&Path>) -> anyhow::Result<Self> {
        let cwd = std::env::current_dir().context("the current folder")?;
        let root = crate_root(manifest_path, &cwd)?;
        // A folder named on the command line is the user's, relative to where they are; the variable
        // is the harness's, which reads it in the crate root (where cargo runs test binaries).
        let pending_dir = pending_dir.map(|dir| cwd.join(dir));
        let layout = Layout::of(&root, pending_dir)
            .with_context(|| format!("the configuration of the crate at {}", root.display()))?;
        Ok(Self { cwd, layout })
    }

    /// `path` as the user reads it best: relative to the current folder when it is inside it.
    pub fn shown(&self, path: &Path) -> String {
        path.strip_prefix(&self.cwd)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

/// The crate root: the folder of `manifest_path`, else of the nearest `Cargo.toml` at or above `cwd`;
/// when that is a virtual workspace's manifest (no `[package]`), `cwd` itself, as no crate is named.
pub fn crate_root(manifest_path: Option<&Path>, cwd: &Path) -> anyhow::Result<PathBuf> {
    if let Some(path) = manifest_path {
        let path = cwd.join(path);
        if !path.is_file() {
            bail!(
                "--manifest-path {}: no such file; name the crate's Cargo.toml",
                path.display()
            );
        }
        return Ok(path
            .parent()
            .map_or_else(|| cwd.to_path_buf(), Path::to_path_buf));
    }
    let Some(manifest) = cwd
        .ancestors()
        .map(|dir| dir.join("Cargo.toml"))
        .find(|m| m.is_file())
    else {
        bail!(
            "no Cargo.toml in {} or above: run `cargo prompt-tester` in the crate that has the prompt \
             tests, or name its manifest with --manifest-path",
            cwd.display()
        );
    };
    if is_virtual(&manifest)? {
        return Ok(cwd.to_path_buf());
    }
    Ok(manifest
        .parent()
        .map_or_else(|| cwd.to_path_buf(), Path::to_path_buf))
}

/// Whether the manifest is a workspace's alone: `[workspace]` and no `[package]`.
fn is_virtual(manifest: &Path) -> anyhow::Result<bool> {
    let text = std::fs::read_to_string(manifest)
        .with_context(|| format!("reading {}", manifest.display()))?;
    let table: toml::Table = text
        .parse()
        .with_context(|| format!("{} is not valid TOML", manifest.display()))?;
    Ok(!table.contains_key("package") && table.contains_key("workspace"))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Dir(PathBuf);

    impl Dir {
        fn new(name: &str) -> Self {
            let dir =
                std::env::temp_dir().join(format!("cpt-locate-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join("a/b")).unwrap();
            Dir(dir)
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// The manifest of a package `a`.
    const PACKAGE: &str = "[package]\nname = \"a\"\n";

    /// The root found from `a/b` (relative to the tree) in a tree whose one manifest is `manifest`,
    /// holding `text`.
    fn root_from_a_b(name: &str, manifest: &str, text: &str) -> PathBuf {
        let dir = Dir::new(name);
        std::fs::write(dir.0.join(manifest), text).unwrap();
        let root = crate_root(None, &dir.0.join("a/b")).unwrap();
        root.strip_prefix(&dir.0).unwrap().to_path_buf()
    }

    #[test]
    fn the_nearest_package_manifest_above_is_the_root() {
        assert_eq!(
            root_from_a_b("package", "a/Cargo.toml", PACKAGE),
            Path::new("a")
        );
    }

    #[test]
    fn a_virtual_workspace_root_leaves_the_current_folder() {
        let workspace = "[workspace]\nmembers = [\"a\"]\n";
        assert_eq!(
            root_from_a_b("virtual", "Cargo.toml", workspace),
            Path::new("a/b")
        );
    }

    #[test]
    fn the_manifest_path_names_the_root_and_must_exist() {
        let dir = Dir::new("manifest");
        std::fs::write(dir.0.join("a/Cargo.toml"), PACKAGE).unwrap();
        let root = crate_root(Some(Path::new("a/Cargo.toml")), &dir.0).unwrap();
        assert_eq!(root, dir.0.join("a"));
        let err = crate_root(Some(Path::new("nope/Cargo.toml")), &dir.0).unwrap_err();
        assert!(
            err.to_string().contains("nope/Cargo.toml: no such file"),
            "{err}"
        );
    }

    #[test]
    fn a_broken_manifest_is_named() {
        let dir = Dir::new("broken");
        std::fs::write(dir.0.join("Cargo.toml"), "[package\n").unwrap();
        let err = crate_root(None, &dir.0).unwrap_err();
        assert!(
            format!("{err:#}").contains("Cargo.toml is not valid TOML"),
            "{err:#}"
        );
    }
}
