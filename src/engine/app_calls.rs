//! The recording endpoint as the engine keeps it: where it listens and the samples given a URL, by
//! token (what each sample's calls through it left is in its state, `state.rs`). The endpoint itself
//! (`crate::endpoint`) serves them; the engine never names it.

use std::collections::HashMap;
use std::sync::{Mutex, Weak};

use super::RunScope;

/// The samples whose URLs were given out, by token: a sample's entry goes when its scope does.
pub(crate) type Registry = Mutex<HashMap<String, Weak<RunScope>>>;

/// The recording endpoint once it listens: where, the run's secret (the first segment of every
/// path), and the samples given a URL. Its accept loop holds the samples weakly: it stops when the
/// engine, which keeps this, goes.
#[cfg(feature = "endpoint")]
pub(crate) struct Listening {
    /// `http://127.0.0.1:PORT`.
    pub origin: String,
    /// The run's secret.
    pub secret: String,
    /// The samples given a URL, by token.
    pub samples: std::sync::Arc<Registry>,
}
