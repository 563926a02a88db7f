//! What a user (or a host program, or a GUI RPC client) asks of the client, and what it
//! does to the state: suspending and resuming projects and tasks, aborting a task, the
//! run modes, asking a project for an RPC, "no new tasks", detaching and attaching.
//! The control loop applies an action at once and schedules again, so its effect on the
//! processes (a task suspended, a job started) follows in the same instant.

use super::anonymous_platform::take_app_info;
use super::attach::apply_accounts;
use crate::Time;
use crate::model::{
    AppConfig, CcConfig, ClientState, FileStatus, FileTransferState, JobId, JobState, Prefs,
    ProjectId, RunMode,
};
use crate::protocol::{Account, AppInfo};
use crate::work_fetch::clear_backoff;
use serde::{Deserialize, Serialize};

/// BOINC's exit status for a result the user aborted.
pub const EXIT_ABORTED_VIA_GUI: i32 = 203;

/// An action a user asks for. Projects are named by name or master URL, tasks by their
/// job (result) name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum UserAction {
    /// Suspend a project: its tasks stop, it is not asked for work.
    SuspendProject(String),
    /// Resume a project.
    ResumeProject(String),
    /// Suspend a task.
    SuspendTask(String),
    /// Resume a task.
    ResumeTask(String),
    /// Abort a task: its process is killed, its job ends in an error and is reported.
    AbortTask(String),
    /// Set the computing run mode.
    SetRunMode(RunMode),
    /// Set the GPU run mode.
    SetGpuMode(RunMode),
    /// Set the network mode.
    SetNetworkMode(RunMode),
    /// Contact the project's scheduler at the next opportunity (report, fetch).
    UpdateProject(String),
    /// "No new tasks": don't ask the project for work.
    NoMoreWork(String),
    /// Allow asking the project for work again.
    AllowMoreWork(String),
    /// Detach from a project: it gets no more work and its jobs are dropped (running
    /// ones are aborted).
    Detach(String),
    /// Detach from a project once its tasks are done and reported (true), or not
    /// (false); until then it gets no more work.
    DetachWhenDone(String, bool),
    /// Attach (again) to a project the client knows by its master URL or name.
    Attach(String),
    /// Attach with an account (an account file written by `boinc-rs attach`, a GUI RPC
    /// `project_attach`, an account manager): a project the client does not know yet
    /// is added and contacts its server at the next opportunity; a known one is
    /// attached again, or takes the new authenticator.
    AttachAccount {
        /// The project's master URL.
        master_url: String,
        /// The account's key.
        authenticator: String,
        /// The project's name, when known (the master URL stands for it until the
        /// server tells).
        project_name: Option<String>,
    },
    /// The project's resource share on this host (an account manager sets it).
    SetResourceShare {
        /// The project's name or master URL.
        project: String,
        /// The share (positive and finite; anything else is refused).
        share: f64,
    },
    /// Whether the project was attached through the account manager (which may then
    /// detach it).
    SetAttachedViaAccountManager {
        /// The project's name or master URL.
        project: String,
        /// Attached through the manager.
        attached: bool,
    },
    /// Reset a project: its jobs are dropped (running ones aborted) and its backoffs
    /// cleared, and it is asked for work again, as if newly attached.
    ResetProject(String),
    /// Preferences re-read by the host (global_prefs.xml with its override on top).
    SetPreferences(Box<Prefs>),
    /// Client options re-read by the host (cc_config.xml).
    SetConfig(Box<CcConfig>),
    /// Projects' app_config.xml re-read by the host, by master URL: applied to each
    /// project's apps and app versions (a project no longer attached is skipped).
    SetAppConfigs(Vec<(String, AppConfig)>),
    /// A project's app_info.xml read by the host, its missing files left out: the
    /// volunteer's own apps, which the project is run with from now on (BOINC's
    /// anonymous platform; `control::anonymous_platform`).
    TakeAppInfo {
        /// The project's master URL.
        master_url: String,
        /// What the file declares.
        app_info: Box<AppInfo>,
    },
    /// Retry a file's download or upload now: its own backoff and its project's
    /// backoff in that direction end (the Manager's "Retry now", `boinccmd
    /// --file_transfer URL NAME retry`).
    RetryFileTransfer {
        /// The project's master URL or name.
        project: String,
        /// The file's name.
        file: String,
    },
    /// Give a file's download or upload up: the file is unusable and the tasks that
    /// need it end in an error and are reported (`boinccmd --file_transfer URL NAME
    /// abort`).
    AbortFileTransfer {
        /// The project's master URL or name.
        project: String,
        /// The file's name.
        file: String,
    },
}

/// BOINC's error for a file transfer the user aborted (`ERR_ABORTED_VIA_GUI`).
pub const ERR_ABORTED_VIA_GUI: i32 = -197;

/// Why an action could not be applied.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
pub enum UserActionError {
    /// No project with that name or master URL.
    #[error(
        "no project named or with master URL '{0}'; `boinc-rs status` lists the attached projects"
    )]
    UnknownProject(String),
    /// No task (job) with that name.
    #[error("no task named '{0}'; `boinc-rs tasks` lists the tasks")]
    UnknownTask(String),
    /// The task is finished: there is nothing to suspend, resume or abort.
    #[error("task '{0}' has already finished computing")]
    TaskDone(String),
    /// A resource share must be a positive number.
    #[error("a resource share must be a positive number, not {0}")]
    BadResourceShare(String),
    /// An account without a master URL or an authenticator carries nothing to attach.
    #[error(
        "an account needs both a master URL and an authenticator; the project's web site shows the account key"
    )]
    IncompleteAccount,
    /// No download or upload of that file is waiting.
    #[error(
        "no transfer of file '{file}' of project '{project}' is waiting; `boinccmd --get_file_transfers` lists them"
    )]
    NoSuchTransfer {
        /// The project named.
        project: String,
        /// The file named.
        file: String,
    },
}

/// What an applied action asks of the control loop beyond the state change.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ActionEffect {
    /// Jobs whose tasks must be aborted now (their processes killed).
    pub abort: Vec<JobId>,
    /// Jobs to drop from the state altogether (a detached project's).
    pub forget: Vec<JobId>,
}

/// Finds a project by name or master URL (the URL first: names may clash).
pub fn find_project(state: &ClientState, name: &str) -> Result<ProjectId, UserActionError> {
    state
        .project_ids()
        .find(|&p| state.project(p).master_url == name)
        .or_else(|| state.project_ids().find(|&p| state.project(p).name == name))
        .ok_or_else(|| UserActionError::UnknownProject(name.to_string()))
}

/// Finds a job by name.
pub fn find_job(state: &ClientState, name: &str) -> Result<JobId, UserActionError> {
    state
        .job_ids()
        .find(|&j| state.job(j).name == name)
        .ok_or_else(|| UserActionError::UnknownTask(name.to_string()))
}

/// Applies `action` to the state at `now`.
pub fn apply_user_action(
    state: &mut ClientState,
    action: &UserAction,
    now: Time,
) -> Result<ActionEffect, UserActionError> {
    let mut effect = ActionEffect::default();
    match action {
        UserAction::SuspendProject(name) => {
            let p = find_project(state, name)?;
            state.projects[p.index()].suspended = true;
        }
        UserAction::ResumeProject(name) => {
            let p = find_project(state, name)?;
            let project = &mut state.projects[p.index()];
            // A detached project stays suspended until it is attached again.
            project.suspended = project.detached;
        }
        UserAction::SuspendTask(name) | UserAction::ResumeTask(name) => {
            let j = find_job(state, name)?;
            if state.job(j).state.computing_done() {
                return Err(UserActionError::TaskDone(name.clone()));
            }
            state.jobs[j.index()].suspended = matches!(action, UserAction::SuspendTask(_));
        }
        UserAction::AbortTask(name) => {
            let j = find_job(state, name)?;
            if state.job(j).state.computing_done() {
                return Err(UserActionError::TaskDone(name.clone()));
            }
            abort_job(state, j, now);
            effect.abort.push(j);
        }
        UserAction::SetRunMode(mode) => state.run_mode = *mode,
        UserAction::SetGpuMode(mode) => state.gpu_mode = *mode,
        UserAction::SetNetworkMode(mode) => state.network_mode = *mode,
        UserAction::UpdateProject(name) => {
            let p = find_project(state, name)?;
            let project = &mut state.projects[p.index()];
            project.sched_rpc_pending = true;
            // The user asked: the project's own delay request stands, but a backoff
            // from failures does not (as BOINC's "Update" does), nor the backoffs of
            // resources it had no work for: the user wants to know whether it has some
            // now (it may have just been given work to hand out).
            if project.nrpc_failures > 0 {
                project.min_rpc_time = project.min_rpc_time.min(now);
            }
            for (_, resource) in project.resources.iter_mut() {
                clear_backoff(resource);
            }
        }
        UserAction::NoMoreWork(name) => {
            let p = find_project(state, name)?;
            state.projects[p.index()].dont_request_more_work = true;
        }
        UserAction::AllowMoreWork(name) => {
            let p = find_project(state, name)?;
            let project = &mut state.projects[p.index()];
            project.dont_request_more_work = project.detached;
        }
        UserAction::DetachWhenDone(name, detach) => {
            let p = find_project(state, name)?;
            let project = &mut state.projects[p.index()];
            project.detach_when_done = *detach;
            // BOINC asks for no more work from a project it will leave.
            project.dont_request_more_work = *detach;
        }
        UserAction::Detach(name) => {
            let p = find_project(state, name)?;
            let project = &mut state.projects[p.index()];
            project.detached = true;
            project.suspended = true;
            project.dont_request_more_work = true;
            project.sched_rpc_pending = false;
            // Attached again, the client is a new host to the project (as BOINC, which
            // forgets a detached project): the project does not send the old tasks
            // again as lost ones.
            project.hostid = 0;
            project.rpc_seqno = 0;
            drop_jobs_of(state, p, &mut effect);
            forget_project_files(state, p);
        }
        UserAction::Attach(name) => {
            let p = find_project(state, name)?;
            let project = &mut state.projects[p.index()];
            project.detached = false;
            project.suspended = false;
            project.dont_request_more_work = false;
            project.sched_rpc_pending = true;
        }
        UserAction::AttachAccount { master_url, authenticator, project_name } => {
            if master_url.trim().is_empty() || authenticator.trim().is_empty() {
                return Err(UserActionError::IncompleteAccount);
            }
            let account = Account {
                master_url: master_url.clone(),
                authenticator: authenticator.clone(),
                project_name: project_name.clone(),
                project_preferences: None,
            };
            apply_accounts(state, std::slice::from_ref(&account));
        }
        UserAction::SetResourceShare { project, share } => {
            if !share.is_finite() || *share <= 0.0 {
                return Err(UserActionError::BadResourceShare(share.to_string()));
            }
            let p = find_project(state, project)?;
            state.projects[p.index()].resource_share = *share;
        }
        UserAction::SetAttachedViaAccountManager { project, attached } => {
            let p = find_project(state, project)?;
            state.projects[p.index()].account.attached_via_acct_mgr = *attached;
        }
        UserAction::ResetProject(name) => {
            let p = find_project(state, name)?;
            let project = &mut state.projects[p.index()];
            project.sched_rpc_pending = !project.detached;
            project.nrpc_failures = 0;
            project.min_rpc_time = project.min_rpc_time.min(now);
            for (_, resource) in project.resources.iter_mut() {
                clear_backoff(resource);
            }
            drop_jobs_of(state, p, &mut effect);
            forget_project_files(state, p);
        }
        UserAction::SetPreferences(prefs) => state.prefs = Prefs::clone(prefs),
        UserAction::SetConfig(config) => state.config = (**config).clone(),
        UserAction::SetAppConfigs(configs) => {
            for (url, config) in configs {
                if let Some(p) = state.project_by_url(url) {
                    config.apply(state, p);
                }
            }
        }
        UserAction::TakeAppInfo { master_url, app_info } => {
            let p = find_project(state, master_url)?;
            take_app_info(state, p, app_info);
        }
        UserAction::RetryFileTransfer { project, file } => {
            let (p, f, upload) = find_transfer(state, project, file)?;
            let record = &mut state.files[f];
            record.transfer.next_request_time = 0.0;
            record.transfer_deferred = false;
            let backoffs = &mut state.projects[p.index()].transfer_backoff;
            let backoff = if upload { &mut backoffs.upload } else { &mut backoffs.download };
            *backoff = Default::default();
        }
        UserAction::AbortFileTransfer { project, file } => {
            let (_, f, _) = find_transfer(state, project, file)?;
            let record = &mut state.files[f];
            // The next transfer step ends the jobs that need the file (or that were to
            // send it) as for any file given up; an attempt still under way is
            // discarded when it ends.
            record.status = FileStatus::Error(ERR_ABORTED_VIA_GUI);
            record.transfer_deferred = false;
            record.transfer.last_error = "user requested transfer abort".to_string();
        }
    }
    Ok(effect)
}

/// The file of `project` named `file` whose download or upload is waiting (or under
/// way): its project, its index, and whether it is an upload.
fn find_transfer(
    state: &ClientState,
    project: &str,
    file: &str,
) -> Result<(ProjectId, usize, bool), UserActionError> {
    let p = find_project(state, project)?;
    let missing = || UserActionError::NoSuchTransfer { project: project.into(), file: file.into() };
    let index =
        state.files.iter().position(|f| f.project == p && f.name == file).ok_or_else(missing)?;
    let record = &state.files[index];
    let upload = record.upload_when_present && !record.uploaded;
    let waiting = match record.status {
        FileStatus::Present => upload,
        FileStatus::NotPresent => !record.download_urls.is_empty(),
        FileStatus::Error(_) => false,
    };
    if !waiting {
        return Err(missing());
    }
    Ok((p, index, upload))
}

/// Drops every job of project `p` (detach, reset): those with a task are aborted
/// first, suspended ones too (one suspended in memory still has its process).
fn drop_jobs_of(state: &ClientState, p: ProjectId, effect: &mut ActionEffect) {
    for j in state.job_ids().filter(|&j| state.job(j).project == p) {
        if state.job(j).task.is_some() {
            effect.abort.push(j);
        }
        effect.forget.push(j);
    }
}

/// The files of project `p` are no longer held (a detach removes its directory; a
/// reset starts it afresh, as BOINC deletes them): a job that needs one downloads it
/// again, app included, rather than starting an app that is not there.
fn forget_project_files(state: &mut ClientState, p: ProjectId) {
    // The volunteer's own files (app_info.xml) are theirs: a reset keeps them.
    for file in state.files.iter_mut().filter(|f| f.project == p && !f.anonymous_platform) {
        file.status = FileStatus::NotPresent;
        file.uploaded = false;
        file.transfer_deferred = false;
        file.transfer = FileTransferState::default();
        file.download_time = 0.0;
        file.time_last_used = 0.0;
    }
}

/// Ends job `j` as aborted by the user: reported with BOINC's "aborted via GUI" status.
fn abort_job(state: &mut ClientState, j: JobId, now: Time) {
    let job = &mut state.jobs[j.index()];
    job.final_elapsed_time = job.elapsed_time();
    job.state = JobState::Aborted;
    job.exit_status = EXIT_ABORTED_VIA_GUI;
    job.ready_to_report = true;
    job.completed_time = now;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{SyntheticHost, synthetic_host};

    fn state() -> ClientState {
        synthetic_host(SyntheticHost {
            ncpus: 4,
            njobs: 60,
            running_prefix: 8,
            seed: 3,
            now: 1000.0,
        })
    }

    /// An app file of project `p` the client holds.
    fn present_file(p: ProjectId) -> crate::model::FileInfo {
        let mut file = crate::model::FileInfo::new(p, "app_1.0".to_string(), 1e6);
        file.status = FileStatus::Present;
        file
    }

    #[test]
    fn projects_are_found_by_url_before_name() {
        let mut s = state();
        s.projects[1].name = s.projects[0].master_url.clone();
        assert_eq!(find_project(&s, &s.projects[0].master_url.clone()), Ok(ProjectId(0)));
        assert!(matches!(find_project(&s, "nobody"), Err(UserActionError::UnknownProject(_))));
    }

    #[test]
    fn detach_drops_every_job_and_aborts_the_running_ones() {
        let mut s = state();
        let p = s.jobs.iter().find(|j| j.is_running()).map(|j| j.project).unwrap();
        let url = s.project(p).master_url.clone();
        s.files.push(present_file(p));
        // A task of p suspended in memory: its process must go too.
        let waiting = s.job_ids().find(|&j| s.job(j).project == p && s.job(j).task.is_none());
        let waiting = waiting.expect("a job of p not started");
        let mut task = crate::model::ActiveTask::new(99);
        task.scheduler_state = crate::model::SchedulerState::Preempted;
        s.jobs[waiting.index()].task = Some(task);
        let effect = apply_user_action(&mut s, &UserAction::Detach(url.clone()), 2000.0).unwrap();
        assert!(effect.abort.contains(&waiting), "the suspended task is aborted");
        let of_p: Vec<JobId> = s.job_ids().filter(|&j| s.job(j).project == p).collect();
        assert_eq!(effect.forget, of_p);
        assert!(!effect.abort.is_empty());
        let with_task: Vec<JobId> =
            of_p.iter().copied().filter(|&j| s.job(j).task.is_some()).collect();
        assert_eq!(effect.abort, with_task, "running or suspended, each task is aborted");
        assert!(s.project(p).detached && s.project(p).suspended);
        assert_eq!((s.project(p).hostid, s.project(p).rpc_seqno), (0, 0), "a new host when back");
        let mut files = s.files.iter().filter(|f| f.project == p);
        assert!(files.all(|f| f.status == FileStatus::NotPresent));
        apply_user_action(&mut s, &UserAction::ResumeProject(url.clone()), 2000.0).unwrap();
        assert!(s.project(p).suspended, "resuming does not undo a detach");
        apply_user_action(&mut s, &UserAction::Attach(url), 2000.0).unwrap();
        assert!(!s.project(p).detached && !s.project(p).suspended);
    }

    #[test]
    fn update_ends_the_resource_backoffs_and_a_failure_backoff_but_not_the_projects_delay() {
        use crate::model::ResourceType;
        let mut s = state();
        let url = s.projects[0].master_url.clone();
        let project = &mut s.projects[0];
        project.resources[ResourceType::Cpu].backoff_time = 5000.0;
        project.resources[ResourceType::Cpu].backoff_interval = 1200.0;
        project.min_rpc_time = 2100.0;
        apply_user_action(&mut s, &UserAction::UpdateProject(url.clone()), 2000.0).unwrap();
        let project = &s.projects[0];
        assert!(project.sched_rpc_pending);
        assert_eq!(project.resources[ResourceType::Cpu].backoff_time, 0.0);
        assert_eq!(project.resources[ResourceType::Cpu].backoff_interval, 0.0);
        assert_eq!(project.min_rpc_time, 2100.0, "the project's own delay stands");
        s.projects[0].nrpc_failures = 2;
        apply_user_action(&mut s, &UserAction::UpdateProject(url), 2000.0).unwrap();
        assert_eq!(s.projects[0].min_rpc_time, 2000.0, "a failure backoff does not");
    }

    #[test]
    fn reset_drops_the_jobs_but_keeps_the_project_attached() {
        let mut s = state();
        let p = s.jobs.iter().find(|j| j.is_running()).map(|j| j.project).unwrap();
        let url = s.project(p).master_url.clone();
        s.projects[p.index()].nrpc_failures = 3;
        s.projects[p.index()].min_rpc_time = 9000.0;
        s.files.push(present_file(p));
        let effect = apply_user_action(&mut s, &UserAction::ResetProject(url), 2000.0).unwrap();
        let of_p: Vec<JobId> = s.job_ids().filter(|&j| s.job(j).project == p).collect();
        assert_eq!(effect.forget, of_p);
        assert!(effect.abort.iter().all(|j| s.job(*j).is_running()));
        let project = s.project(p);
        assert!(!project.detached && !project.suspended && project.sched_rpc_pending);
        assert_eq!((project.nrpc_failures, project.min_rpc_time), (0, 2000.0));
        let mut files = s.files.iter().filter(|f| f.project == p);
        assert!(files.all(|f| f.status == FileStatus::NotPresent));
    }

    #[test]
    fn preferences_and_options_are_replaced() {
        let mut s = state();
        let prefs = Prefs { work_buf_min_days: 2.0, ..Prefs::default() };
        apply_user_action(&mut s, &UserAction::SetPreferences(Box::new(prefs.clone())), 1.0)
            .unwrap();
        assert_eq!(s.prefs, prefs);
        let config = CcConfig { ncpus: Some(2), ..CcConfig::default() };
        apply_user_action(&mut s, &UserAction::SetConfig(Box::new(config.clone())), 1.0).unwrap();
        assert_eq!(s.config, config);
    }

    #[test]
    fn abort_reports_the_job_as_aborted() {
        let mut s = state();
        let j = s.job_ids().find(|&j| s.job(j).is_running()).unwrap();
        let name = s.job(j).name.clone();
        let effect = apply_user_action(&mut s, &UserAction::AbortTask(name.clone()), 5.0).unwrap();
        assert_eq!(effect.abort, vec![j]);
        assert_eq!(s.job(j).state, JobState::Aborted);
        assert_eq!(s.job(j).exit_status, EXIT_ABORTED_VIA_GUI);
        assert!(s.job(j).ready_to_report);
        assert_eq!(
            apply_user_action(&mut s, &UserAction::AbortTask(name.clone()), 6.0),
            Err(UserActionError::TaskDone(name))
        );
    }
}

#[cfg(test)]
mod account_tests {
    use super::*;
    use crate::Policy;
    use crate::control::ClientControl;
    use crate::model::{SyntheticHost, synthetic_host};

    fn attach(url: &str, key: &str) -> UserAction {
        UserAction::AttachAccount {
            master_url: url.into(),
            authenticator: key.into(),
            project_name: None,
        }
    }

    #[test]
    fn an_account_for_a_new_project_attaches_it_and_the_client_goes_on_scheduling() {
        let state = synthetic_host(SyntheticHost {
            ncpus: 2,
            njobs: 6,
            running_prefix: 2,
            seed: 5,
            now: 100.0,
        });
        let before = state.projects.len();
        let mut control = ClientControl::new(state, Policy::Seed, false, false, 100.0);
        control.schedule(100.0);
        control.user_action(&attach("http://127.0.0.1:9/new/", "k1"), 150.0).unwrap();
        let state = control.state();
        assert_eq!(state.projects.len(), before + 1);
        let project = &state.projects[before];
        assert!(project.master_fetch_pending && project.sched_rpc_pending);
        assert_eq!(project.authenticator, "k1");
        // The usage accounting and the decisions cover the new project too.
        control.accumulate_usage(60.0);
        control.schedule(210.0);
        control.schedule(4000.0);
        // The same account again changes nothing.
        control.user_action(&attach("http://127.0.0.1:9/new/", "k1"), 4100.0).unwrap();
        assert_eq!(control.state().projects.len(), before + 1);
    }

    #[test]
    fn an_account_without_its_key_is_refused() {
        let mut state = ClientState::default();
        for action in [attach("", "k"), attach("http://p/", " ")] {
            assert_eq!(
                apply_user_action(&mut state, &action, 0.0),
                Err(UserActionError::IncompleteAccount)
            );
        }
        assert!(state.projects.is_empty());
    }
}
