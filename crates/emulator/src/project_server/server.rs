//! An emulated BOINC project server (docs/design.md "Emulator"; seed 000 "Scheduler work-send
//! policy"): it reads only the client's [`SchedulerRequest`] and answers a
//! [`SchedulerReply`](boinc_core::protocol::SchedulerReply), as a real server does, knowing
//! of the project only what the scenario says it serves ([`Catalogue`]).
//!
//! For each resource R the request asks for (`req_secs > 0` or `req_instances > 0`), the
//! server repeatedly picks one of the apps that make jobs for R, by weight
//! ([`super::job_generation`]), and makes a job of it: true size drawn around
//! `fpops_mean`, estimate `fpops_est`, deadline = now + `latency_bound`. It stops once
//! the jobs sent for R cover `req_secs` (instance-seconds) and `req_instances`
//! (instances).
//!
//! - A job counts for `duration × usage / available_frac(R)` instance-seconds, where
//!   `duration = fpops_est / version flops × DCF` is the estimate the client will make
//!   (the request carries the DCF): the request was sized in wall time by a simulation
//!   that runs R only `available_frac(R)` of the time (the request's time statistics),
//!   and BOINC's emulator scales its decrement the same way.
//! - A job is sent only if it passes seed 000's EDF check against the request's
//!   in-progress results ([`boinc_core::work_send`]). A refused job's app is not offered
//!   again for R in this request (BOINC's emulator marks the version "don't use"). When
//!   something was refused for R and nothing was sent for it, the reply says so in
//!   BOINC's words ("Tasks won't finish in time"). The seed's other rule, no deadline
//!   sooner than now + min_queue, is left out: the EDF check with the real queue already
//!   answers the question it approximates, and the rule would starve short-deadline
//!   projects (seed 000's own P1(0.1, 1, .5)) on hosts with a buffer over an hour.
//! - A job is sent only if its files (the app's input, sticky and output sizes) fit the
//!   request's free-space figures ([`boinc_core::work_send::DiskBudget`]); an app whose job does not
//!   fit is not offered again in this request, and a resource that got nothing for
//!   want of space gets BOINC's "needs more disk space" message.
//! - A server says it has no app for a requested resource (`<no_rsc_apps>`), as real
//!   servers do, except in BOINC-compatible mode, where like BOINC's emulator it never
//!   says so.

use super::job_generation::{Catalogue, choose_by_weight, draw_true_flops, job_mean_size, usable};
use super::reply_builder::{ReplyBuilder, ServerAnswer};
use crate::availability::OnOffProcess;
use boinc_core::Time;
use boinc_core::estimate::FALLBACK_FLOPS;
use boinc_core::model::{ClientState, ProjectId, ResourceType};
use boinc_core::protocol::SchedulerRequest;
use boinc_core::work_send::{DiskBudget, JobOffer, ResourceOffer, duration_correction};
use rand::Rng;
use std::borrow::Cow;

/// The most jobs one reply carries, whatever was asked: bounds the work of one request.
pub const MAX_JOBS_PER_REQUEST: usize = 1000;

/// What answering a request works in, kept by a caller that sends many (the emulated
/// world) so that an answer allocates only what it hands over: the EDF check's lists and
/// the reply's record of the versions it describes.
#[derive(Debug, Default)]
pub struct ServerBuffers {
    offer: ResourceOffer,
    described: Vec<bool>,
}

/// An emulated project server: availability and job generation for one project.
#[derive(Debug, Clone, PartialEq)]
pub struct EmulatedServer {
    project: ProjectId,
    project_name: String,
    availability: Option<OnOffProcess>,
    next_job_number: u64,
    /// The number of the first job this server makes: every scenario job named as its
    /// jobs are numbers below it.
    first_job_number: u64,
    boinc_compat: bool,
    /// The project's `<delete_from_self/>` (seed 004): the third free-space figure
    /// may be used.
    delete_from_self: bool,
    catalogue: Catalogue,
}

impl EmulatedServer {
    /// The server of `project` in the scenario `state`, up from `start` unless the
    /// project has an `<available>` process (which draws its first period from `rng`).
    /// Job numbers continue after the highest `{project}_{n}` already in the state, so
    /// names stay unique.
    pub fn new(state: &ClientState, project: ProjectId, start: Time, rng: &mut impl Rng) -> Self {
        let record = state.project(project);
        let availability =
            record.availability.map(|a| OnOffProcess::new(a.frac, a.lambda, start, rng));
        let prefix = format!("{}_", record.name);
        let next_job_number = state
            .jobs
            .iter()
            .filter(|j| j.project == project)
            .filter_map(|j| j.name.strip_prefix(&prefix)?.parse::<u64>().ok())
            .max()
            .map_or(0, |n| n + 1);
        EmulatedServer {
            project,
            project_name: record.name.clone(),
            availability,
            next_job_number,
            first_job_number: next_job_number,
            boinc_compat: false,
            delete_from_self: record.deletion_policy.delete_from_self,
            catalogue: Catalogue::of(state, project),
        }
    }

    /// BOINC-compatible mode, as BOINC's emulator: never answer "no app for this
    /// resource", and let the up/down process advance only at contacts
    /// ([`EmulatedServer::contact`]).
    pub fn set_boinc_compat(&mut self, boinc_compat: bool) {
        self.boinc_compat = boinc_compat;
    }

    /// Whether the server runs in BOINC-compatible mode.
    pub fn boinc_compat(&self) -> bool {
        self.boinc_compat
    }

    /// The project this server serves.
    pub fn project(&self) -> ProjectId {
        self.project
    }

    /// What the project serves.
    pub fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }

    /// Whether the server answers requests now.
    pub fn is_up(&self) -> bool {
        self.availability.as_ref().is_none_or(OnOffProcess::is_up)
    }

    /// When the server next goes up or down by itself (`f64::INFINITY`: never). In
    /// BOINC-compatible mode a server changes only when a client contacts it
    /// ([`EmulatedServer::contact`]), so never by itself.
    pub fn next_change(&self) -> Time {
        if self.boinc_compat {
            return f64::INFINITY;
        }
        self.availability.as_ref().map_or(f64::INFINITY, OnOffProcess::next_change)
    }

    /// A client contacts the server at `now` (a scheduler RPC or a master-page read).
    /// In BOINC-compatible mode the up/down process advances only here, as in BOINC's
    /// emulator (REFERENCE.md): if the current period has run out by `now`, the server
    /// changes state once and the next period is added to the old end, however long
    /// ago that was. A server that went down and came back between two contacts is
    /// thus seen to go down, and an outage is stretched to the next contact. Returns
    /// the new state when it changed. In the faithful model the world applies changes
    /// as they happen and a contact changes nothing.
    pub fn contact(&mut self, now: Time, rng: &mut impl Rng) -> Option<bool> {
        if !self.boinc_compat {
            return None;
        }
        let process = self.availability.as_mut()?;
        if process.next_change() > now {
            return None;
        }
        Some(process.pop_change(rng).1)
    }

    /// Applies the next up/down change: its time and the new state
    /// (`(f64::INFINITY, true)` for a server that is always up).
    pub fn pop_change(&mut self, rng: &mut impl Rng) -> (Time, bool) {
        match &mut self.availability {
            Some(process) => process.pop_change(rng),
            None => (f64::INFINITY, true),
        }
    }

    /// Answers a scheduler request (see the module documentation): `None` when the
    /// server is down, so the RPC fails.
    pub fn handle_request(
        &mut self,
        request: &SchedulerRequest,
        now: Time,
        rng: &mut impl Rng,
    ) -> Option<ServerAnswer> {
        self.handle_request_with(request, now, rng, &mut ServerBuffers::default())
    }

    /// [`EmulatedServer::handle_request`] working in `buffers`.
    pub fn handle_request_with(
        &mut self,
        request: &SchedulerRequest,
        now: Time,
        rng: &mut impl Rng,
        buffers: &mut ServerBuffers,
    ) -> Option<ServerAnswer> {
        if !self.is_up() {
            return None;
        }
        let catalogue = &self.catalogue;
        let described = std::mem::take(&mut buffers.described);
        let mut reply = ReplyBuilder::new(catalogue, &self.project_name, request, described);
        if !ResourceType::ALL.into_iter().any(|r| request.requests(r)) {
            return Some(reply.finish(&mut buffers.described));
        }
        let dcf = duration_correction(request);
        let mut disk = request
            .disk_usage
            .free_space
            .map(|figures| DiskBudget::new(figures, self.delete_from_self));
        for resource in ResourceType::ALL {
            if !request.requests(resource) {
                continue;
            }
            if !catalogue.has_version[resource] {
                if !self.boinc_compat {
                    reply.no_apps(resource);
                }
                continue;
            }
            let resource_offer = &mut buffers.offer;
            if !resource_offer.restart(request, resource, now) {
                continue;
            }
            // The catalogue's list, copied only when an app is refused (rare): most
            // requests take nothing out of it.
            let mut offer = Cow::Borrowed(catalogue.candidates[resource].as_slice());
            while resource_offer.wants_more()
                && reply.jobs_sent() < MAX_JOBS_PER_REQUEST
                && !offer.is_empty()
            {
                let chosen = choose_by_weight(&offer, rng);
                let candidate = offer[chosen];
                let Some(mean) = job_mean_size(&candidate.emulation) else { break };
                let true_flops = draw_true_flops(&candidate.emulation, mean, rng);
                let fpops_est = usable(candidate.emulation.fpops_est).unwrap_or(mean);
                let version = &catalogue.versions[candidate.version];
                let flops = usable(version.flops)
                    .or(usable(request.host_info.p_fpops))
                    .unwrap_or(FALLBACK_FLOPS);
                let latency = candidate.emulation.latency_bound;
                let relative_deadline =
                    if latency.is_finite() { latency.max(0.0) } else { f64::MAX };
                let job = JobOffer {
                    app: &catalogue.apps[candidate.app].name,
                    relative_deadline,
                    wall: resource_offer.wall_duration(fpops_est, flops, dcf),
                    usage: version.usage.usage_of(resource),
                    nbytes: candidate.emulation.files.job_nbytes(),
                };
                let nothing_sent = reply.jobs_sent() == 0;
                if resource_offer.offer(request, &job, disk.as_mut(), nothing_sent).is_err() {
                    // A refused app is not offered again for this resource in this
                    // request (BOINC's emulator marks the version "don't use").
                    offer.to_mut().remove(chosen);
                    continue;
                }
                let name = job_name(&self.project_name, self.next_job_number);
                let made_index = (self.next_job_number - self.first_job_number) as usize;
                self.next_job_number += 1;
                let deadline = now + relative_deadline;
                reply.send(&candidate, name, made_index, fpops_est, true_flops, deadline);
            }
            for message in resource_offer.no_work_messages(request) {
                reply.message(message);
            }
        }
        Some(reply.finish(&mut buffers.described))
    }
}

impl EmulatedServer {
    /// Which of the jobs this server made `name` names, counted from its first: the
    /// number in a `{project_name}_{number}` (as [`job_name`] writes it) at or past the
    /// first number it gave.
    /// `None` for every other name, the scenario's own jobs included, as the server's
    /// numbering starts past theirs.
    pub(crate) fn made_job_index(&self, name: &str) -> Option<usize> {
        let digits = name.strip_prefix(self.project_name.as_str())?.strip_prefix('_')?;
        // Only the digits `job_name` writes: one name per number.
        if digits.is_empty() || (digits.len() > 1 && digits.starts_with('0')) {
            return None;
        }
        let mut number: u64 = 0;
        for digit in digits.bytes() {
            if !digit.is_ascii_digit() {
                return None;
            }
            number = number.checked_mul(10)?.checked_add(u64::from(digit - b'0'))?;
        }
        usize::try_from(number.checked_sub(self.first_job_number)?).ok()
    }
}

/// `{project_name}_{number}`, the name of the job numbered `number`: written digit by
/// digit into a string of the right size, as the formatting machinery costs more than
/// the rest of making a job.
fn job_name(project_name: &str, number: u64) -> String {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    let mut rest = number;
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let digits = &digits[start..];
    let mut name = String::with_capacity(project_name.len() + 1 + digits.len());
    name.push_str(project_name);
    name.push('_');
    name.extend(digits.iter().copied().map(char::from));
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use boinc_core::control::{ClientIdentity, RpcCall, apply_reply, build_request, work_reply};
    use boinc_core::model::{
        App, AppEmulation, AppFiles, AppId, AppVersion, AppVersionId, Availability, Coprocessor,
        JobState, Project, ResourceMap, ResourceUsage,
    };
    use boinc_core::protocol::NoWorkReason;
    use boinc_core::work_fetch::{ResourceRequest, WorkRequest};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    const CPU: ResourceType = ResourceType::Cpu;
    const GPU: ResourceType = ResourceType::Nvidia;
    const HOUR: f64 = 3600.0;

    fn emulation(hours: f64, latency_hours: f64, weight: f64) -> AppEmulation {
        AppEmulation {
            latency_bound: latency_hours * HOUR,
            fpops_est: hours * HOUR * 1e9,
            fpops_mean: hours * HOUR * 1e9,
            fpops_std_dev: 0.0,
            weight,
            checkpoint_period: 60.0,
            files: AppFiles::default(),
        }
    }

    /// A host with `ncpus` 1-GFLOPS CPUs and one project "p" with the given CPU apps.
    fn state_with_apps(ncpus: u32, apps: &[AppEmulation]) -> ClientState {
        let mut state = ClientState::default();
        state.host.p_ncpus = ncpus;
        state.host.p_fpops = 1e9;
        state.projects.push(Project::new("p", "http://p/", 100.0));
        for (i, e) in apps.iter().enumerate() {
            let app = AppId::from_index(state.apps.len());
            state
                .apps
                .push(App { emulation: Some(*e), ..App::new(ProjectId(0), format!("app{i}")) });
            let usage = ResourceUsage { avg_ncpus: 1.0, coprocessor: None };
            state.app_versions.push(AppVersion::new(ProjectId(0), app, 1, "", usage, 1e9));
        }
        state
    }

    fn new_server(state: &ClientState) -> (EmulatedServer, ChaCha8Rng) {
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        (EmulatedServer::new(state, ProjectId(0), 0.0, &mut rng), rng)
    }

    /// The request the client makes of project 0 for `resource`'s work.
    fn request(
        state: &ClientState,
        resource: ResourceType,
        req_seconds: f64,
        req_ninstances: f64,
        now: Time,
    ) -> SchedulerRequest<'static> {
        let mut resources = ResourceMap::<ResourceRequest>::default();
        resources[resource] = ResourceRequest { req_seconds, req_ninstances };
        let work = WorkRequest { project: ProjectId(0), resources, work_req_seconds: req_seconds };
        let call = RpcCall {
            request: work,
            reported: Vec::new(),
            estimated_delay: ResourceMap::default(),
        };
        build_request(state, &call, &ClientIdentity::default(), now).into_owned()
    }

    fn ask(
        server: &mut EmulatedServer,
        state: &ClientState,
        rng: &mut ChaCha8Rng,
        (resource, req_seconds, req_ninstances): (ResourceType, f64, f64),
    ) -> ServerAnswer {
        let request = request(state, resource, req_seconds, req_ninstances, 0.0);
        server.handle_request(&request, 0.0, rng).expect("the server is up")
    }

    fn deadlines_said(answer: &ServerAnswer) -> bool {
        answer.reply.no_work_reasons().any(|r| r == NoWorkReason::DeadlinesNotMet)
    }

    #[test]
    fn job_names_are_the_project_name_and_the_number() {
        for number in [0, 7, 10, 99, 1000, 123_456_789, u64::MAX] {
            assert_eq!(job_name("P1", number), format!("P1_{number}"));
        }
        assert_eq!(job_name("", 42), "_42");
    }

    #[test]
    fn in_boinc_compat_mode_a_server_changes_only_when_contacted_and_once() {
        let mut state = state_with_apps(1, &[emulation(1.0, 1e6, 1.0)]);
        state.projects[0].availability = Some(Availability { frac: 0.5, lambda: 100.0 });
        let (mut faithful, mut rng) = new_server(&state);
        let mut compat = faithful.clone();
        compat.set_boinc_compat(true);
        let first_change = faithful.next_change();
        assert!(first_change.is_finite());
        // The faithful server changes by itself and a contact changes nothing.
        assert_eq!(faithful.contact(first_change + 1e6, &mut rng), None);
        // The compatible one never changes by itself...
        assert_eq!(compat.next_change(), f64::INFINITY);
        assert_eq!(compat.contact(first_change * 0.5, &mut rng), None);
        assert!(compat.is_up());
        // ...and a contact long after the period ran out goes down once, not through
        // every change since: the outage starts when it is seen.
        assert_eq!(compat.contact(first_change + 1e6, &mut rng), Some(false));
        assert!(!compat.is_up());
        // The next contact comes back up, however short the down period was.
        assert_eq!(compat.contact(first_change + 2e6, &mut rng), Some(true));
    }

    #[test]
    fn deadline_is_now_plus_latency_bound_and_names_are_unique() {
        let state = state_with_apps(4, &[emulation(1.0, 48.0, 1.0)]);
        let (mut server, mut rng) = new_server(&state);
        let now = 5000.0;
        let first = request(&state, CPU, 3.0 * HOUR, 0.0, now);
        let answer = server.handle_request(&first, now, &mut rng).expect("up");
        assert!(!answer.sent.is_empty());
        assert!(answer.sent.iter().all(|j| j.deadline == now + 48.0 * HOUR));
        assert!(answer.reply.results.iter().all(|r| r.report_deadline == now + 48.0 * HOUR));
        assert_eq!(answer.reply.request_delay, None);
        let again =
            server.handle_request(&request(&state, CPU, 1.0, 0.0, now), now, &mut rng).expect("up");
        let names: Vec<&str> = answer
            .reply
            .results
            .iter()
            .chain(&again.reply.results)
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(names, ["p_0", "p_1", "p_2", "p_3"]);
    }

    #[test]
    fn a_sent_jobs_index_is_the_one_its_name_gives_back_and_scenario_names_have_none() {
        let mut state = state_with_apps(4, &[emulation(1.0, 48.0, 1.0)]);
        let (mut server, mut rng) = new_server(&state);
        let answer = ask(&mut server, &state, &mut rng, (CPU, 2.0 * HOUR, 0.0));
        let scenario_jobs = answer.sent.len();
        assert!(scenario_jobs > 0);
        apply_reply(&mut state, ProjectId(0), answer.reply, 0.0);
        // A server for a state that already holds jobs numbers its own past them: the
        // world files a job's truth by the index sent and finds it by the name's.
        let (mut server, mut rng) = new_server(&state);
        let answer = ask(&mut server, &state, &mut rng, (CPU, 2.0 * HOUR, 0.0));
        assert!(!answer.sent.is_empty());
        for (i, (sent, result)) in answer.sent.iter().zip(&answer.reply.results).enumerate() {
            assert_eq!(sent.made_index, i, "{}", result.name);
            assert_eq!(server.made_job_index(&result.name), Some(i), "{}", result.name);
        }
        let first = scenario_jobs;
        for name in [
            "p_0".to_string(),
            format!("p_{}", first - 1),
            format!("p_0{first}"),
            format!("p_+{first}"),
            format!("q_{first}"),
            format!("p{first}"),
            "p_".to_string(),
            format!("p_{first}x"),
            "p_99999999999999999999999".to_string(),
        ] {
            assert_eq!(server.made_job_index(&name), None, "{name}");
        }
    }

    #[test]
    fn request_is_filled_by_seconds_and_by_instances() {
        // 2-hour jobs on a host computing half the time: each counts 4 instance-hours.
        let mut state = state_with_apps(8, &[emulation(2.0, 1e4, 1.0)]);
        state.time_stats.on_frac = 0.5;
        let (mut server, mut rng) = new_server(&state);
        assert_eq!(ask(&mut server, &state, &mut rng, (CPU, 10.0 * HOUR, 0.0)).sent.len(), 3);
        assert_eq!(ask(&mut server, &state, &mut rng, (CPU, 0.0, 5.0)).sent.len(), 5);
        assert_eq!(ask(&mut server, &state, &mut rng, (CPU, 1.0, 2.0)).sent.len(), 2);
        let nothing = ask(&mut server, &state, &mut rng, (CPU, 0.0, 0.0));
        assert!(nothing.sent.is_empty() && !deadlines_said(&nothing));
    }

    #[test]
    fn multi_instance_jobs_fill_instances_by_usage() {
        let mut state = state_with_apps(8, &[]);
        state.apps.push(App {
            emulation: Some(emulation(1.0, 1e4, 1.0)),
            ..App::new(ProjectId(0), "mt")
        });
        let usage = ResourceUsage { avg_ncpus: 4.0, coprocessor: None };
        state.app_versions.push(AppVersion::new(ProjectId(0), AppId(0), 1, "mt", usage, 4e9));
        let (mut server, mut rng) = new_server(&state);
        assert_eq!(ask(&mut server, &state, &mut rng, (CPU, 0.0, 8.0)).sent.len(), 2);
    }

    #[test]
    fn job_that_cannot_make_its_deadline_is_refused_in_boinc_words() {
        // 3-hour jobs due in 2 hours can never make it.
        let state = state_with_apps(1, &[emulation(3.0, 2.0, 1.0)]);
        let (mut server, mut rng) = new_server(&state);
        let answer = ask(&mut server, &state, &mut rng, (CPU, HOUR, 0.0));
        assert!(answer.sent.is_empty());
        assert!(deadlines_said(&answer));
        assert!(answer.reply.messages[0].text.starts_with("Tasks won't finish in time"));
        assert!(work_reply(&state, ProjectId(0), &answer.reply).no_work_because_of_deadlines);
    }

    #[test]
    fn queued_work_limits_what_is_sent() {
        // 1-hour jobs due in 5 hours on one CPU: five fit, the sixth would be late.
        let mut state = state_with_apps(1, &[emulation(1.0, 5.0, 1.0)]);
        let (mut server, mut rng) = new_server(&state);
        let answer = ask(&mut server, &state, &mut rng, (CPU, 100.0 * HOUR, 0.0));
        assert_eq!(answer.sent.len(), 5);
        assert!(!deadlines_said(&answer));
        // With those five queued (the request lists them), the next gets nothing and
        // says why.
        apply_reply(&mut state, ProjectId(0), answer.reply, 0.0);
        let answer = ask(&mut server, &state, &mut rng, (CPU, HOUR, 0.0));
        assert!(answer.sent.is_empty() && deadlines_said(&answer));
    }

    #[test]
    fn job_that_would_make_a_queued_job_late_is_refused() {
        // Queued: 9 h of work due in 10 h. A 1.5-hour job due in 2 h would run first
        // under EDF and push the queued job past its deadline.
        let mut state = state_with_apps(1, &[emulation(9.0, 10.0, 1.0)]);
        let (mut server, mut rng) = new_server(&state);
        let queued = ask(&mut server, &state, &mut rng, (CPU, 1.0, 0.0));
        assert_eq!(queued.sent.len(), 1);
        apply_reply(&mut state, ProjectId(0), queued.reply, 0.0);
        let mut shorter = state.clone();
        shorter.apps[0].emulation = Some(emulation(1.5, 2.0, 1.0));
        let (mut server, mut rng) = new_server(&shorter);
        let answer = ask(&mut server, &state, &mut rng, (CPU, 1.0, 0.0));
        assert!(answer.sent.is_empty() && deadlines_said(&answer));
        // Half an hour fits.
        shorter.apps[0].emulation = Some(emulation(0.5, 2.0, 1.0));
        let (mut server, mut rng) = new_server(&shorter);
        assert_eq!(ask(&mut server, &state, &mut rng, (CPU, 1.0, 0.0)).sent.len(), 1);
    }

    #[test]
    fn cpu_only_project_says_it_has_no_gpu_apps_except_in_compat_mode() {
        let mut state = state_with_apps(2, &[emulation(1.0, 24.0, 1.0)]);
        state.host.coprocessors[GPU] = Some(Coprocessor {
            resource: GPU,
            name: "gpu".into(),
            count: 1,
            peak_flops: 1e12,
            available_ram: 0.0,
        });
        let (mut server, mut rng) = new_server(&state);
        let answer = ask(&mut server, &state, &mut rng, (GPU, HOUR, 1.0));
        let no_apps = answer.reply.no_rsc_apps;
        assert!(answer.sent.is_empty() && no_apps[GPU] && !no_apps[CPU]);
        assert!(!deadlines_said(&answer));
        assert!(work_reply(&state, ProjectId(0), &answer.reply).no_apps[GPU]);
        assert!(answer.reply.to_xml().contains("<no_rsc_apps>NVIDIA</no_rsc_apps>"));
        server.set_boinc_compat(true);
        let answer = ask(&mut server, &state, &mut rng, (GPU, HOUR, 1.0));
        assert!(answer.sent.is_empty() && !answer.reply.no_rsc_apps[GPU]);
    }

    #[test]
    fn gpu_requests_get_the_gpu_version() {
        let mut state = state_with_apps(2, &[emulation(1.0, 24.0, 1.0)]);
        state.host.coprocessors[GPU] = Some(Coprocessor {
            resource: GPU,
            name: "gpu".into(),
            count: 1,
            peak_flops: 5e10,
            available_ram: 0.0,
        });
        let usage = ResourceUsage { avg_ncpus: 0.1, coprocessor: Some((GPU, 1.0)) };
        state.app_versions.push(AppVersion::new(ProjectId(0), AppId(0), 2, "cuda", usage, 1e10));
        let (mut server, mut rng) = new_server(&state);
        let answer = ask(&mut server, &state, &mut rng, (GPU, 0.0, 1.0));
        assert_eq!(answer.sent.len(), 1);
        assert_eq!(answer.sent[0].version, 1);
        assert_eq!(answer.reply.results[0].plan_class, "cuda");
        let work = work_reply(&state, ProjectId(0), &answer.reply);
        assert_eq!((work.jobs_received[GPU], work.jobs_received[CPU]), (1, 0));
    }

    #[test]
    fn jobs_too_big_for_the_disk_are_refused_in_boinc_words() {
        let mut files = emulation(1.0, 24.0, 1.0);
        files.files.input_nbytes = 2e9;
        let state = state_with_apps(2, &[files]);
        let (mut server, mut rng) = new_server(&state);
        let mut request = request(&state, CPU, HOUR, 0.0, 0.0);
        request.disk_usage.free_space = Some(boinc_core::disk::FreeSpaceFigures {
            free: 1e9,
            free_after_offenders: 1e9,
            free_after_offenders_and_self: 3e9,
        });
        let answer = server.handle_request(&request, 0.0, &mut rng).expect("up");
        assert!(answer.sent.is_empty());
        assert_eq!(answer.reply.no_work_reasons().collect::<Vec<_>>(), [NoWorkReason::DiskSpace]);
        assert!(work_reply(&state, ProjectId(0), &answer.reply).no_work_because_of_disk);
    }

    #[test]
    fn server_down_fails_the_rpc() {
        let mut state = state_with_apps(1, &[emulation(1.0, 24.0, 1.0)]);
        state.projects[0].availability = Some(Availability { frac: 0.0, lambda: 3600.0 });
        let (mut server, mut rng) = new_server(&state);
        assert!(!server.is_up());
        let request = request(&state, CPU, HOUR, 0.0, 0.0);
        assert!(server.handle_request(&request, 0.0, &mut rng).is_none());
        assert_eq!(server.next_change(), f64::INFINITY);
    }

    #[test]
    fn server_up_thirty_percent_of_a_long_run() {
        let mut state = state_with_apps(1, &[emulation(1.0, 24.0, 1.0)]);
        state.projects[0].availability = Some(Availability { frac: 0.3, lambda: 2.0 * HOUR });
        let (mut server, mut rng) = new_server(&state);
        let end = 20_000.0 * 2.0 * HOUR;
        let (mut t, mut up_time) = (0.0, 0.0);
        while server.next_change() < end {
            let was_up = server.is_up();
            let (at, up) = server.pop_change(&mut rng);
            assert_ne!(up, was_up);
            if was_up {
                up_time += at - t;
            }
            t = at;
        }
        if server.is_up() {
            up_time += end - t;
        }
        let frac = up_time / end;
        assert!((frac - 0.3).abs() < 0.01, "up {frac}");
    }

    #[test]
    fn the_reply_becomes_runnable_jobs_of_the_sent_versions() {
        let mut state = state_with_apps(1, &[emulation(1.0, 24.0, 1.0), emulation(2.0, 24.0, 1.0)]);
        let (mut server, mut rng) = new_server(&state);
        let request = request(&state, CPU, 10.0 * HOUR, 0.0, 100.0);
        let answer = server.handle_request(&request, 100.0, &mut rng).expect("up");
        let before = state.clone();
        let outcome = apply_reply(&mut state, ProjectId(0), answer.reply.clone(), 100.0);
        assert_eq!(outcome.new_jobs.len(), answer.sent.len());
        assert_eq!(outcome.work, work_reply(&before, ProjectId(0), &answer.reply));
        assert!(outcome.problems.is_empty(), "{:?}", outcome.problems);
        assert_eq!(state.apps, before.apps, "the apps the server describes are the scenario's");
        assert_eq!(state.app_versions, before.app_versions);
        let sent_jobs = answer.sent.iter().zip(&answer.reply.results);
        for (&id, (sent, result)) in outcome.new_jobs.iter().zip(sent_jobs) {
            let job = state.job(id);
            assert_eq!(job.name, result.name);
            // The scenario's versions are all project 0's, so positions are ids.
            assert_eq!(job.app_version, Some(AppVersionId::from_index(sent.version)));
            assert_eq!(job.state, JobState::FilesDownloaded);
            assert_eq!((job.received_time, job.report_deadline), (100.0, sent.deadline));
            let wu = state.workunit(job.workunit);
            assert_eq!(
                (wu.name.as_str(), wu.app),
                (result.name.as_str(), AppId::from_index(sent.app))
            );
            assert_eq!(wu.rsc_fpops_est, sent.fpops_est);
            assert_eq!(wu.rsc_fpops_bound, 10.0 * sent.fpops_est.max(sent.true_flops));
            assert!(state.job_runnable(id));
        }
        // A new server continues numbering after the jobs already in the state.
        let server = EmulatedServer::new(&state, ProjectId(0), 0.0, &mut rng);
        assert_eq!(server.next_job_number, answer.sent.len() as u64);
    }

    #[test]
    fn reported_results_are_acknowledged() {
        let mut state = state_with_apps(1, &[emulation(1.0, 24.0, 1.0)]);
        let (mut server, mut rng) = new_server(&state);
        let answer = ask(&mut server, &state, &mut rng, (CPU, 1.0, 0.0));
        let id = apply_reply(&mut state, ProjectId(0), answer.reply, 0.0).new_jobs[0];
        let job = &mut state.jobs[id.index()];
        job.state = JobState::FilesUploaded;
        job.ready_to_report = true;
        let mut resources = ResourceMap::<ResourceRequest>::default();
        resources[CPU] = ResourceRequest::default();
        let work = WorkRequest { project: ProjectId(0), resources, work_req_seconds: 0.0 };
        let call = RpcCall {
            request: work,
            reported: vec![state.job(id).name.clone()],
            estimated_delay: ResourceMap::default(),
        };
        let identity = ClientIdentity::default();
        let request = build_request(&state, &call, &identity, 10.0);
        assert_eq!(request.results.len(), 1);
        let answer = server.handle_request(&request, 10.0, &mut rng).expect("up");
        assert_eq!(answer.reply.result_acks, [state.job(id).name.clone()]);
        let outcome = apply_reply(&mut state, ProjectId(0), answer.reply, 10.0);
        assert_eq!(outcome.acknowledged, 1);
        assert!(state.job(id).got_server_ack);
    }

    #[test]
    fn same_seed_same_reply() {
        let mut e = emulation(1.0, 30.0, 1.0);
        e.fpops_std_dev = 0.3 * e.fpops_mean;
        let state = state_with_apps(4, &[e, emulation(0.5, 10.0, 2.0)]);
        let run = || {
            let (mut server, mut rng) = new_server(&state);
            ask(&mut server, &state, &mut rng, (CPU, 50.0 * HOUR, 0.0))
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn large_queue_is_handled_and_capped() {
        // 10,000 queued 1-hour jobs on 64 CPUs with late deadlines; a huge request.
        let mut state = state_with_apps(64, &[emulation(1.0, 24.0 * 400.0, 1.0)]);
        let (mut server, mut rng) = new_server(&state);
        for _ in 0..10 {
            let answer = ask(&mut server, &state, &mut rng, (CPU, 1e12, 0.0));
            apply_reply(&mut state, ProjectId(0), answer.reply, 0.0);
        }
        assert_eq!(state.jobs.len(), 10_000);
        let answer = ask(&mut server, &state, &mut rng, (CPU, 1e12, 0.0));
        assert_eq!(answer.sent.len(), MAX_JOBS_PER_REQUEST);
    }
}
