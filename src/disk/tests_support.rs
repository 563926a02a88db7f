//! Small client states for the disk manager's tests: projects with shares, present
//! files, and jobs referring to them.

use crate::model::{
    ActiveTask, AppId, ClientState, FileId, FileInfo, FileRef, FileStatus, Job, JobId, JobState,
    Project, ProjectId, SchedulerState, Workunit, WorkunitId,
};

#[derive(Debug, Clone)]
pub(crate) struct DiskStateBuilder {
    pub state: ClientState,
}

impl DiskStateBuilder {
    /// Projects `p0`, `p1`, … with the given resource shares.
    pub fn new(shares: &[f64]) -> Self {
        let mut state = ClientState::default();
        for (i, &share) in shares.iter().enumerate() {
            state.projects.push(Project::new(format!("p{i}"), format!("http://p{i}/"), share));
        }
        DiskStateBuilder { state }
    }

    /// A present file of `nbytes` downloaded at `download_time`.
    pub fn file(
        &mut self,
        project: usize,
        nbytes: f64,
        sticky: bool,
        download_time: f64,
    ) -> FileId {
        let id = FileId::from_index(self.state.files.len());
        let mut file =
            FileInfo::new(ProjectId::from_index(project), format!("f{}", id.index()), nbytes);
        file.status = FileStatus::Present;
        file.sticky = sticky;
        file.download_time = download_time;
        self.state.files.push(file);
        id
    }

    /// A job with its own workunit; `acknowledged`: the server has acknowledged it.
    pub fn job(
        &mut self,
        project: usize,
        inputs: &[FileId],
        outputs: &[FileId],
        acknowledged: bool,
    ) -> JobId {
        let project = ProjectId::from_index(project);
        let workunit = WorkunitId::from_index(self.state.workunits.len());
        let id = JobId::from_index(self.state.jobs.len());
        self.state.workunits.push(Workunit {
            project,
            name: format!("wu{}", id.index()),
            app: AppId(0),
            rsc_fpops_est: 1e12,
            rsc_fpops_bound: 1e13,
            rsc_memory_bound: 0.0,
            rsc_disk_bound: 0.0,
            command_line: String::new(),
            input_files: inputs.iter().map(|&f| FileRef::new(f)).collect(),
        });
        let mut job = Job {
            project,
            name: format!("job{}", id.index()),
            workunit,
            app_version: None,
            platform: String::new(),
            version_num: 0,
            plan_class: String::new(),
            received_time: 0.0,
            report_deadline: 1e9,
            state: JobState::FilesDownloaded,
            suspended: false,
            ready_to_report: false,
            got_server_ack: acknowledged,
            completed_time: 0.0,
            final_elapsed_time: 0.0,
            final_cpu_time: 0.0,
            exit_status: 0,
            stderr_out: String::new(),
            final_peaks: Default::default(),
            task: None,
            output_files: outputs.iter().map(|&f| FileRef::new(f)).collect(),
        };
        if acknowledged {
            job.state = JobState::FilesUploaded;
            job.ready_to_report = true;
        }
        self.state.jobs.push(job);
        id
    }

    /// A job whose task is running.
    pub fn running_job(&mut self, project: usize, inputs: &[FileId], outputs: &[FileId]) -> JobId {
        let id = self.job(project, inputs, outputs, false);
        let mut task = ActiveTask::new(0);
        task.scheduler_state = SchedulerState::Running;
        self.state.jobs[id.index()].task = Some(task);
        id
    }
}
