//! One run of a task's app (issue "Running real apps"): its process group, its status
//! as the client measures it, the requests made of it, and how it ended.
//!
//! - Apps using BOINC's API are asked through their process-control channel to suspend,
//!   resume, quit and abort; apps without it (wrapper mode) get SIGSTOP and SIGCONT,
//!   SIGTERM then SIGKILL. Either way a quit or abort that is not obeyed within its grace
//!   period ends in SIGKILL to the whole group, at a later poll.
//! - CPU time and memory come from the operating system (the whole process tree),
//!   elapsed time from the monotonic clock, counting only time not suspended.
//!   Checkpoints are learnt from the checkpoint CPU time an API app reports.
//! - Each poll checks the limits: elapsed time over `rsc_fpops_bound / flops`, resident
//!   memory over `rsc_memory_bound`, and (less often) the slot's disk use over
//!   `rsc_disk_bound`; an app over one is killed and its run ends with that limit.
//! - When the app's process exits, whatever it left running in its group is killed
//!   before it is reaped, and the exit is read as BOINC reads it: a temporary-exit file
//!   asks for a later restart; exit 0 is a finish only with the finish file (API) and,
//!   in any mode, with every output present. A crash or an error status that the
//!   operating-system limits explain (SIGXFSZ, a failed allocation under the
//!   address-space limit: `boinc_core::control::app_limits`) ends the run with that
//!   limit instead.

use super::app_channels::AppChannels;
use super::app_user::AppUser;
use super::config::ProcessHostConfig;
use super::containment::write_rules;
use super::measure::{TreeMeter, swap_bytes};
use super::shared_memory::ChannelFile;
use super::slot::SlotLayout;
use super::spawn::{ChildSetup, spawn_app};
use crate::data_dir_modes::{share_project_dir, share_slot};
use boinc_core::Time;
use boinc_core::control::{
    ExitUnderLimits, ProcessStatus, TaskBounds, TaskSpec, file_size_limit, limit_behind_exit,
};
use boinc_core::model::ProcessUsage;
use boinc_core::protocol::app_api::{
    FINISH_FILE, Heartbeat, InitData, ProcessControl, STDERR_FILE_LIMIT, STDERR_REPORT_BYTES,
    TEMPORARY_EXIT_FILE, TemporaryExit,
};
use boinc_core::supervise::{AppExit, TaskLimit};
use boinc_runtime::effects::ProcessError;
use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid, waitpid};
use nix::unistd::Pid;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

/// What the run is doing, as far as the client is concerned.
#[derive(Debug, Clone, PartialEq)]
enum Phase {
    /// Computing.
    Running,
    /// Suspended in memory.
    Suspended,
    /// On its way out, at the client's request.
    Ending {
        /// What its exit is reported as; `None`: it is not reported (a quit or an
        /// abort the client asked for), the slot is simply empty afterwards.
        report: Option<AppExit>,
        /// An app that finished its work meanwhile is reported finished all the same.
        honour_finish: bool,
        /// When to kill the group if it has not exited.
        kill_at: Option<Instant>,
    },
}

/// How a poll found the run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RunState {
    /// Alive: its status.
    Alive(ProcessStatus),
    /// It ended in a way that decides the task's fate.
    Exited {
        /// How.
        exit: AppExit,
        /// Its last status.
        status: ProcessStatus,
    },
    /// It ended as the client asked (quit, abort, kill).
    Gone(ProcessStatus),
}

/// One run of an app.
#[derive(Debug)]
pub(crate) struct TaskProcess {
    pid: Pid,
    meter: TreeMeter,
    layout: SlotLayout,
    channels: Option<AppChannels>,
    stderr: File,
    phase: Phase,
    bounds: TaskBounds,
    /// The status the run started from (its checkpoint).
    base: ProcessStatus,
    /// The latest status.
    status: ProcessStatus,
    /// Time spent computing in this run before `running_since`.
    run_time: Duration,
    /// When the run last started or resumed computing.
    running_since: Option<Instant>,
    /// CPU seconds of this run, as last measured.
    cpu_seconds: f64,
    /// Resident memory, as last measured.
    resident_bytes: f64,
    /// Major page faults so far, as last measured.
    major_faults: u64,
    /// The last smoothing of the memory figure: when, and the page faults then.
    smoothed_at: Option<(Instant, u64)>,
    /// Swap, as last measured.
    swap_bytes: f64,
    /// When the slot's disk use (and the app's swap) was last measured.
    disk_checked: Option<Instant>,
    /// The slot's disk use, bytes, as last measured.
    slot_bytes: f64,
    /// The operating-system limits the run has (address space, file size).
    address_space_limited: bool,
    file_size_limited: bool,
    /// The length of `stderr.txt` when the run started: what follows is this run's.
    stderr_start: u64,
    /// Stopped (SIGSTOP) by the CPU usage limit, which continues it.
    throttled: bool,
}

/// How often the smoothed memory figure and the page-fault rate are brought up to date
/// (BOINC's figures halve towards the measurement at each memory check).
const SMOOTHING_PERIOD: Duration = Duration::from_secs(10);

/// How much of a run's standard error is read to explain its exit.
const EXIT_STDERR_BYTES: u64 = 4096;

impl TaskProcess {
    /// Starts `spec`'s app in its prepared slot.
    pub(crate) fn start(
        spec: &TaskSpec,
        layout: SlotLayout,
        init_data: &InitData,
        fresh: bool,
        contain: bool,
        app_user: Option<&AppUser>,
    ) -> Result<TaskProcess, ProcessError> {
        let executable = layout.executable(spec)?;
        let stderr = layout.prepare(spec, init_data, fresh)?;
        // Files from an earlier run would be read as this run's.
        layout.remove_file(FINISH_FILE);
        layout.remove_file(TEMPORARY_EXIT_FILE);
        let channels = if spec.program.uses_boinc_api() {
            let file = ChannelFile::create(&layout.slot_dir).map_err(|e| {
                ProcessError::SharedMemory { slot: spec.slot, reason: e.to_string() }
            })?;
            Some(AppChannels::new(file))
        } else {
            None
        };
        // Everything the client put in the slot (the shared memory too) is there now.
        if let Some(user) = app_user {
            share_slot(&layout.slot_dir, user.gid).map_err(|source| ProcessError::Slot {
                slot: spec.slot,
                path: layout.slot_dir.clone(),
                source,
            })?;
            share_project_dir(&layout.project_dir, user.gid).map_err(|source| {
                ProcessError::Slot { slot: spec.slot, path: layout.project_dir.clone(), source }
            })?;
        }
        let rules = if contain {
            match write_rules(&layout.slot_dir, &layout.project_dir) {
                Ok(rules) => Some(rules),
                Err(error) => {
                    tracing::warn!(slot = spec.slot, %error, "cannot confine the app's writes; it runs unconfined");
                    None
                }
            }
        } else {
            None
        };
        let bounds = spec.program.bounds;
        let address_space = (bounds.address_space_limit >= 1.0
            && bounds.address_space_limit.is_finite())
        .then_some(bounds.address_space_limit as u64);
        let file_size = file_size_limit(bounds.disk_bound);
        let stderr_start = stderr.metadata().map_or(0, |m| m.len());
        let setup = ChildSetup { app_user: app_user.cloned(), address_space, file_size, rules };
        let pid = spawn_app(spec, &layout, &executable, &stderr, setup)?;
        let base = ProcessStatus {
            elapsed_time: spec.status.checkpoint_elapsed_time,
            current_cpu_time: spec.status.checkpoint_cpu_time,
            finished: false,
            // This run's process is measured afresh.
            process: ProcessUsage::default(),
            ..spec.status
        };
        Ok(TaskProcess {
            pid: Pid::from_raw(pid),
            meter: TreeMeter::new(pid),
            layout,
            channels,
            stderr,
            phase: Phase::Running,
            bounds: spec.program.bounds,
            base,
            status: base,
            run_time: Duration::ZERO,
            running_since: Some(Instant::now()),
            cpu_seconds: 0.0,
            resident_bytes: 0.0,
            major_faults: 0,
            smoothed_at: None,
            swap_bytes: 0.0,
            disk_checked: None,
            slot_bytes: 0.0,
            address_space_limited: address_space.is_some(),
            file_size_limited: file_size.is_some(),
            stderr_start,
            throttled: false,
        })
    }

    /// The app's process id (and process group id).
    pub(crate) fn pid(&self) -> i32 {
        self.pid.as_raw()
    }

    fn signal(&self, signal: Signal) {
        // The group may be gone already: its exit shows at the next poll.
        let _ = killpg(self.pid, signal);
    }

    pub(crate) fn ending(&self) -> bool {
        matches!(self.phase, Phase::Ending { .. })
    }

    fn stop_clock(&mut self, now: Instant) {
        if let Some(since) = self.running_since.take() {
            self.run_time += now.saturating_duration_since(since);
        }
    }

    /// Stops a computing app for the CPU usage limit (`stop`), or continues one the
    /// limit stopped. The whole group is signalled, API app or not: the limit's turns
    /// are too short for a request and its answer. The elapsed time runs on, as BOINC's.
    pub(crate) fn throttle(&mut self, stop: bool) {
        if stop && self.phase == Phase::Running && !self.throttled {
            self.signal(Signal::SIGSTOP);
            self.throttled = true;
        } else if !stop {
            self.unthrottle();
        }
    }

    /// Continues an app the CPU usage limit stopped: one that is to act on a request
    /// (suspend, quit, abort) has to run to read it.
    fn unthrottle(&mut self) {
        if std::mem::take(&mut self.throttled) {
            self.signal(Signal::SIGCONT);
        }
    }

    /// Suspends the app in memory.
    pub(crate) fn suspend(&mut self, slot: u32) {
        if self.phase != Phase::Running {
            return;
        }
        self.unthrottle();
        let now = Instant::now();
        match &mut self.channels {
            Some(channels) => channels.request(ProcessControl::Suspend, now, slot),
            None => self.signal(Signal::SIGSTOP),
        }
        self.stop_clock(now);
        self.phase = Phase::Suspended;
    }

    /// Resumes the app.
    pub(crate) fn resume(&mut self, slot: u32) {
        if self.phase != Phase::Suspended {
            return;
        }
        let now = Instant::now();
        match &mut self.channels {
            Some(channels) => channels.request(ProcessControl::Resume, now, slot),
            None => self.signal(Signal::SIGCONT),
        }
        self.running_since = Some(now);
        self.phase = Phase::Running;
    }

    /// Asks the app to quit (it restarts later from its checkpoint); it is killed if it
    /// has not exited after `grace`.
    pub(crate) fn quit(&mut self, grace: Duration, slot: u32) {
        if self.ending() {
            return;
        }
        self.unthrottle();
        let now = Instant::now();
        match &mut self.channels {
            Some(channels) => channels.request(ProcessControl::Quit, now, slot),
            None => {
                self.signal(Signal::SIGTERM);
                // A stopped process acts on SIGTERM only once it runs again.
                self.signal(Signal::SIGCONT);
            }
        }
        self.stop_clock(now);
        self.phase =
            Phase::Ending { report: None, honour_finish: true, kill_at: Some(now + grace) };
    }

    /// Aborts the app: asked through its channel and killed after `grace`, or killed at
    /// once without the API.
    pub(crate) fn abort(&mut self, grace: Duration, slot: u32) {
        self.unthrottle();
        let now = Instant::now();
        let ending = self.ending();
        let kill_at = match &mut self.channels {
            Some(channels) if !ending => {
                channels.request(ProcessControl::Abort, now, slot);
                Some(now + grace)
            }
            _ => {
                self.signal(Signal::SIGKILL);
                None
            }
        };
        self.stop_clock(now);
        self.phase = Phase::Ending { report: None, honour_finish: false, kill_at };
    }

    /// Kills the whole group now; its exit is reported as `report` (`None`: not at all).
    pub(crate) fn kill(&mut self, report: Option<AppExit>) {
        self.signal(Signal::SIGKILL);
        self.stop_clock(Instant::now());
        self.phase = Phase::Ending { report, honour_finish: false, kill_at: None };
    }

    /// Polls the run: how it ended, or its status after this poll's measurements,
    /// messages and limit checks. `now` is the wall-clock time (for checkpoint times).
    pub(crate) fn poll(
        &mut self,
        spec: &TaskSpec,
        config: &ProcessHostConfig,
        now: Time,
    ) -> RunState {
        let instant = Instant::now();
        // The measurement says when the process has exited; only then is it waited for.
        if !self.measure() {
            match waitid(
                Id::Pid(self.pid),
                WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT,
            ) {
                Ok(WaitStatus::StillAlive) => {}
                Ok(status) => return self.exited(spec, status, now),
                Err(error) => {
                    // Not our child any more (someone else reaped it).
                    tracing::warn!(slot = spec.slot, %error, "cannot wait for the app's process");
                    return self.exited(
                        spec,
                        WaitStatus::Signaled(self.pid, Signal::SIGKILL, false),
                        now,
                    );
                }
            }
        }
        let heartbeat = Heartbeat {
            working_set_size: self.resident_bytes,
            max_working_set_size: config.max_working_set,
            network_suspended: false,
        };
        let unread_for = match &mut self.channels {
            Some(channels) => channels.exchange(&heartbeat, instant, spec.slot),
            None => Duration::ZERO,
        };
        self.cap_stderr();
        self.update_status(now);
        self.sample_slot(Some(config.disk_check_interval), instant);
        match &mut self.phase {
            Phase::Ending { kill_at, .. } => {
                if kill_at.is_some_and(|at| instant >= at) {
                    *kill_at = None;
                    tracing::info!(slot = spec.slot, "the app did not exit in time; killing it");
                    let _ = killpg(self.pid, Signal::SIGKILL);
                }
            }
            Phase::Running | Phase::Suspended => {
                if unread_for > config.hung_after {
                    tracing::warn!(
                        slot = spec.slot,
                        unread_secs = unread_for.as_secs(),
                        "the app reads no messages; killing it as hung"
                    );
                    self.kill(Some(AppExit::Hung));
                } else if self.phase == Phase::Running
                    && let Some(limit) = self.limit_exceeded()
                {
                    tracing::warn!(
                        slot = spec.slot,
                        ?limit,
                        "the app went over a limit; killing it"
                    );
                    self.kill(Some(AppExit::LimitExceeded(limit)));
                }
            }
        }
        RunState::Alive(self.status)
    }

    /// Measures the process tree (CPU time never goes back: a child that ended without
    /// being waited for takes its time with it). Returns whether the process is alive
    /// as far as the measurement tells (`false` when it exited or cannot be read).
    fn measure(&mut self) -> bool {
        match self.meter.measure() {
            Ok(usage) => {
                self.cpu_seconds = self.cpu_seconds.max(usage.cpu_seconds);
                self.resident_bytes = usage.resident_bytes;
                self.major_faults = usage.major_faults;
                !usage.exited
            }
            Err(_) => false,
        }
    }

    /// The limit the run is over, if any.
    fn limit_exceeded(&self) -> Option<TaskLimit> {
        if self.bounds.elapsed_time_limit().is_some_and(|limit| self.status.elapsed_time > limit) {
            return Some(TaskLimit::ElapsedTime);
        }
        if self.bounds.memory_bound > 0.0 && self.resident_bytes > self.bounds.memory_bound {
            return Some(TaskLimit::Memory);
        }
        // The slot is measured by the poll's sample, every disk-check interval.
        if self.bounds.disk_bound > 0.0 && self.slot_bytes > self.bounds.disk_bound {
            return Some(TaskLimit::Disk);
        }
        None
    }

    /// Measures the slot's disk use and the app's swap when `every` has passed since
    /// the last time (`None`: now, as at the exit), for the disk limit and the peaks
    /// the result reports. The slot is walked, so this is not done at every poll.
    fn sample_slot(&mut self, every: Option<Duration>, now: Instant) {
        let due = match every {
            Some(every) => {
                self.disk_checked.is_none_or(|at| now.saturating_duration_since(at) >= every)
            }
            None => true,
        };
        if !due {
            return;
        }
        self.disk_checked = Some(now);
        self.slot_bytes = self.layout.disk_usage() as f64;
        let status = &mut self.status;
        status.peaks.disk_usage = status.peaks.disk_usage.max(self.slot_bytes);
        if let Some(swap) = swap_bytes(self.pid.as_raw()) {
            self.swap_bytes = swap;
            status.peaks.swap_size = status.peaks.swap_size.max(swap);
        }
    }

    /// Recomputes the status from the measurements and the app's last report.
    fn update_status(&mut self, now: Time) {
        let running = self.running_since.map_or(Duration::ZERO, |since| since.elapsed());
        let elapsed = self.base.elapsed_time + (self.run_time + running).as_secs_f64();
        let status = &mut self.status;
        status.elapsed_time = elapsed;
        status.current_cpu_time = self.base.current_cpu_time + self.cpu_seconds;
        status.peaks.working_set_size = status.peaks.working_set_size.max(self.resident_bytes);
        let instant = Instant::now();
        let smoothing_due = self
            .smoothed_at
            .is_none_or(|(at, _)| instant.saturating_duration_since(at) >= SMOOTHING_PERIOD);
        if smoothing_due {
            let process = &mut status.process;
            process.working_set_size_smoothed =
                0.5 * process.working_set_size_smoothed + 0.5 * self.resident_bytes;
            if let Some((at, faults)) = self.smoothed_at {
                let seconds = instant.saturating_duration_since(at).as_secs_f64();
                let new_faults = self.major_faults.saturating_sub(faults) as f64;
                process.page_fault_rate = if seconds > 0.0 { new_faults / seconds } else { 0.0 };
            }
            self.smoothed_at = Some((instant, self.major_faults));
        }
        status.process.pid = u32::try_from(self.pid.as_raw()).unwrap_or(0);
        status.process.working_set_size = self.resident_bytes;
        status.process.swap_size = self.swap_bytes;
        match self.channels.as_ref().and_then(AppChannels::reported) {
            Some(report) => {
                if let Some(fraction) = report.fraction_done {
                    status.fraction_done = fraction;
                }
                if report.checkpoint_cpu_time > status.checkpoint_cpu_time {
                    status.checkpoint_cpu_time = report.checkpoint_cpu_time;
                    status.checkpoint_elapsed_time = elapsed;
                    status.checkpoint_wall_time = now;
                }
            }
            None if self.channels.is_none() => {
                // Without the API the fraction done is the share of the estimated run
                // time elapsed, short of 1 until the app finishes.
                let bounds = &self.bounds;
                if bounds.fpops_est > 0.0 && bounds.flops > 0.0 {
                    status.fraction_done = (elapsed / (bounds.fpops_est / bounds.flops)).min(0.99);
                }
            }
            None => {}
        }
    }

    /// Cuts `stderr.txt` back to the tail BOINC reports once it passes the limit.
    fn cap_stderr(&self) {
        let Ok(meta) = self.stderr.metadata() else { return };
        if meta.len() <= STDERR_FILE_LIMIT {
            return;
        }
        let keep = STDERR_REPORT_BYTES as u64;
        let mut tail = vec![0u8; STDERR_REPORT_BYTES];
        let Ok(read) = self.stderr.read_at(&mut tail, meta.len() - keep) else { return };
        tail.truncate(read);
        // The file is opened for appending: after the truncation the tail lands at the
        // start, and the app's own writes keep going to the end.
        if self.stderr.set_len(0).is_ok() {
            let _ = std::io::Write::write_all(&mut &self.stderr, &tail);
        }
    }

    /// The process exited (`status`, not yet reaped): kill what it left in its group,
    /// reap it, and say how it ended.
    fn exited(&mut self, spec: &TaskSpec, wait: WaitStatus, now: Time) -> RunState {
        // Until it is reaped, the exited process still shows its final CPU time.
        let _ = self.measure();
        let _ = killpg(self.pid, Signal::SIGKILL);
        let _ = waitpid(self.pid, None);
        self.stop_clock(Instant::now());
        if let Some(channels) = &mut self.channels {
            channels.final_report(spec.slot);
        }
        self.cap_stderr();
        self.update_status(now);
        // The outputs are all in the slot now: its largest size is likely this one.
        self.sample_slot(None, Instant::now());
        // The process is gone: the task shows none.
        self.status.process = ProcessUsage::default();
        let finished = self.finished(spec, &wait);
        let report = match std::mem::replace(&mut self.phase, Phase::Running) {
            Phase::Ending { report: Some(exit), .. } => Some(exit),
            Phase::Ending { report: None, honour_finish, .. } => {
                (honour_finish && finished == Some(AppExit::Finished)).then_some(AppExit::Finished)
            }
            Phase::Running | Phase::Suspended => {
                Some(self.over_limit(self.classify(wait, finished), &wait))
            }
        };
        match report {
            Some(AppExit::Finished) => {
                let status = &mut self.status;
                status.finished = true;
                status.fraction_done = 1.0;
                status.checkpoint_cpu_time = status.current_cpu_time;
                status.checkpoint_elapsed_time = status.elapsed_time;
                status.checkpoint_wall_time = now;
                RunState::Exited { exit: AppExit::Finished, status: self.status }
            }
            Some(exit) => RunState::Exited { exit, status: self.status },
            None => RunState::Gone(self.status),
        }
    }

    /// For an exit with status 0: finished (with the finish file when the app uses the
    /// API), or an output is missing; `None` for any other exit.
    fn finished(&self, spec: &TaskSpec, wait: &WaitStatus) -> Option<AppExit> {
        if !matches!(wait, WaitStatus::Exited(_, 0)) {
            return None;
        }
        if spec.program.uses_boinc_api() && self.layout.read_small(FINISH_FILE).is_none() {
            return None;
        }
        Some(match self.layout.missing_output(spec) {
            Some(open_name) => AppExit::OutputMissing(open_name),
            None => AppExit::Finished,
        })
    }

    /// `exit` as the limit behind it, when the operating-system limits explain it.
    fn over_limit(&self, exit: AppExit, wait: &WaitStatus) -> AppExit {
        if !(self.address_space_limited || self.file_size_limited) {
            return exit;
        }
        let file_size_signal = matches!(wait, WaitStatus::Signaled(_, Signal::SIGXFSZ, _));
        let slot_at_disk_bound = self.file_size_limited
            && !file_size_signal
            && self.layout.disk_usage() as f64 >= self.bounds.disk_bound;
        let run_stderr = self.run_stderr();
        let facts = ExitUnderLimits {
            file_size_limited: self.file_size_limited,
            file_size_signal,
            slot_at_disk_bound,
            address_space_limited: self.address_space_limited,
            run_stderr: &run_stderr,
        };
        match limit_behind_exit(&exit, &facts) {
            Some(limit) => {
                tracing::warn!(?exit, ?limit, "the app ended at an operating-system limit");
                AppExit::LimitExceeded(limit)
            }
            None => exit,
        }
    }

    /// The tail of what the app wrote to its standard error in this run.
    fn run_stderr(&self) -> String {
        let Ok(meta) = self.stderr.metadata() else { return String::new() };
        let length = meta.len();
        // A file cut back since the start holds only this run's tail.
        let from = if length >= self.stderr_start { self.stderr_start } else { 0 };
        let from = from.max(length.saturating_sub(EXIT_STDERR_BYTES));
        let mut tail = vec![0u8; (length - from) as usize];
        match self.stderr.read_at(&mut tail, from) {
            Ok(read) => String::from_utf8_lossy(&tail[..read]).into_owned(),
            Err(_) => String::new(),
        }
    }

    /// How an exit the client did not ask for reads.
    fn classify(&self, wait: WaitStatus, finished: Option<AppExit>) -> AppExit {
        if let Some(text) = self.layout.read_small(TEMPORARY_EXIT_FILE) {
            let request = TemporaryExit::parse(&text);
            return AppExit::TemporaryExit { delay: request.delay, reason: request.reason };
        }
        match wait {
            WaitStatus::Exited(_, 0) => finished.unwrap_or(AppExit::EarlyExit),
            WaitStatus::Exited(_, code) => AppExit::ExitStatus(code),
            WaitStatus::Signaled(_, signal, _) => AppExit::Signal(signal as i32),
            // `waitid` with WEXITED reports only exits.
            _ => AppExit::Signal(Signal::SIGKILL as i32),
        }
    }
}
