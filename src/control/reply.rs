//! A scheduler reply taken into the client's state (docs/design.md "The boundary between the
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
//! A new host id restarts the RPC sequence number (docs/design.md "Protocol facts"). The
//! reply's `request_delay` goes to the RPC policy through [`ReplyOutcome::work`].
//! The first code-signing key is pinned; a new one replaces it only when the pinned key
//! signed it ([`super::check_reply`] refuses a reply whose key change is not signed).
//! An executable that comes without a signature is given up at the next transfer step
//! and never downloaded.

use super::credit::{ReportedCredit, take_credit};
use super::name_set::NameSet;
use super::reply_check::{is_plain_file_name, key_update};
use crate::Time;
use crate::model::{
    App, AppConfig, AppId, AppVersion, AppVersionId, ClientState, FileId, FileInfo, FileRef,
    FileStatus, Job, JobId, JobState, ProjectId, ResourceMap, ResourceType, ResourceUsage,
    Workunit, WorkunitId,
};
use crate::protocol::code_signing::KeyUpdate;
use crate::protocol::{
    AppDescription, AppVersionDescription, FileReference, NoWorkReason, ResultDescription, RssFeed,
    SchedulerReply, ServerMessage, WorkunitDescription,
};
use crate::work_fetch::WorkReply;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// The exit status of a job the project aborted (BOINC's `EXIT_ABORTED_BY_PROJECT`).
pub const EXIT_ABORTED_BY_PROJECT: i32 = 202;

/// The most jobs the client holds, of all projects together (as many as a reply may
/// acknowledge, [`crate::protocol::MAX_REPLY_RESULT_NAMES`]). A reply is refused whole
/// over [`crate::protocol::MAX_REPLY_JOBS`]; under it, but bringing more jobs than there
/// is room for, the jobs beyond the room are not taken ([`ReplyProblem::TooManyJobs`]):
/// the server sees them as lost and may send them again later, and nothing held is
/// dropped. A server answering every contact with the most jobs a reply may carry cannot
/// grow the state past this.
pub const MAX_JOBS_HELD: usize = 100_000;

/// What happened to the project's code-signing key.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum CodeSignKeyUpdate {
    /// The reply carried no key, or the one the client holds.
    #[default]
    Unchanged,
    /// The first key the project sent: it is pinned (executables are checked against it).
    Pinned(String),
    /// A new key signed by the pinned one: it replaces it (BOINC's key rollover).
    Replaced(String),
    /// The reply offers a key that cannot be taken (unreadable, or a change the pinned
    /// key did not sign): the pinned key stays. [`super::check_reply`] refuses such a
    /// reply before it is taken; this is what is left when it is taken anyway.
    Refused {
        /// Why.
        reason: String,
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
    /// The client holds [`MAX_JOBS_HELD`] jobs already: the job is not taken.
    TooManyJobs {
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
    /// The project's notice feeds, when the reply names them (all of them: a feed left
    /// out is no longer the project's).
    pub rss_feeds: Option<Vec<RssFeed>>,
    /// The code-signing key.
    pub code_sign_key: CodeSignKeyUpdate,
    /// The account's global preferences, verbatim, when the reply carries them.
    pub global_preferences: Option<String>,
    /// What could not be taken, and why.
    pub problems: Vec<ReplyProblem>,
    /// What the volunteer should know that the reply only implies, in words: a
    /// client notice each (the project has no app for a GPU this host has).
    #[serde(default)]
    pub client_notices: Vec<String>,
}

/// Takes `reply`, the answer of `project`'s scheduler, into `state` at `now` (see the
/// module documentation). The reply is used up: its names and texts move into the state
/// rather than being copied.
pub fn apply_reply(
    state: &mut ClientState,
    project: ProjectId,
    mut reply: SchedulerReply,
    now: Time,
) -> ReplyOutcome {
    let mut outcome = ReplyOutcome {
        work: work_facts(&reply, ResourceMap::default()),
        messages: std::mem::take(&mut reply.messages),
        rss_feeds: reply.rss_feeds.take(),
        global_preferences: reply.global_preferences.take(),
        ..ReplyOutcome::default()
    };
    // A reply that comes after its project was detached (the request was under way)
    // brings nothing: no task, file or identity of a project the user left.
    if state.projects.get(project.index()).is_none_or(|p| p.detached) {
        return outcome;
    }
    outcome.client_notices = missing_app_notices(state, project, &reply);
    outcome.code_sign_key = take_account(state, project, &mut reply, now);
    take_apps(state, project, std::mem::take(&mut reply.apps));
    let files = take_files(state, project, &mut reply);
    let versions = std::mem::take(&mut reply.app_versions);
    take_app_versions(state, project, versions, &files, &mut outcome);
    // The user's app_config.xml wins over what the project sent, for new apps too.
    AppConfig::reapply(state, project);
    let acks = std::mem::take(&mut reply.result_acks);
    let mut acknowledged = NameSet::new(acks.iter().map(String::as_str), || false);
    let jobs = SentJobs {
        workunits: std::mem::take(&mut reply.workunits),
        results: std::mem::take(&mut reply.results),
    };
    outcome.work.jobs_received =
        take_jobs(state, project, jobs, &mut acknowledged, &files, now, &mut outcome);
    let aborts = Aborts {
        any_state: &reply.result_aborts,
        if_not_started: &reply.result_aborts_if_not_started,
    };
    take_unmatched_acks_and_aborts(state, project, &acks, acknowledged, aborts, now, &mut outcome);
    outcome
}

/// A notice for each GPU this host has that the project says it has no app for
/// (`<no_rsc_apps>`), the first time it says so: a volunteer who attached for their GPU
/// learns why it stays idle, as BOINC's notices tell them.
fn missing_app_notices(
    state: &ClientState,
    project: ProjectId,
    reply: &SchedulerReply,
) -> Vec<String> {
    let known = &state.projects[project.index()].resources;
    ResourceType::ALL
        .into_iter()
        .filter(|&r| r != ResourceType::Cpu && reply.no_rsc_apps[r] && !known[r].no_apps)
        .filter_map(|r| state.host.coprocessors[r].as_ref().map(|_| r))
        .map(|r| {
            let gpu = match r {
                ResourceType::Nvidia => "NVIDIA GPU",
                ResourceType::Amd => "AMD/ATI GPU",
                _ => "Intel GPU",
            };
            format!("This project has no applications for your {gpu}: it will not be used for this project")
        })
        .collect()
}

/// What work fetch needs from `reply` before it is applied: the jobs it brings per
/// resource, matched to app versions as [`apply_reply`] matches them (for a session
/// that must settle the project's backoff while the state is only lent to it). Equal to
/// the `work` of the outcome [`apply_reply`] returns for the same state and reply when
/// the reply's jobs name their versions' numbers, as BOINC servers' do.
pub fn work_reply(state: &ClientState, project: ProjectId, reply: &SchedulerReply) -> WorkReply {
    let mut jobs_received = ResourceMap::<u32>::default();
    let held_results = held_by_name(
        state.jobs.iter().map(|j| (j.project, j.name.as_str())),
        project,
        reply.results.iter().map(|r| r.name.as_str()),
    );
    let held_workunits = held_by_name(
        state.workunits.iter().map(|w| (w.project, w.name.as_str())),
        project,
        reply.results.iter().map(|r| r.wu_name.as_str()),
    );
    let mut seen: HashSet<&str> = HashSet::new();
    let mut room = MAX_JOBS_HELD.saturating_sub(state.jobs.len());
    for result in &reply.results {
        if held_index(&held_results, &result.name).is_some() || !seen.insert(&result.name) {
            continue;
        }
        let app = match reply.workunits.iter().find(|w| w.name == result.wu_name) {
            Some(workunit) => Some(workunit.app_name.as_str()),
            None => held_index(&held_workunits, &result.wu_name)
                .map(|w| state.app(state.workunits[w].app).name.as_str()),
        };
        let Some(app) = app else { continue };
        let held_app = find_app(state, project, app);
        if held_app.is_none() && !reply.apps.iter().any(|a| a.name == app) {
            continue;
        }
        // A version the reply sends replaces a held one of the same number.
        let sent = reply
            .app_versions
            .iter()
            .filter(|v| v.app_name == app && version_matches(v, result))
            .find_map(|v| usage_of(v).ok());
        let usage = sent.or_else(|| {
            held_app
                .and_then(|a| {
                    find_version(state, a, result.version_num, &result.plan_class, &result.platform)
                })
                .map(|v| state.app_version(v).usage)
        });
        if let Some(usage) = usage
            && room > 0
        {
            room -= 1;
            jobs_received[usage.main_resource()] += 1;
        }
    }
    work_facts(reply, jobs_received)
}

/// The work-fetch facts of a reply that brought `jobs_received`.
fn work_facts(reply: &SchedulerReply, jobs_received: ResourceMap<u32>) -> WorkReply {
    let said = |reason: NoWorkReason| reply.no_work_reasons().any(|r| r == reason);
    WorkReply {
        jobs_received,
        no_work_because_of_deadlines: said(NoWorkReason::DeadlinesNotMet),
        no_work_because_of_disk: said(NoWorkReason::DiskSpace),
        request_delay: reply.request_delay,
        no_apps: reply.no_rsc_apps,
    }
}

/// The project's identity and account; the code-signing key.
fn take_account(
    state: &mut ClientState,
    project: ProjectId,
    reply: &mut SchedulerReply,
    now: Time,
) -> CodeSignKeyUpdate {
    let record = &mut state.projects[project.index()];
    // Each reply says afresh whether the project wants duration correction; one that
    // does not has its factor back at 1, so no estimate stays scaled by an old one.
    record.dont_use_dcf = reply.dont_use_dcf;
    if record.dont_use_dcf {
        record.duration_correction_factor = 1.0;
    }
    if let Some(name) = reply.project_name.take().filter(|n| !n.is_empty()) {
        record.name = name;
    }
    if let Some(name) = reply.user_name.take() {
        record.user_name = name;
    }
    if let Some(name) = reply.team_name.take() {
        record.team_name = name;
    }
    if let Some(venue) = reply.host_venue.take() {
        record.host_venue = venue;
    }
    if let Some(cpid) = reply.cross_project_id.take() {
        record.cross_project_id = cpid;
    }
    let credit = ReportedCredit {
        user_total: reply.user_total_credit,
        user_expavg: reply.user_expavg_credit,
        host_total: reply.host_total_credit,
        host_expavg: reply.host_expavg_credit,
    };
    take_credit(record, credit, now);
    record.userid = reply.userid.unwrap_or(record.userid);
    record.teamid = reply.teamid.unwrap_or(record.teamid);
    record.non_cpu_intensive |= reply.non_cpu_intensive;
    // The project gives a host id only when it made a new host record: requests are
    // counted afresh from it.
    if let Some(hostid) = reply.hostid.filter(|&id| id != 0) {
        record.hostid = hostid;
        record.rpc_seqno = 0;
    }
    // The key is kept as the project wrote it (what requests send back).
    let text = || reply.code_sign_key.as_deref().map(str::trim).unwrap_or_default().to_owned();
    match key_update(record, reply) {
        Ok(None | Some(KeyUpdate::Unchanged)) => CodeSignKeyUpdate::Unchanged,
        Ok(Some(KeyUpdate::Pin(_))) => {
            record.code_sign_key = Some(text());
            CodeSignKeyUpdate::Pinned(text())
        }
        Ok(Some(KeyUpdate::Replace(_))) => {
            record.code_sign_key = Some(text());
            CodeSignKeyUpdate::Replaced(text())
        }
        Err(refusal) => CodeSignKeyUpdate::Refused { reason: refusal.to_string() },
    }
}

fn take_apps(state: &mut ClientState, project: ProjectId, apps: Vec<AppDescription>) {
    for description in apps {
        match find_app(state, project, &description.name) {
            Some(app) => {
                let app = &mut state.apps[app.index()];
                app.user_friendly_name = description.user_friendly_name;
                app.non_cpu_intensive = description.non_cpu_intensive;
            }
            None => state.apps.push(App {
                user_friendly_name: description.user_friendly_name,
                non_cpu_intensive: description.non_cpu_intensive,
                ..App::new(project, description.name)
            }),
        }
    }
}

/// Adds the reply's new files; returns the project's files by name, for the
/// references that follow.
fn take_files(
    state: &mut ClientState,
    project: ProjectId,
    reply: &mut SchedulerReply,
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
    for description in std::mem::take(&mut reply.file_infos) {
        // A name that is not a plain file name never reaches the disk (check_reply
        // refuses such a reply whole).
        if files.contains_key(&description.name) || !is_plain_file_name(&description.name) {
            continue;
        }
        let mut file =
            FileInfo::new(project, description.name.clone(), description.nbytes.unwrap_or(0.0));
        file.max_nbytes = description.max_nbytes.unwrap_or(0.0);
        file.md5_cksum = description.md5_cksum;
        file.file_signature = description.file_signature;
        file.executable = description.executable;
        file.sticky = description.sticky;
        file.upload_when_present = description.upload_when_present;
        file.priority = description.priority;
        file.exp_days = description.exp_days;
        if description.upload_when_present || description.generated_locally {
            file.upload_urls = description.urls;
        } else {
            file.download_urls = description.urls;
        }
        files.insert(description.name, FileId::from_index(state.files.len()));
        state.files.push(file);
    }
    files
}

/// References to the project's files; a reference to a file neither held nor sent is
/// dropped (it names nothing the client could fetch).
fn file_refs(references: Vec<FileReference>, files: &HashMap<String, FileId>) -> Vec<FileRef> {
    if references.is_empty() {
        return Vec::new();
    }
    references
        .into_iter()
        .filter_map(|reference| {
            Some(FileRef {
                file: *files.get(&reference.file_name)?,
                open_name: reference.open_name,
                main_program: reference.main_program,
                copy_file: reference.copy_file,
            })
        })
        .collect()
}

/// What a sent app version's jobs occupy; an error names a coprocessor type the client
/// has no resource for.
pub(crate) fn usage_of(description: &AppVersionDescription) -> Result<ResourceUsage, String> {
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
    versions: Vec<AppVersionDescription>,
    files: &HashMap<String, FileId>,
    outcome: &mut ReplyOutcome,
) {
    // The volunteer's own apps (app_info.xml) are the only versions of an anonymous
    // project: a reply replaces none of them and adds none, as BOINC's client ignores
    // them.
    if state.projects[project.index()].anonymous_platform {
        return;
    }
    for description in versions {
        let Some(app) = find_app(state, project, &description.app_name) else {
            let app = description.app_name.into_owned();
            outcome.problems.push(ReplyProblem::UnknownApp { app });
            continue;
        };
        let usage = match usage_of(&description) {
            Ok(usage) => usage,
            Err(kind) => {
                outcome.problems.push(ReplyProblem::UnsupportedCoprocessor {
                    app: description.app_name.into_owned(),
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
                    platform: description.platform.into_owned(),
                    files: file_refs(description.file_refs, files),
                    ..AppVersion::new(
                        project,
                        app,
                        description.version_num,
                        description.plan_class.into_owned(),
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
        version.api_version = description.api_version.into_owned();
        version.cmdline = description.cmdline.into_owned();
    }
}

/// The reply's jobs: its workunits and results.
struct SentJobs {
    workunits: Vec<WorkunitDescription>,
    results: Vec<ResultDescription>,
}

/// What the client knows of a result name the reply sends.
#[derive(Default)]
struct SentResult {
    /// The project's job of that name the client holds already.
    held: Option<usize>,
    /// A result of that name was looked at earlier in the reply.
    seen: bool,
}

/// What the client knows of a workunit name the reply sends or names.
#[derive(Default)]
struct SentWorkunit {
    /// The project's workunit of that name the client holds already.
    held: Option<usize>,
    /// The workunit of that name the reply made.
    taken: Option<WorkunitId>,
}

/// Adds the reply's new workunits and jobs, and acknowledges the reported jobs in
/// `acknowledged` (one pass over the held jobs does both); returns the jobs per main
/// resource. The new jobs' ids go to `outcome`.
fn take_jobs(
    state: &mut ClientState,
    project: ProjectId,
    jobs: SentJobs,
    acknowledged: &mut NameSet<'_, bool>,
    files: &HashMap<String, FileId>,
    now: Time,
    outcome: &mut ReplyOutcome,
) -> ResourceMap<u32> {
    let SentJobs { workunits, results } = jobs;
    // Only the project's records whose names the reply mentions are looked up, so a
    // reply costs what it carries.
    let mut sent: NameSet<'_, SentResult> =
        NameSet::new(results.iter().map(|r| r.name.as_str()), SentResult::default);
    if !sent.is_empty() || !acknowledged.is_empty() {
        for (index, job) in state.jobs.iter_mut().enumerate() {
            if job.project != project {
                continue;
            }
            if let Some(result) = sent.get_mut(&job.name)
                && result.held.is_none()
            {
                result.held = Some(index);
            }
            if job.ready_to_report
                && !job.got_server_ack
                && let Some(matched) = acknowledged.get_mut(&job.name)
                && !*matched
            {
                *matched = true;
                job.got_server_ack = true;
                outcome.acknowledged += 1;
            }
        }
    }
    let mut jobs_received = ResourceMap::<u32>::default();
    if results.is_empty() && workunits.is_empty() {
        return jobs_received;
    }
    let first_workunit = state.workunits.len();
    // The reply's new workunits, by position, with their apps.
    let mut new_workunits: Vec<(usize, AppId)> = Vec::new();
    // What becomes of each result: the workunit and version it is taken with, or nothing.
    let mut taken: Vec<Option<(WorkunitId, AppVersionId)>> = Vec::with_capacity(results.len());
    {
        let mut named = NameSet::new(
            (workunits.iter().map(|w| w.name.as_str()))
                .chain(results.iter().map(|r| r.wu_name.as_str())),
            SentWorkunit::default,
        );
        for (index, workunit) in state.workunits.iter().enumerate() {
            if workunit.project == project
                && let Some(slot) = named.get_mut(&workunit.name)
                && slot.held.is_none()
            {
                slot.held = Some(index);
            }
        }
        for (position, description) in workunits.iter().enumerate() {
            let Some(slot) = named.get_mut(&description.name) else { continue };
            if slot.held.is_some() || slot.taken.is_some() {
                continue;
            }
            let Some(app) = find_app(state, project, &description.app_name) else {
                let app = description.app_name.clone();
                outcome.problems.push(ReplyProblem::UnknownApp { app });
                continue;
            };
            slot.taken = Some(WorkunitId::from_index(first_workunit + new_workunits.len()));
            new_workunits.push((position, app));
        }
        // A reply naming a job twice is told apart by the count of names; only then is
        // each looked at.
        let repeats = sent.len() < results.len();
        for description in &results {
            let Some(result) = sent.get_mut(&description.name) else {
                taken.push(None);
                continue;
            };
            let problem = || ReplyProblem::DuplicateResult { result: description.name.clone() };
            if let Some(index) = result.held {
                // The project may move a job's deadline by sending it again.
                state.jobs[index].report_deadline = description.report_deadline;
                outcome.problems.push(problem());
                taken.push(None);
                continue;
            }
            if repeats && std::mem::replace(&mut result.seen, true) {
                outcome.problems.push(problem());
                taken.push(None);
                continue;
            }
            let slot = named.get_mut(&description.wu_name);
            let workunit = slot.and_then(|s| s.held.map(WorkunitId::from_index).or(s.taken));
            let Some(workunit) = workunit else {
                outcome.problems.push(ReplyProblem::UnknownWorkunit {
                    result: description.name.clone(),
                    workunit: description.wu_name.clone(),
                });
                taken.push(None);
                continue;
            };
            let app = match workunit.index().checked_sub(first_workunit) {
                Some(new) => new_workunits[new].1,
                None => state.workunit(workunit).app,
            };
            let version = find_version(
                state,
                app,
                description.version_num,
                &description.plan_class,
                &description.platform,
            );
            if version.is_none() {
                let result = description.name.clone();
                outcome.problems.push(ReplyProblem::NoAppVersion { result });
            }
            taken.push(version.map(|v| (workunit, v)));
        }
    }
    let mut new_workunits = new_workunits.into_iter().peekable();
    for (position, description) in workunits.into_iter().enumerate() {
        let Some((_, app)) = new_workunits.next_if(|&(p, _)| p == position) else { continue };
        state.workunits.push(Workunit {
            project,
            name: description.name,
            app,
            rsc_fpops_est: description.rsc_fpops_est,
            rsc_fpops_bound: description.rsc_fpops_bound,
            rsc_memory_bound: description.rsc_memory_bound,
            rsc_disk_bound: description.rsc_disk_bound,
            command_line: description.command_line,
            input_files: file_refs(description.file_refs, files),
        });
    }
    state.jobs.reserve(taken.iter().flatten().count());
    for (description, taken) in results.into_iter().zip(taken) {
        let Some((workunit, version)) = taken else { continue };
        if state.jobs.len() >= MAX_JOBS_HELD {
            outcome.problems.push(ReplyProblem::TooManyJobs { result: description.name });
            continue;
        }
        let job = new_job(state, project, description, workunit, version, files, now);
        jobs_received[state.app_version(version).usage.main_resource()] += 1;
        outcome.new_jobs.push(JobId::from_index(state.jobs.len()));
        state.jobs.push(job);
    }
    jobs_received
}

/// A job of the reply, received `now`.
fn new_job(
    state: &ClientState,
    project: ProjectId,
    description: ResultDescription,
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
        description.name,
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
    job.output_files = file_refs(description.file_refs, files);
    job
}

/// The results a reply aborts.
struct Aborts<'r> {
    /// Whatever their state (`<result_abort>`).
    any_state: &'r [String],
    /// Unless they have started (`<result_abort_if_not_started>`).
    if_not_started: &'r [String],
}

/// Acknowledgements are for the results just reported, which [`take_jobs`] matched: a
/// name among `acks` not matched there is looked for further (to tell an old one from
/// none), with the aborts.
fn take_unmatched_acks_and_aborts(
    state: &mut ClientState,
    project: ProjectId,
    acks: &[String],
    acknowledged: NameSet<'_, bool>,
    aborts: Aborts<'_>,
    now: Time,
    outcome: &mut ReplyOutcome,
) {
    let unmatched: Vec<&str> = acknowledged
        .into_entries()
        .into_iter()
        .filter(|(_, matched)| !matched)
        .map(|(n, _)| n)
        .collect();
    if unmatched.is_empty() && aborts.any_state.is_empty() && aborts.if_not_started.is_empty() {
        return;
    }
    let aborts: Vec<(&str, bool)> = (aborts.any_state.iter().map(|n| (n.as_str(), false)))
        .chain(aborts.if_not_started.iter().map(|n| (n.as_str(), true)))
        .collect();
    let held = held_by_name(
        state.jobs.iter().map(|j| (j.project, j.name.as_str())),
        project,
        unmatched.iter().copied().chain(aborts.iter().map(|(name, _)| *name)),
    );
    for name in acks.iter().filter(|n| unmatched.contains(&n.as_str())) {
        if held_index(&held, name).is_none() {
            outcome.problems.push(ReplyProblem::UnknownResult { result: name.clone() });
        }
    }
    for (name, only_unstarted) in aborts {
        let Some(index) = held_index(&held, name) else {
            outcome.problems.push(ReplyProblem::UnknownResult { result: name.to_owned() });
            continue;
        };
        let id = JobId::from_index(index);
        let job = &mut state.jobs[index];
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
        job.end_task();
        outcome.aborted.push(id);
    }
}

/// The project's app of that name.
pub(crate) fn find_app(state: &ClientState, project: ProjectId, name: &str) -> Option<AppId> {
    state.apps.iter().position(|a| a.project == project && a.name == name).map(AppId::from_index)
}

/// The app version a job of `app` runs with: the one with its version number (when
/// given), plan class and platform (when both name one); with no version number, the
/// newest such.
pub(crate) fn find_version(
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

/// Which of `names` the project holds a record of, among `records` (each record's
/// project and name, in index order): each name with the first such record's index.
///
/// Every reply is checked against every held job, and the names a reply brings are
/// nearly always new: the wanted names are a [`NameSet`], which turns most records away
/// without comparing or hashing their names.
fn held_by_name<'n, 'r>(
    records: impl Iterator<Item = (ProjectId, &'r str)>,
    project: ProjectId,
    names: impl Iterator<Item = &'n str>,
) -> NameSet<'n, Option<usize>> {
    let mut wanted: NameSet<'n, Option<usize>> = NameSet::new(names, || None);
    if !wanted.is_empty() {
        for (index, (owner, name)) in records.enumerate() {
            if owner == project
                && let Some(slot) = wanted.get_mut(name)
                && slot.is_none()
            {
                *slot = Some(index);
            }
        }
    }
    wanted
}

/// The index of the record of `name` that [`held_by_name`] found.
fn held_index(held: &NameSet<'_, Option<usize>>, name: &str) -> Option<usize> {
    held.get(name).copied().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ActiveTask, Project, SchedulerState};
    use crate::protocol::{AppDescription, CoprocessorUsage, FileDescription, WorkunitDescription};

    const P: ProjectId = ProjectId(0);

    fn state() -> ClientState {
        let mut state = ClientState::default();
        state.projects.push(Project::new("p", "http://p/", 1.0));
        state.projects.push(Project::new("q", "http://q/", 1.0));
        state
    }

    fn version(
        app: &str,
        num: u32,
        coprocessor: Option<(&str, f64)>,
    ) -> AppVersionDescription<'static> {
        AppVersionDescription {
            app_name: app.to_owned().into(),
            version_num: num,
            avg_ncpus: Some(1.0),
            flops: Some(2e9),
            coprocessor: coprocessor
                .map(|(kind, count)| CoprocessorUsage { kind: kind.to_owned().into(), count }),
            ..AppVersionDescription::default()
        }
    }

    fn job(name: &str, app: &str, num: u32) -> (WorkunitDescription, ResultDescription) {
        let workunit = WorkunitDescription {
            name: format!("wu_{name}"),
            app_name: app.into(),
            rsc_fpops_est: 1e12,
            ..WorkunitDescription::default()
        };
        let result = ResultDescription {
            name: name.into(),
            wu_name: format!("wu_{name}"),
            version_num: Some(num),
            report_deadline: 5000.0,
            ..ResultDescription::default()
        };
        (workunit, result)
    }

    /// A reply with app "a" (a CPU version 1 and an NVIDIA version 2) and two jobs.
    fn reply() -> SchedulerReply {
        let (w1, r1) = job("r1", "a", 1);
        let (w2, r2) = job("r2", "a", 2);
        SchedulerReply {
            apps: vec![AppDescription { name: "a".into(), ..AppDescription::default() }],
            app_versions: vec![version("a", 1, None), version("a", 2, Some(("NVIDIA", 0.5)))],
            workunits: vec![w1, w2],
            results: vec![r1, r2],
            ..SchedulerReply::default()
        }
    }

    /// An app_config.xml read before the project sent its apps (at attach time) applies
    /// to the apps and versions a later reply brings: the app's limit, its GPU usage,
    /// one version's command line.
    #[test]
    fn the_users_app_config_applies_to_apps_that_arrive_later() {
        use crate::model::{AppConfig, AppSettings, AppVersionSettings};
        let mut state = state();
        let config = AppConfig {
            apps: vec![AppSettings {
                name: "a".into(),
                max_concurrent: Some(1),
                gpu_usage: Some(0.25),
                cpu_usage: Some(0.1),
            }],
            app_versions: vec![AppVersionSettings {
                app_name: "a".into(),
                plan_class: String::new(),
                cmdline: Some("--fast".into()),
                avg_ncpus: Some(2.0),
                ngpus: None,
            }],
            project_max_concurrent: Some(3),
            report_results_immediately: true,
        };
        assert_eq!(config.apply(&mut state, P), vec!["a".to_string(), "a".to_string()]);
        let mut reply = reply();
        reply.app_versions[1].plan_class = "cuda".into();
        reply.results[1].plan_class = "cuda".into();
        apply_reply(&mut state, P, reply, 0.0);
        let app = state.apps.iter().find(|a| a.name == "a").expect("app a");
        assert_eq!(app.max_concurrent, Some(1));
        let cpu = state.app_versions.iter().find(|v| v.version_num == 1).expect("v1");
        assert_eq!((cpu.cmdline.as_str(), cpu.usage.avg_ncpus), ("--fast", 2.0));
        let gpu = state.app_versions.iter().find(|v| v.version_num == 2).expect("v2");
        assert_eq!(gpu.usage.coprocessor, Some((ResourceType::Nvidia, 0.25)));
        assert_eq!(gpu.usage.avg_ncpus, 0.1);
        assert_eq!(AppConfig::project_limit(&state, P), Some(3));
    }

    #[test]
    fn a_project_without_an_app_for_a_gpu_the_host_has_is_a_notice_once() {
        let mut state = state();
        let mut told = SchedulerReply::default();
        told.no_rsc_apps[ResourceType::Nvidia] = true;
        told.no_rsc_apps[ResourceType::Amd] = true;
        // No GPU here: nothing to say.
        let outcome = apply_reply(&mut state, P, told.clone(), 100.0);
        assert!(outcome.client_notices.is_empty(), "{:?}", outcome.client_notices);
        state.host.coprocessors[ResourceType::Nvidia] = Some(crate::model::Coprocessor {
            resource: ResourceType::Nvidia,
            name: "GeForce".into(),
            count: 1,
            peak_flops: 1e12,
            available_ram: 0.0,
        });
        let outcome = apply_reply(&mut state, P, told.clone(), 200.0);
        assert_eq!(outcome.client_notices.len(), 1, "the NVIDIA GPU only");
        assert!(outcome.client_notices[0].contains("no applications for your NVIDIA GPU"));
        // Once the project is known to have none, it is not said again.
        state.projects[0].resources[ResourceType::Nvidia].no_apps = true;
        assert!(apply_reply(&mut state, P, told, 300.0).client_notices.is_empty());
    }

    #[test]
    fn dont_use_dcf_keeps_the_factor_at_one_and_unlearnt() {
        let mut state = state();
        state.projects[0].duration_correction_factor = 2.25;
        let told = SchedulerReply { dont_use_dcf: true, ..reply() };
        let outcome = apply_reply(&mut state, P, told, 100.0);
        let project = &state.projects[0];
        assert!(project.dont_use_dcf);
        assert_eq!(project.duration_correction_factor, 1.0);
        // A job that ran four times its estimate teaches nothing.
        let job = outcome.new_jobs[0];
        crate::estimate::learn_duration_correction(&mut state, job, 4_000.0);
        assert_eq!(state.projects[0].duration_correction_factor, 1.0);
        assert_eq!(crate::estimate::job_dcf(&state, job), 1.0);
        let version = state.job(job).app_version.expect("matched");
        assert_eq!(state.app_version(version).duration_correction_factor, None);
        // The next reply without it lets the factor learn again.
        apply_reply(&mut state, P, SchedulerReply::default(), 200.0);
        assert!(!state.projects[0].dont_use_dcf);
        crate::estimate::learn_duration_correction(&mut state, job, 4_000.0);
        assert!(state.projects[0].duration_correction_factor > 1.0);
    }

    #[test]
    fn jobs_come_with_their_apps_and_versions_and_preview_agrees() {
        let mut state = state();
        let reply = reply();
        let preview = work_reply(&state, P, &reply);
        let outcome = apply_reply(&mut state, P, reply.clone(), 100.0);
        assert_eq!(outcome.work, preview);
        assert_eq!(outcome.work.jobs_received[ResourceType::Cpu], 1);
        assert_eq!(outcome.work.jobs_received[ResourceType::Nvidia], 1);
        assert_eq!(outcome.new_jobs.len(), 2);
        let gpu_job = state.job(outcome.new_jobs[1]);
        let gpu_version = state.app_version(gpu_job.app_version.expect("matched"));
        assert_eq!(gpu_version.usage.coprocessor, Some((ResourceType::Nvidia, 0.5)));
        assert_eq!((gpu_job.version_num, gpu_job.received_time), (2, 100.0));
        assert_eq!(gpu_job.state, JobState::FilesDownloaded, "no files to wait for");
        assert!(state.projects[0].resources[ResourceType::Nvidia].has_app_version);
        assert!(outcome.problems.is_empty());
        // Sent again: nothing new, the deadline moves, and it is reported as a duplicate.
        let mut again = reply.clone();
        again.results[0].report_deadline = 6000.0;
        let outcome = apply_reply(&mut state, P, again.clone(), 200.0);
        assert!(outcome.new_jobs.is_empty());
        assert_eq!(state.jobs.len(), 2);
        assert_eq!(state.jobs[0].report_deadline, 6000.0);
        assert_eq!(outcome.problems.len(), 2);
        assert_eq!(work_reply(&state, P, &again).jobs_received, ResourceMap::default());
    }

    /// A client holding all the jobs it may takes no more: the jobs beyond the room are
    /// reported not taken, the ones held stay, and the preview counts what was taken.
    #[test]
    fn jobs_beyond_the_most_held_are_not_taken_and_nothing_held_is_lost() {
        let mut state = state();
        apply_reply(&mut state, P, reply(), 0.0);
        let filler = state.jobs[0].clone();
        state.jobs.resize(MAX_JOBS_HELD - 1, filler);
        let mut more = reply();
        (more.workunits, more.results) =
            ["r3", "r4", "r5"].map(|name| job(name, "a", 1)).into_iter().unzip();
        let preview = work_reply(&state, P, &more);
        let outcome = apply_reply(&mut state, P, more, 10.0);
        assert_eq!(outcome.work, preview);
        assert_eq!(outcome.work.jobs_received[ResourceType::Cpu], 1);
        assert_eq!(outcome.new_jobs.len(), 1);
        assert_eq!(state.jobs.len(), MAX_JOBS_HELD);
        let refused: Vec<_> = outcome
            .problems
            .iter()
            .filter(|p| matches!(p, ReplyProblem::TooManyJobs { .. }))
            .collect();
        assert_eq!(refused.len(), 2, "{:?}", outcome.problems);
        assert_eq!(state.jobs[0].name, "r1", "what was held stays");
    }

    #[test]
    fn what_cannot_be_taken_is_reported_not_taken() {
        let mut state = state();
        let mut reply = reply();
        reply.app_versions.push(version("a", 3, Some(("apple_gpu", 1.0))));
        reply.app_versions.push(version("nope", 1, None));
        let (w, mut r) = job("r3", "a", 3);
        reply.workunits.push(w);
        r.name = "r3".into();
        reply.results.push(r);
        let (_, orphan) = job("r4", "a", 1);
        reply.results.push(orphan);
        let preview = work_reply(&state, P, &reply);
        let outcome = apply_reply(&mut state, P, reply, 0.0);
        assert_eq!(outcome.work, preview);
        assert_eq!(outcome.new_jobs.len(), 2);
        assert!(outcome.problems.contains(&ReplyProblem::UnsupportedCoprocessor {
            app: "a".into(),
            version_num: 3,
            kind: "apple_gpu".into()
        }));
        assert!(outcome.problems.contains(&ReplyProblem::UnknownApp { app: "nope".into() }));
        assert!(outcome.problems.contains(&ReplyProblem::NoAppVersion { result: "r3".into() }));
        assert!(outcome.problems.contains(&ReplyProblem::UnknownWorkunit {
            result: "r4".into(),
            workunit: "wu_r4".into()
        }));
    }

    #[test]
    fn a_reply_after_a_detach_brings_nothing() {
        let mut state = state();
        state.projects[P.index()].detached = true;
        let jobs_before = state.jobs.len();
        let outcome = apply_reply(&mut state, P, reply(), 0.0);
        assert_eq!(state.jobs.len(), jobs_before, "no task of a detached project");
        assert_eq!(outcome.work.jobs_received, ResourceMap::default());
    }

    #[test]
    fn a_job_waits_for_files_it_does_not_have() {
        let mut state = state();
        let mut reply = reply();
        reply.file_infos.push(FileDescription {
            name: "in".into(),
            urls: vec!["http://p/in".into()],
            nbytes: Some(10.0),
            ..FileDescription::default()
        });
        reply.file_infos.push(FileDescription {
            name: "out".into(),
            urls: vec!["http://p/upload".into()],
            upload_when_present: true,
            ..FileDescription::default()
        });
        reply.workunits[0].file_refs.push(FileReference {
            file_name: "in".into(),
            open_name: "input".into(),
            ..FileReference::default()
        });
        reply.results[0].file_refs.push(FileReference {
            file_name: "out".into(),
            open_name: "output".into(),
            ..FileReference::default()
        });
        let outcome = apply_reply(&mut state, P, reply, 0.0);
        let id = outcome.new_jobs[0];
        assert_eq!(state.job(id).state, JobState::New);
        assert_eq!(state.file(state.job_input_files(id)[0].file).download_urls, ["http://p/in"]);
        assert_eq!(state.open_name(&state.job_input_files(id)[0]), "input");
        let output = state.file(state.job_output_files(id)[0].file);
        assert_eq!(
            (output.upload_urls.as_slice(), output.upload_when_present),
            (&["http://p/upload".to_owned()][..], true)
        );
    }

    #[test]
    fn host_id_restarts_the_sequence_and_the_first_key_is_pinned() {
        let mut state = state();
        state.projects[0].rpc_seqno = 5;
        let key = fixture_key();
        let reply = SchedulerReply {
            hostid: Some(42),
            userid: Some(7),
            user_name: Some("u".into()),
            project_name: Some("Project P".into()),
            code_sign_key: Some(key.clone()),
            host_venue: Some("home".into()),
            ..SchedulerReply::default()
        };
        let outcome = apply_reply(&mut state, P, reply.clone(), 0.0);
        let project = &state.projects[0];
        assert_eq!(project.host_venue, "home", "the venue chooses the web preferences");
        assert_eq!((project.hostid, project.rpc_seqno, project.userid), (42, 0, 7));
        assert_eq!((project.name.as_str(), project.user_name.as_str()), ("Project P", "u"));
        assert_eq!(outcome.code_sign_key, CodeSignKeyUpdate::Pinned(key.trim().to_owned()));
        let same = apply_reply(&mut state, P, reply, 0.0);
        assert_eq!(same.code_sign_key, CodeSignKeyUpdate::Unchanged);
        // An unreadable key is not taken; the pinned one stays.
        let changed = SchedulerReply {
            code_sign_key: Some("1024\ncd\n.".into()),
            code_sign_key_signature: Some("ef\n.".into()),
            ..SchedulerReply::default()
        };
        let outcome = apply_reply(&mut state, P, changed, 0.0);
        assert!(matches!(outcome.code_sign_key, CodeSignKeyUpdate::Refused { .. }));
        assert_eq!(state.projects[0].code_sign_key.as_deref(), Some(key.trim()), "not taken");
        // No host id in a reply: the sequence goes on.
        state.projects[0].rpc_seqno = 3;
        apply_reply(&mut state, P, SchedulerReply::default(), 0.0);
        assert_eq!(state.projects[0].rpc_seqno, 3);
    }

    /// The code-signing key of the real client's signed reply fixture.
    fn fixture_key() -> String {
        let text =
            include_str!("../../tests/fixtures/boinc-7.20.5/sched_reply_work_signed_example.xml");
        SchedulerReply::from_xml(text).expect("the fixture").code_sign_key.expect("its key")
    }

    #[test]
    fn acknowledgements_and_aborts() {
        let mut state = state();
        let outcome = apply_reply(&mut state, P, reply(), 0.0);
        let (done, queued) = (outcome.new_jobs[0], outcome.new_jobs[1]);
        state.jobs[done.index()].state = JobState::FilesUploaded;
        state.jobs[done.index()].ready_to_report = true;
        let ack = SchedulerReply {
            result_acks: vec!["r1".into(), "r1".into(), "ghost".into()],
            ..SchedulerReply::default()
        };
        let outcome = apply_reply(&mut state, P, ack.clone(), 10.0);
        assert_eq!(outcome.acknowledged, 1);
        assert!(state.job(done).got_server_ack);
        assert_eq!(outcome.problems, [ReplyProblem::UnknownResult { result: "ghost".into() }]);
        // Another project's job of the same name is not this project's.
        let other = apply_reply(&mut state, ProjectId(1), ack, 10.0);
        assert_eq!(other.acknowledged, 0);

        let mut task = ActiveTask::new(0);
        task.scheduler_state = SchedulerState::Running;
        state.jobs[queued.index()].task = Some(task);
        let abort = SchedulerReply {
            result_aborts_if_not_started: vec!["r2".into()],
            ..SchedulerReply::default()
        };
        assert!(apply_reply(&mut state, P, abort, 20.0).aborted.is_empty(), "it has started");
        let abort =
            SchedulerReply { result_aborts: vec!["r2".into()], ..SchedulerReply::default() };
        let outcome = apply_reply(&mut state, P, abort.clone(), 20.0);
        assert_eq!(outcome.abort_running, [queued], "the caller stops the task");
        state.jobs[queued.index()].task = None;
        let outcome = apply_reply(&mut state, P, abort, 30.0);
        assert_eq!(outcome.aborted, [queued]);
        let job = state.job(queued);
        assert_eq!(
            (job.state, job.exit_status, job.ready_to_report),
            (JobState::Aborted, 202, true)
        );
    }
}
