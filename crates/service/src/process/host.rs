//! The live process host (issue "Running real apps"): runs each task's app in its slot
//! directory under the data directory, and answers the TaskActor's commands and polls
//! through the [`ProcessHost`] trait. Commands return at once; what takes time (an app
//! quitting, a kill after a grace period) is followed up at later polls.
//!
//! A slot keeps its files between runs of the same task, so a restarted app finds its
//! checkpoint; a task new to a slot (by `init_data.xml`'s result name) gets it emptied.
//! When the task is over ([`ProcessHost::reap`]), its outputs go to the project
//! directory and the slot is removed. Dropping the host kills every app it still runs;
//! a new host first stops apps a previous run left in the slots (`leftover.rs`).

use super::config::ProcessHostConfig;
use super::containment::write_containment_available;
use super::leftover::stop_leftover_apps;
use super::slot::SlotLayout;
use super::task_process::{RunState, TaskProcess};
use crate::data_dir_modes::set_data_dir_modes;
use boinc_core::control::{ProcessStatus, TaskCommand, TaskSpec};
use boinc_core::protocol::app_api::{FINISH_FILE, FinishFile, InitData};
use boinc_core::supervise::AppExit;
use boinc_runtime::effects::{Clock, ProcessError, ProcessHost, ProcessReport};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// The longest an app a previous run of the client left behind is given to quit when
/// asked, before it is killed: the client waits for it before it starts anything.
const LEFTOVER_QUIT_GRACE: Duration = Duration::from_secs(15);

/// What the host knows of one slot.
struct SlotRecord {
    /// The task's spec as last started.
    spec: TaskSpec,
    layout: SlotLayout,
    /// The current run, until its end has been reported.
    process: Option<TaskProcess>,
    /// The last status of the previous run: where the app's own checkpoint in the slot
    /// stands, which may be newer than what the scheduler heard before the run ended.
    last_status: Option<ProcessStatus>,
    /// How a run asked to quit ended when it ended otherwise (it finished its work
    /// meanwhile, say), found while looking after it: told at the next poll.
    unreported: Option<AppExit>,
}

/// The tail of an ended task's standard error, kept after its slot is gone.
const KEPT_STDERR_TAILS: usize = 64;

/// Runs tasks' apps as real processes.
pub struct LiveProcessHost {
    config: ProcessHostConfig,
    clock: Arc<dyn Clock>,
    contain: bool,
    slots: Mutex<HashMap<u32, SlotRecord>>,
    /// Standard-error tails of reaped tasks, by job name, oldest first.
    stderr_tails: Mutex<Vec<(String, String)>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl LiveProcessHost {
    /// A host for the data directory in `config` (created if missing); `clock` dates
    /// the checkpoints.
    pub fn new(config: ProcessHostConfig, clock: Arc<dyn Clock>) -> Result<Self, ProcessError> {
        let mut config = config;
        let slots_dir = config.data_dir.join(boinc_core::control::task_program::SLOTS_DIR);
        let slot_error = |path: &Path| {
            let path = path.to_path_buf();
            move |source| ProcessError::Slot { slot: 0, path, source }
        };
        std::fs::create_dir_all(&slots_dir).map_err(slot_error(&slots_dir))?;
        config.data_dir =
            std::fs::canonicalize(&config.data_dir).map_err(slot_error(&config.data_dir))?;
        // Apps run as another user reach their slot and project only through the
        // group the data directory's scheme gives them.
        if let Some(user) = &config.app_user {
            set_data_dir_modes(&config.data_dir, Some(user.gid))
                .map_err(|e| ProcessError::Slot { slot: 0, path: e.path, source: e.source })?;
            tracing::info!(user = %user.name, uid = user.uid, gid = user.gid, "apps run as the app user");
        }
        // Only one client holds a data directory: whatever still works in its slots was
        // left by a previous run and would share the slot with the task's new instance.
        let left = stop_leftover_apps(
            &config.data_dir.join(boinc_core::control::task_program::SLOTS_DIR),
            config.quit_grace.min(LEFTOVER_QUIT_GRACE),
        );
        if left > 0 {
            tracing::warn!(
                apps = left,
                "stopped apps left running by a previous run of the client"
            );
        }
        let contain = config.contain_writes && write_containment_available();
        if config.contain_writes && !contain {
            tracing::warn!(
                "this kernel has no Landlock: apps can write outside their slot directories"
            );
        }
        Ok(LiveProcessHost {
            config,
            clock,
            contain,
            slots: Mutex::new(HashMap::new()),
            stderr_tails: Mutex::new(Vec::new()),
        })
    }

    /// The data directory (absolute).
    pub fn data_dir(&self) -> &Path {
        &self.config.data_dir
    }

    /// Whether apps' writes are confined to their slot and project directories.
    pub fn confines_writes(&self) -> bool {
        self.contain
    }

    /// The process id of the app running in `slot`, if one runs.
    pub fn process_id(&self, slot: u32) -> Option<i32> {
        lock(&self.slots).get(&slot).and_then(|r| r.process.as_ref()).map(TaskProcess::pid)
    }

    /// The slot directory of `slot`'s task, while it has one.
    pub fn slot_dir(&self, slot: u32) -> Option<PathBuf> {
        lock(&self.slots).get(&slot).map(|r| r.layout.slot_dir.clone())
    }

    /// Stops (`stop`) or continues the computing apps for the CPU usage limit
    /// ([`super::CpuThrottler`]). Apps that use less than a CPU (GPU apps, BOINC's
    /// non-CPU-intensive ones) are left alone, as BOINC leaves them: stopping them
    /// would idle a GPU to save a fraction of a CPU.
    pub fn throttle(&self, stop: bool) {
        let mut slots = lock(&self.slots);
        for record in slots.values_mut() {
            let Some(process) = record.process.as_mut() else { continue };
            if !stop || record.spec.usage.avg_ncpus >= 1.0 {
                process.throttle(stop);
            }
        }
    }

    fn start(&self, spec: &TaskSpec) -> Result<(), ProcessError> {
        let mut slots = lock(&self.slots);
        if let Some(record) = slots.get_mut(&spec.slot)
            && record.spec.job == spec.job
            && record.unreported.is_some()
        {
            // The last run ended in a way the next poll tells (it finished its work
            // while quitting): nothing starts before that is heard.
            return Ok(());
        }
        if let Some(record) = slots.get_mut(&spec.slot)
            && record.spec.job != spec.job
            && let Some(process) = record.process.as_mut()
        {
            if !process.ending() {
                return Err(ProcessError::Host(format!(
                    "slot {} is busy with {}; the task {} cannot start there",
                    spec.slot, record.spec.job, spec.job
                )));
            }
            // An aborted task's run on its way out: the new task waits for it (the start
            // is tried again shortly), then has the slot to itself.
            if let RunState::Alive(_) = process.poll(&record.spec, &self.config, self.clock.now()) {
                return Err(ProcessError::StillEnding { slot: spec.slot });
            }
            record.process = None;
        }
        if let Some(record) = slots.get_mut(&spec.slot)
            && let Some(process) = record.process.as_mut()
        {
            if !process.ending() {
                // Already running: a start is a resume.
                process.resume(spec.slot);
                return Ok(());
            }
            // A run asked to quit is not resumed: it is let go, and the task starts
            // afresh from its checkpoint once it has exited.
            match process.poll(&record.spec, &self.config, self.clock.now()) {
                RunState::Alive(_) => return Err(ProcessError::StillEnding { slot: spec.slot }),
                RunState::Exited { exit, status } => {
                    record.process = None;
                    record.last_status = Some(status);
                    record.unreported = Some(exit);
                    return Ok(());
                }
                RunState::Gone(status) => {
                    record.process = None;
                    record.last_status = Some(status);
                }
            }
        }
        let layout = SlotLayout::of(&self.config.data_dir, spec)?;
        let known = slots.get(&spec.slot).filter(|r| r.spec.job == spec.job);
        // The app resumes from its checkpoint in the slot: count from there.
        let later = known.and_then(|r| r.last_status).filter(|last| {
            last.checkpoint_cpu_time > spec.status.checkpoint_cpu_time && !last.finished
        });
        let spec = &match later {
            Some(last) => TaskSpec { status: last, ..spec.clone() },
            None => spec.clone(),
        };
        let known = known.is_some();
        let fresh = !known && layout.occupant().as_deref() != Some(result_name(spec));
        if !known
            && !fresh
            && let Some(exit) = finished_before(&layout, spec)
        {
            // The app finished, and a client killed before it wrote that down left the
            // slot as it was: the work is done, and the next poll says so.
            tracing::info!(
                slot = spec.slot,
                job = %spec.job,
                "the app finished before the client restarted; it is not run again"
            );
            let now = self.clock.now();
            let status = ProcessStatus {
                finished: true,
                fraction_done: 1.0,
                checkpoint_cpu_time: spec.status.current_cpu_time,
                checkpoint_elapsed_time: spec.status.elapsed_time,
                checkpoint_wall_time: now,
                ..spec.status
            };
            slots.insert(
                spec.slot,
                SlotRecord {
                    spec: spec.clone(),
                    layout,
                    process: None,
                    last_status: Some(status),
                    unreported: Some(exit),
                },
            );
            return Ok(());
        }
        let data_dir = self.config.data_dir.to_string_lossy();
        let mut init_data = InitData::for_task(
            spec,
            &layout.project_dir.to_string_lossy(),
            &data_dir,
            self.config.client_pid,
            self.config.host_info.clone(),
        );
        init_data.result_name = result_name(spec).to_owned();
        let process = TaskProcess::start(
            spec,
            layout.clone(),
            &init_data,
            fresh,
            self.contain,
            self.config.app_user.as_ref(),
        )?;
        tracing::info!(slot = spec.slot, job = %spec.job, pid = process.pid(), fresh, "app started");
        slots.insert(
            spec.slot,
            SlotRecord {
                spec: spec.clone(),
                layout,
                process: Some(process),
                last_status: None,
                unreported: None,
            },
        );
        Ok(())
    }

    fn with_process(
        &self,
        slot: u32,
        action: impl FnOnce(&mut TaskProcess),
    ) -> Result<(), ProcessError> {
        let mut slots = lock(&self.slots);
        let process = slots
            .get_mut(&slot)
            .and_then(|r| r.process.as_mut())
            .ok_or(ProcessError::NoProcess { slot })?;
        action(process);
        Ok(())
    }
}

/// How the run in a slot the task already occupies ended, when it finished (an API app
/// that called `boinc_finish`, with its outputs in place): `None` when it did not.
fn finished_before(layout: &SlotLayout, spec: &TaskSpec) -> Option<AppExit> {
    if !spec.program.uses_boinc_api() {
        return None;
    }
    let finish = FinishFile::parse(&layout.read_small(FINISH_FILE)?).ok()?;
    if finish.status != 0 {
        return Some(AppExit::ExitStatus(finish.status));
    }
    Some(match layout.missing_output(spec) {
        Some(open_name) => AppExit::OutputMissing(open_name),
        None => AppExit::Finished,
    })
}

/// The result name a task's slot is known by.
fn result_name(spec: &TaskSpec) -> &str {
    if spec.program.result_name.is_empty() { &spec.job } else { &spec.program.result_name }
}

impl ProcessHost for LiveProcessHost {
    fn command(&self, command: &TaskCommand) -> Result<(), ProcessError> {
        let config = &self.config;
        match command {
            TaskCommand::Start(spec) => self.start(spec),
            TaskCommand::Resume { slot, .. } => self.with_process(*slot, |p| p.resume(*slot)),
            TaskCommand::Preempt { slot, remove_from_memory: false, .. } => {
                self.with_process(*slot, |p| p.suspend(*slot))
            }
            TaskCommand::Preempt { slot, remove_from_memory: true, .. } => {
                self.with_process(*slot, |p| p.quit(config.quit_grace, *slot))
            }
            TaskCommand::Abort { slot, .. } => {
                self.with_process(*slot, |p| p.abort(config.abort_grace, *slot))
            }
            // The status every poll returns carries the checkpoint: nothing to arm.
            TaskCommand::WatchCheckpoint { .. } => Ok(()),
        }
    }

    fn poll(&self, slot: u32) -> Result<ProcessReport, ProcessError> {
        let now = self.clock.now();
        let mut slots = lock(&self.slots);
        let Some(record) = slots.get_mut(&slot) else { return Ok(ProcessReport::Gone) };
        let Some(process) = record.process.as_mut() else {
            return Ok(match record.unreported.take() {
                Some(exit) => {
                    ProcessReport::Exited { exit, status: record.last_status.unwrap_or_default() }
                }
                None => ProcessReport::Gone,
            });
        };
        match process.poll(&record.spec, &self.config, now) {
            RunState::Alive(status) => Ok(ProcessReport::Running(status)),
            RunState::Exited { exit, status } => {
                tracing::info!(slot, job = %record.spec.job, ?exit, "app exited");
                record.process = None;
                record.last_status = Some(status);
                Ok(ProcessReport::Exited { exit, status })
            }
            RunState::Gone(status) => {
                record.process = None;
                record.last_status = Some(status);
                Ok(ProcessReport::Gone)
            }
        }
    }

    fn tend(&self, slot: u32) -> Result<bool, ProcessError> {
        let mut slots = lock(&self.slots);
        let Some(record) = slots.get_mut(&slot) else { return Ok(false) };
        let Some(process) = record.process.as_mut() else { return Ok(false) };
        if !process.ending() {
            return Ok(false);
        }
        match process.poll(&record.spec, &self.config, self.clock.now()) {
            RunState::Alive(_) => Ok(true),
            RunState::Exited { exit, status } => {
                tracing::info!(slot, job = %record.spec.job, ?exit, "app ended while quitting");
                record.process = None;
                record.last_status = Some(status);
                record.unreported = Some(exit);
                Ok(false)
            }
            RunState::Gone(status) => {
                tracing::info!(slot, job = %record.spec.job, "app quit");
                record.process = None;
                record.last_status = Some(status);
                Ok(false)
            }
        }
    }

    fn reap(&self, slot: u32) -> Result<(), ProcessError> {
        let Some(mut record) = lock(&self.slots).remove(&slot) else { return Ok(()) };
        if let Some(mut process) = record.process.take() {
            process.kill(None);
            // SIGKILL takes effect promptly; the reap waits for it.
            let _ = process.poll(&record.spec, &self.config, self.clock.now());
        }
        let layout = &record.layout;
        let moved = layout.move_outputs(&record.spec);
        tracing::info!(slot, job = %record.spec.job, outputs = moved.len(), "task over; slot cleaned");
        if let Some(tail) = layout.stderr_tail() {
            let mut tails = lock(&self.stderr_tails);
            if tails.len() >= KEPT_STDERR_TAILS {
                tails.remove(0);
            }
            tails.push((record.spec.job.clone(), tail));
        }
        layout.remove().map_err(|source| ProcessError::Slot {
            slot,
            path: layout.slot_dir.clone(),
            source,
        })
    }

    fn kill(&self, slot: u32) -> Result<(), ProcessError> {
        self.with_process(slot, |p| p.kill(None))
    }

    fn discard(&self, slot: u32, job: &str) -> Result<(), ProcessError> {
        let mut slots = lock(&self.slots);
        // A new task may have the slot by now (its start waited for the aborted run).
        let ours = slots.get(&slot).is_some_and(|r| r.spec.job == job && r.process.is_none());
        let Some(record) = ours.then(|| slots.remove(&slot)).flatten() else { return Ok(()) };
        drop(slots);
        tracing::info!(slot, job, "task aborted; slot cleaned");
        let layout = &record.layout;
        layout.remove().map_err(|source| ProcessError::Slot {
            slot,
            path: layout.slot_dir.clone(),
            source,
        })
    }

    /// The last 63 KB of the standard error of `job` (what BOINC reports with a
    /// result): kept when its slot was cleaned, or read from the slot its ended task
    /// still holds (the slot is cleaned only after the state saying it ended is
    /// written, and the report is made before that). A kept tail is taken once.
    fn take_stderr(&self, job: &str) -> Option<String> {
        {
            let mut tails = lock(&self.stderr_tails);
            if let Some(at) = tails.iter().position(|(j, _)| j == job) {
                return Some(tails.remove(at).1);
            }
        }
        let slots = lock(&self.slots);
        slots.values().find(|r| r.spec.job == job).and_then(|r| r.layout.stderr_tail())
    }
}

impl Drop for LiveProcessHost {
    fn drop(&mut self) {
        let mut slots = lock(&self.slots);
        for record in slots.values_mut() {
            if let Some(mut process) = record.process.take() {
                process.kill(None);
                let _ = process.poll(&record.spec, &self.config, 0.0);
            }
        }
    }
}
