//! The emulated disk (seed 004 in the emulator): files arrive with jobs, are kept,
//! deleted and accounted exactly as the live client's disk manager plans it.
//!
//! A scenario emulates disk use when one of its apps gives file sizes
//! ([`boinc_core::model::AppFiles`]: `<input_nbytes>`, `<sticky_nbytes>`, `<output_nbytes>`,
//! `<file_priority>`, `<file_exp_days>`) or its state lists present files with sizes.
//! Otherwise this module does nothing at all and runs stay byte-identical to runs
//! without it.
//!
//! The life of a job's files: when the job arrives, its input file and its sticky file
//! are associated with the project (`associate_file`, which may delete other files
//! first) and land on disk; when it finishes, its output file does the same. Once the
//! server acknowledges the job, the client forgets it: the input and output files go
//! with it (ordinary clean-up, not counted as deletions), the sticky file stays until
//! the disk manager needs its space. `data_manager_poll` runs at every step in which
//! files arrived or left; if it cannot bring usage within the limit, computation is
//! suspended (the run mode becomes "never") until it can. The server learns the three
//! free-space figures from every request (`control::build_request`). `host.d_free`
//! follows the files, so the minimum-free-space preference sees the disk fill up.

use super::figures::FiguresAccumulator;
use super::trace::{DiskEvent, TraceEvent};
use boinc_core::Time;
use boinc_core::disk::{
    Deletion, DiskChange, DiskControl, DiskUsage, FileReferences, occupies_disk, project_usage,
};
use boinc_core::model::{ClientState, FileId, FileInfo, FileRef, JobId, ProjectId};

/// Where the disk world reports: the figures and, when traced, the trace.
pub struct DiskSink<'a> {
    /// The run's figures.
    pub figures: &'a mut FiguresAccumulator,
    /// The trace, when the run keeps one.
    pub trace: Option<&'a mut Vec<TraceEvent>>,
}

impl<'a> DiskSink<'a> {
    /// The sink of a run: its figures, and its trace if `traced`.
    pub fn new(
        figures: &'a mut FiguresAccumulator,
        trace: &'a mut Vec<TraceEvent>,
        traced: bool,
    ) -> Self {
        DiskSink { figures, trace: traced.then_some(trace) }
    }

    fn event(&mut self, time: Time, what: impl FnOnce() -> DiskEvent) {
        if let Some(trace) = self.trace.as_mut() {
            trace.push(TraceEvent::Disk { time, what: what() });
        }
    }
}

/// The emulated disk's state beside the client state.
#[derive(Debug, Clone)]
pub struct DiskWorld {
    enabled: bool,
    /// The client's disk manager, as the live client runs it.
    control: DiskControl,
    /// Free space on the disk if BOINC held nothing: `d_free` is this minus the usage.
    free_without_boinc: f64,
    /// The job that brought each file (by file index), for the trace.
    brought_by: Vec<Option<String>>,
    /// Usage last reported in the trace.
    reported_usage: Vec<f64>,
}

impl DiskWorld {
    /// The disk of a scenario; enabled only when the scenario gives file sizes.
    pub fn new(state: &mut ClientState, now: Time, sink: &mut DiskSink<'_>) -> DiskWorld {
        let enabled = state.apps.iter().any(|a| a.emulation.is_some_and(|e| e.files.any()))
            || state.files.iter().any(|f| occupies_disk(f) && f.nbytes > 0.0);
        let usage: f64 = project_usage(state).iter().sum();
        let mut world = DiskWorld {
            enabled,
            control: DiskControl::new(state),
            free_without_boinc: state.host.d_free.max(0.0) + usage,
            brought_by: vec![None; state.files.len()],
            reported_usage: Vec::new(),
        };
        if enabled {
            sink.figures.enable_disk();
            let limits = DiskUsage::measure(state, 0.0).limits;
            sink.event(now, || DiskEvent::Limits {
                all_projects_limit: limits.all_projects_limit,
                project_limits: limits.project_limits.clone(),
            });
            world.report_usage(state, now, sink);
        }
        world
    }

    /// Whether the scenario emulates disk use.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Seed 004's `data_manager_poll`, when files arrived or left since the last one.
    pub fn poll(&mut self, state: &mut ClientState, now: Time, sink: &mut DiskSink<'_>) {
        if !self.enabled || !self.control.has_changes() {
            return;
        }
        for change in self.control.poll(state, 0.0, now) {
            match change {
                DiskChange::Violation { project, usage, limit } => {
                    sink.figures.disk_violation(project);
                    sink.event(now, || DiskEvent::Violation {
                        project: state.project(project).name.clone(),
                        usage,
                        limit,
                    });
                }
                DiskChange::Deleted(deletion) => self.deleted(state, deletion, now, sink),
                DiskChange::Suspended { message } => {
                    sink.event(now, || DiskEvent::Suspended { suspended: true, message });
                }
                DiskChange::Resumed => {
                    sink.event(now, || DiskEvent::Suspended {
                        suspended: false,
                        message: String::new(),
                    });
                }
            }
        }
        self.compact_files(state);
        self.report_usage(state, now, sink);
    }

    /// After a scheduler reply: acknowledged results are forgotten with their input and
    /// output files, and the new jobs' input and sticky files arrive.
    pub fn after_reply(
        &mut self,
        state: &mut ClientState,
        new_jobs: &[JobId],
        now: Time,
        sink: &mut DiskSink<'_>,
    ) {
        if !self.enabled {
            return;
        }
        self.control.forget_acknowledged(state);
        for &job in new_jobs {
            let record = state.job(job);
            let workunit = record.workunit;
            let project = record.project;
            let Some(files) = state.app(state.workunit(workunit).app).emulation.map(|e| e.files)
            else {
                continue;
            };
            if !files.any() {
                continue;
            }
            let name = record.name.clone();
            let mut inputs = Vec::new();
            for (suffix, nbytes, sticky) in
                [("in", files.input_nbytes, false), ("sticky", files.sticky_nbytes, true)]
            {
                if nbytes > 0.0 {
                    let file = self.add_file(state, project, &name, suffix, nbytes);
                    let info = &mut state.files[file.index()];
                    info.sticky = sticky;
                    if sticky {
                        info.priority = files.priority;
                        info.exp_days = files.exp_days;
                    }
                    inputs.push(file);
                }
            }
            state.workunits[workunit.index()]
                .input_files
                .extend(inputs.iter().map(|&file| FileRef::new(file)));
            if files.output_nbytes > 0.0 {
                let output = self.add_file(state, project, &name, "out", files.output_nbytes);
                state.files[output.index()].upload_when_present = true;
                state.jobs[job.index()].output_files.push(FileRef::new(output));
            }
            for file in inputs {
                self.arrive(state, file, now, sink);
            }
        }
        self.report_usage(state, now, sink);
        self.poll(state, now, sink);
    }

    /// A job finished: its output file is written (and, in the emulator, uploaded at
    /// once); its input files were just used.
    pub fn job_finished(
        &mut self,
        state: &mut ClientState,
        job: JobId,
        now: Time,
        sink: &mut DiskSink<'_>,
    ) {
        if !self.enabled {
            return;
        }
        let workunit = state.job(job).workunit;
        for index in 0..state.workunits[workunit.index()].input_files.len() {
            let file = state.workunits[workunit.index()].input_files[index].file;
            state.files[file.index()].time_last_used = now;
        }
        for index in 0..state.job(job).output_files.len() {
            let file = state.job(job).output_files[index].file;
            self.arrive(state, file, now, sink);
            state.files[file.index()].uploaded = true;
        }
        self.report_usage(state, now, sink);
        self.poll(state, now, sink);
    }

    fn add_file(
        &mut self,
        state: &mut ClientState,
        project: ProjectId,
        job: &str,
        suffix: &str,
        nbytes: f64,
    ) -> FileId {
        let id = FileId::from_index(state.files.len());
        state.files.push(FileInfo::new(project, format!("{job}.{suffix}"), nbytes));
        self.brought_by.push(Some(job.to_owned()));
        id
    }

    /// A file lands on disk after its association (which may delete others).
    fn arrive(
        &mut self,
        state: &mut ClientState,
        file: FileId,
        now: Time,
        sink: &mut DiskSink<'_>,
    ) {
        for deletion in self.control.arrive(state, file, 0.0, now) {
            self.deleted(state, deletion, now, sink);
        }
    }

    /// Records a deletion the disk manager made.
    fn deleted(
        &mut self,
        state: &ClientState,
        deletion: Deletion,
        now: Time,
        sink: &mut DiskSink<'_>,
    ) {
        sink.figures.file_deleted(deletion.project);
        let job = self.brought_by.get(deletion.file.index()).cloned().flatten();
        sink.event(now, || DiskEvent::FileDeleted {
            project: state.project(deletion.project).name.clone(),
            file: state.file(deletion.file).name.clone(),
            nbytes: deletion.nbytes,
            reason: deletion.reason.to_string(),
            job,
        });
    }

    /// Drops the records of files that are gone and that nothing refers to, once they
    /// are most of the list, so the disk manager's cost follows the files on disk.
    fn compact_files(&mut self, state: &mut ClientState) {
        let references = FileReferences::of(state);
        let keep: Vec<bool> = state
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| occupies_disk(f) || references.is_referenced(FileId::from_index(i)))
            .collect();
        let gone = keep.iter().filter(|k| !**k).count();
        if gone < 256 || gone * 2 < keep.len() {
            return;
        }
        let mut new_index = vec![usize::MAX; keep.len()];
        let mut next = 0;
        for (index, &k) in keep.iter().enumerate() {
            if k {
                new_index[index] = next;
                next += 1;
            }
        }
        let remap = |references: &mut Vec<FileRef>| {
            references.retain(|r| keep[r.file.index()]);
            for reference in references.iter_mut() {
                reference.file = FileId::from_index(new_index[reference.file.index()]);
            }
        };
        state.workunits.iter_mut().for_each(|w| remap(&mut w.input_files));
        state.jobs.iter_mut().for_each(|j| remap(&mut j.output_files));
        let mut position = 0;
        state.files.retain(|_| {
            position += 1;
            keep[position - 1]
        });
        let mut position = 0;
        self.brought_by.retain(|_| {
            position += 1;
            keep[position - 1]
        });
    }

    /// Keeps `d_free` in step with the files and traces the usage when it changed.
    fn report_usage(&mut self, state: &mut ClientState, now: Time, sink: &mut DiskSink<'_>) {
        let usage = project_usage(state);
        state.host.d_free = (self.free_without_boinc - usage.iter().sum::<f64>()).max(0.0);
        if usage != self.reported_usage {
            self.reported_usage = usage.clone();
            sink.event(now, || DiskEvent::Usage { project_usage: usage });
        }
    }
}
