//! The emulated disk (seed 004 in the emulator): files arrive with jobs, are kept,
//! deleted and accounted exactly as the live client's disk manager plans it.
//!
//! A scenario emulates disk use when one of its apps gives file sizes
//! ([`crate::model::AppFiles`]: `<input_nbytes>`, `<sticky_nbytes>`, `<output_nbytes>`,
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
use crate::Time;
use crate::disk::{
    DataManager, Deletion, DiskEffect, DiskUsage, FileReferences, associate_file,
    data_manager_poll, occupies_disk, project_usage,
};
use crate::model::{ClientState, FileId, FileInfo, FileRef, FileStatus, JobId, ProjectId, RunMode};

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
    manager: DataManager,
    /// Free space on the disk if BOINC held nothing: `d_free` is this minus the usage.
    free_without_boinc: f64,
    /// The job that brought each file (by file index), for the trace.
    brought_by: Vec<Option<String>>,
    /// Files arrived or left since the last poll.
    dirty: bool,
    /// Usage last reported in the trace.
    reported_usage: Vec<f64>,
    /// The run mode to restore when a disk suspension ends.
    run_mode_before_suspension: RunMode,
}

impl DiskWorld {
    /// The disk of a scenario; enabled only when the scenario gives file sizes.
    pub fn new(state: &mut ClientState, now: Time, sink: &mut DiskSink<'_>) -> DiskWorld {
        let enabled = state.apps.iter().any(|a| a.emulation.is_some_and(|e| e.files.any()))
            || state.files.iter().any(|f| occupies_disk(f) && f.nbytes > 0.0);
        let usage: f64 = project_usage(state).iter().sum();
        let mut world = DiskWorld {
            enabled,
            manager: DataManager::default(),
            free_without_boinc: state.host.d_free.max(0.0) + usage,
            brought_by: vec![None; state.files.len()],
            dirty: true,
            reported_usage: Vec::new(),
            run_mode_before_suspension: state.run_mode,
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
        if !self.enabled || !self.dirty {
            return;
        }
        self.dirty = false;
        let outcome = data_manager_poll(&mut self.manager, state, 0.0, now);
        if outcome.found_violation {
            let usage = DiskUsage::measure(state, 0.0);
            for &project in &outcome.offenders {
                sink.figures.disk_violation(project);
                sink.event(now, || DiskEvent::Violation {
                    project: state.project(project).name.clone(),
                    usage: usage.project_usage[project.index()],
                    limit: usage.limits.project_limit(project),
                });
            }
        }
        for effect in outcome.effects {
            match effect {
                DiskEffect::Delete(deletion) => self.delete(state, deletion, now, sink),
                DiskEffect::ForgetResult(job) => forget_references(state, job),
                DiskEffect::SuspendComputation { message } => {
                    self.run_mode_before_suspension = state.run_mode;
                    state.run_mode = RunMode::Never;
                    sink.event(now, || DiskEvent::Suspended { suspended: true, message });
                }
                DiskEffect::ResumeComputation => {
                    state.run_mode = self.run_mode_before_suspension;
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
        self.forget_acknowledged(state);
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

    /// A file lands on disk after its association; when it cannot be associated it
    /// lands all the same (the job needs it) and the next poll handles the violation.
    fn arrive(
        &mut self,
        state: &mut ClientState,
        file: FileId,
        now: Time,
        sink: &mut DiskSink<'_>,
    ) {
        if let Ok(association) = associate_file(state, file, 0.0, now) {
            for deletion in association.deletions {
                self.delete(state, deletion, now, sink);
            }
        }
        let info = &mut state.files[file.index()];
        info.status = FileStatus::Present;
        info.download_time = now;
        info.time_last_used = now;
        self.dirty = true;
    }

    fn delete(
        &mut self,
        state: &mut ClientState,
        deletion: Deletion,
        now: Time,
        sink: &mut DiskSink<'_>,
    ) {
        state.files[deletion.file.index()].status = FileStatus::NotPresent;
        self.dirty = true;
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

    /// The client forgets acknowledged results at once (BOINC's clean-up after the
    /// server's ack); files nothing refers to any more go unless they are sticky.
    fn forget_acknowledged(&mut self, state: &mut ClientState) {
        let acknowledged: Vec<JobId> = state
            .job_ids()
            .filter(|&j| {
                let job = state.job(j);
                job.got_server_ack
                    && (!job.output_files.is_empty()
                        || !state.workunit(job.workunit).input_files.is_empty())
            })
            .collect();
        if acknowledged.is_empty() {
            return;
        }
        for job in acknowledged {
            forget_references(state, job);
        }
        let references = FileReferences::of(state);
        for (index, file) in state.files.iter_mut().enumerate() {
            if occupies_disk(file)
                && !file.sticky
                && !references.is_referenced(FileId::from_index(index))
            {
                file.status = FileStatus::NotPresent;
                self.dirty = true;
            }
        }
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

/// Drops an acknowledged result's references to its files.
fn forget_references(state: &mut ClientState, job: JobId) {
    let Some(record) = state.jobs.get_mut(job.index()) else { return };
    record.output_files.clear();
    let workunit = record.workunit;
    // The workunit's inputs go with its last job the server has not yet acknowledged.
    let still_used = state.jobs.iter().any(|j| j.workunit == workunit && !j.got_server_ack);
    if !still_used && let Some(workunit) = state.workunits.get_mut(workunit.index()) {
        workunit.input_files.clear();
    }
}
