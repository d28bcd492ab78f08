//! What a run says about recordings waiting for review: what is pending now, the summary's last
//! line, and why a prune refuses (the HTML report's table of them is `report::pending`'s).

use crate::cassette::CassetteError;
use crate::cassette::CassetteStore;
use crate::cassette::pending::PendingFile;

/// What is pending review in the store's pending folder now (this run's and earlier runs').
pub fn on_disk(store: &CassetteStore) -> Result<Vec<PendingFile>, CassetteError> {
    store.pending()
}

/// Why a prune must not run while recordings wait for review (it would drop the recordings they
/// replace, and a reject could no longer keep them).
pub fn refusal(pending: &Result<Vec<PendingFile>, CassetteError>) -> Option<String> {
    match pending {
        Ok(files) if !files.is_empty() => Some(format!(
            "recordings are pending review in {} file(s); accept or reject them first: {}",
            files.len(),
            crate::commands::REVIEW
        )),
        Ok(_) => None,
        Err(e) => Some(format!("the pending recordings cannot be read ({e})")),
    }
}

/// The summary's last line when recordings are pending review: how many tests, and the command.
pub fn line(files: &[PendingFile]) -> Option<String> {
    let samples: usize = files.iter().map(|f| f.samples.len()).sum();
    if samples == 0 {
        return None;
    }
    let tests: std::collections::BTreeSet<&str> = files
        .iter()
        .flat_map(|f| f.samples.iter().map(|s| s.id.test.as_str()))
        .collect();
    Some(format!(
        "{} test(s) have pending recordings ({samples} sample(s)): review them with `{}`",
        tests.len(),
        crate::commands::REVIEW
    ))
}
