//! A table of text the reports show beside the trials (the model matrix, a baseline comparison).

use serde::Serialize;

/// A table the page shows above the trials (the model matrix, a baseline comparison), when it exists.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    /// The heading.
    pub title: String,
    /// Column headings.
    pub columns: Vec<String>,
    /// Rows of cells, as text.
    pub rows: Vec<Vec<String>>,
}
