//! Jobs (BOINC's "results") and their active tasks: what the estimates of seed 000 notes
//! 3–5 and the scheduling and enforcement policies read and change.

use super::ids::{AppVersionId, ProjectId, WorkunitId};
use super::workunit::FileRef;
use crate::Time;
use crate::supervise::RestartTracker;
use serde::{Deserialize, Serialize};

/// Where a job is in its life (BOINC's result `<state>` numbering, 0–7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum JobState {
    /// Received, input download not started (0).
    New,
    /// Input files downloading (1).
    FilesDownloading,
    /// Input present: the job can compute (2).
    FilesDownloaded,
    /// The computation failed (3).
    ComputeError,
    /// Output files uploading (4).
    FilesUploading,
    /// Output uploaded: ready to report (5).
    FilesUploaded,
    /// Aborted by the user or the project (6).
    Aborted,
    /// An output upload failed for good (7).
    UploadFailed,
}

impl JobState {
    /// The state from BOINC's number; `None` for a number BOINC doesn't define.
    pub fn from_code(code: i64) -> Option<JobState> {
        Some(match code {
            0 => JobState::New,
            1 => JobState::FilesDownloading,
            2 => JobState::FilesDownloaded,
            3 => JobState::ComputeError,
            4 => JobState::FilesUploading,
            5 => JobState::FilesUploaded,
            6 => JobState::Aborted,
            7 => JobState::UploadFailed,
            _ => return None,
        })
    }

    /// BOINC's number for the state.
    pub fn code(self) -> i64 {
        match self {
            JobState::New => 0,
            JobState::FilesDownloading => 1,
            JobState::FilesDownloaded => 2,
            JobState::ComputeError => 3,
            JobState::FilesUploading => 4,
            JobState::FilesUploaded => 5,
            JobState::Aborted => 6,
            JobState::UploadFailed => 7,
        }
    }

    /// Whether computing is over (successfully or not).
    pub fn computing_done(self) -> bool {
        !matches!(self, JobState::New | JobState::FilesDownloading | JobState::FilesDownloaded)
    }
}

/// Whether a task holds its processing resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SchedulerState {
    /// Has a slot but has never been started, or was quit.
    Uninitialized,
    /// Running now.
    Running,
    /// Suspended and kept in memory (a quit task goes back to `Uninitialized`).
    Preempted,
}

/// The most a task has held (BOINC's `peak_*`), bytes; 0: not measured.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct TaskPeaks {
    /// Resident memory of its processes (`peak_working_set_size`).
    pub working_set_size: f64,
    /// Swap (`peak_swap_size`).
    pub swap_size: f64,
    /// Disk its slot directory took (`peak_disk_usage`).
    pub disk_usage: f64,
}

impl ProcessUsage {
    /// Whether nothing was measured (no process).
    pub fn is_none(&self) -> bool {
        *self == ProcessUsage::default()
    }
}

impl TaskPeaks {
    /// The larger of each figure: peaks only grow, and a run restarted from its
    /// checkpoint measures afresh without lowering what was already seen.
    pub fn max(self, other: TaskPeaks) -> TaskPeaks {
        TaskPeaks {
            working_set_size: self.working_set_size.max(other.working_set_size),
            swap_size: self.swap_size.max(other.swap_size),
            disk_usage: self.disk_usage.max(other.disk_usage),
        }
    }
}

/// What a task's process uses now, as the host measures it: what the GUIs show of a
/// running task (BOINC's `<pid>`, `<swap_size>`, `<working_set_size>`,
/// `<page_fault_rate>`). All zero while the task has no process; never saved, since a
/// restarted client measures afresh.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ProcessUsage {
    /// The app's process id (0: no process).
    pub pid: u32,
    /// Resident memory of its processes now, bytes.
    pub working_set_size: f64,
    /// Resident memory smoothed over the measurements (each one half of the figure),
    /// bytes.
    pub working_set_size_smoothed: f64,
    /// Swap its processes hold, bytes.
    pub swap_size: f64,
    /// Major page faults a second.
    pub page_fault_rate: f64,
}

/// A job that has started at some point: it has a slot directory (seed 001 "active").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActiveTask {
    /// Running or preempted.
    pub scheduler_state: SchedulerState,
    /// Wall time the task has run, seconds (seed 000 note 3: estimates use elapsed time).
    pub elapsed_time: f64,
    /// CPU time the task has used, seconds.
    pub current_cpu_time: f64,
    /// Fraction done the app last reported (0–1).
    pub fraction_done: f64,
    /// Elapsed time at the task's last checkpoint: what survives a quit.
    pub checkpoint_elapsed_time: f64,
    /// CPU time at the last checkpoint.
    pub checkpoint_cpu_time: f64,
    /// Wall-clock time of the last checkpoint (0: none yet).
    pub checkpoint_wall_time: Time,
    /// When the current run episode started (the step 6 hysteresis of seed 000 asks
    /// whether it has run less than a scheduling period).
    pub run_start_time: Time,
    /// Resident memory of the task, smoothed over its measurements (BOINC's
    /// `working_set_size_smoothed`, which its memory checks read), bytes (0: unknown).
    pub working_set_size: f64,
    /// What its process uses now (zero while it has none).
    #[serde(default, skip_serializing_if = "ProcessUsage::is_none")]
    pub process: ProcessUsage,
    /// The most the task has held over all its runs.
    #[serde(default)]
    pub peaks: TaskPeaks,
    /// The task has run in EDF mode at some time.
    pub once_ran_edf: bool,
    /// Slot directory number.
    pub slot: u32,
    /// The coprocessor instances the task runs on while it holds them (empty for CPU
    /// tasks and tasks not running): enforcement keeps a running GPU task on its device.
    #[serde(default)]
    pub gpu_instances: Vec<u32>,
    /// The app's crashes (the restart limit counts them): kept in the state file, so that
    /// a restart of the client does not start the count again.
    #[serde(default, skip_serializing_if = "RestartTracker::is_clear")]
    pub crashes: RestartTracker,
    /// The app crashed and is restarted at this time (from its checkpoint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_at: Option<Time>,
    /// Its working set does not fit the memory the preferences leave the apps: it waits
    /// for memory (BOINC's `too_large`, "Waiting for memory" in the Manager). Not kept
    /// in the state file: the next decision finds it again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub too_large: bool,
}

impl ActiveTask {
    /// A task that is about to start for the first time.
    pub fn new(slot: u32) -> Self {
        ActiveTask {
            scheduler_state: SchedulerState::Uninitialized,
            elapsed_time: 0.0,
            current_cpu_time: 0.0,
            fraction_done: 0.0,
            checkpoint_elapsed_time: 0.0,
            checkpoint_cpu_time: 0.0,
            checkpoint_wall_time: 0.0,
            run_start_time: 0.0,
            working_set_size: 0.0,
            process: ProcessUsage::default(),
            peaks: TaskPeaks::default(),
            once_ran_edf: false,
            slot,
            gpu_instances: Vec::new(),
            crashes: RestartTracker::new(),
            restart_at: None,
            too_large: false,
        }
    }

    /// Whether the task holds its resources now.
    pub fn is_running(&self) -> bool {
        self.scheduler_state == SchedulerState::Running
    }

    /// Elapsed time that would be lost if the task were quit now.
    pub fn time_since_checkpoint(&self) -> f64 {
        (self.elapsed_time - self.checkpoint_elapsed_time).max(0.0)
    }

    /// The app process is gone (quit, or the client started without it): the task
    /// goes back to `Uninitialized`, rolled back to its checkpoint, which is where the
    /// app restarts.
    pub fn quit(&mut self) {
        self.scheduler_state = SchedulerState::Uninitialized;
        self.process = ProcessUsage::default();
        self.gpu_instances.clear();
        if self.elapsed_time > 0.0 {
            self.fraction_done *= self.checkpoint_elapsed_time / self.elapsed_time;
        }
        self.elapsed_time = self.checkpoint_elapsed_time;
        self.current_cpu_time = self.checkpoint_cpu_time;
    }
}

/// One job (BOINC's result): an instance of a workunit the client must compute and report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// The project.
    pub project: ProjectId,
    /// Name, unique within the project.
    pub name: String,
    /// The workunit it computes.
    pub workunit: WorkunitId,
    /// The app version it runs with (`None`: the state named a version we don't have;
    /// such a job is never runnable).
    pub app_version: Option<AppVersionId>,
    /// The platform of the app version the server assigned (`<platform>`).
    #[serde(default)]
    pub platform: String,
    /// The version number of the app version the server assigned (`<version_num>`).
    #[serde(default)]
    pub version_num: u32,
    /// The plan class of the app version the server assigned (`<plan_class>`).
    #[serde(default)]
    pub plan_class: String,
    /// When the client received it.
    pub received_time: Time,
    /// When it must be reported.
    pub report_deadline: Time,
    /// Life-cycle state.
    pub state: JobState,
    /// The user suspended this job.
    pub suspended: bool,
    /// Computing finished and outputs uploaded: report at the next RPC.
    pub ready_to_report: bool,
    /// The server acknowledged the report: the job can be forgotten.
    pub got_server_ack: bool,
    /// When computing finished (0: not yet).
    pub completed_time: Time,
    /// Elapsed time of the finished computation.
    pub final_elapsed_time: f64,
    /// CPU time of the finished computation (`<final_cpu_time>`).
    #[serde(default)]
    pub final_cpu_time: f64,
    /// Exit status of the app (for finished jobs).
    pub exit_status: i32,
    /// What the app wrote to its standard error (`<stderr_out>`), reported to the
    /// project with the result.
    #[serde(default)]
    pub stderr_out: String,
    /// The peaks of the finished computation (`<final_peak_working_set_size>`,
    /// `<final_peak_swap_size>`, `<final_peak_disk_usage>`).
    #[serde(default)]
    pub final_peaks: TaskPeaks,
    /// The task, if it has started.
    pub task: Option<ActiveTask>,
    /// Output files (the result's `<file_ref>`s, with the names the app writes them
    /// by): held on disk until the result is acknowledged (seed 004: never deleted while
    /// the result is unreported).
    #[serde(default)]
    pub output_files: Vec<FileRef>,
}

impl Job {
    /// A job just received with its input present: ready to run, never started. This is
    /// what a scheduler reply's job becomes once its files are in place.
    pub fn downloaded(
        project: ProjectId,
        name: impl Into<String>,
        workunit: WorkunitId,
        app_version: AppVersionId,
        received_time: Time,
        report_deadline: Time,
    ) -> Job {
        Job {
            project,
            name: name.into(),
            workunit,
            app_version: Some(app_version),
            platform: String::new(),
            version_num: 0,
            plan_class: String::new(),
            received_time,
            report_deadline,
            state: JobState::FilesDownloaded,
            suspended: false,
            ready_to_report: false,
            got_server_ack: false,
            completed_time: 0.0,
            final_elapsed_time: 0.0,
            final_cpu_time: 0.0,
            exit_status: 0,
            stderr_out: String::new(),
            final_peaks: TaskPeaks::default(),
            task: None,
            output_files: Vec::new(),
        }
    }

    /// Whether the job's task is running now.
    pub fn is_running(&self) -> bool {
        self.task.as_ref().is_some_and(ActiveTask::is_running)
    }

    /// Elapsed time so far (0 for a job never started).
    pub fn elapsed_time(&self) -> f64 {
        self.task.as_ref().map_or(0.0, |t| t.elapsed_time)
    }

    /// The job's task ends for good (finished, failed or aborted): its elapsed and CPU
    /// times become the job's final ones, which its report carries (projects grant
    /// credit from the CPU time), and the task goes.
    pub fn end_task(&mut self) {
        self.final_elapsed_time = self.elapsed_time();
        if let Some(task) = self.task.take() {
            self.final_cpu_time = task.current_cpu_time;
            self.final_peaks = task.peaks;
        }
    }

    /// Adds what the project is told about how the job's app ended to its
    /// `<stderr_out>`, in BOINC's form: the client's `message` (why it ended in an error)
    /// as a `<message>` block, then the app's standard error, `stderr_txt` (its reported
    /// tail, at most [`STDERR_REPORT_BYTES`]), in `<stderr_txt>`. What the text already
    /// holds (a transfer error) stays ahead of them.
    ///
    /// [`STDERR_REPORT_BYTES`]: crate::protocol::app_api::STDERR_REPORT_BYTES
    pub fn report_app_output(&mut self, message: Option<&str>, stderr_txt: Option<&str>) {
        let out = &mut self.stderr_out;
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        if let Some(message) = message {
            out.push_str("<message>\n");
            out.push_str(message);
            out.push_str("\n</message>\n");
        }
        if let Some(text) = stderr_txt {
            // The tail may start inside a UTF-8 character or hold a stray `]]>`: the
            // writer of the request mends both when it puts the text in CDATA.
            let limit = crate::protocol::app_api::STDERR_REPORT_BYTES;
            let mut start = text.len().saturating_sub(limit);
            while !text.is_char_boundary(start) {
                start += 1;
            }
            out.push_str("<stderr_txt>\n");
            out.push_str(&text[start..]);
            out.push_str("\n</stderr_txt>\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::app_api::STDERR_REPORT_BYTES;

    fn job() -> Job {
        Job::downloaded(ProjectId(0), "r", WorkunitId(0), AppVersionId(0), 0.0, 1.0)
    }

    #[test]
    fn the_apps_output_is_reported_in_boincs_form_after_what_was_there() {
        let mut failed = job();
        failed.stderr_out = "<file_xfer_error/>".into();
        failed.report_app_output(Some("app exited with status 3"), Some("bad input\n"));
        assert_eq!(
            failed.stderr_out,
            "<file_xfer_error/>\n<message>\napp exited with status 3\n</message>\n\
             <stderr_txt>\nbad input\n\n</stderr_txt>\n"
        );
        // A finished app that wrote nothing: BOINC's empty block.
        let mut quiet = job();
        quiet.report_app_output(None, Some(""));
        assert_eq!(quiet.stderr_out, "<stderr_txt>\n\n</stderr_txt>\n");
    }

    #[test]
    fn only_the_reported_tail_of_a_long_stderr_is_kept() {
        let mut noisy = job();
        let text = format!("{}é{}", "x".repeat(10), "y".repeat(STDERR_REPORT_BYTES));
        noisy.report_app_output(None, Some(&text));
        let kept = noisy.stderr_out.len() - "<stderr_txt>\n\n</stderr_txt>\n".len();
        assert!(kept <= STDERR_REPORT_BYTES, "{kept}");
        assert!(noisy.stderr_out.ends_with("yyy\n</stderr_txt>\n"));
    }

    #[test]
    fn peaks_only_grow_and_end_with_the_task() {
        let small = TaskPeaks { working_set_size: 5.0, swap_size: 0.0, disk_usage: 9.0 };
        let large = TaskPeaks { working_set_size: 7.0, swap_size: 1.0, disk_usage: 3.0 };
        let both = TaskPeaks { working_set_size: 7.0, swap_size: 1.0, disk_usage: 9.0 };
        assert_eq!(small.max(large), both);
        let mut ended = job();
        let mut task = ActiveTask::new(0);
        task.peaks = both;
        ended.task = Some(task);
        ended.end_task();
        assert_eq!(ended.final_peaks, both);
    }
}
