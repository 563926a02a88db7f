//! A scheduler reply taken into the client's state (DESIGN.md "The boundary between the
//! core and the world": a `SchedulerReply` comes back; seed 003 "Handling scheduler
//! replies"), pure: the project's identity and account, new apps, files, app versions,
//! workunits and jobs, acknowledgements and aborts. It returns what the reply means for
//! the rest of the client ([`ReplyOutcome`]): the per-resource facts work fetch reacts
//! to, the new jobs, the messages, a code-signing key to verify, and every part of the
//! reply it could not take, with the reason.
//!
//! Jobs are matched to app versions by app name, version number and plan class (and
//! platform where both sides name one), as the real client matches them; a job with no
//! such version is not taken. A job whose input files and app files are all present
//! can run at once (`FilesDownloaded`); otherwise it waits for its downloads (`New`).
//! A new host id restarts the RPC sequence number (DESIGN.md "Protocol facts"). The
//! reply's `request_delay` goes to the RPC policy through [`ReplyOutcome::work`].
//! Signatures are not checked here: a changed code-signing key is reported, not taken.

use crate::Time;
use crate::model::{
    App, AppId, AppVersion, AppVersionId, ClientState, FileId, FileInfo, FileRef, FileStatus, Job,
    JobId, JobState, ProjectId, ResourceMap, ResourceType, ResourceUsage, Workunit, WorkunitId,
};
use crate::protocol::{
    AppVersionDescription, FileReference, NoWorkReason, ResultDescription, SchedulerReply,
    ServerMessage,
};
use crate::work_fetch::WorkReply;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// The exit status of a job the project aborted (BOINC's `EXIT_ABORTED_BY_PROJECT`).
pub const EXIT_ABORTED_BY_PROJECT: i32 = 202;

/// What happened to the project's code-signing key.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum CodeSignKeyUpdate {
    /// The reply carried no key, or the one the client holds.
    #[default]
    Unchanged,
    /// The first key the project sent: it is pinned (executables are checked against it).
    Pinned(String),
    /// The reply carries a different key: it is not taken; whoever verifies signatures
    /// decides, with the old key, whether `signature` makes it valid.
    ChangeOffered {
        /// The key offered.
        key: String,
        /// The offered key signed with the pinned one (`<code_sign_key_signature>`).
        signature: Option<String>,
    },
}

/// A part of the reply the client could not take.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReplyProblem {
    /// An app version, workunit or job names an app the project never sent.
    UnknownApp {
        /// The app name.
        app: String,
    },
    /// An app version uses a coprocessor type this client has no resource for.
    UnsupportedCoprocessor {
        /// The app name.
        app: String,
        /// The version number.
        version_num: u32,
        /// The coprocessor type as sent.
        kind: String,
    },
    /// A job's workunit is neither in the reply nor held.
    UnknownWorkunit {
        /// The job.
        result: String,
        /// The workunit it names.
        workunit: String,
    },
    /// No app version matches the job (app, version, plan class, platform).
    NoAppVersion {
        /// The job.
        result: String,
    },
    /// The client already holds a job of that name (its deadline is updated).
    DuplicateResult {
        /// The job.
        result: String,
    },
    /// An acknowledgement or abort names a job the client doesn't hold.
    UnknownResult {
        /// The name.
        result: String,
    },
}

/// What a reply meant, beyond what [`apply_reply`] wrote into the state.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ReplyOutcome {
    /// What work fetch reacts to (seed 003): jobs per resource, the no-work reasons,
    /// `request_delay`, the resources the project has no apps for.
    pub work: WorkReply,
    /// The jobs taken, in the reply's order.
    pub new_jobs: Vec<JobId>,
    /// Reported jobs the project acknowledged: the client may forget them.
    pub acknowledged: usize,
    /// Jobs that were not running and are now aborted (to be reported).
    pub aborted: Vec<JobId>,
    /// Running jobs the project asked to abort: the caller stops their tasks and ends
    /// them with [`crate::control::ClientControl::abort`].
    pub abort_running: Vec<JobId>,
    /// The project's messages to the user.
    pub messages: Vec<ServerMessage>,
    /// The code-signing key.
    pub code_sign_key: CodeSignKeyUpdate,
    /// The account's global preferences, verbatim, when the reply carries them.
    pub global_preferences: Option<String>,
    /// What could not be taken, and why.
    pub problems: Vec<ReplyProblem>,
}

/// Takes `reply`, the answer of `project`'s scheduler, into `state` at `now` (see the
/// module documentation).
pub fn apply_reply(
    state: &mut ClientState,
    project: ProjectId,
    reply: &SchedulerReply,
    now: Time,
) -> ReplyOutcome {
    let mut outcome = ReplyOutcome {
        messages: reply.messages.clone(),
        global_preferences: reply.global_preferences.clone(),
        ..ReplyOutcome::default()
    };
    if state.projects.get(project.index()).is_none() {
        return outcome;
    }
    outcome.code_sign_key = take_account(state, project, reply);
    take_apps(state, project, reply);
    let files = take_files(state, project, reply);
    take_app_versions(state, project, reply, &files, &mut outcome);
    let (jobs_received, new_jobs) = take_jobs(state, project, reply, &files, now, &mut outcome);
    outcome.new_jobs = new_jobs;
    take_acks_and_aborts(state, project, reply, now, &mut outcome);
    outcome.work = work_facts(reply, jobs_received);
    outcome
}

/// What work fetch needs from `reply` before it is applied: the jobs it brings per
/// resource, matched to app versions as [`apply_reply`] matches them (for a session
/// that must settle the project's backoff while the state is only lent to it). Equal to
/// the `work` of the outcome [`apply_reply`] returns for the same state and reply.
pub fn work_reply(state: &ClientState, project: ProjectId, reply: &SchedulerReply) -> WorkReply {
    let mut jobs_received = ResourceMap::<u32>::default();
    let held_workunits = workunit_apps(state, project);
    let held_results = project_job_names(state, project);
    let mut seen: HashSet<&str> = HashSet::new();
    for result in &reply.results {
        if held_results.contains_key(result.name.as_str()) || !seen.insert(&result.name) {
            continue;
        }
        let app = match reply.workunits.iter().find(|w| w.name == result.wu_name) {
            Some(workunit) => Some(workunit.app_name.as_str()),
            None => {
                held_workunits.get(result.wu_name.as_str()).map(|&a| state.app(a).name.as_str())
            }
        };
        let Some(app) = app else { continue };
        let held = find_app(state, project, app)
            .and_then(|a| {
                find_version(state, a, result.version_num, &result.plan_class, &result.platform)
            })
            .map(|v| state.app_version(v).usage);
        let usage = held.or_else(|| {
            reply
                .app_versions
                .iter()
                .filter(|v| v.app_name == app)
                .find(|v| version_matches(v, result))
                .and_then(|v| usage_of(v).ok())
        });
        if let Some(usage) = usage {
            jobs_received[usage.main_resource()] += 1;
        }
    }
    work_facts(reply, jobs_received)
}

/// The work-fetch facts of a reply that brought `jobs_received`.
fn work_facts(reply: &SchedulerReply, jobs_received: ResourceMap<u32>) -> WorkReply {
    let reasons: Vec<NoWorkReason> = reply.no_work_reasons().collect();
    WorkReply {
        jobs_received,
        no_work_because_of_deadlines: reasons.contains(&NoWorkReason::DeadlinesNotMet),
        no_work_because_of_disk: reasons.contains(&NoWorkReason::DiskSpace),
        request_delay: reply.request_delay,
        no_apps: reply.no_rsc_apps,
    }
}

/// The project's identity and account; the code-signing key.
fn take_account(
    state: &mut ClientState,
    project: ProjectId,
    reply: &SchedulerReply,
) -> CodeSignKeyUpdate {
    let record = &mut state.projects[project.index()];
    if let Some(name) = reply.project_name.as_deref().filter(|n| !n.is_empty()) {
        name.clone_into(&mut record.name);
    }
    if let Some(name) = &reply.user_name {
        name.clone_into(&mut record.user_name);
    }
    if let Some(name) = &reply.team_name {
        name.clone_into(&mut record.team_name);
    }
    if let Some(cpid) = &reply.cross_project_id {
        cpid.clone_into(&mut record.cross_project_id);
    }
    record.userid = reply.userid.unwrap_or(record.userid);
    record.teamid = reply.teamid.unwrap_or(record.teamid);
    record.non_cpu_intensive |= reply.non_cpu_intensive;
    // The project gives a host id only when it made a new host record: requests are
    // counted afresh from it.
    if let Some(hostid) = reply.hostid.filter(|&id| id != 0) {
        record.hostid = hostid;
        record.rpc_seqno = 0;
    }
    let Some(key) = reply.code_sign_key.as_deref().map(str::trim).filter(|k| !k.is_empty()) else {
        return CodeSignKeyUpdate::Unchanged;
    };
    match &record.code_sign_key {
        None => {
            record.code_sign_key = Some(key.to_owned());
            CodeSignKeyUpdate::Pinned(key.to_owned())
        }
        Some(pinned) if pinned.trim() == key => CodeSignKeyUpdate::Unchanged,
        Some(_) => CodeSignKeyUpdate::ChangeOffered {
            key: key.to_owned(),
            signature: reply.code_sign_key_signature.clone(),
        },
    }
}

fn take_apps(state: &mut ClientState, project: ProjectId, reply: &SchedulerReply) {
    for description in &reply.apps {
        match find_app(state, project, &description.name) {
            Some(app) => {
                let app = &mut state.apps[app.index()];
                description.user_friendly_name.clone_into(&mut app.user_friendly_name);
                app.non_cpu_intensive = description.non_cpu_intensive;
            }
            None => state.apps.push(App {
                user_friendly_name: description.user_friendly_name.clone(),
                non_cpu_intensive: description.non_cpu_intensive,
                ..App::new(project, description.name.clone())
            }),
        }
    }
}

/// Adds the reply's new files; returns the project's files by name, for the
/// references that follow.
fn take_files(
    state: &mut ClientState,
    project: ProjectId,
    reply: &SchedulerReply,
) -> HashMap<String, FileId> {
    let mentions_files = !reply.file_infos.is_empty()
        || reply.app_versions.iter().any(|v| !v.file_refs.is_empty())
        || reply.workunits.iter().any(|w| !w.file_refs.is_empty())
        || reply.results.iter().any(|r| !r.file_refs.is_empty());
    if !mentions_files {
        return HashMap::new();
    }
    let mut files: HashMap<String, FileId> = state
        .files
        .iter()
        .enumerate()
        .filter(|(_, f)| f.project == project)
        .map(|(i, f)| (f.name.clone(), FileId::from_index(i)))
        .collect();
    for description in &reply.file_infos {
        if files.contains_key(&description.name) {
            continue;
        }
        let mut file =
            FileInfo::new(project, description.name.clone(), description.nbytes.unwrap_or(0.0));
        file.max_nbytes = description.max_nbytes.unwrap_or(0.0);
        file.md5_cksum.clone_from(&description.md5_cksum);
        file.file_signature.clone_from(&description.file_signature);
        file.executable = description.executable;
        file.sticky = description.sticky;
        file.upload_when_present = description.upload_when_present;
        file.priority = description.priority;
        file.exp_days = description.exp_days;
        if description.upload_when_present || description.generated_locally {
            file.upload_urls.clone_from(&description.urls);
        } else {
            file.download_urls.clone_from(&description.urls);
        }
        files.insert(description.name.clone(), FileId::from_index(state.files.len()));
        state.files.push(file);
    }
    files
}

/// References to the project's files; a reference to a file neither held nor sent is
/// dropped (it names nothing the client could fetch).
fn file_refs(references: &[FileReference], files: &HashMap<String, FileId>) -> Vec<FileRef> {
    references
        .iter()
        .filter_map(|reference| {
            Some(FileRef {
                file: *files.get(&reference.file_name)?,
                open_name: reference.open_name.clone(),
                main_program: reference.main_program,
                copy_file: reference.copy_file,
            })
        })
        .collect()
}

/// What a sent app version's jobs occupy; an error names a coprocessor type the client
/// has no resource for.
fn usage_of(description: &AppVersionDescription) -> Result<ResourceUsage, String> {
    let coprocessor = match &description.coprocessor {
        None => None,
        Some(usage) => {
            let resource = ResourceType::from_boinc_name(&usage.kind)
                .filter(|r| r.is_gpu())
                .ok_or_else(|| usage.kind.clone())?;
            (usage.count > 0.0).then_some((resource, usage.count))
        }
    };
    Ok(ResourceUsage { avg_ncpus: description.avg_ncpus.unwrap_or(1.0), coprocessor })
}

fn take_app_versions(
    state: &mut ClientState,
    project: ProjectId,
    reply: &SchedulerReply,
    files: &HashMap<String, FileId>,
    outcome: &mut ReplyOutcome,
) {
    for description in &reply.app_versions {
        let Some(app) = find_app(state, project, &description.app_name) else {
            outcome.problems.push(ReplyProblem::UnknownApp { app: description.app_name.clone() });
            continue;
        };
        let usage = match usage_of(description) {
            Ok(usage) => usage,
            Err(kind) => {
                outcome.problems.push(ReplyProblem::UnsupportedCoprocessor {
                    app: description.app_name.clone(),
                    version_num: description.version_num,
                    kind,
                });
                continue;
            }
        };
        let existing = find_version(
            state,
            app,
            Some(description.version_num),
            &description.plan_class,
            &description.platform,
        );
        let version = match existing {
            // The server's figures for a version may change; they replace the old ones.
            Some(id) => &mut state.app_versions[id.index()],
            None => {
                let flops = description.flops.unwrap_or(state.host.p_fpops);
                state.app_versions.push(AppVersion {
                    platform: description.platform.clone(),
                    files: file_refs(&description.file_refs, files),
                    ..AppVersion::new(
                        project,
                        app,
                        description.version_num,
                        description.plan_class.clone(),
                        usage,
                        flops,
                    )
                });
                let resource = usage.main_resource();
                state.projects[project.index()].resources[resource].has_app_version = true;
                let last = state.app_versions.len() - 1;
                &mut state.app_versions[last]
            }
        };
        version.usage = usage;
        if let Some(flops) = description.flops.filter(|f| *f > 0.0) {
            version.flops = flops;
        }
        description.api_version.clone_into(&mut version.api_version);
        description.cmdline.clone_into(&mut version.cmdline);
    }
}

/// Adds the reply's new workunits and jobs; returns the jobs per main resource and the
/// new jobs' ids.
fn take_jobs(
    state: &mut ClientState,
    project: ProjectId,
    reply: &SchedulerReply,
    files: &HashMap<String, FileId>,
    now: Time,
    outcome: &mut ReplyOutcome,
) -> (ResourceMap<u32>, Vec<JobId>) {
    let mut jobs_received = ResourceMap::<u32>::default();
    let mut new_jobs = Vec::new();
    if reply.results.is_empty() && reply.workunits.is_empty() {
        return (jobs_received, new_jobs);
    }
    let mut workunits: HashMap<String, WorkunitId> = state
        .workunits
        .iter()
        .enumerate()
        .filter(|(_, w)| w.project == project)
        .map(|(i, w)| (w.name.clone(), WorkunitId::from_index(i)))
        .collect();
    for description in &reply.workunits {
        if workunits.contains_key(&description.name) {
            continue;
        }
        let Some(app) = find_app(state, project, &description.app_name) else {
            outcome.problems.push(ReplyProblem::UnknownApp { app: description.app_name.clone() });
            continue;
        };
        workunits.insert(description.name.clone(), WorkunitId::from_index(state.workunits.len()));
        state.workunits.push(Workunit {
            project,
            name: description.name.clone(),
            app,
            rsc_fpops_est: description.rsc_fpops_est,
            rsc_fpops_bound: description.rsc_fpops_bound,
            rsc_memory_bound: description.rsc_memory_bound,
            rsc_disk_bound: description.rsc_disk_bound,
            command_line: description.command_line.clone(),
            input_files: file_refs(&description.file_refs, files),
        });
    }
    let held: HashMap<String, JobId> = project_job_names(state, project)
        .into_iter()
        .map(|(name, id)| (name.to_owned(), id))
        .collect();
    let mut taken: HashSet<&str> = HashSet::new();
    state.jobs.reserve(reply.results.len());
    for description in &reply.results {
        if let Some(&id) = held.get(&description.name) {
            // The project may move a job's deadline by sending it again.
            state.jobs[id.index()].report_deadline = description.report_deadline;
            outcome
                .problems
                .push(ReplyProblem::DuplicateResult { result: description.name.clone() });
            continue;
        }
        if !taken.insert(&description.name) {
            outcome
                .problems
                .push(ReplyProblem::DuplicateResult { result: description.name.clone() });
            continue;
        }
        let Some(&workunit) = workunits.get(&description.wu_name) else {
            outcome.problems.push(ReplyProblem::UnknownWorkunit {
                result: description.name.clone(),
                workunit: description.wu_name.clone(),
            });
            continue;
        };
        let app = state.workunit(workunit).app;
        let Some(version) = find_version(
            state,
            app,
            description.version_num,
            &description.plan_class,
            &description.platform,
        ) else {
            outcome.problems.push(ReplyProblem::NoAppVersion { result: description.name.clone() });
            continue;
        };
        let job = new_job(state, project, description, workunit, version, files, now);
        jobs_received[state.app_version(version).usage.main_resource()] += 1;
        new_jobs.push(JobId::from_index(state.jobs.len()));
        state.jobs.push(job);
    }
    (jobs_received, new_jobs)
}

/// A job of the reply, received `now`.
fn new_job(
    state: &ClientState,
    project: ProjectId,
    description: &ResultDescription,
    workunit: WorkunitId,
    version: AppVersionId,
    files: &HashMap<String, FileId>,
    now: Time,
) -> Job {
    let record = state.app_version(version);
    let present = |reference: &FileRef| state.file(reference.file).status == FileStatus::Present;
    let ready = state.workunit(workunit).input_files.iter().all(present)
        && record.files.iter().all(present);
    let mut job = Job::downloaded(
        project,
        description.name.clone(),
        workunit,
        version,
        now,
        description.report_deadline,
    );
    if !ready {
        job.state = JobState::New;
    }
    record.platform.clone_into(&mut job.platform);
    job.version_num = record.version_num;
    record.plan_class.clone_into(&mut job.plan_class);
    job.output_files = file_refs(&description.file_refs, files);
    job
}

fn take_acks_and_aborts(
    state: &mut ClientState,
    project: ProjectId,
    reply: &SchedulerReply,
    now: Time,
    outcome: &mut ReplyOutcome,
) {
    if reply.result_acks.is_empty()
        && reply.result_aborts.is_empty()
        && reply.result_aborts_if_not_started.is_empty()
    {
        return;
    }
    let held: HashMap<String, JobId> = project_job_names(state, project)
        .into_iter()
        .map(|(name, id)| (name.to_owned(), id))
        .collect();
    let lookup = |name: &String, outcome: &mut ReplyOutcome| {
        let found = held.get(name).copied();
        if found.is_none() {
            outcome.problems.push(ReplyProblem::UnknownResult { result: name.clone() });
        }
        found
    };
    for name in &reply.result_acks {
        if let Some(id) = lookup(name, outcome) {
            let job = &mut state.jobs[id.index()];
            if !job.got_server_ack {
                job.got_server_ack = true;
                outcome.acknowledged += 1;
            }
        }
    }
    let aborts = reply.result_aborts.iter().map(|n| (n, false));
    let if_not_started = reply.result_aborts_if_not_started.iter().map(|n| (n, true));
    for (name, only_unstarted) in aborts.chain(if_not_started) {
        let Some(id) = lookup(name, outcome) else { continue };
        let job = &mut state.jobs[id.index()];
        if job.state.computing_done() || (only_unstarted && job.task.is_some()) {
            continue;
        }
        if job.is_running() {
            outcome.abort_running.push(id);
            continue;
        }
        job.state = JobState::Aborted;
        job.exit_status = EXIT_ABORTED_BY_PROJECT;
        job.ready_to_report = true;
        job.completed_time = now;
        job.final_elapsed_time = job.elapsed_time();
        job.task = None;
        outcome.aborted.push(id);
    }
}

/// The project's app of that name.
fn find_app(state: &ClientState, project: ProjectId, name: &str) -> Option<AppId> {
    state.apps.iter().position(|a| a.project == project && a.name == name).map(AppId::from_index)
}

/// The app version a job of `app` runs with: the one with its version number (when
/// given), plan class and platform (when both name one); with no version number, the
/// newest such.
fn find_version(
    state: &ClientState,
    app: AppId,
    version_num: Option<u32>,
    plan_class: &str,
    platform: &str,
) -> Option<AppVersionId> {
    let candidates = state.app_versions.iter().enumerate().filter(|(_, v)| {
        v.app == app
            && v.plan_class == plan_class
            && (v.platform.is_empty() || platform.is_empty() || v.platform == platform)
    });
    match version_num {
        Some(num) => candidates.filter(|(_, v)| v.version_num == num).map(|(i, _)| i).next(),
        None => candidates.max_by_key(|(_, v)| v.version_num).map(|(i, _)| i),
    }
    .map(AppVersionId::from_index)
}

/// Whether a sent app version is the one a sent job names.
fn version_matches(version: &AppVersionDescription, result: &ResultDescription) -> bool {
    version.plan_class == result.plan_class
        && result.version_num.is_none_or(|num| num == version.version_num)
        && (version.platform.is_empty()
            || result.platform.is_empty()
            || version.platform == result.platform)
}

/// The project's jobs by name.
fn project_job_names(state: &ClientState, project: ProjectId) -> HashMap<&str, JobId> {
    state
        .jobs
        .iter()
        .enumerate()
        .filter(|(_, j)| j.project == project)
        .map(|(i, j)| (j.name.as_str(), JobId::from_index(i)))
        .collect()
}

/// The project's workunits by name, with their apps.
fn workunit_apps(state: &ClientState, project: ProjectId) -> HashMap<&str, AppId> {
    state
        .workunits
        .iter()
        .filter(|w| w.project == project)
        .map(|w| (w.name.as_str(), w.app))
        .collect()
}
