//! A stdio server's process: the environment it gets, and the process group it runs in, so that
//! ending the server ends what it started too (a server started through `sh`, `npx` or `uv` is often a
//! grandchild of the harness).

use std::ffi::OsStr;

use super::Stdio;
use crate::defaults::MCP_BASE_ENV;

/// The command that starts a stdio server: `command args`, with only [`MCP_BASE_ENV`] and the
/// variables named in `inherit` from this process's environment or the crate's `.env` (the harness's
/// holds the provider keys), then `env`; in a process group of its own on Unix.
pub(super) fn command(server: &Stdio) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(&server.command);
    cmd.args(&server.args).env_clear();
    for name in MCP_BASE_ENV
        .iter()
        .copied()
        .chain(server.inherit.iter().map(String::as_str))
    {
        if let Some(value) = crate::config::var_os(name) {
            cmd.env(name, value);
        }
    }
    cmd.envs(
        server
            .env
            .iter()
            .map(|(k, v)| (OsStr::new(k), OsStr::new(v))),
    );
    if let Some(dir) = &server.cwd {
        cmd.current_dir(dir);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    cmd
}

#[cfg(unix)]
pub(super) use unix::Group;

#[cfg(unix)]
mod unix {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;

    use crate::defaults::MCP_STOP_GRACE;

    /// The process group a stdio server leads. Ended with [`Group::end`] once the server has been
    /// stopped; dropped without that (a run cancelled midway), what is left of it is killed at once.
    pub(in crate::mcp) struct Group {
        pgid: Pid,
        ended: bool,
    }

    impl Group {
        /// The group of the server whose process id is `leader` (its own group, see [`super::command`]).
        pub(in crate::mcp) fn led_by(leader: Option<u32>) -> Option<Self> {
            let pid = i32::try_from(leader?).ok()?;
            // 0 and 1 would signal the harness's own group or every process we may signal.
            (pid > 1).then(|| Self {
                pgid: Pid::from_raw(pid),
                ended: false,
            })
        }

        /// SIGTERM to every process left in the group, SIGKILL to those still there after
        /// [`MCP_STOP_GRACE`].
        pub(in crate::mcp) async fn end(mut self) {
            self.ended = true;
            if killpg(self.pgid, Signal::SIGTERM).is_err() {
                return; // no process left
            }
            let deadline = tokio::time::Instant::now() + MCP_STOP_GRACE;
            while tokio::time::Instant::now() < deadline {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                if killpg(self.pgid, None).is_err() {
                    return;
                }
            }
            let _ = killpg(self.pgid, Signal::SIGKILL);
        }
    }

    impl Drop for Group {
        fn drop(&mut self) {
            if !self.ended {
                let _ = killpg(self.pgid, Signal::SIGKILL);
            }
        }
    }
}

/// Without process groups (Windows) the server alone is stopped, by the SDK.
#[cfg(not(unix))]
pub(super) struct Group;

#[cfg(not(unix))]
impl Group {
    pub(super) fn led_by(_leader: Option<u32>) -> Option<Self> {
        None
    }

    pub(super) async fn end(self) {}
}
