//! The soak test (issue 16, item 2): `boinc-rs run` against the real `boinc-rs
//! project-server` with two apps (the example app, some of whose jobs crash or hang on
//! purpose, and a plain shell program), through seeded random steps: `kill -9` of the
//! service, server outages through `/admin/faults` (500s, resets, hangs, truncated,
//! oversized, not-XML and slow answers), a full data directory (a small tmpfs, when run
//! as root) and wall-clock jumps (libfaketime, when installed). After every step:
//!
//! - no result the project never made is reported, and none twice unless the service
//!   was killed, or the reply mangled on purpose, between the server's taking the
//!   report and the client's writing down the acknowledgement (a window no protocol
//!   closes: the server acknowledges the repeat and counts it once), by the server's
//!   records;
//! - the state file parses;
//! - no output file of an unreported result is gone (on disk, or received by the server);
//! - every scheduler request after a failed one waits at least seed 002's backoff for
//!   the failures in a row, and one after a success at least the request delay;
//! - no RPC backoff reaches further than its policy maximum after the client's now;
//! - no task is started in a tight loop: within one life of the service a task starts
//!   at most as often as the app restart policy's shortest delays allow.
//!
//! At the end the faults stop, the client is told to fetch no more work and finishes:
//! every result the server sent is reported exactly once, none reported as done is
//! invalid at the server (its output missing or empty), and no app is left running.
//!
//! Length and seed come from the environment (docs/soak.md): `BOINC_RS_SOAK_SECONDS`
//! (default 45), `BOINC_RS_SOAK_KILLS` (the fewest kills to reach, default one per 15
//! s and at least 4; the test fails short of them), `BOINC_RS_SOAK_SEED`. The figures
//! are printed as one JSON line starting `soak figures:`.

mod support;

use boinc_core::model::{ClientState, JobState};
use boinc_core::rpc_policy::{RPC_BACKOFF_MAX, RPC_BACKOFF_MIN};
use boinc_core::supervise::RestartPolicy;
use boinc_service::state_store::StateStore;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use support::project_server::{ProjectServerProcess, files_under};
use support::service::{ServiceProcess, signal, start_service_with_env, wait_exit};
use support::wait::holds_within;

/// The longest a killed service takes to be gone, and a stopped one to stop.
const STOP_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest the final drain may take (slow on a loaded machine: hung apps are found
/// after 180 s, transfers may be backed off for minutes).
const DRAIN_TIMEOUT: Duration = Duration::from_secs(900);
/// The server's request delay, seconds.
const REQUEST_DELAY: f64 = 1.0;
/// The longest a client takes from its report's arrival at the server to having the
/// acknowledgement on disk (the reply's way back, its application, the state's write)
/// on a loaded machine, seconds: a kill within it makes the report come again.
const COMMIT_WINDOW: f64 = 5.0;
/// Slack on the pace checks: the arrival times are the server's, the decisions the
/// client's, a few milliseconds apart.
const PACE_SLACK: f64 = 0.25;

/// The shortest hold of a `hang` fault, seconds (shorter than the client's timeout, so
/// the client learns of the failure when the hold ends).
const HANG_SHORTEST: f64 = 2.0;
/// The tmpfs's room beside the app's executable (the client fetches no work when the
/// free space is below a job's disk bound, 1 GB).
const TMPFS_ROOM: u64 = 1536 << 20;
/// The second app: a shell program speaking just enough of BOINC's API (it resolves
/// its link files and writes the finish file), the input upper-cased into the output.
const SHELL_APP: &str = "#!/bin/sh\n\
    resolve() { sed -n 's:.*<soft_link>\\(.*\\)</soft_link>.*:\\1:p' \"$1\"; }\n\
    sleep 1\n\
    tr 'a-z' 'A-Z' < \"$(resolve in)\" > \"$(resolve out)\" || exit 1\n\
    echo 0 > boinc_finish_called\n";

fn env_number<T: std::str::FromStr>(name: &str) -> Option<T> {
    let text = std::env::var(name).ok()?;
    Some(text.trim().parse().unwrap_or_else(|_| panic!("{name}={text:?} is not a number")))
}

fn unix_now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("after 1970").as_secs_f64()
}

fn tail(text: &str, chars: usize) -> String {
    let kept: Vec<char> = text.chars().rev().take(chars).collect();
    kept.into_iter().rev().collect()
}

/// Text without the terminal's colour sequences (the service's log has them).
fn without_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The data directory's home: a small tmpfs of its own when the test may mount one,
/// else a plain temp dir (and the disk-full phase is skipped, loudly).
struct DataHome {
    dir: tempfile::TempDir,
    mounted: bool,
    skipped: Option<String>,
}

impl DataHome {
    fn new(size: u64) -> DataHome {
        let dir = tempfile::tempdir().expect("a temp dir");
        if !nix::unistd::geteuid().is_root() {
            return DataHome {
                dir,
                mounted: false,
                skipped: Some("not root: cannot mount".into()),
            };
        }
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "boinc-rs-soak"])
            .arg(dir.path())
            .output();
        match output {
            Ok(output) if output.status.success() => DataHome { dir, mounted: true, skipped: None },
            Ok(output) => {
                let why = String::from_utf8_lossy(&output.stderr).trim().to_owned();
                DataHome { dir, mounted: false, skipped: Some(format!("mount failed: {why}")) }
            }
            Err(error) => {
                DataHome { dir, mounted: false, skipped: Some(format!("no mount: {error}")) }
            }
        }
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn filler(&self) -> PathBuf {
        self.dir.path().join("filler")
    }
}

impl Drop for DataHome {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg("-l").arg(self.dir.path()).status();
        }
    }
}

/// libfaketime for the service, when installed: a file the test rewrites holds the
/// wall clock's offset; the monotonic clock is left alone, as on a real machine.
struct FakeClock {
    library: PathBuf,
    offset_file: PathBuf,
    offset: i64,
}

impl FakeClock {
    fn find(dir: &Path) -> Result<FakeClock, String> {
        let library = std::fs::read_dir("/usr/lib")
            .map_err(|e| format!("cannot read /usr/lib: {e}"))?
            .flatten()
            .map(|entry| entry.path().join("faketime/libfaketime.so.1"))
            .find(|path| path.is_file())
            .ok_or("libfaketime is not installed (Debian package faketime)")?;
        let offset_file = dir.join("faketime_offset");
        let clock = FakeClock { library, offset_file, offset: 0 };
        clock.write();
        Ok(clock)
    }

    fn write(&self) {
        std::fs::write(&self.offset_file, format!("{:+}\n", self.offset)).expect("the offset");
    }

    fn jump(&mut self, seconds: i64) {
        self.offset += seconds;
        self.write();
    }

    fn env(&self) -> Vec<(String, String)> {
        vec![
            ("LD_PRELOAD".into(), self.library.display().to_string()),
            ("FAKETIME_TIMESTAMP_FILE".into(), self.offset_file.display().to_string()),
            ("FAKETIME_NO_CACHE".into(), "1".into()),
            ("DONT_FAKE_MONOTONIC".into(), "1".into()),
        ]
    }
}

/// What the soak did and saw (printed as the `soak figures:` line).
#[derive(Default)]
struct Figures {
    kills: u32,
    outages: BTreeMap<String, u32>,
    clock_jumps: u32,
    disk_full_episodes: u32,
    disk_full_logged: u32,
    steps: u32,
    checks: u32,
    repeated_reports: u64,
}

/// One life of the service: real start and end times, and where its log begins.
struct Life {
    started: f64,
    ended: Option<f64>,
    killed: bool,
}

struct Soak {
    rng: ChaCha8Rng,
    server: ProjectServerProcess,
    home: DataHome,
    data: PathBuf,
    log: PathBuf,
    service: Option<ServiceProcess>,
    lives: Vec<Life>,
    clock: Option<FakeClock>,
    clock_skipped: Option<String>,
    jumps: Vec<f64>,
    /// The disk-full episodes, from the filling to the filler's removal.
    full_disks: Vec<(f64, f64)>,
    figures: Figures,
    /// Scheduler requests after this (real) time are not paced (the drain's updates).
    pace_until: f64,
}

impl Soak {
    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn fail(&self, what: &str) -> ! {
        panic!(
            "{what}\nthe service's log (end):\n{}\nthe server's log (end):\n{}",
            tail(&self.log_text(), 12_000),
            tail(&self.server.log(), 4_000)
        )
    }

    fn start_service(&mut self) {
        assert!(self.service.is_none());
        let mut log =
            std::fs::OpenOptions::new().create(true).append(true).open(&self.log).expect("the log");
        writeln!(log, "=== soak: service life {} starts", self.lives.len()).expect("the log");
        let env = self.clock.as_ref().map(FakeClock::env).unwrap_or_default();
        self.service = Some(start_service_with_env(&self.data, &self.log, &env));
        self.lives.push(Life { started: unix_now(), ended: None, killed: false });
    }

    fn end_life(&mut self) {
        if let Some(life) = self.lives.last_mut() {
            life.ended.get_or_insert(unix_now());
        }
    }

    fn kill_service(&mut self) {
        let Some(mut service) = self.service.take() else { return };
        signal(&service, nix::sys::signal::Signal::SIGKILL);
        if wait_exit(&mut service, STOP_TIMEOUT).is_none() {
            self.fail("a killed service did not go");
        }
        self.end_life();
        if let Some(life) = self.lives.last_mut() {
            life.killed = true;
        }
        self.figures.kills += 1;
    }

    fn stop_service(&mut self) {
        let Some(mut service) = self.service.take() else { return };
        signal(&service, nix::sys::signal::Signal::SIGTERM);
        match wait_exit(&mut service, STOP_TIMEOUT) {
            Some(status) if status.success() => {}
            Some(status) => self.fail(&format!("the service stopped with {status}")),
            None => self.fail("the service did not stop after SIGTERM"),
        }
        self.end_life();
    }

    fn service_alive(&mut self) -> bool {
        self.service.as_mut().is_some_and(|s| matches!(s.try_wait(), Ok(None)))
    }

    /// A random pause, on purpose: the soak's steps come at random moments.
    fn pause(&mut self, low: f64, high: f64) {
        std::thread::sleep(Duration::from_secs_f64(self.rng.random_range(low..high)));
    }

    /// `boinc-rs project URL ACTION` against the running service, once it serves GUI RPC.
    fn project_command(&mut self, action: &str) -> bool {
        let Some(service) = self.service.as_mut() else { return false };
        let port = service.gui_rpc_port();
        Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
            .args(["project", "--port", &port.to_string(), "--dir"])
            .arg(&self.data)
            .args([self.server.url.as_str(), action])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    // ---- the steps ----

    fn step_kill(&mut self) {
        if self.service.is_none() {
            self.start_service();
        }
        self.pause(0.3, 6.0);
        self.kill_service();
        self.check("after a kill -9");
        self.start_service();
    }

    fn step_outage(&mut self) {
        let kinds = ["http_500", "reset", "truncated", "not_xml", "hang", "huge", "slow"];
        let kind = *kinds.choose(&mut self.rng).expect("kinds");
        let targets = ["scheduler", "scheduler", "download", "upload", "any"];
        let target = *targets.choose(&mut self.rng).expect("targets");
        // Either a few requests, or every request for the whole outage.
        let count = if self.rng.random_bool(0.5) { 0 } else { self.rng.random_range(1..4) };
        let mut rule = json!({ "target": target, "fault": kind, "count": count });
        match kind {
            "hang" => rule["seconds"] = json!(self.rng.random_range(HANG_SHORTEST..8.0)),
            "huge" => rule["bytes"] = json!(40_000_000),
            "slow" => rule["bytes_per_second"] = json!(self.rng.random_range(500..5_000)),
            _ => {}
        }
        self.server.add_faults(rule);
        *self.figures.outages.entry(kind.to_owned()).or_default() += 1;
        self.pause(3.0, 12.0);
        self.server.clear_faults();
        self.check(&format!("after an outage ({kind} on {target})"));
    }

    fn step_clock_jump(&mut self) {
        let Some(clock) = self.clock.as_mut() else { return };
        let choices: [i64; 5] = [2 * 3600, -1800, 600, -6 * 3600, 5 * 3600];
        let mut jump = *choices.choose(&mut self.rng).expect("jumps");
        // Within half a day of the true time, so deadlines (days away) are not the
        // story.
        if (clock.offset + jump).abs() > 12 * 3600 {
            jump = -jump;
        }
        clock.jump(jump);
        self.jumps.push(unix_now());
        self.figures.clock_jumps += 1;
        self.pause(3.0, 10.0);
        self.check(&format!("after a clock jump of {jump:+} s"));
    }

    fn step_disk_full(&mut self) {
        // A client that cannot write its first files refuses to start, with a clear
        // error: the disk fills under a client that is up, as on a real machine.
        let up =
            ["gui_rpc_auth.cfg", "client_state.xml"].iter().all(|f| self.data.join(f).exists());
        if !self.home.mounted || !up {
            return self.step_quiet();
        }
        let log_before = self.log_text().len();
        let filler = self.home.filler();
        let filled_at = unix_now();
        let mut file = std::fs::File::create(&filler).expect("the filler");
        let block = vec![0u8; 1 << 20];
        // Until the file system is full (bounded by its size).
        for _ in 0..(TMPFS_ROOM >> 20) * 4 {
            if file.write_all(&block).is_err() {
                break;
            }
        }
        drop(file);
        self.figures.disk_full_episodes += 1;
        self.pause(4.0, 12.0);
        let alive = self.service_alive();
        let said = self.log_text().get(log_before..).is_some_and(|new| {
            let new = new.to_lowercase();
            new.contains("no space") || new.contains("disk")
        });
        std::fs::remove_file(&filler).expect("the filler goes");
        self.full_disks.push((filled_at, unix_now()));
        if !alive {
            self.fail("the service died while the disk was full");
        }
        if said {
            self.figures.disk_full_logged += 1;
        }
        self.check("after a disk-full episode");
    }

    fn step_quiet(&mut self) {
        self.pause(2.0, 8.0);
        self.check("after a quiet spell");
    }

    // ---- the invariants ----

    fn check(&mut self, when: &str) {
        self.figures.checks += 1;
        let status = self.server.status();
        self.figures.repeated_reports = self.check_reports(&status, when);
        let state = self.read_state(when);
        if let Some(state) = &state {
            self.check_outputs_kept(state, when);
            self.check_backoff_bounds(state, when);
        }
        self.check_rpc_pace(&status, when);
        self.check_restarts(when);
        self.check_checkpoints(when);
    }

    /// No checkpoint lost to a kill the client made: every example app's checkpoint in
    /// a slot has content (an app killed mid-write would leave it empty; the client asks
    /// leftovers to quit first, and kills only apps that ignore it).
    fn check_checkpoints(&self, when: &str) {
        let slots = self.data.join("slots");
        let Ok(entries) = std::fs::read_dir(&slots) else { return };
        for slot in entries.flatten() {
            let checkpoint = slot.path().join("example_app_checkpoint.txt");
            if std::fs::metadata(&checkpoint).is_ok_and(|m| m.len() == 0) {
                self.fail(&format!("{when}: an empty checkpoint in {}", slot.path().display()));
            }
        }
    }

    /// Kills within the commit window after `at`. A report's acknowledgement taken in
    /// while the disk is full cannot be written down until there is room again: its
    /// window lasts until then.
    fn kills_after(&self, at: f64) -> u64 {
        let room_again = self
            .full_disks
            .iter()
            .filter(|&&(filled, emptied)| filled <= at && at <= emptied)
            .map(|&(_, emptied)| emptied)
            .fold(at, f64::max);
        let killed = self.lives.iter().filter(|l| l.killed);
        killed
            .filter_map(|l| l.ended)
            .filter(|&end| end >= at && end - room_again <= COMMIT_WINDOW)
            .count() as u64
    }

    /// Scheduler requests the server took (their reports stored) but whose reply it
    /// mangled on purpose, within the commit window before `at`.
    fn mangled_replies_before(status: &Value, at: f64) -> u64 {
        let arrivals = status["scheduler_request_log"].as_array().expect("the request log");
        arrivals
            .iter()
            .filter(|a| {
                let arrived = a["at"].as_f64().unwrap_or(f64::NAN);
                arrived <= at + PACE_SLACK && at - arrived <= COMMIT_WINDOW
            })
            .filter(|a| {
                matches!(a["fault"].as_str(), Some("truncated" | "not_xml" | "huge" | "slow"))
            })
            .count() as u64
    }

    /// Results reported more than once, each explained: a kill in its commit window
    /// (which a full disk draws out), or a reply the client never read whole.
    fn check_reports(&self, status: &Value, when: &str) -> u64 {
        if status["unknown_reports"] != 0 {
            self.fail(&format!("{when}: a result the project never made was reported"));
        }
        let mut repeated = 0;
        for result in status["results"].as_array().expect("results") {
            let times = result["times_reported"].as_u64().unwrap_or(0);
            if times <= 1 {
                continue;
            }
            let at = result["reported_at"].as_f64().unwrap_or(f64::INFINITY);
            if times - 1 > self.kills_after(at) + Self::mangled_replies_before(status, at) {
                self.fail(&format!(
                    "{when}: reported {times} times, with neither a kill nor a mangled reply \
                     within {COMMIT_WINDOW} s of its first report (or of the disk's having \
                     room again): {result}"
                ));
            }
            repeated += times - 1;
        }
        repeated
    }

    /// The state as the service would read it: through the store when it is stopped,
    /// else the main copy (written whole, then renamed).
    fn read_state(&self, when: &str) -> Option<ClientState> {
        if self.service.is_none() {
            let store = StateStore::open(&self.data)
                .unwrap_or_else(|e| self.fail(&format!("{when}: the data directory: {e}")));
            return store
                .load()
                .unwrap_or_else(|e| self.fail(&format!("{when}: the state does not read: {e}")))
                .map(|loaded| loaded.state);
        }
        let text = std::fs::read_to_string(self.data.join("client_state.xml")).ok()?;
        match boinc_core::protocol::parse_client_state(&text, "client_state.xml") {
            Ok(state) => Some(state),
            Err(error) => self.fail(&format!("{when}: client_state.xml does not parse: {error}")),
        }
    }

    fn check_outputs_kept(&self, state: &ClientState, when: &str) {
        let on_disk: BTreeSet<String> = files_under(&self.data.join("projects"))
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        let received: BTreeSet<String> = self
            .server
            .uploads()
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        for job in &state.jobs {
            if job.got_server_ack || !matches!(job.state, JobState::FilesUploading) {
                continue;
            }
            for output in &job.output_files {
                let file = state.file(output.file);
                let kept = file.uploaded || on_disk.contains(&file.name);
                if !kept && !received.contains(&file.name) {
                    self.fail(&format!(
                        "{when}: output {} of unreported result {} is gone",
                        file.name, job.name
                    ));
                }
            }
        }
    }

    fn check_backoff_bounds(&self, state: &ClientState, when: &str) {
        let offset = self.clock.as_ref().map_or(0, |c| c.offset) as f64;
        let client_now = unix_now() + offset;
        for project in &state.projects {
            let ahead = project.min_rpc_time - client_now;
            if ahead > RPC_BACKOFF_MAX + 60.0 {
                self.fail(&format!(
                    "{when}: {}'s next RPC is {ahead:.0} s away, beyond the longest backoff \
                     ({RPC_BACKOFF_MAX} s): the client would sit idle",
                    project.master_url
                ));
            }
        }
    }

    /// Seed 002's pace, by the server's record of arrivals: within one life of the
    /// service and with no clock jump between them, a request after `n` failures in a
    /// row comes at least min(60 · 2ⁿ⁻¹, 14400) · 0.5 s later, one after a success at
    /// least the request delay later. Answers whose effect on the client is not certain
    /// (slow, huge) are not judged and break the streak.
    fn check_rpc_pace(&self, status: &Value, when: &str) {
        let arrivals: Vec<(f64, Option<String>)> = status["scheduler_request_log"]
            .as_array()
            .expect("the request log")
            .iter()
            .map(|a| (a["at"].as_f64().expect("at"), a["fault"].as_str().map(str::to_owned)))
            .collect();
        let mut streak = 0u32;
        for pair in arrivals.windows(2) {
            let ((at, fault), (next, _)) = (&pair[0], &pair[1]);
            let restarted = self.lives.iter().any(|l| l.started > *at && l.started <= *next);
            let jumped = self.jumps.iter().any(|j| *j > *at && *j <= *next);
            if restarted || jumped || *next > self.pace_until {
                streak = 0;
                continue;
            }
            let failed = matches!(
                fault.as_deref(),
                Some("http_500" | "reset" | "truncated" | "not_xml" | "hang")
            );
            // A held request fails when the hold ends, not when it arrived: its backoff
            // counts from then (every hold lasts at least HANG_SHORTEST).
            let known_after = if fault.as_deref() == Some("hang") { HANG_SHORTEST } else { 0.0 };
            let least = known_after
                + match fault.as_deref() {
                    None => {
                        streak = 0;
                        REQUEST_DELAY
                    }
                    Some(_) if failed => {
                        streak += 1;
                        let exponent = (streak - 1).min(10);
                        (RPC_BACKOFF_MIN * f64::from(1u32 << exponent)).min(RPC_BACKOFF_MAX) * 0.5
                    }
                    Some(_) => {
                        streak = 0;
                        0.0
                    }
                };
            if next - at < least - PACE_SLACK {
                self.fail(&format!(
                    "{when}: a scheduler request {:.2} s after one answered with {fault:?} \
                     ({streak} failures in a row): seed 002 asks for at least {least:.1} s",
                    next - at
                ));
            }
        }
    }

    /// Starts of each task within each life of the service, from the service's log.
    fn starts_by_life(&self) -> Vec<BTreeMap<String, u32>> {
        let mut lives: Vec<BTreeMap<String, u32>> = Vec::new();
        for line in self.log_text().lines() {
            if line.starts_with("=== soak: service life") {
                lives.push(BTreeMap::new());
                continue;
            }
            if !line.contains("app started") {
                continue;
            }
            let line = without_ansi(line);
            let job = line.split_whitespace().find_map(|w| w.strip_prefix("job="));
            if let (Some(job), Some(life)) = (job, lives.last_mut()) {
                *life.entry(job.to_owned()).or_default() += 1;
            }
        }
        lives
    }

    /// The most starts of one task a life of `seconds` allows: the first, then one
    /// after each of the app restart policy's shortest delays that fit, and one more
    /// for a preemption's resume.
    fn allowed_starts(seconds: f64) -> u32 {
        let policy = RestartPolicy::APP;
        let (mut spent, mut starts) = (0.0, 2);
        for streak in 1.. {
            spent += policy.delay_bounds(streak).0;
            if spent > seconds {
                break;
            }
            starts += 1;
        }
        starts
    }

    fn check_restarts(&self, when: &str) {
        let now = unix_now();
        for (life, starts) in self.lives.iter().zip(self.starts_by_life()) {
            let seconds = life.ended.unwrap_or(now) - life.started;
            let allowed = Self::allowed_starts(seconds);
            for (job, count) in starts {
                if count > allowed {
                    self.fail(&format!(
                        "{when}: task {job} started {count} times in a life of {seconds:.0} s \
                         (at most {allowed}): a tight loop"
                    ));
                }
            }
        }
    }

    /// How the apps' runs ended, by the service's log (`Finished`, `Signal(11)`, `Hung`,
    /// ...), runs a kill cut short not counted.
    fn app_exits(&self) -> BTreeMap<String, u32> {
        let mut exits: BTreeMap<String, u32> = BTreeMap::new();
        for line in self.log_text().lines().filter(|l| l.contains("app exited")) {
            let line = without_ansi(line);
            if let Some(exit) = line.split_whitespace().find_map(|w| w.strip_prefix("exit=")) {
                *exits.entry(exit.to_owned()).or_default() += 1;
            }
        }
        exits
    }

    fn max_starts_of_a_task(&self) -> u32 {
        let mut total: BTreeMap<String, u32> = BTreeMap::new();
        for life in self.starts_by_life() {
            for (job, count) in life {
                *total.entry(job).or_default() += count;
            }
        }
        total.into_values().max().unwrap_or(0)
    }

    // ---- the end ----

    /// Faults off, space back, a last kill (a hung app the client has not given up yet
    /// is stopped by the next service), no more work: the client finishes and reports
    /// everything it holds.
    fn drain(&mut self) -> f64 {
        self.server.clear_faults();
        let _ = std::fs::remove_file(self.home.filler());
        self.pace_until = unix_now();
        self.kill_service();
        self.start_service();
        let started = Instant::now();
        let mut told = false;
        let mut last_update = Instant::now();
        let drained = holds_within(DRAIN_TIMEOUT, || {
            if !self.service_alive() {
                self.fail("the service exited during the drain");
            }
            if !told {
                told = self.project_command("nomorework");
            } else if last_update.elapsed() > Duration::from_secs(10) {
                // Past any backoff the outages left.
                self.project_command("update");
                last_update = Instant::now();
            }
            let status = self.server.status();
            let state = self.read_state("during the drain");
            let client_done =
                state.as_ref().is_some_and(|s| s.jobs.iter().all(|job| job.got_server_ack));
            told && status["jobs_in_progress"] == 0 && client_done
        });
        if !drained {
            self.fail(&format!("the client did not finish within {DRAIN_TIMEOUT:?}"));
        }
        self.stop_service();
        started.elapsed().as_secs_f64()
    }

    /// App processes whose working directory is in the data directory.
    fn apps_left(&self) -> Vec<i32> {
        let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
        entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                std::fs::read_link(format!("/proc/{pid}/cwd"))
                    .is_ok_and(|cwd| cwd.starts_with(&self.data))
            })
            .collect()
    }
}

impl Drop for Soak {
    /// A failing soak leaves no app behind: a hung one never notices its client gone.
    fn drop(&mut self) {
        drop(self.service.take());
        for pid in self.apps_left() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

#[test]
fn soak_kills_outages_crashes_hangs_full_disks_and_clock_jumps() {
    let seconds: f64 = env_number("BOINC_RS_SOAK_SECONDS").unwrap_or(45.0);
    let min_kills: u32 =
        env_number("BOINC_RS_SOAK_KILLS").unwrap_or(((seconds / 15.0) as u32).max(4));
    let seed: u64 = env_number("BOINC_RS_SOAK_SEED").unwrap_or(16);
    let begun = Instant::now();

    let scratch = tempfile::tempdir().expect("a scratch dir");
    let shell_app = scratch.path().join("upper_shell");
    std::fs::write(&shell_app, SHELL_APP).expect("the shell app");
    let mut permissions = std::fs::metadata(&shell_app).expect("its metadata").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&shell_app, permissions).expect("executable");
    let shell_app = shell_app.display().to_string();
    let server = ProjectServerProcess::start(&[
        "--with-example-app",
        "--app",
        &shell_app,
        "--job-seconds",
        "2-5",
        "--request-delay",
        &REQUEST_DELAY.to_string(),
        "--max-jobs-per-cpu",
        "2",
        "--crash-fraction",
        "0.15",
        "--hang-fraction",
        "0.05",
        "--workers",
        "4",
    ]);

    let exe_bytes = std::fs::metadata(env!("CARGO_BIN_EXE_boinc-rs")).expect("the binary").len();
    let home = DataHome::new(exe_bytes + TMPFS_ROOM);
    if let Some(why) = &home.skipped {
        eprintln!("SKIPPED: disk-full phase: {why}");
    }
    let data = home.data_dir();
    std::fs::create_dir_all(&data).expect("the data directory");
    let status = Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
        .args(["attach", "--dir"])
        .arg(&data)
        .args([server.url.as_str(), "soak_key"])
        .stdout(Stdio::null())
        .status()
        .expect("boinc-rs attach runs");
    assert!(status.success(), "boinc-rs attach failed");
    std::fs::write(
        data.join("global_prefs_override.xml"),
        format!(
            "<global_preferences><disk_interval>1</disk_interval>{}</global_preferences>\n",
            support::host_prefs::NO_CPU_BUSY_CHECK
        ),
    )
    .expect("the preferences");
    std::fs::write(
        data.join("cc_config.xml"),
        "<cc_config><options><report_results_immediately>1</report_results_immediately>\
         </options></cc_config>\n",
    )
    .expect("cc_config.xml");
    let (clock, clock_skipped) = match FakeClock::find(scratch.path()) {
        Ok(clock) => (Some(clock), None),
        Err(why) => {
            eprintln!("SKIPPED: clock-jump phase: {why}");
            (None, Some(why))
        }
    };

    let mut soak = Soak {
        rng: ChaCha8Rng::seed_from_u64(seed),
        log: scratch.path().join("service.log"),
        server,
        home,
        data,
        service: None,
        lives: Vec::new(),
        clock,
        clock_skipped,
        jumps: Vec::new(),
        full_disks: Vec::new(),
        figures: Figures::default(),
        pace_until: f64::INFINITY,
    };
    soak.start_service();
    let length = Duration::from_secs_f64(seconds);
    // Kills are owed in proportion to the time gone; past twice the length the test
    // gives up on reaching them.
    while begun.elapsed() < length || soak.figures.kills < min_kills {
        if begun.elapsed() > length * 2 + Duration::from_secs(60) {
            soak.fail(&format!("only {} of {min_kills} kills", soak.figures.kills));
        }
        let owed = f64::from(min_kills) * (begun.elapsed().as_secs_f64() / seconds).min(1.0);
        soak.figures.steps += 1;
        if f64::from(soak.figures.kills) + 1.0 < owed {
            soak.step_kill();
            continue;
        }
        match soak.rng.random_range(0..10) {
            0..=2 => soak.step_kill(),
            3..=5 => soak.step_outage(),
            6 => soak.step_clock_jump(),
            7 => soak.step_disk_full(),
            _ => soak.step_quiet(),
        }
    }
    let soak_seconds = begun.elapsed().as_secs_f64();
    let drain_seconds = soak.drain();
    soak.check("at the end");
    let left = soak.apps_left();
    assert!(left.is_empty(), "apps left running: {left:?}");

    let status = soak.server.status();
    assert_eq!(status["jobs_in_progress"], 0, "{status:#}");
    let results = status["results"].as_array().expect("results");
    let sent: Vec<&Value> = results.iter().filter(|r| r["times_sent"] != 0).collect();
    for result in &sent {
        assert!(result["times_reported"].as_u64().unwrap_or(0) >= 1, "never reported: {result}");
    }
    let count = |key: &str, value: &str| sent.iter().filter(|r| r[key] == value).count();
    let figures = &soak.figures;
    let line = json!({
        "seed": seed,
        "seconds_asked": seconds,
        "soak_seconds": soak_seconds,
        "drain_seconds": drain_seconds,
        "elapsed_seconds": begun.elapsed().as_secs_f64(),
        "steps": figures.steps,
        "checks": figures.checks,
        "kills": figures.kills,
        "kills_asked": min_kills,
        "outages": figures.outages,
        "clock_jumps": figures.clock_jumps,
        "clock_jump_phase": soak.clock_skipped.clone().map_or("ran".to_owned(), |w| format!("SKIPPED: {w}")),
        "disk_full_episodes": figures.disk_full_episodes,
        "disk_full_logged": figures.disk_full_logged,
        "disk_full_phase": soak.home.skipped.clone().map_or("ran".to_owned(), |w| format!("SKIPPED: {w}")),
        "app_exits": soak.app_exits(),
        "app_crash_jobs": count("misbehaviour", "crash"),
        "app_hang_jobs": count("misbehaviour", "hang_once"),
        "jobs_sent": sent.len(),
        "jobs_resent": status["jobs_resent"],
        "results_reported": status["results_received"],
        "results_valid": status["results_validated"],
        "results_invalid": status["results_invalid"],
        "invalid_results": sent
            .iter()
            .filter(|r| r["outcome"] == "invalid")
            .map(|r| json!({"name": r["name"], "misbehaviour": r["misbehaviour"], "reason": r["invalid_reason"]}))
            .collect::<Vec<_>>(),
        "results_failed": status["results_failed"],
        "duplicate_reports": status["duplicate_reports"],
        "duplicates_each_after_a_kill_or_mangled_reply": figures.repeated_reports,
        "scheduler_rpcs": status["scheduler_requests"],
        "faults_applied": status["faults_applied"],
        "max_starts_of_a_task": soak.max_starts_of_a_task(),
    });
    println!("soak figures: {line}");
    assert!(figures.kills >= min_kills, "{} of {min_kills} kills", figures.kills);
    assert!(status["results_validated"].as_u64().unwrap_or(0) > 0, "nothing computed: {line}");
    assert_eq!(
        status["results_invalid"], 0,
        "results reported as done whose output the server lacks or holds empty: {line}"
    );
}
