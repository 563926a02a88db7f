//! The scheduler: a `<scheduler_request>` in, a `<scheduler_reply>` out, as a BOINC
//! project's scheduler answers (docs/design.md "Protocol facts"). An open project: any
//! authenticator gets an account, and a host without a valid id gets a new one. Reported
//! results are taken and acknowledged ([`super::reports`]); jobs the host lost (in
//! progress for it, but neither held nor reported) are sent again; new jobs are chosen by
//! the core's work-send policy ([`boinc_core::work_send`]: seed 000's deadline check,
//! seed 003's per-resource requests, seed 004's disk figures), up to BOINC's limit on
//! jobs in progress per CPU, and the reply says why it sends nothing in the words BOINC
//! servers use. Every executable goes with the project's signature; the project's key
//! goes to a client that lacks it, with the key change's signature to one that holds an
//! old key. A client on the anonymous platform (docs/design.md "Anonymous platform") gets
//! jobs of the apps it declares, naming its own versions, and no executable.

use super::apps::ServedApp;
use super::keys::ProjectKeys;
use super::records::{
    AccountRecord, HostRecord, JobRecord, JobStatus, Misbehaviour, Outcome, ProjectRecords,
};
use super::reports::{Report, take_report};
use boinc_core::control::ANONYMOUS_PLATFORM;
use boinc_core::disk::FreeSpaceFigures;
use boinc_core::model::ResourceType;
use boinc_core::protocol::{
    AppDescription, AppVersionDescription, FileDescription, FileReference, ResultDescription,
    RssFeed, SchedulerReply, SchedulerRequest, ServerMessage, WorkunitDescription,
};
use boinc_core::work_send::{DiskBudget, JobOffer, ResourceOffer, duration_correction};
use std::collections::BTreeSet;

/// The scheduler version the replies give (BOINC 7.20's servers').
const SCHEDULER_VERSION: u32 = 720;
/// Flops assumed for a host that reports none (or nonsense).
const DEFAULT_FLOPS: f64 = 1e9;
/// A job may run this many times its estimate before the client aborts it.
const FPOPS_BOUND_FACTOR: f64 = 50.0;
/// Memory a job may use, bytes.
const MEMORY_BOUND: f64 = 512e6;
/// A crashing job's app crashes after this share of the job's CPU seconds in each run.
const CRASH_POINT: f64 = 0.6;
/// Disk a job's slot may use, bytes.
const DISK_BOUND: f64 = 1e9;

/// How the executables' signatures are sent (a fault for tests of clients; only
/// `Valid` is what a project does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SignatureMode {
    /// The project's signature.
    Valid,
    /// A signature with one digit changed.
    Bad,
    /// No signature.
    Missing,
}

/// What the scheduler needs beyond the records.
pub(crate) struct SchedulerContext<'a> {
    /// `<project_name>`.
    pub project_name: &'a str,
    /// `<master_url>`.
    pub master_url: &'a str,
    /// Download URLs are this followed by the file name.
    pub download_url: &'a str,
    /// Where outputs are uploaded.
    pub upload_url: &'a str,
    /// The apps served.
    pub apps: &'a [ServedApp],
    /// The project's keys.
    pub keys: &'a ProjectKeys,
    /// `<request_delay>`.
    pub request_delay: f64,
    /// Jobs in progress a host may hold per usable CPU.
    pub max_jobs_in_progress_per_cpu: u32,
    /// How executables are signed in this reply.
    pub signatures: SignatureMode,
    /// Messages every reply carries (the operator's, `--message`).
    pub messages: &'a [ServerMessage],
    /// The project's notice feed (`<rss_feeds>`).
    pub notice_feed: &'a str,
    /// The accounts' web preferences and when they were changed (`mod_time`).
    pub web_prefs: Option<(&'a str, f64)>,
    /// The venue hosts are in.
    pub host_venue: Option<&'a str>,
}

/// How often clients fetch the notice feed, seconds (BOINC projects' default: a day).
const NOTICE_POLL_INTERVAL: f64 = 86_400.0;

/// BOINC's credit unit: a cobblestone is 1/200 of a day of a 1-GFLOPS computer.
fn credit_for(cpu_seconds: f64, flops: f64) -> f64 {
    if cpu_seconds.is_finite() && cpu_seconds > 0.0 {
        cpu_seconds * flops * 200.0 / (86_400.0 * 1e9)
    } else {
        0.0
    }
}

/// The scheduler's answer to one request.
#[derive(Debug)]
pub(crate) struct Answer {
    /// The reply.
    pub reply: SchedulerReply,
    /// The records changed in a way that must be saved before the reply goes out.
    pub changed: bool,
    /// The host (0: none: the request was refused).
    pub hostid: u64,
    /// Results reported.
    pub reported: usize,
    /// Jobs sent for the first time.
    pub sent: usize,
    /// Jobs sent again.
    pub resent: usize,
}

/// Answers `request` at `now`.
pub(crate) fn answer(
    records: &mut ProjectRecords,
    context: &SchedulerContext,
    request: &SchedulerRequest,
    now: f64,
) -> Answer {
    let mut reply = SchedulerReply {
        scheduler_version: Some(SCHEDULER_VERSION),
        project_name: Some(context.project_name.to_owned()),
        master_url: Some(context.master_url.to_owned()),
        request_delay: Some(context.request_delay),
        ..SchedulerReply::default()
    };
    let mut answer = Answer {
        reply: SchedulerReply::default(),
        changed: false,
        hostid: 0,
        reported: 0,
        sent: 0,
        resent: 0,
    };
    let authenticator = request.authenticator.trim();
    if authenticator.is_empty() || authenticator.len() > 256 {
        reply.messages.push(ServerMessage {
            priority: boinc_core::protocol::MessagePriority::Notice,
            text: "Invalid or missing account key.  To fix, remove and add this project.".into(),
        });
        answer.reply = reply;
        return answer;
    }
    let (userid, hostid) = account_and_host(records, &mut reply, &mut answer, request, now);
    answer.hostid = hostid;
    reply.userid = Some(userid);
    reply.messages.extend(context.messages.iter().cloned());
    reply.host_venue = context.host_venue.map(str::to_owned);
    // As a BOINC project: the preferences go to a host whose own are older.
    if let Some((prefs, mod_time)) = context.web_prefs {
        let theirs =
            request.working_global_preferences.as_ref().map_or(0.0, |p| p.reported.mod_time);
        if theirs < mod_time {
            reply.global_preferences = Some(prefs.to_owned());
        }
    }
    reply.rss_feeds = Some(vec![RssFeed {
        url: context.notice_feed.to_owned(),
        poll_interval: NOTICE_POLL_INTERVAL,
    }]);
    let flops = Some(request.host_info.p_fpops)
        .filter(|f| f.is_finite() && *f > 0.0)
        .unwrap_or(DEFAULT_FLOPS);

    for result in &request.results {
        answer.changed = true;
        answer.reported += 1;
        match take_report(records, hostid, result, now) {
            Report::First(outcome) => {
                tracing::info!(result = %result.name, host = hostid, ?outcome, "result reported");
                if outcome == Outcome::Valid {
                    grant_credit(
                        records,
                        userid,
                        hostid,
                        credit_for(result.final_cpu_time, flops),
                        now,
                    );
                }
            }
            Report::Repeated => {
                tracing::warn!(result = %result.name, host = hostid, "result reported again")
            }
            Report::Unknown => {
                tracing::warn!(result = %result.name, host = hostid, "report of an unknown result")
            }
        }
        reply.result_acks.push(result.name.to_string());
    }

    describe_credit(records, userid, hostid, &mut reply);

    if let Some((key, signature)) = context.keys.for_client(request.code_sign_key.as_deref()) {
        reply.code_sign_key = Some(key);
        reply.code_sign_key_signature = signature;
    }

    let mut sending =
        Sending { context, flops, jobs: Vec::new(), declared: declared_versions(request) };
    resend_lost_jobs(records, request, hostid, now, &mut sending);
    answer.resent = sending.jobs.len();
    send_new_jobs(records, context, request, hostid, now, &mut sending, &mut reply.messages);
    answer.sent = sending.jobs.len() - answer.resent;
    answer.changed |= !sending.jobs.is_empty();
    sending.describe(records, &mut reply);
    for resource in ResourceType::ALL.into_iter().filter(|&r| r != ResourceType::Cpu) {
        if request.requests(resource) {
            reply.no_rsc_apps[resource] = true;
        }
    }
    answer.reply = reply;
    answer
}

/// Grants `amount` of credit to the account `userid` and its host `hostid`.
fn grant_credit(records: &mut ProjectRecords, userid: u64, hostid: u64, amount: f64, now: f64) {
    if let Some(account) = records.accounts.values_mut().find(|a| a.userid == userid) {
        account.credit.grant(amount, now);
    }
    if let Some(host) = records.hosts.get_mut(&hostid) {
        host.credit.grant(amount, now);
    }
}

/// The account's name and credit, and the host's credit, as the reply tells them.
fn describe_credit(records: &ProjectRecords, userid: u64, hostid: u64, reply: &mut SchedulerReply) {
    if let Some(account) = records.accounts.values().find(|a| a.userid == userid) {
        reply.user_name = Some(if account.name.is_empty() {
            format!("volunteer {userid}")
        } else {
            account.name.clone()
        });
        reply.user_total_credit = Some(account.credit.total);
        reply.user_expavg_credit = Some(account.credit.expavg);
        reply.user_create_time = Some(account.created);
    }
    if let Some(host) = records.hosts.get(&hostid) {
        reply.host_total_credit = Some(host.credit.total);
        reply.host_expavg_credit = Some(host.credit.expavg);
        reply.host_create_time = Some(host.created);
    }
}

/// The account of the request's authenticator and the host's id, made when new.
fn account_and_host(
    records: &mut ProjectRecords,
    reply: &mut SchedulerReply,
    answer: &mut Answer,
    request: &SchedulerRequest,
    now: f64,
) -> (u64, u64) {
    let authenticator = request.authenticator.trim();
    let userid = match records.accounts.get(authenticator) {
        Some(account) => account.userid,
        None => {
            let userid = records.next_userid;
            records.next_userid += 1;
            records.accounts.insert(
                authenticator.to_owned(),
                AccountRecord { userid, created: now, ..AccountRecord::default() },
            );
            tracing::info!(userid, "new account");
            answer.changed = true;
            userid
        }
    };
    let known = records.hosts.get(&request.hostid).is_some_and(|host| host.userid == userid);
    let hostid = if known {
        request.hostid
    } else {
        let hostid = records.next_hostid;
        records.next_hostid += 1;
        records.hosts.insert(
            hostid,
            HostRecord { userid, created: now, last_request: now, ..HostRecord::default() },
        );
        tracing::info!(hostid, userid, "new host");
        reply.hostid = Some(hostid);
        answer.changed = true;
        hostid
    };
    if let Some(host) = records.hosts.get_mut(&hostid) {
        // Saved with the next change that must be: not worth a write of its own.
        host.last_request = now;
        if host.platform != request.platform_name {
            request.platform_name.as_ref().clone_into(&mut host.platform);
        }
    }
    (userid, hostid)
}

/// The jobs going into a reply.
struct Sending<'c> {
    context: &'c SchedulerContext<'c>,
    /// The host's speed, flops: app versions are described with it and estimates made
    /// from it, so the client's estimate of a job is its CPU seconds.
    flops: f64,
    /// Result names, in reply order.
    jobs: Vec<String>,
    /// A client on the anonymous platform: the CPU versions it declared, one per app
    /// (its newest), which its jobs are sent for; `None` for any other client.
    declared: Option<Vec<DeclaredVersion>>,
}

/// An app version a client on the anonymous platform runs (its app_info.xml), as its
/// request lists it: jobs of the app name it, and no app file or version goes with them.
#[derive(Debug, Clone, PartialEq)]
struct DeclaredVersion {
    app: String,
    version_num: u32,
    plan_class: String,
    platform: String,
}

/// The CPU versions an anonymous-platform request declares, the newest of each app
/// (`None`: the request names a platform). A GPU version gets no jobs: the project's
/// apps are CPU apps.
fn declared_versions(request: &SchedulerRequest) -> Option<Vec<DeclaredVersion>> {
    if request.platform_name != ANONYMOUS_PLATFORM {
        return None;
    }
    let mut declared: Vec<DeclaredVersion> = Vec::new();
    for version in request.app_versions.iter().filter(|v| v.coprocessor.is_none()) {
        let candidate = DeclaredVersion {
            app: version.app_name.to_string(),
            version_num: version.version_num,
            plan_class: version.plan_class.to_string(),
            platform: version.platform.to_string(),
        };
        match declared.iter_mut().find(|d| d.app == candidate.app) {
            Some(held) if held.version_num < candidate.version_num => *held = candidate,
            Some(_) => {}
            None => declared.push(candidate),
        }
    }
    Some(declared)
}

impl Sending<'_> {
    /// The version a job of `app` is sent for on an anonymous-platform client.
    fn declared_for(&self, app: &str) -> Option<&DeclaredVersion> {
        self.declared.as_ref()?.iter().find(|d| d.app == app)
    }
}

impl Sending<'_> {
    /// Writes the jobs, with their apps, versions and files, into the reply.
    fn describe(&self, records: &ProjectRecords, reply: &mut SchedulerReply) {
        let context = self.context;
        let mut described: BTreeSet<&str> = BTreeSet::new();
        for name in &self.jobs {
            let Some(job) = records.jobs.get(name) else { continue };
            let Some(app) = context.apps.iter().find(|a| a.name == job.app) else { continue };
            let declared = self.declared_for(&app.name);
            if self.declared.is_some() && declared.is_none() {
                continue;
            }
            if described.insert(&app.name) {
                describe_app(context, app, self.flops, declared.is_none(), reply);
            }
            describe_job(context, app, job, self.flops, declared, reply);
        }
    }
}

/// The app, and with `with_version` its version and executable (a client on the
/// anonymous platform has its own).
fn describe_app(
    context: &SchedulerContext,
    app: &ServedApp,
    flops: f64,
    with_version: bool,
    reply: &mut SchedulerReply,
) {
    reply.apps.push(AppDescription {
        name: app.name.clone(),
        user_friendly_name: app.user_friendly_name.clone(),
        non_cpu_intensive: false,
    });
    if !with_version {
        return;
    }
    let signature = match context.signatures {
        SignatureMode::Valid => Some(app.signature.clone()),
        SignatureMode::Bad => Some(with_a_digit_changed(&app.signature)),
        SignatureMode::Missing => None,
    };
    reply.file_infos.push(FileDescription {
        name: app.file_name.clone(),
        urls: vec![format!("{}{}", context.download_url, app.file_name)],
        nbytes: Some(app.nbytes as f64),
        md5_cksum: app.md5.clone(),
        executable: true,
        file_signature: signature,
        ..FileDescription::default()
    });
    reply.app_versions.push(AppVersionDescription {
        app_name: app.name.clone().into(),
        version_num: super::apps::VERSION_NUM,
        platform: app.platform.clone().into(),
        api_version: app.api_version.clone().into(),
        avg_ncpus: Some(1.0),
        flops: Some(flops),
        file_refs: vec![FileReference {
            file_name: app.file_name.clone(),
            main_program: true,
            ..FileReference::default()
        }],
        ..AppVersionDescription::default()
    });
}

fn describe_job(
    context: &SchedulerContext,
    app: &ServedApp,
    job: &JobRecord,
    flops: f64,
    declared: Option<&DeclaredVersion>,
    reply: &mut SchedulerReply,
) {
    let JobStatus::InProgress { deadline, .. } = job.status else { return };
    let (version_num, plan_class, platform) = match declared {
        Some(version) => {
            (version.version_num, version.plan_class.clone(), version.platform.clone())
        }
        None => (super::apps::VERSION_NUM, String::new(), app.platform.clone()),
    };
    let mut command_line = app.command_prefix.clone();
    if app.is_example {
        command_line.extend(["--seconds".to_owned(), job.seconds.to_string()]);
        if job.input.is_some() {
            command_line.extend(["--input".to_owned(), "in".to_owned()]);
        }
        command_line.extend(["--output".to_owned(), "out".to_owned()]);
        match job.misbehaviour {
            Misbehaviour::None => {}
            // Partway through each run: a run started from a checkpoint gets further,
            // so the job still finishes after a crash or two.
            Misbehaviour::Crash => command_line.extend([
                "--crash-after".to_owned(),
                ((job.seconds * CRASH_POINT * 10.0).round() / 10.0).max(0.1).to_string(),
            ]),
            Misbehaviour::HangOnce => command_line.push("--hang-once".to_owned()),
        }
    }
    let mut workunit_files = Vec::new();
    if let Some(input) = &job.input {
        reply.file_infos.push(FileDescription {
            name: input.name.clone(),
            urls: vec![format!("{}{}", context.download_url, input.name)],
            nbytes: Some(input.nbytes as f64),
            md5_cksum: input.md5.clone(),
            ..FileDescription::default()
        });
        workunit_files.push(FileReference {
            file_name: input.name.clone(),
            open_name: "in".into(),
            ..FileReference::default()
        });
    }
    let fpops_est = job.seconds * flops;
    reply.workunits.push(WorkunitDescription {
        name: job.workunit.clone(),
        app_name: app.name.clone(),
        version_num: Some(version_num),
        command_line: command_line.join(" "),
        rsc_fpops_est: fpops_est,
        rsc_fpops_bound: fpops_est * FPOPS_BOUND_FACTOR,
        rsc_memory_bound: MEMORY_BOUND,
        rsc_disk_bound: DISK_BOUND,
        file_refs: workunit_files,
    });
    reply.file_infos.push(FileDescription {
        name: job.output.clone(),
        urls: vec![context.upload_url.to_owned()],
        max_nbytes: Some(job.max_output_bytes as f64),
        generated_locally: true,
        upload_when_present: true,
        ..FileDescription::default()
    });
    reply.results.push(ResultDescription {
        name: job.name.clone(),
        wu_name: job.workunit.clone(),
        report_deadline: deadline,
        platform,
        version_num: Some(version_num),
        plan_class,
        file_refs: vec![FileReference {
            file_name: job.output.clone(),
            open_name: "out".into(),
            ..FileReference::default()
        }],
        ..ResultDescription::default()
    });
}

/// `signature` with its first hex digit changed: well-formed, never valid.
fn with_a_digit_changed(signature: &str) -> String {
    let mut changed = signature.to_owned();
    if let Some(at) = changed.find(|c: char| c.is_ascii_hexdigit()) {
        let replacement = if changed[at..].starts_with('0') { "1" } else { "0" };
        changed.replace_range(at..at + 1, replacement);
    }
    changed
}

/// BOINC's "resend lost results": jobs in progress on this host that its request
/// neither holds nor reports were lost (the client crashed before saving them, or the
/// reply never arrived), and are sent again while their deadline has not passed.
fn resend_lost_jobs(
    records: &mut ProjectRecords,
    request: &SchedulerRequest,
    hostid: u64,
    now: f64,
    sending: &mut Sending,
) {
    let held: BTreeSet<&str> = request
        .other_results
        .iter()
        .map(|r| r.name.as_ref())
        .chain(request.results.iter().map(|r| r.name.as_ref()))
        .collect();
    let lost: Vec<String> = records
        .in_progress_on(hostid)
        .filter(|job| !held.contains(job.name.as_str()))
        .filter(
            |job| matches!(job.status, JobStatus::InProgress { deadline, .. } if deadline > now),
        )
        .map(|job| job.name.clone())
        .collect();
    for name in lost {
        if let Some(job) = records.jobs.get_mut(&name) {
            job.times_sent += 1;
            records.counters.jobs_resent += 1;
            tracing::info!(result = %name, host = hostid, "sending a lost job again");
            sending.jobs.push(name);
        }
    }
}

/// New jobs for the host, by the work-send policy, and the reasons when none goes.
fn send_new_jobs(
    records: &mut ProjectRecords,
    context: &SchedulerContext,
    request: &SchedulerRequest,
    hostid: u64,
    now: f64,
    sending: &mut Sending,
    messages: &mut Vec<ServerMessage>,
) {
    let Some(mut offer) = ResourceOffer::new(request, ResourceType::Cpu, now) else {
        return;
    };
    if request.dont_send_work {
        return;
    }
    let platforms: Vec<&str> = std::iter::once(request.platform_name.as_ref())
        .chain(request.alt_platforms.iter().map(String::as_str))
        .collect();
    // A client on the anonymous platform runs the apps it declares, whatever they were
    // built for; any other runs those built for its platforms.
    let usable: Vec<&ServedApp> = context
        .apps
        .iter()
        .filter(|app| match &sending.declared {
            Some(_) => sending.declared_for(&app.name).is_some(),
            None => platforms.contains(&app.platform.as_str()),
        })
        .collect();
    if usable.is_empty() {
        messages.push(ServerMessage::no_tasks_sent());
        messages.push(ServerMessage::computer_type_not_supported());
        return;
    }
    let limit = context.max_jobs_in_progress_per_cpu as usize
        * request.usable_instances(ResourceType::Cpu).max(1) as usize;
    let mut in_progress = records.in_progress_on(hostid).count();
    let dcf = duration_correction(request);
    let flops = sending.flops;
    let mut disk = request
        .disk_usage
        .free_space
        .or_else(|| free_space_from_boinc_figures(request))
        .map(|figures| DiskBudget::new(figures, false));
    let mut candidates: Vec<&JobRecord> = records
        .jobs
        .values()
        .filter(|job| job.status == JobStatus::Unsent)
        .filter(|job| usable.iter().any(|app| app.name == job.app))
        .collect();
    candidates.sort_by_key(|job| job.number);
    let mut refused_apps: BTreeSet<&str> = BTreeSet::new();
    let mut chosen: Vec<(String, f64)> = Vec::new();
    let mut limit_reached = false;
    for job in candidates {
        if !offer.wants_more() {
            break;
        }
        if in_progress >= limit {
            limit_reached = true;
            break;
        }
        if refused_apps.contains(job.app.as_str()) {
            continue;
        }
        let candidate = JobOffer {
            app: &job.app,
            relative_deadline: job.deadline_span,
            // Seconds of CPU at the host's speed: the estimate the client makes.
            wall: offer.wall_duration(job.seconds * flops, flops, dcf),
            usage: 1.0,
            nbytes: job.input.as_ref().map_or(0, |i| i.nbytes) as f64 + job.max_output_bytes as f64,
        };
        let nothing_sent = sending.jobs.is_empty() && chosen.is_empty();
        if offer.offer(request, &candidate, disk.as_mut(), nothing_sent).is_err() {
            // Its app's other jobs are alike: none of them would pass either.
            refused_apps.insert(&job.app);
            continue;
        }
        chosen.push((job.name.clone(), now + job.deadline_span));
        in_progress += 1;
    }
    let nothing_unsent = usable.iter().all(|app| {
        !records.jobs.values().any(|job| job.status == JobStatus::Unsent && job.app == app.name)
    });
    for (name, deadline) in &chosen {
        if let Some(job) = records.jobs.get_mut(name) {
            job.status = JobStatus::InProgress { hostid, sent: now, deadline: *deadline };
            job.times_sent += 1;
            records.counters.jobs_sent += 1;
            sending.jobs.push(name.clone());
        }
    }
    if chosen.is_empty() {
        if in_progress >= limit {
            limit_reached = true;
        }
        messages.push(ServerMessage::no_tasks_sent());
        if nothing_unsent {
            for app in &usable {
                messages.push(ServerMessage::no_tasks_available_for(&app.user_friendly_name));
            }
        }
        messages.extend(offer.no_work_messages(request));
        if limit_reached {
            messages.push(ServerMessage::tasks_in_progress_limit());
        }
    }
}

/// The room a request's client has for the project's files, from the figures BOINC's
/// clients send (a request read from text carries no seed 004 figures): what is left of
/// the project's share, within the disk's free space, as BOINC's scheduler works it
/// out. `None` when the client sent no share (no disk check, as before).
fn free_space_from_boinc_figures(request: &SchedulerRequest) -> Option<FreeSpaceFigures> {
    let usage = &request.disk_usage;
    if usage.d_project_share <= 0.0 {
        return None;
    }
    let left = (usage.d_project_share - usage.d_boinc_used_project).max(0.0);
    let free = match request.host_info.d_free {
        d_free if d_free > 0.0 => left.min(d_free),
        _ => left,
    };
    Some(FreeSpaceFigures { free, free_after_offenders: free, free_after_offenders_and_self: free })
}

#[cfg(test)]
mod tests {
    use super::*;
    use boinc_core::protocol::DiskUsageReport;

    #[test]
    fn the_room_for_files_comes_from_boincs_figures() {
        let mut request = SchedulerRequest::default();
        assert_eq!(free_space_from_boinc_figures(&request), None, "no share: no check");
        request.disk_usage = DiskUsageReport {
            d_project_share: 10e9,
            d_boinc_used_project: 4e9,
            ..Default::default()
        };
        request.host_info.d_free = 50e9;
        let room = free_space_from_boinc_figures(&request).expect("figures");
        assert_eq!((room.free, room.free_after_offenders_and_self), (6e9, 6e9));
        // A disk fuller than the share allows bounds it; a share used up leaves none.
        request.host_info.d_free = 1e9;
        assert_eq!(free_space_from_boinc_figures(&request).map(|r| r.free), Some(1e9));
        request.disk_usage.d_boinc_used_project = 12e9;
        assert_eq!(free_space_from_boinc_figures(&request).map(|r| r.free), Some(0.0));
    }
}
