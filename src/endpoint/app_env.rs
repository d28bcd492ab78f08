//! `app_env`: an application whose client reads its base URL from the environment
//! (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`) is tested without glue.
//!
//! A process cannot safely change its own environment once threads may exist (`set_var` is `unsafe`
//! and this crate forbids it), so when an `app_env` test is selected the test binary starts itself
//! again with the variables set: they point at a process-wide path of the recording endpoint, on a
//! port chosen before the start. That path stands for whichever `app_env` sample is running, so those
//! samples run one at a time; under nextest (one process per trial) this costs nothing.

use std::ffi::OsString;
use std::net::TcpListener;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use crate::config::{APP_ENV, app_env_was};
use crate::engine::RunScope;
use crate::model::BUILT_IN;

/// The sample part of the variables' URLs: sample tokens are hex, so it names no sample.
const TOKEN: &str = "app";

/// The endpoint's listener and secret, bound by the started-again binary before its trials.
static PRESET: Mutex<Option<(TcpListener, String)>> = Mutex::new(None);

/// The samples of `app_env` tests, one at a time: the variables name no sample.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Why `app_env` could not be set up, worded for the user (the harness prints it as its error).
fn restart_failed(error: std::io::Error) -> String {
    format!("could not start the test binary again with the base-URL variables set: {error}")
}

/// The variables to set, each with the URL that stands for its provider.
fn variables(origin: &str, secret: &str) -> Vec<(&'static str, String)> {
    BUILT_IN
        .iter()
        .map(|p| {
            let url = super::route::base_url(origin, secret, TOKEN, p.name, p.wire);
            (p.base_url_env, url)
        })
        .collect()
}

/// In the binary as started by the user, with an `app_env` test among the selected trials: starts it
/// again with the variables set and returns its exit code (on Unix the process is replaced and this
/// returns only on failure). In the started-again binary: binds the endpoint's port and returns
/// `None`, the trials to run here.
pub(crate) fn restart_or_bind(argv: &[String]) -> Result<Option<ExitCode>, String> {
    if let Some(marker) = std::env::var_os(APP_ENV) {
        bind(&marker.to_string_lossy())?;
        return Ok(None);
    }
    // A free port now, bound again by the started binary: a listening socket does not survive the
    // start without unsafe code.
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(restart_failed)?
        .port();
    let secret = super::serve::random_hex(16);
    let origin = format!("http://127.0.0.1:{port}");
    let exe = std::env::current_exe().map_err(restart_failed)?;
    let mut command = std::process::Command::new(exe);
    command.args(argv.iter().skip(1));
    command.env(APP_ENV, format!("{port}/{secret}"));
    for (name, url) in variables(&origin, &secret) {
        if let Some(was) = std::env::var_os(name) {
            command.env(app_env_was(name), was);
        }
        command.env(name, url);
    }
    run(command)
}

#[cfg(unix)]
fn run(mut command: std::process::Command) -> Result<Option<ExitCode>, String> {
    use std::os::unix::process::CommandExt;
    // `exec` keeps the process id: nextest and a terminal see the same process.
    Err(restart_failed(command.exec()))
}

#[cfg(not(unix))]
fn run(mut command: std::process::Command) -> Result<Option<ExitCode>, String> {
    let status = command.status().map_err(restart_failed)?;
    let code = status.code().unwrap_or(101).clamp(0, 255) as u8;
    Ok(Some(ExitCode::from(code)))
}

fn bind(marker: &str) -> Result<(), String> {
    let wrong = || {
        format!(
            "{APP_ENV}={marker:?} is not the harness's `PORT/SECRET`: unset it (the harness sets it \
             on the test binary it starts again)"
        )
    };
    let (port, secret) = marker.split_once('/').ok_or_else(wrong)?;
    let port: u16 = port.parse().map_err(|_| wrong())?;
    if secret.is_empty() || !secret.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(wrong());
    }
    let listener = TcpListener::bind(("127.0.0.1", port))
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|error| {
            format!(
                "could not listen on 127.0.0.1:{port}, chosen for the base-URL variables: {error} \
                 (another process took the port in the meantime: run the tests again)"
            )
        })?;
    *PRESET.lock().unwrap_or_else(|e| e.into_inner()) = Some((listener, secret.to_string()));
    Ok(())
}

/// The listener and secret bound for `app_env`, taken by the endpoint when it starts.
pub(super) fn take_preset() -> Option<(TcpListener, String)> {
    PRESET.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// An `app_env` sample's hold on the variables' URLs: while it lives, they stand for its sample.
pub(crate) struct Holding {
    registry: Arc<crate::engine::app_calls::Registry>,
    _turn: tokio::sync::MutexGuard<'static, ()>,
}

impl Drop for Holding {
    fn drop(&mut self) {
        self.registry
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(TOKEN);
    }
}

/// Waits for the other `app_env` samples, then points the variables' URLs at `scope`'s sample. An
/// error when the binary was not started again with them (a harness run without `main()`).
pub(crate) async fn hold(scope: &Arc<RunScope>) -> Result<Holding, String> {
    let turn = ONE_AT_A_TIME.lock().await;
    let server = scope.engine().listening(super::serve::start);
    if std::env::var_os(APP_ENV).is_none() || !server_is_preset(server) {
        return Err(format!(
            "test {}: `app_env` points {} at the recording endpoint in a test binary the harness \
             starts again; this one was not (run it through `prompt_tester::main()`, or use \
             `run.base_url(..)` without `app_env`)",
            scope.identity().test,
            names()
        ));
    }
    server
        .samples
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(TOKEN.to_string(), Arc::downgrade(scope));
    Ok(Holding {
        registry: server.samples.clone(),
        _turn: turn,
    })
}

fn server_is_preset(server: &crate::engine::app_calls::Listening) -> bool {
    std::env::var_os(APP_ENV)
        .map(OsString::into_string)
        .and_then(Result::ok)
        .and_then(|m| m.split_once('/').map(|(_, s)| s.to_string()))
        .is_some_and(|secret| secret == server.secret)
}

/// Why a request for sample `token` found none.
pub(super) fn unknown_sample(token: &str) -> String {
    match token == TOKEN {
        true => format!(
            "no `app_env` test's sample is running: {} point at the recording endpoint for the \
             samples of `app_env` tests alone; a test without `app_env` builds its client with \
             `run.base_url(..)`",
            names()
        ),
        false => "no sample has this URL: it ended, or the URL was given out in another run".into(),
    }
}

/// The variables, as a message names them.
pub(crate) fn names() -> String {
    let names: Vec<String> = BUILT_IN
        .iter()
        .map(|p| format!("`{}`", p.base_url_env))
        .collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_built_in_variable_points_at_its_provider_under_the_shared_token() {
        let vars = variables("http://127.0.0.1:9", "abc");
        let url = |name: &str| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, u)| u.clone())
        };
        assert_eq!(
            url("OPENAI_BASE_URL").as_deref(),
            Some("http://127.0.0.1:9/abc/app/openai/v1")
        );
        assert_eq!(
            url("ANTHROPIC_BASE_URL").as_deref(),
            Some("http://127.0.0.1:9/abc/app/anthropic")
        );
        assert_eq!(
            url("GOOGLE_GEMINI_BASE_URL").as_deref(),
            Some("http://127.0.0.1:9/abc/app/google")
        );
    }

    #[test]
    fn a_marker_the_harness_did_not_write_is_refused_with_its_value() {
        for marker in ["", "8080", "x/abc", "8080/", "8080/not-hex"] {
            let error = bind(marker).expect_err(marker);
            assert!(error.contains(&format!("{marker:?}")), "{error}");
            assert!(error.contains("unset it"), "{error}");
        }
    }
}
