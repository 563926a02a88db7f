//! Side by side with BOINC 7.20.5 under the host's conditions (issue "A volunteer's
//! controls, honoured", acceptance): the real client and `boinc-rs run`, attached to one
//! `boinc-rs project-server` of long jobs, are given each condition in turn through the
//! same files and RPCs both read (global_prefs_override.xml and
//! `read_global_prefs_override`, cc_config.xml and `read_cc_config`, a program named by
//! `<exclusive_app>` started and stopped, synthetic input on an X display both watch,
//! the run modes): after each, within a bounded wait, both must report the same suspend
//! reasons in `get_cc_status` (computing, GPU, network) and compute the same number of
//! tasks. The table of what each showed is printed for the closing note.
//!
//! Compiled as ignored, with the reason, where the real client is not installed (see
//! build.rs): `apt-get install boinc-client`, as .ci/run does. The user-activity
//! condition needs Xvfb and xdotool too, and is left out (said in the table) without
//! them.

use crate::support;

use super::project_server_real_client::{PASSWORD, RealClient, attach, boinccmd};
use boinc_core::protocol::gui_rpc::{read_cc_status, read_tasks};
use boinc_gui_rpc::GuiRpcClient;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::live_processes::cpu_seconds_in;
use support::project_server::ProjectServerProcess;
use support::service::start_service_with;
use support::wait::poll_for;
use support::xvfb::Xvfb;

/// Long enough that no job ends while the conditions run.
const JOB_SECONDS: &str = "3000";
/// How long both clients may take to download the app and start work.
const WORK_WAIT: Duration = Duration::from_secs(300);
/// How long a condition may take to show in both (BOINC looks at some of them, the
/// exclusive apps and the memory use, every ten seconds).
const CONDITION_WAIT: Duration = Duration::from_secs(40);
/// How long the apps' CPU time is measured, throttled and not.
const THROTTLE_WATCH: Duration = Duration::from_secs(8);
/// The least CPU time per second the apps must get unthrottled for a throttle to be
/// judged.
const MEASURABLE_CPU_RATE: f64 = 0.2;
/// The name of the program the exclusive-app condition runs (under 16 bytes: the
/// kernel's command name keeps 15).
const EXCLUSIVE_APP: &str = "bxrs-exclusive";
/// The preferences both run under, and each condition changes one or two of: nothing
/// suspends them on a busy machine, a buffer that fills them up to the server's cap,
/// a user idle after 6 s without input, frequent checkpoints.
const BASE_PREFS: [(&str, &str); 11] = [
    ("run_if_user_active", "1"),
    ("run_gpu_if_user_active", "0"),
    ("idle_time_to_run", "0.1"),
    ("suspend_cpu_usage", "0"),
    ("cpu_usage_limit", "100"),
    ("max_ncpus_pct", "100"),
    ("ram_max_used_busy_pct", "90"),
    ("ram_max_used_idle_pct", "90"),
    ("work_buf_min_days", "0.5"),
    ("work_buf_additional_days", "0"),
    // The apps checkpoint every 5 s: boinc-rs lets a task it no longer schedules run on
    // to its checkpoint (docs/boinc-comparison.md).
    ("disk_interval", "5"),
];
/// The options both run under (the real client's test set-up's), to which a condition
/// adds.
const BASE_OPTIONS: &str = "<no_info_fetch>1</no_info_fetch>\n\
    <report_results_immediately>1</report_results_immediately>\n";

/// What a client shows: `get_cc_status`'s reasons and the tasks executing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    task: i64,
    gpu: i64,
    network: i64,
    executing: usize,
}

impl std::fmt::Display for Seen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "task {} gpu {} net {}, {} executing",
            self.task, self.gpu, self.network, self.executing
        )
    }
}

/// One client, as the test drives and reads it.
struct Side {
    name: &'static str,
    port: u16,
    dir: PathBuf,
    runtime: tokio::runtime::Runtime,
}

impl Side {
    fn new(name: &'static str, port: u16, dir: &Path) -> Side {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for GUI RPC");
        Side { name, port, dir: dir.to_owned(), runtime }
    }

    /// `get_cc_status` and `get_results` over GUI RPC; `None` when either fails.
    fn seen(&self) -> Option<Seen> {
        self.runtime.block_on(async {
            let mut client =
                GuiRpcClient::connect(&format!("127.0.0.1:{}", self.port)).await.ok()?;
            client.authenticate(PASSWORD).await.ok()?;
            let status = read_cc_status(&client.call("<get_cc_status/>").await.ok()?).ok()?;
            let tasks = read_tasks(&client.call("<get_results/>").await.ok()?).ok()?;
            Some(Seen {
                task: status.task_suspend_reason,
                gpu: status.gpu_suspend_reason,
                network: status.network_suspend_reason,
                executing: tasks.iter().filter(|t| t.running()).count(),
            })
        })
    }

    fn tasks(&self) -> usize {
        let reply = self.runtime.block_on(async {
            let mut client =
                GuiRpcClient::connect(&format!("127.0.0.1:{}", self.port)).await.ok()?;
            client.authenticate(PASSWORD).await.ok()?;
            client.call("<get_results/>").await.ok()
        });
        reply.and_then(|r| read_tasks(&r).ok()).map_or(0, |t| t.len())
    }

    /// The client's event log, as `boinccmd --get_messages` shows it.
    fn messages(&self) -> String {
        let (ok, output) = boinccmd(self.port, &["--get_messages", "0"]);
        assert!(ok, "{}: boinccmd --get_messages failed: {output}", self.name);
        output
    }

    fn cmd(&self, args: &[&str]) {
        let (ok, output) = boinccmd(self.port, args);
        assert!(ok, "{}: boinccmd {args:?} failed: {output}", self.name);
    }

    /// Writes the preferences (the base ones, `changes` replacing or adding elements)
    /// and has the client read them.
    fn prefs(&self, changes: &[(&str, &str)]) {
        let mut prefs: Vec<(&str, &str)> = BASE_PREFS.to_vec();
        for (name, value) in changes {
            match prefs.iter_mut().find(|(n, _)| n == name) {
                Some(entry) => entry.1 = value,
                None => prefs.push((name, value)),
            }
        }
        let body: String =
            prefs.iter().map(|(name, value)| format!("<{name}>{value}</{name}>\n")).collect();
        let text = format!("<global_preferences>\n{body}</global_preferences>\n");
        std::fs::write(self.dir.join("global_prefs_override.xml"), text).expect("the override");
        self.cmd(&["--read_global_prefs_override"]);
    }

    /// Writes cc_config.xml with `options` added to the base ones and has the client
    /// read it.
    fn options(&self, options: &str) {
        write_cc_config(&self.dir, options);
        self.cmd(&["--read_cc_config"]);
    }
}

fn write_cc_config(dir: &Path, options: &str) {
    let text = format!(
        "<cc_config>\n<log_flags>\n<task_debug>1</task_debug>\n<cpu_sched_debug>1</cpu_sched_debug>\n\
         <idle_detection_debug>1</idle_detection_debug>\n</log_flags>\n\
         <options>\n{BASE_OPTIONS}{options}</options>\n</cc_config>\n"
    );
    std::fs::write(dir.join("cc_config.xml"), text).expect("cc_config.xml");
}

/// A program the test starts and stops (a busy loop, the exclusive app), killed when
/// dropped.
struct Program(Child);

impl Program {
    fn busy_loop() -> Program {
        let child = Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .stdin(Stdio::null())
            .spawn()
            .expect("a busy loop starts");
        Program(child)
    }

    /// `sleep`, copied under `name` into `dir`: a program by that name.
    fn named(dir: &Path, name: &str) -> Program {
        let sleep = ["/usr/bin/sleep", "/bin/sleep"]
            .into_iter()
            .find(|p| Path::new(p).is_file())
            .expect("sleep is installed");
        let program = dir.join(name);
        std::fs::copy(sleep, &program).expect("a copy of sleep");
        let child = Command::new(&program)
            .arg("600")
            .stdin(Stdio::null())
            .spawn()
            .expect("the exclusive app starts");
        Program(child)
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The table's rows: the condition, what each client showed, whether they agree.
struct Table {
    rows: Vec<(String, String, String, bool)>,
}

impl Table {
    fn print(&self) -> String {
        let mut text =
            String::from("| condition | BOINC 7.20.5 | boinc-rs | agree |\n|---|---|---|---|\n");
        for (condition, real, ours, agree) in &self.rows {
            let mark = if *agree { "yes" } else { "NO" };
            text.push_str(&format!("| {condition} | {real} | {ours} | {mark} |\n"));
        }
        text
    }
}

/// Waits (bounded) until both clients show what `expected` accepts, twice in a row a
/// second apart (settled), and records the row; what each showed last when it did not.
fn settle(
    table: &mut Table,
    condition: &str,
    sides: &[&Side; 2],
    mut expected: impl FnMut(&Seen) -> bool,
) {
    let started = Instant::now();
    let mut last: [Option<Seen>; 2] = [None, None];
    let mut took: [Option<Duration>; 2] = [None, None];
    let settled = poll_for(CONDITION_WAIT, || {
        let now: Vec<Option<Seen>> = sides.iter().map(|s| s.seen()).collect();
        for i in 0..2 {
            match now[i] {
                Some(seen) if expected(&seen) => {
                    took[i].get_or_insert(started.elapsed());
                }
                _ => took[i] = None,
            }
        }
        let done = took.iter().all(Option::is_some)
            && now == last
            && took
                .iter()
                .all(|t| t.is_some_and(|t| started.elapsed() - t >= Duration::from_secs(1)));
        last = [now[0], now[1]];
        if !done {
            std::thread::sleep(Duration::from_millis(500));
        }
        done.then_some(())
    });
    let show = |i: usize| match (last[i], took[i]) {
        (Some(seen), Some(t)) => format!("{seen} (in {:.0} s)", t.as_secs_f64()),
        (Some(seen), None) => format!("{seen} (not as expected)"),
        (None, _) => "no answer".to_owned(),
    };
    let agree = settled.is_some() && last[0] == last[1];
    table.rows.push((condition.to_owned(), show(0), show(1), agree));
    eprintln!("{condition}: BOINC {} | boinc-rs {}", show(0), show(1));
}

/// The CPU time each client's apps use per second of [`THROTTLE_WATCH`]: neither
/// client shows the throttle's stops in `get_results` (BOINC 7.20.5 keeps its tasks
/// "executing" through them), so the apps' own CPU time is what tells.
fn cpu_rates(sides: &[&Side; 2]) -> [f64; 2] {
    let slots = sides.map(|s| s.dir.join("slots"));
    let before = slots.each_ref().map(|s| cpu_seconds_in(s));
    let started = Instant::now();
    std::thread::sleep(THROTTLE_WATCH);
    let elapsed = started.elapsed().as_secs_f64();
    let after = slots.each_ref().map(|s| cpu_seconds_in(s));
    [0, 1].map(|i| (after[i] - before[i]) / elapsed)
}

/// Measures both clients' apps unthrottled and under `changes` (a CPU usage limit of
/// `limit` percent), and records the row: each throttled rate as a share of its own
/// unthrottled one. They agree when both shares are within a third of the limit
/// (other programs load the machine too, unevenly).
fn throttle_row(table: &mut Table, sides: &[&Side; 2], limit: f64) {
    let full = cpu_rates(sides);
    let value = limit.to_string();
    sides.iter().for_each(|s| s.prefs(&[("cpu_usage_limit", &value)]));
    // A turn of the throttle to begin.
    std::thread::sleep(Duration::from_secs(2));
    let seen: Vec<Option<Seen>> = sides.iter().map(|s| s.seen()).collect();
    let throttled = cpu_rates(sides);
    let share = [0, 1].map(|i| if full[i] > 0.0 { throttled[i] / full[i] } else { 0.0 });
    // A client whose apps hardly ran even unthrottled (the machine busy with other
    // programs) cannot be judged, nor one whose apps got more throttled than
    // unthrottled (the other programs' load fell between the two windows: BOINC runs
    // its apps in SCHED_IDLE, where they get only what nothing else wants). Said in the
    // row, not counted as a difference; a throttle that does nothing (about 100 %) is
    // still judged.
    let steady = |i: usize| throttled[i] <= full[i] * (1.0 + 1.0 / 3.0);
    let measurable = |i: usize| full[i] >= MEASURABLE_CPU_RATE && steady(i);
    let show = |i: usize| {
        let seen = seen[i].map_or("no answer".to_owned(), |s| s.to_string());
        let judged = match (full[i] >= MEASURABLE_CPU_RATE, steady(i)) {
            (false, _) => " (too loaded to judge)",
            (true, false) => " (the load changed while measuring: not judged)",
            (true, true) => "",
        };
        format!(
            "{seen}; apps {:.2} CPU/s, {:.2} unthrottled: {:.0} %{judged}",
            throttled[i],
            full[i],
            share[i] * 100.0
        )
    };
    let near = |i: usize| !measurable(i) || (share[i] * 100.0 - limit).abs() <= limit / 3.0;
    let agree = near(0) && near(1) && seen[0] == seen[1];
    let condition = format!("cpu_usage_limit {limit}");
    table.rows.push((condition.clone(), show(0), show(1), agree));
    eprintln!("{condition}: BOINC {} | boinc-rs {}", show(0), show(1));
}

/// The local hour now (the host's time zone: both clients read it).
fn local_hour() -> u32 {
    let output = Command::new("date").arg("+%H").output().expect("date runs");
    String::from_utf8_lossy(&output.stdout).trim().parse().expect("an hour")
}

#[test]
#[cfg_attr(
    not(peer_boinc),
    ignore = "the real BOINC client is not installed: apt-get install boinc-client"
)]
fn the_same_conditions_suspend_the_same_things_in_boinc_and_boinc_rs() {
    let started = Instant::now();
    // Both watch the same X display, on which nobody else types.
    let xvfb = if cfg!(peer_xvfb) { Some(Xvfb::start()) } else { None };
    let env: Vec<(&str, &str)> = xvfb.iter().map(|x| ("DISPLAY", x.display.as_str())).collect();
    let owned_env: Vec<(String, String)> =
        env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();

    let project =
        ProjectServerProcess::start(&["--job-seconds", JOB_SECONDS, "--request-delay", "1"]);
    let real = RealClient::start_with_env(&env);
    write_cc_config(real.dir.path(), "");
    let real_side = Side::new("BOINC 7.20.5", real.port(), real.dir.path());
    real_side.cmd(&["--read_cc_config"]);
    real_side.prefs(&[]);
    attach(&real, &project);

    let dir = tempfile::tempdir().expect("a data directory");
    std::fs::write(dir.path().join("gui_rpc_auth.cfg"), PASSWORD).expect("password");
    write_cc_config(dir.path(), "");
    let mut service =
        start_service_with(dir.path(), &dir.path().join("service.log"), &[], &owned_env);
    let ours = Side::new("boinc-rs", service.gui_rpc_port(), dir.path());
    ours.prefs(&[]);
    ours.cmd(&["--project_attach", &project.url, "an-account-key"]);

    let sides = [&real_side, &ours];
    for side in sides {
        support::wait::wait_until_or(
            &format!("{} to compute 2 tasks, with more queued", side.name),
            WORK_WAIT,
            || side.seen().is_some_and(|s| s.executing == 2) && side.tasks() >= 4,
            || format!("{:?}\n{}", side.seen(), project.log()),
        );
    }
    let setup = started.elapsed();

    let mut table = Table { rows: Vec::new() };
    let computing = |s: &Seen| s.task == 0 && s.network == 0 && s.executing == 2;
    settle(&mut table, "none (the base preferences)", &sides, computing);
    let apply = |changes: &[(&str, &str)]| sides.iter().for_each(|s| s.prefs(changes));

    // A computing window of an hour that starts an hour from now.
    let hour = local_hour();
    let (from, to) = (((hour + 2) % 24).to_string(), ((hour + 3) % 24).to_string());
    apply(&[("start_hour", &from), ("end_hour", &to)]);
    settle(&mut table, "computing window excluding now", &sides, |s| {
        s.task == 8 && s.executing == 0
    });
    apply(&[]);
    settle(&mut table, "  (window removed)", &sides, computing);

    apply(&[("net_start_hour", &from), ("net_end_hour", &to)]);
    settle(&mut table, "network window excluding now", &sides, |s| {
        s.network == 8 && s.task == 0 && s.executing == 2
    });
    apply(&[]);
    settle(&mut table, "  (window removed)", &sides, computing);

    {
        let _busy = Program::busy_loop();
        apply(&[("suspend_cpu_usage", "5")]);
        settle(&mut table, "suspend_cpu_usage 5, a busy loop running", &sides, |s| {
            s.task == 1024 && s.executing == 0
        });
        apply(&[("suspend_cpu_usage", "0")]);
        settle(&mut table, "suspend_cpu_usage 0, a busy loop running", &sides, computing);
    }

    apply(&[("max_ncpus_pct", "50")]);
    settle(&mut table, "max_ncpus_pct 50 (2 CPUs)", &sides, |s| s.task == 0 && s.executing == 1);
    apply(&[]);
    settle(&mut table, "  (max_ncpus_pct 100)", &sides, computing);

    throttle_row(&mut table, &sides, 50.0);
    apply(&[]);
    settle(&mut table, "  (cpu_usage_limit 100)", &sides, computing);

    apply(&[("ram_max_used_busy_pct", "0.0001"), ("ram_max_used_idle_pct", "0.0001")]);
    settle(&mut table, "RAM limits 0.0001 % busy and idle", &sides, |s| {
        s.task == 0 && s.executing == 0
    });
    apply(&[]);
    settle(&mut table, "  (RAM limits 90 %)", &sides, computing);

    let programs = tempfile::tempdir().expect("a directory for the exclusive app");
    sides
        .iter()
        .for_each(|s| s.options(&format!("<exclusive_app>{EXCLUSIVE_APP}</exclusive_app>\n")));
    {
        let _app = Program::named(programs.path(), EXCLUSIVE_APP);
        settle(&mut table, "exclusive_app running", &sides, |s| s.task == 512 && s.executing == 0);
    }
    settle(&mut table, "  (exclusive_app exited)", &sides, computing);
    sides.iter().for_each(|s| s.options(""));

    for (what, flag, expected) in [
        ("run mode never", "--set_run_mode", (4, 0, 0)),
        ("network mode never", "--set_network_mode", (0, 0, 4)),
        // Without a GPU, BOINC reports no GPU suspension.
        ("GPU mode never (no GPU)", "--set_gpu_mode", (0, 0, 0)),
    ] {
        sides.iter().for_each(|s| s.cmd(&[flag, "never"]));
        settle(&mut table, what, &sides, |s| (s.task, s.gpu, s.network) == expected);
        sides.iter().for_each(|s| s.cmd(&[flag, "auto"]));
        settle(&mut table, "  (mode auto)", &sides, computing);
    }

    match &xvfb {
        Some(xvfb) => {
            apply(&[("run_if_user_active", "0")]);
            let mut moves = 0u32;
            settle(&mut table, "run_if_user_active 0, input on the X display", &sides, |s| {
                moves += 1;
                xvfb.move_pointer(100 + moves % 200, 100);
                s.task == 2 && s.executing == 0
            });
            settle(&mut table, "  (no input for idle_time_to_run, 6 s)", &sides, computing);
            // run_gpu_if_user_active is off, but neither client has a GPU: BOINC's event
            // log says nothing of GPU computation, and boinc-rs's must not either.
            let told: Vec<bool> =
                sides.iter().map(|s| s.messages().contains("Suspending GPU computation")).collect();
            let cell = |told: bool| if told { "GPU suspension told" } else { "none told" };
            table.rows.push((
                "  (event log, no GPU)".into(),
                cell(told[0]).into(),
                cell(told[1]).into(),
                told[0] == told[1],
            ));
            apply(&[]);
        }
        None => table.rows.push((
            "run_if_user_active 0, input on the X display".into(),
            "not run: Xvfb or xdotool missing".into(),
            "not run".into(),
            true,
        )),
    }

    let text = table.print();
    println!(
        "conditions side by side (set-up {:.0} s, whole test {:.0} s):\n{text}",
        setup.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        table.rows.iter().all(|row| row.3),
        "BOINC 7.20.5 and boinc-rs differ:\n{text}\nBOINC's log:\n{}",
        real.log().lines().rev().take(60).collect::<Vec<_>>().join("\n")
    );
}
