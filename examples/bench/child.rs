//! The child: one scenario through the real harness.

use std::process::ExitCode;
use std::time::Instant;

use prompt_tester::Harness;
use serde_json::json;

use crate::judge::JUDGE_TIMES;

/// `--scenario NAME --out FILE -- HARNESS ARGS...`: runs the harness, then writes what it measured.
pub(crate) fn child(args: Vec<String>) -> ExitCode {
    let (Some(name), Some(out)) = (
        args.get(1),
        args.iter()
            .position(|a| a == "--out")
            .and_then(|i| args.get(i + 1)),
    ) else {
        eprintln!("error: --scenario NAME --out FILE -- ARGS...");
        return ExitCode::from(2);
    };
    let harness_args: Vec<String> = match args.iter().position(|a| a == "--") {
        Some(i) => args[i + 1..].to_vec(),
        None => Vec::new(),
    };
    let cpu_before = cpu_ms();
    let started = Instant::now();
    let code =
        Harness::new().run_with_args(std::iter::once(format!("bench-{name}")).chain(harness_args));
    let wall = started.elapsed();
    let measured = json!({
        "scenario": name,
        "harness_wall_ms": wall.as_secs_f64() * 1e3,
        "cpu_ms": cpu_ms().zip(cpu_before).map(|(after, before)| after - before),
        "vm_hwm_kb": vm_hwm_kb(),
        "judge": JUDGE_TIMES.lock().unwrap_or_else(|e| e.into_inner()).take(),
    });
    if let Err(e) = std::fs::write(out, measured.to_string()) {
        eprintln!("error: cannot write {out}: {e}");
        return ExitCode::from(2);
    }
    code
}

/// Peak resident memory of this process, in KiB (Linux).
pub(crate) fn vm_hwm_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// User plus system CPU time of this process (every thread), in milliseconds (Linux).
pub(crate) fn cpu_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name may hold spaces; the fields after it are space-separated.
    let fields: Vec<&str> = stat
        .get(stat.rfind(')')? + 1..)?
        .split_whitespace()
        .collect();
    let ticks = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    // /proc reports clock ticks of USER_HZ, which Linux fixes at 100 for user space.
    Some(ticks * 10.0)
}
