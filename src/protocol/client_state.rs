//! client_state.xml into the model (seed 000 "Concepts and terms": projects, apps, app
//! versions, workunits, results and their active tasks; seed 004: files). Per-project
//! elements (`<app>`, `<file>`, `<app_version>`, `<workunit>`, `<result>`) belong to the
//! `<project>` before them, as in BOINC's own reader. They are linked in dependency order
//! (apps, files, app versions, workunits, results, then active tasks) so that a hand-made
//! file need not list them in the real client's order.
//!
//! Seed 004 reads: files' `<nbytes>`, `<sticky/>`, `<priority>` (1–5) and `<exp_days>`;
//! results' `<file_ref>`s (their output files); and the emulator's per-app file sizes
//! `<input_nbytes>`, `<sticky_nbytes>`, `<output_nbytes>`, `<file_priority>`,
//! `<file_exp_days>` (see [`crate::model::AppFiles`]).
//!
//! What running and reporting jobs takes is read too: app versions' platform,
//! `<api_version>`, `<cmdline>` and `<file_ref>`s (the `<main_program/>` and the names
//! files are opened by), workunits' `<command_line>` and input `<file_ref>`s, results'
//! platform, version and plan class, `<final_cpu_time>`, `<stderr_out>`, executables'
//! `<file_signature>`, and `<net_stats>`.
//!
//! What boinc-rs keeps beyond BOINC's elements is read from the `<boinc_rs>` element of
//! a project, file or active task ([`super::write_client_state`] writes it); a project
//! that has one keeps its stored accumulate-debt and "has an app version" flags rather
//! than the ones inferred for BOINC's own files.

use super::client_state_writer::{OWN_FIELDS, PROCESS_SUSPENDED};
use super::error::{XmlError, XmlProblem};
use super::file_description::deletion_priority;
use super::file_ref::FileReference;
use super::host_info::{parse_host_info, parse_net_stats, parse_time_stats};
use super::project::parse_project;
use super::values::quoted_value;
use super::xml_tree::{Element, parse_document};
use crate::model::{
    ActiveTask, App, AppEmulation, AppFiles, AppId, AppVersion, AppVersionId, ClientState, FileId,
    FileInfo, FileRef, FileStatus, Job, JobId, JobState, MAX_CPUS, MAX_INSTANCE_FLOPS, ProjectId,
    ProjectResource, ResourceMap, ResourceType, ResourceUsage, RunMode, SchedulerState, TaskPeaks,
    Workunit, WorkunitId,
};
use crate::supervise::RestartTracker;
use std::collections::{HashMap, HashSet};

/// Reads client_state.xml (the real client's, or the BOINC client emulator's input with
/// its extra tags). `name` is the file name errors are reported under.
pub fn parse_client_state(text: &str, name: &str) -> Result<ClientState, XmlError> {
    parse_client_state_with_warnings(text, name).map(|(state, _)| state)
}

/// [`parse_client_state`], with what it had to drop or change to load the file, each
/// as a message naming the file and line: an `<active_task>` whose result is not in the
/// file, a `<result>` whose app version is not (it runs with the app's newest, or never),
/// an app version using more CPUs than the host has (it uses them all).
pub fn parse_client_state_with_warnings(
    text: &str,
    name: &str,
) -> Result<(ClientState, Vec<String>), XmlError> {
    let root = parse_document(text).map_err(|e| e.in_file(name))?;
    let (state, warnings) = build_client_state(&root).map_err(|e| e.in_file(name))?;
    let warnings = warnings.into_iter().map(|w| format!("{name} {w}")).collect();
    Ok((state, warnings))
}

/// Below this many CPUs, an app version without a coprocessor is taken to use one CPU.
const MIN_CPU_APP_NCPUS: f64 = 0.01;

/// The per-project elements that follow one `<project>`.
#[derive(Default)]
struct ProjectElements<'e> {
    apps: Vec<&'e Element>,
    files: Vec<&'e Element>,
    app_versions: Vec<&'e Element>,
    workunits: Vec<&'e Element>,
    results: Vec<&'e Element>,
}

fn build_client_state(root: &Element) -> Result<(ClientState, Vec<String>), XmlError> {
    if root.name != "client_state" {
        return Err(root.error(XmlProblem::WrongRoot { expected: "client_state" }));
    }
    let mut state = ClientState::default();
    let mut groups: Vec<ProjectElements<'_>> = Vec::new();
    let mut active_tasks: Vec<&Element> = Vec::new();
    let mut project_ids: HashMap<String, ProjectId> = HashMap::new();
    // The per-resource flags boinc-rs stored for a project, which win over what the
    // reader infers from the apps and jobs (see `mark_supplied_resources`).
    let mut stored_resources: Vec<(ProjectId, ResourceMap<ProjectResource>)> = Vec::new();

    for child in &root.children {
        match child.name.as_str() {
            "host_info" => state.host = parse_host_info(child)?,
            "time_stats" => state.time_stats = parse_time_stats(child)?,
            "net_stats" => state.net_stats = parse_net_stats(child)?,
            "project" => {
                let project = parse_project(child)?;
                let id = ProjectId::from_index(state.projects.len());
                if project_ids.insert(project.master_url.clone(), id).is_some() {
                    return Err(child
                        .error(XmlProblem::DuplicateProject(quoted_value(&project.master_url))));
                }
                if child.child(OWN_FIELDS).is_some() {
                    stored_resources.push((id, project.resources));
                }
                state.projects.push(project);
                groups.push(ProjectElements::default());
            }
            kind @ ("app" | "file" | "file_info" | "app_version" | "workunit" | "result") => {
                let group =
                    groups.last_mut().ok_or_else(|| child.error(XmlProblem::BeforeProject))?;
                let list = match kind {
                    "app" => &mut group.apps,
                    "file" | "file_info" => &mut group.files,
                    "app_version" => &mut group.app_versions,
                    "workunit" => &mut group.workunits,
                    _ => &mut group.results,
                };
                list.push(child);
            }
            "active_task_set" => {
                active_tasks.extend(child.children.iter().filter(|c| c.name == "active_task"))
            }
            "user_run_request" => state.run_mode = run_mode(child)?,
            "user_gpu_request" => state.gpu_mode = run_mode(child)?,
            "user_network_request" => state.network_mode = run_mode(child)?,
            super::client_state_writer::DISK_SUSPENSION_ELEMENT => {
                state.run_mode_before_disk_suspension = Some(run_mode(child)?);
            }
            _ => {}
        }
    }

    let mut linker = Linker::new(state, project_ids);
    let projects = || groups.iter().enumerate().map(|(i, g)| (ProjectId::from_index(i), g));
    for (project, group) in projects() {
        group.apps.iter().try_for_each(|e| linker.add_app(project, e))?;
    }
    for (project, group) in projects() {
        group.files.iter().try_for_each(|e| linker.add_file(project, e))?;
    }
    for (project, group) in projects() {
        group.app_versions.iter().try_for_each(|e| linker.add_app_version(project, e))?;
    }
    for (project, group) in projects() {
        group.workunits.iter().try_for_each(|e| linker.add_workunit(project, e))?;
    }
    for (project, group) in projects() {
        group.results.iter().try_for_each(|e| linker.add_job(project, e))?;
    }
    active_tasks.iter().try_for_each(|e| linker.add_active_task(e))?;
    linker.clamp_cpus_to_the_host();
    let mut state = linker.state;
    mark_supplied_resources(&mut state);
    for (project, stored) in stored_resources {
        for (resource, target) in state.projects[project.index()].resources.iter_mut() {
            target.has_app_version = stored[resource].has_app_version;
            target.accumulate_debt = stored[resource].accumulate_debt;
        }
    }
    Ok((state, linker.warnings))
}

/// Seed 003: D(P, R) becomes true when P supplies a job for R. State files don't store
/// the flag, but a job held for P on R, or an app version of P for R (projects send app
/// versions with the jobs that need them), is proof that P supplied one, so a loaded
/// state accumulates debt where the project has shown it has work. Without this a
/// project the client has not asked yet would never earn debt and never be asked.
fn mark_supplied_resources(state: &mut ClientState) {
    for project in &mut state.projects {
        for (_, resource) in project.resources.iter_mut() {
            if resource.has_app_version && !resource.no_apps {
                resource.accumulate_debt = true;
            }
        }
    }
    for job in &state.jobs {
        if let Some(version) = job.app_version {
            let resource = state.app_versions[version.index()].usage.main_resource();
            state.projects[job.project.index()].resources[resource].accumulate_debt = true;
        }
    }
}

fn run_mode(element: &Element) -> Result<RunMode, XmlError> {
    let code = element.i64()?;
    RunMode::from_code(code).ok_or_else(|| element.error(XmlProblem::UnknownRunMode(code)))
}

/// The emulator's per-app tags as they appear; an app is emulated only when it has a
/// `<latency_bound>` or `<fpops>`.
#[derive(Default)]
struct EmulationTags {
    latency_bound: Option<f64>,
    fpops_est: Option<f64>,
    /// `<fpops>` was given, with or without a `<mean>`.
    fpops: bool,
    fpops_mean: Option<f64>,
    fpops_std_dev: Option<f64>,
    weight: Option<f64>,
    checkpoint_period: Option<f64>,
    files: AppFiles,
}

impl EmulationTags {
    fn into_emulation(self) -> Option<AppEmulation> {
        if self.latency_bound.is_none() && !self.fpops {
            return None;
        }
        // Either flops figure stands in for the other: the server's estimate is the mean
        // when the scenario gives only one of them.
        let fpops_mean = self.fpops_mean.or(self.fpops_est).unwrap_or(0.0);
        Some(AppEmulation {
            latency_bound: self.latency_bound.unwrap_or(0.0),
            fpops_est: self.fpops_est.unwrap_or(fpops_mean),
            fpops_mean,
            fpops_std_dev: self.fpops_std_dev.unwrap_or(0.0),
            weight: self.weight.unwrap_or(1.0),
            checkpoint_period: self.checkpoint_period.unwrap_or(0.0),
            files: self.files,
        })
    }
}

/// Builds the model's vectors and the name lookups that tie them together. Names are
/// unique within a project, so every lookup is keyed by (project, name).
struct Linker<'e> {
    state: ClientState,
    project_ids: HashMap<String, ProjectId>,
    apps: HashMap<(ProjectId, &'e str), AppId>,
    files: HashMap<(ProjectId, &'e str), FileId>,
    workunits: HashMap<(ProjectId, &'e str), WorkunitId>,
    jobs: HashMap<(ProjectId, &'e str), JobId>,
    /// App versions of each app, by [`AppId`] index.
    versions_of_app: Vec<Vec<AppVersionId>>,
    /// `<version_num>` of each workunit, by [`WorkunitId`] index: the fallback for a
    /// result that names none.
    workunit_version_num: Vec<Option<u32>>,
    /// App versions for a coprocessor boinc-rs doesn't know (e.g. a Mac's `apple_gpu`):
    /// kept so results still find their version by number, but never run.
    unsupported_versions: HashSet<AppVersionId>,
    /// The line of each app version's element, by [`AppVersionId`] index.
    version_lines: Vec<usize>,
    /// What was dropped or changed to load the file ("line N: ...").
    warnings: Vec<String>,
}

impl<'e> Linker<'e> {
    fn new(state: ClientState, project_ids: HashMap<String, ProjectId>) -> Self {
        Linker {
            state,
            project_ids,
            apps: HashMap::new(),
            files: HashMap::new(),
            workunits: HashMap::new(),
            jobs: HashMap::new(),
            versions_of_app: Vec::new(),
            workunit_version_num: Vec::new(),
            unsupported_versions: HashSet::new(),
            version_lines: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// A job never uses more CPUs than the host has: an app version that says it does
    /// (a typo, or a hostile file) uses them all. A CPU app version that says it uses
    /// (next to) no CPU uses one, as BOINC takes it: any number of its jobs would
    /// otherwise fit at once. Each change is reported.
    fn clamp_cpus_to_the_host(&mut self) {
        let ncpus = f64::from(self.state.host.p_ncpus.clamp(1, MAX_CPUS));
        for (index, version) in self.state.app_versions.iter_mut().enumerate() {
            let usage = &mut version.usage;
            let taken = if usage.avg_ncpus > ncpus {
                ncpus
            } else if usage.coprocessor.is_none() && usage.avg_ncpus < MIN_CPU_APP_NCPUS {
                1.0
            } else {
                continue;
            };
            self.warnings.push(format!(
                "line {}: an app version uses {} CPUs, which the host cannot give a job: it is \
                 taken to use {taken}",
                self.version_lines.get(index).copied().unwrap_or(0),
                quoted_value(&usage.avg_ncpus.to_string()),
            ));
            usage.avg_ncpus = taken;
        }
    }

    /// The project's master URL as quoted in an error message.
    fn master_url(&self, project: ProjectId) -> String {
        quoted_value(&self.state.project(project).master_url)
    }

    fn duplicate(
        &self,
        element: &Element,
        kind: &'static str,
        project: ProjectId,
        name: &str,
    ) -> XmlError {
        element.error(XmlProblem::Duplicate {
            kind,
            name: quoted_value(name),
            project: self.master_url(project),
        })
    }

    fn app_named(&self, project: ProjectId, element: &'e Element) -> Result<AppId, XmlError> {
        let name = element.required_text("app_name")?;
        self.apps.get(&(project, name)).copied().ok_or_else(|| {
            let at = element.child("app_name").unwrap_or(element);
            at.error(XmlProblem::UnknownApp {
                app: quoted_value(name),
                project: self.master_url(project),
            })
        })
    }

    fn add_app(&mut self, project: ProjectId, element: &'e Element) -> Result<(), XmlError> {
        let name = element.required_text("name")?;
        let mut app = App::new(project, name);
        let mut tags = EmulationTags::default();
        for child in &element.children {
            match child.name.as_str() {
                // BOINC's 0 means "no limit".
                "max_concurrent" => app.max_concurrent = Some(child.u32()?).filter(|&n| n > 0),
                "non_cpu_intensive" => app.non_cpu_intensive = child.flag()?,
                "user_friendly_name" => app.user_friendly_name = child.string(),
                "latency_bound" => tags.latency_bound = Some(child.non_negative_f64()?),
                "fpops_est" => tags.fpops_est = Some(child.non_negative_f64()?),
                "fpops" => {
                    let mean = child.child("mean").map(Element::non_negative_f64).transpose()?;
                    let std_dev =
                        child.child("std_dev").map(Element::non_negative_f64).transpose()?;
                    tags.fpops = true;
                    tags.fpops_mean = mean;
                    tags.fpops_std_dev = std_dev;
                }
                "weight" => tags.weight = Some(child.non_negative_f64()?),
                "checkpoint_period" => tags.checkpoint_period = Some(child.non_negative_f64()?),
                "input_nbytes" => tags.files.input_nbytes = child.non_negative_f64()?,
                "sticky_nbytes" => tags.files.sticky_nbytes = child.non_negative_f64()?,
                "output_nbytes" => tags.files.output_nbytes = child.non_negative_f64()?,
                "file_priority" => tags.files.priority = Some(deletion_priority(child)?),
                "file_exp_days" => tags.files.exp_days = Some(child.non_negative_f64()?),
                _ => {}
            }
        }
        app.emulation = tags.into_emulation();
        let id = AppId::from_index(self.state.apps.len());
        if self.apps.insert((project, name), id).is_some() {
            return Err(self.duplicate(element, "app", project, name));
        }
        self.state.apps.push(app);
        self.versions_of_app.push(Vec::new());
        Ok(())
    }

    fn add_file(&mut self, project: ProjectId, element: &'e Element) -> Result<(), XmlError> {
        let name = element.required_text("name")?;
        let mut file = FileInfo::new(project, name, 0.0);
        for child in &element.children {
            match child.name.as_str() {
                "nbytes" => file.nbytes = child.non_negative_f64()?,
                "max_nbytes" => file.max_nbytes = child.non_negative_f64()?,
                "md5_cksum" => file.md5_cksum = child.string(),
                "file_signature" => file.file_signature = Some(child.string()),
                "status" => file.status = file_status(child)?,
                "executable" => file.executable = child.flag()?,
                "sticky" => file.sticky = child.flag()?,
                "upload_when_present" => file.upload_when_present = child.flag()?,
                "uploaded" => file.uploaded = child.flag()?,
                "download_url" | "url" => push_url(&mut file.download_urls, child),
                "upload_url" => push_url(&mut file.upload_urls, child),
                "priority" => file.priority = Some(deletion_priority(child)?),
                "exp_days" => file.exp_days = Some(child.non_negative_f64()?),
                OWN_FIELDS => {
                    for field in &child.children {
                        match field.name.as_str() {
                            "transfer_deferred" => file.transfer_deferred = field.flag()?,
                            "download_time" => file.download_time = field.f64()?,
                            "time_last_used" => file.time_last_used = field.f64()?,
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        let id = FileId::from_index(self.state.files.len());
        if self.files.insert((project, name), id).is_some() {
            return Err(self.duplicate(element, "file", project, name));
        }
        self.state.files.push(file);
        Ok(())
    }

    fn add_app_version(
        &mut self,
        project: ProjectId,
        element: &'e Element,
    ) -> Result<(), XmlError> {
        let app = self.app_named(project, element)?;
        let usage = ResourceUsage { avg_ncpus: 1.0, coprocessor: None };
        let mut version = AppVersion::new(project, app, 0, "", usage, self.state.host.p_fpops);
        let mut unsupported = false;
        for child in &element.children {
            match child.name.as_str() {
                "version_num" => version.version_num = child.u32()?,
                "plan_class" => version.plan_class = child.string(),
                "platform" => version.platform = child.string(),
                "api_version" => version.api_version = child.string(),
                "cmdline" => version.cmdline = child.string(),
                "file_ref" => version.files.extend(self.file_ref(project, child)?),
                "avg_ncpus" => version.usage.avg_ncpus = child.non_negative_f64()?,
                "flops" => {
                    version.flops = child.f64_in(
                        f64::MIN_POSITIVE,
                        MAX_INSTANCE_FLOPS,
                        "above 0, up to 1e18",
                    )?
                }
                // The project's tag, kept per app version (see `estimate`).
                "duration_correction_factor" => {
                    version.duration_correction_factor =
                        Some(child.f64_in(f64::MIN_POSITIVE, f64::MAX, "greater than 0")?)
                }
                "coproc" => match coprocessor_usage(child) {
                    Ok(usage) => version.usage.coprocessor = usage,
                    // A state file from a host with a GPU type we can't drive must still
                    // load: the version's jobs are kept but never scheduled.
                    Err(e) if matches!(e.problem, XmlProblem::UnknownCoprocessor(_)) => {
                        unsupported = true
                    }
                    Err(e) => return Err(e),
                },
                _ => {}
            }
        }
        let id = AppVersionId::from_index(self.state.app_versions.len());
        if unsupported {
            self.unsupported_versions.insert(id);
        } else {
            let resource = version.usage.main_resource();
            self.state.projects[project.index()].resources[resource].has_app_version = true;
        }
        self.versions_of_app[app.index()].push(id);
        self.state.app_versions.push(version);
        self.version_lines.push(element.line);
        Ok(())
    }

    fn add_workunit(&mut self, project: ProjectId, element: &'e Element) -> Result<(), XmlError> {
        let name = element.required_text("name")?;
        let app = self.app_named(project, element)?;
        let mut workunit = Workunit {
            project,
            name: name.to_owned(),
            app,
            rsc_fpops_est: 0.0,
            rsc_fpops_bound: 0.0,
            rsc_memory_bound: 0.0,
            rsc_disk_bound: 0.0,
            command_line: String::new(),
            input_files: Vec::new(),
        };
        let mut version_num = None;
        for child in &element.children {
            match child.name.as_str() {
                "version_num" => version_num = Some(child.u32()?),
                "rsc_fpops_est" => workunit.rsc_fpops_est = child.non_negative_f64()?,
                "rsc_fpops_bound" => workunit.rsc_fpops_bound = child.non_negative_f64()?,
                "rsc_memory_bound" => workunit.rsc_memory_bound = child.non_negative_f64()?,
                "rsc_disk_bound" => workunit.rsc_disk_bound = child.non_negative_f64()?,
                "command_line" => workunit.command_line = child.string(),
                "file_ref" => workunit.input_files.extend(self.file_ref(project, child)?),
                _ => {}
            }
        }
        let id = WorkunitId::from_index(self.state.workunits.len());
        if self.workunits.insert((project, name), id).is_some() {
            return Err(self.duplicate(element, "workunit", project, name));
        }
        self.state.workunits.push(workunit);
        self.workunit_version_num.push(version_num);
        Ok(())
    }

    fn add_job(&mut self, project: ProjectId, element: &'e Element) -> Result<(), XmlError> {
        let name = element.required_text("name")?;
        let wu_name = element.required_text("wu_name")?;
        let workunit = self.workunits.get(&(project, wu_name)).copied().ok_or_else(|| {
            let at = element.child("wu_name").unwrap_or(element);
            at.error(XmlProblem::UnknownWorkunit {
                workunit: quoted_value(wu_name),
                project: self.master_url(project),
            })
        })?;
        let mut job = Job {
            project,
            name: name.to_owned(),
            workunit,
            app_version: None,
            platform: String::new(),
            version_num: 0,
            plan_class: String::new(),
            received_time: 0.0,
            report_deadline: 0.0,
            state: JobState::New,
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
        };
        let mut version_num = None;
        let mut plan_class = None;
        for child in &element.children {
            match child.name.as_str() {
                "version_num" => version_num = Some(child.u32()?),
                "plan_class" => plan_class = Some(child.trimmed()),
                "platform" => job.platform = child.string(),
                "received_time" => job.received_time = child.f64()?,
                "report_deadline" => job.report_deadline = child.f64()?,
                "state" => {
                    let code = child.i64()?;
                    job.state = JobState::from_code(code)
                        .ok_or_else(|| child.error(XmlProblem::UnknownJobState(code)))?;
                }
                "ready_to_report" => job.ready_to_report = child.flag()?,
                "got_server_ack" => job.got_server_ack = child.flag()?,
                "suspended_via_gui" => job.suspended = child.flag()?,
                "completed_time" => job.completed_time = child.f64()?,
                "final_elapsed_time" => job.final_elapsed_time = child.non_negative_f64()?,
                "final_cpu_time" => job.final_cpu_time = child.non_negative_f64()?,
                "exit_status" => job.exit_status = child.i32()?,
                "stderr_out" => job.stderr_out = child.string(),
                "final_peak_working_set_size" => {
                    job.final_peaks.working_set_size = child.non_negative_f64()?
                }
                "final_peak_swap_size" => job.final_peaks.swap_size = child.non_negative_f64()?,
                "final_peak_disk_usage" => job.final_peaks.disk_usage = child.non_negative_f64()?,
                "file_ref" => job.output_files.extend(self.file_ref(project, child)?),
                _ => {}
            }
        }
        let version_num = version_num.or(self.workunit_version_num[workunit.index()]);
        let app = self.state.workunit(workunit).app;
        job.app_version = self.choose_app_version(app, version_num, plan_class);
        let bound = job.app_version.map(|v| self.state.app_version(v).version_num);
        match (version_num, bound) {
            (_, None) => self.warnings.push(format!(
                "line {}: result \"{}\" has no app version this client can run in the file: \
                 it is kept but never runs",
                element.line,
                quoted_value(name)
            )),
            (Some(named), Some(found)) if named != found => self.warnings.push(format!(
                "line {}: result \"{}\" names version {named} of its app, which the file does \
                 not hold: it runs with version {found}",
                element.line,
                quoted_value(name)
            )),
            _ => {}
        }
        job.version_num = version_num.unwrap_or_default();
        job.plan_class = plan_class.unwrap_or_default().to_owned();
        if let Some(version) = job.app_version.map(|v| self.state.app_version(v)) {
            // The version it runs with is what it reports, whatever the file said.
            job.version_num = version.version_num;
            job.plan_class.clone_from(&version.plan_class);
            if !version.platform.is_empty() {
                job.platform.clone_from(&version.platform);
            }
        }
        let id = JobId::from_index(self.state.jobs.len());
        if self.jobs.insert((project, name), id).is_some() {
            return Err(self.duplicate(element, "result", project, name));
        }
        self.state.jobs.push(job);
        Ok(())
    }

    /// A `<file_ref>` of the project's, to a file the state lists. A reference to a file
    /// it doesn't list can't be acted on; the real client tolerates it too, so it is
    /// dropped rather than fatal.
    fn file_ref(&self, project: ProjectId, element: &Element) -> Result<Option<FileRef>, XmlError> {
        let Some(name) = element.child("file_name").map(Element::trimmed) else {
            return Ok(None);
        };
        let Some(&file) = self.files.get(&(project, name)) else { return Ok(None) };
        let reference = FileReference::parse(element)?;
        Ok(Some(FileRef {
            file,
            open_name: reference.open_name,
            main_program: reference.main_program,
            copy_file: reference.copy_file,
        }))
    }

    /// The app version a result runs with: the one it names (version and, if given, plan
    /// class); failing that the app's newest version, which is what the real client
    /// would pick for a new job of the app.
    fn choose_app_version(
        &self,
        app: AppId,
        version_num: Option<u32>,
        plan_class: Option<&str>,
    ) -> Option<AppVersionId> {
        let candidates = &self.versions_of_app[app.index()];
        let version = |id: &AppVersionId| self.state.app_version(*id);
        let named = version_num.and_then(|num| {
            candidates.iter().find(|id| {
                let v = version(id);
                v.version_num == num && plan_class.is_none_or(|pc| v.plan_class == pc)
            })
        });
        named
            .or_else(|| candidates.iter().max_by_key(|id| version(id).version_num))
            .copied()
            .filter(|id| !self.unsupported_versions.contains(id))
    }

    /// Attaches an `<active_task>` to its job. A task whose project or result is gone is
    /// a leftover the real client also drops, so it is skipped, with a warning.
    fn add_active_task(&mut self, element: &Element) -> Result<(), XmlError> {
        let named =
            |tag: &str| element.child(tag).map_or(String::new(), |e| quoted_value(e.trimmed()));
        let Some(project) = element
            .child("project_master_url")
            .and_then(|url| self.project_ids.get(url.trimmed()).copied())
        else {
            self.warnings.push(format!(
                "line {}: an <active_task> of project \"{}\", which the file does not hold, \
                 is dropped",
                element.line,
                named("project_master_url")
            ));
            return Ok(());
        };
        let Some(job) = element
            .child("result_name")
            .and_then(|name| self.jobs.get(&(project, name.trimmed())).copied())
        else {
            self.warnings.push(format!(
                "line {}: an <active_task> of result \"{}\", which the file does not hold, is \
                 dropped",
                element.line,
                named("result_name")
            ));
            return Ok(());
        };
        let mut task = ActiveTask::new(0);
        let mut elapsed_time = None;
        let mut fraction_done = None;
        let mut checkpoint_fraction_done = None;
        let mut crash_streak = 0;
        let mut crash_times = Vec::new();
        for child in &element.children {
            match child.name.as_str() {
                "active_task_state" => {
                    task.scheduler_state = match child.i64()? {
                        0 => SchedulerState::Uninitialized,
                        1 => SchedulerState::Running,
                        PROCESS_SUSPENDED => SchedulerState::Preempted,
                        // Suspended (9) and the exit/abort states hold no resources.
                        _ => SchedulerState::Preempted,
                    }
                }
                "slot" => task.slot = child.u32()?,
                "checkpoint_cpu_time" => task.checkpoint_cpu_time = child.non_negative_f64()?,
                "checkpoint_elapsed_time" => {
                    task.checkpoint_elapsed_time = child.non_negative_f64()?
                }
                "current_cpu_time" => task.current_cpu_time = child.non_negative_f64()?,
                "elapsed_time" => elapsed_time = Some(child.non_negative_f64()?),
                "fraction_done" => fraction_done = Some(fraction(child)?),
                "checkpoint_fraction_done" => checkpoint_fraction_done = Some(fraction(child)?),
                "working_set_size_smoothed" => task.working_set_size = child.non_negative_f64()?,
                "peak_working_set_size" => {
                    task.peaks.working_set_size = child.non_negative_f64()?
                }
                "peak_swap_size" => task.peaks.swap_size = child.non_negative_f64()?,
                "peak_disk_usage" => task.peaks.disk_usage = child.non_negative_f64()?,
                "once_ran_edf" => task.once_ran_edf = child.flag()?,
                OWN_FIELDS => {
                    for field in &child.children {
                        match field.name.as_str() {
                            "checkpoint_wall_time" => task.checkpoint_wall_time = field.f64()?,
                            "run_start_time" => task.run_start_time = field.f64()?,
                            "gpu_instance" => task.gpu_instances.push(field.u32()?),
                            "crash_streak" => crash_streak = field.u32()?,
                            "crash_time" => crash_times.push(field.f64()?),
                            "restart_at" => task.restart_at = Some(field.f64()?),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        // The real client saves only checkpoint figures; they are what a restart resumes from.
        task.elapsed_time = elapsed_time.unwrap_or(task.checkpoint_elapsed_time);
        task.fraction_done = fraction_done.or(checkpoint_fraction_done).unwrap_or(0.0);
        task.crashes = RestartTracker::restored(crash_streak, crash_times);
        self.state.jobs[job.index()].task = Some(task);
        Ok(())
    }
}

fn fraction(element: &Element) -> Result<f64, XmlError> {
    element.f64_in(0.0, 1.0, "between 0 and 1")
}

fn push_url(urls: &mut Vec<String>, element: &Element) {
    let url = element.string();
    if !url.is_empty() {
        urls.push(url);
    }
}

/// BOINC's file status: 0 not present, 1 present, 2 downloaded but not yet verified
/// (treated as not present: it can't be used until verified), negative an error code.
fn file_status(element: &Element) -> Result<FileStatus, XmlError> {
    match element.i64()? {
        0 | 2 => Ok(FileStatus::NotPresent),
        1 => Ok(FileStatus::Present),
        code if code < 0 => Ok(FileStatus::Error(i32::try_from(code).unwrap_or(i32::MIN))),
        code => Err(element.error(XmlProblem::UnknownFileStatus(code))),
    }
}

/// An app version's `<coproc><type/><count/></coproc>`; a zero count uses no coprocessor.
fn coprocessor_usage(element: &Element) -> Result<Option<(ResourceType, f64)>, XmlError> {
    let kind = element.required_child("type")?;
    let resource = ResourceType::from_boinc_name(kind.trimmed())
        .filter(|r| r.is_gpu())
        .ok_or_else(|| kind.error(XmlProblem::UnknownCoprocessor(quoted_value(kind.trimmed()))))?;
    let count = match element.child("count") {
        Some(count) => count.non_negative_f64()?,
        None => 1.0,
    };
    Ok((count > 0.0).then_some((resource, count)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str =
        "<client_state>\n<host_info><p_ncpus>2</p_ncpus><p_fpops>3e9</p_fpops></host_info>\n";

    fn parse(body: &str) -> Result<ClientState, XmlError> {
        parse_client_state(&format!("{HEAD}{body}</client_state>\n"), "client_state.xml")
    }

    const PROJECT: &str = "<project><master_url>http://p/</master_url></project>\n\
        <app><name>a</name></app>\n\
        <app_version><app_name>a</app_name><version_num>1</version_num></app_version>\n\
        <app_version><app_name>a</app_name><version_num>3</version_num><plan_class>cuda</plan_class>\
        <avg_ncpus>0.1</avg_ncpus><coproc><type>CUDA</type><count>0.5</count></coproc></app_version>\n\
        <app_version><app_name>a</app_name><version_num>2</version_num></app_version>\n\
        <workunit><name>w</name><app_name>a</app_name><rsc_fpops_est>1e12</rsc_fpops_est></workunit>\n";

    #[test]
    fn an_app_version_keeps_its_own_duration_correction_factor() {
        let state = parse(
            "<project><master_url>http://p/</master_url>\
             <duration_correction_factor>1.5</duration_correction_factor></project>\n\
             <app><name>a</name></app>\n\
             <app_version><app_name>a</app_name><version_num>1</version_num>\
             <duration_correction_factor>0.25</duration_correction_factor></app_version>\n\
             <app_version><app_name>a</app_name><version_num>2</version_num></app_version>\n",
        )
        .expect("valid");
        assert_eq!(state.projects[0].duration_correction_factor, 1.5);
        assert_eq!(state.app_versions[0].duration_correction_factor, Some(0.25));
        assert_eq!(state.app_versions[1].duration_correction_factor, None);
        let err = parse(
            "<project><master_url>http://p/</master_url></project>\n<app><name>a</name></app>\n\
             <app_version><app_name>a</app_name>\
             <duration_correction_factor>-1</duration_correction_factor></app_version>\n",
        )
        .expect_err("a factor must be positive");
        assert!(err.to_string().contains("duration_correction_factor"), "{err}");
    }

    #[test]
    fn result_picks_named_version_else_newest() {
        let state = parse(&format!(
            "{PROJECT}<result><name>r1</name><wu_name>w</wu_name><version_num>2</version_num></result>\n\
             <result><name>r2</name><wu_name>w</wu_name><version_num>9</version_num></result>\n\
             <result><name>r3</name><wu_name>w</wu_name></result>\n"
        ))
        .expect("valid");
        let versions: Vec<_> = state
            .jobs
            .iter()
            .map(|j| j.app_version.map(|v| state.app_version(v).version_num))
            .collect();
        assert_eq!(versions, [Some(2), Some(3), Some(3)]);
        let gpu = state.app_version(AppVersionId(1));
        assert_eq!(gpu.usage.coprocessor, Some((ResourceType::Nvidia, 0.5)));
        assert_eq!(state.app_version(AppVersionId(0)).flops, 3e9);
        let resources = &state.projects[0].resources;
        assert!(resources[ResourceType::Cpu].has_app_version);
        assert!(resources[ResourceType::Nvidia].has_app_version);
        assert!(!resources[ResourceType::Amd].has_app_version);
    }

    #[test]
    fn disk_tags_of_files_results_projects_and_emulated_apps() {
        let state = parse(
            "<project><master_url>u</master_url><deletion_policy_priority/>\
             <delete_from_self>1</delete_from_self></project>\
             <app><name>a</name><latency_bound>9</latency_bound><sticky_nbytes>5e8</sticky_nbytes>\
             <input_nbytes>1e6</input_nbytes><output_nbytes>2e6</output_nbytes>\
             <file_priority>3</file_priority><file_exp_days>7</file_exp_days></app>\
             <file><name>in</name><nbytes>100</nbytes><sticky/><priority>5</priority>\
             <exp_days>2</exp_days><status>1</status></file>\
             <file><name>out</name><max_nbytes>10</max_nbytes></file>\
             <workunit><name>w</name><app_name>a</app_name><file_ref><file_name>in</file_name></file_ref></workunit>\
             <result><name>r</name><wu_name>w</wu_name>\
             <file_ref><file_name>out</file_name><open_name>o</open_name></file_ref>\
             <file_ref><file_name>missing</file_name></file_ref></result>",
        )
        .expect("valid");
        let policy = state.projects[0].deletion_policy;
        assert!(policy.priority && !policy.expire && policy.delete_from_self);
        let files = state.apps[0].emulation.expect("emulated").files;
        assert_eq!(
            files,
            AppFiles {
                input_nbytes: 1e6,
                sticky_nbytes: 5e8,
                output_nbytes: 2e6,
                priority: Some(3),
                exp_days: Some(7.0)
            }
        );
        assert_eq!((state.files[0].priority, state.files[0].exp_days), (Some(5), Some(2.0)));
        assert!(state.files[0].sticky);
        let outputs: Vec<(FileId, &str)> =
            state.jobs[0].output_files.iter().map(|r| (r.file, r.open_name.as_str())).collect();
        assert_eq!(outputs, [(FileId(1), "o")]);
        let error = parse(
            "<project><master_url>u</master_url></project>\
             <file><name>in</name><priority>9</priority></file>",
        )
        .expect_err("priority out of range");
        assert_eq!(error.element.as_deref(), Some("priority"));
    }

    #[test]
    fn app_without_versions_gives_no_version() {
        let state = parse(
            "<project><master_url>u</master_url></project><app><name>a</name></app>\
             <workunit><name>w</name><app_name>a</app_name></workunit>\
             <result><name>r</name><wu_name>w</wu_name><state>2</state></result>",
        )
        .expect("valid");
        assert_eq!(state.jobs[0].app_version, None);
        assert_eq!(state.jobs[0].state, JobState::FilesDownloaded);
    }

    #[test]
    fn elements_belong_to_preceding_project() {
        let state = parse(
            "<project><master_url>u1</master_url></project><app><name>a</name></app>\
             <project><master_url>u2</master_url></project><app><name>a</name></app>",
        )
        .expect("same app name in two projects");
        assert_eq!(state.apps[0].project, ProjectId(0));
        assert_eq!(state.apps[1].project, ProjectId(1));
    }

    #[test]
    fn element_before_project_is_an_error() {
        let error = parse("<app><name>a</name></app>").expect_err("no project");
        assert_eq!(error.problem, XmlProblem::BeforeProject);
        assert_eq!(error.line, 3);
        assert_eq!(error.element.as_deref(), Some("app"));
    }

    #[test]
    fn duplicates_and_unknown_references_are_errors() {
        let dup = parse(
            "<project><master_url>u</master_url></project>\n<project><master_url>u</master_url></project>",
        )
        .expect_err("duplicate");
        assert_eq!(dup.problem, XmlProblem::DuplicateProject("u".into()));
        assert_eq!(dup.line, 4);
        let unknown_wu =
            parse(&format!("{PROJECT}<result><name>r</name>\n<wu_name>nope</wu_name></result>"))
                .expect_err("unknown workunit");
        assert_eq!(unknown_wu.element.as_deref(), Some("wu_name"));
        assert!(unknown_wu.to_string().contains("\"nope\""));
        let unknown_app =
            parse("<project><master_url>u</master_url></project><app_version><app_name>x</app_name></app_version>")
                .expect_err("unknown app");
        assert!(matches!(unknown_app.problem, XmlProblem::UnknownApp { .. }));
        let bad_state = parse(&format!(
            "{PROJECT}<result><name>r</name><wu_name>w</wu_name><state>12</state></result>"
        ))
        .expect_err("state");
        assert_eq!(bad_state.problem, XmlProblem::UnknownJobState(12));
        // A GPU type we can't drive loads, but its jobs have no usable app version.
        let unknown_gpu = parse(
            "<project><master_url>u</master_url></project><app><name>a</name></app>\
             <app_version><app_name>a</app_name><version_num>5</version_num>\
             <coproc><type>apple_gpu</type></coproc></app_version>\
             <workunit><name>w</name><app_name>a</app_name></workunit>\
             <result><name>r</name><wu_name>w</wu_name><version_num>5</version_num><state>2</state></result>",
        )
        .expect("a state with an unknown GPU type loads");
        assert_eq!(unknown_gpu.jobs[0].app_version, None);
        assert!(!unknown_gpu.projects[0].resources.0.iter().any(|r| r.has_app_version));
    }

    #[test]
    fn a_held_job_marks_its_resource_as_supplied() {
        let state = parse(&format!(
            "{PROJECT}<result><name>r</name><wu_name>w</wu_name><version_num>3</version_num>\
             <state>2</state></result>"
        ))
        .expect("parses");
        let resources = &state.projects[0].resources;
        assert!(resources[ResourceType::Nvidia].accumulate_debt);
        assert!(resources[ResourceType::Cpu].accumulate_debt, "it has a CPU app version");
        assert!(!resources[ResourceType::Amd].accumulate_debt, "nothing for AMD");
    }

    #[test]
    fn active_tasks_attach_or_are_skipped() {
        let state = parse(&format!(
            "{PROJECT}<result><name>r</name><wu_name>w</wu_name><state>2</state></result>\n\
             <active_task_set>\
             <active_task><project_master_url>http://p/</project_master_url><result_name>r</result_name>\
             <active_task_state>9</active_task_state><slot>3</slot>\
             <checkpoint_elapsed_time>50</checkpoint_elapsed_time>\
             <checkpoint_fraction_done>0.25</checkpoint_fraction_done></active_task>\
             <active_task><project_master_url>http://p/</project_master_url><result_name>gone</result_name></active_task>\
             <active_task><project_master_url>http://q/</project_master_url><result_name>r</result_name></active_task>\
             </active_task_set>"
        ))
        .expect("valid");
        let task = state.jobs[0].task.as_ref().expect("task");
        assert_eq!(task.scheduler_state, SchedulerState::Preempted);
        assert_eq!((task.slot, task.elapsed_time, task.fraction_done), (3, 50.0, 0.25));
    }

    #[test]
    fn what_is_dropped_or_changed_to_load_is_reported() {
        let text = format!(
            "{HEAD}<project><master_url>http://p/</master_url></project>\n\
             <app><name>a</name></app>\n\
             <app_version><app_name>a</app_name><version_num>1</version_num>\
             <avg_ncpus>99999999999</avg_ncpus></app_version>\n\
             <app><name>b</name></app>\n\
             <app_version><app_name>b</app_name><version_num>1</version_num>\
             <avg_ncpus>0</avg_ncpus></app_version>\n\
             <workunit><name>w</name><app_name>a</app_name></workunit>\n\
             <result><name>r</name><wu_name>w</wu_name><version_num>7</version_num></result>\n\
             <active_task_set><active_task><project_master_url>http://p/</project_master_url>\
             <result_name>gone</result_name></active_task>\
             <active_task><project_master_url>http://q/</project_master_url>\
             <result_name>r</result_name></active_task></active_task_set>\n\
             </client_state>\n"
        );
        let (state, warnings) =
            parse_client_state_with_warnings(&text, "client_state.xml").expect("valid");
        // More CPUs than the host's two: all of them; a CPU app using none: one.
        assert_eq!(state.app_versions[0].usage.avg_ncpus, 2.0);
        assert_eq!(state.app_versions[1].usage.avg_ncpus, 1.0);
        assert_eq!(state.jobs[0].app_version, Some(AppVersionId(0)));
        assert_eq!(warnings.len(), 5, "{warnings:?}");
        assert!(warnings.iter().all(|w| w.starts_with("client_state.xml line ")), "{warnings:?}");
        let has = |text: &str| warnings.iter().any(|w| w.contains(text));
        assert!(has("99999999999 CPUs"), "{warnings:?}");
        assert!(has("names version 7 of its app"), "{warnings:?}");
        assert!(has("result \"gone\""), "{warnings:?}");
        assert!(has("project \"http://q/\""), "{warnings:?}");
        // A file that needs nothing changed loads without a word.
        let (_, none) =
            parse_client_state_with_warnings(&format!("{HEAD}{PROJECT}</client_state>"), "s")
                .expect("valid");
        assert!(none.is_empty(), "{none:?}");
    }

    #[test]
    fn run_modes_and_wrong_root() {
        let state =
            parse("<user_run_request>3</user_run_request><user_gpu_request>1</user_gpu_request>")
                .expect("valid");
        assert_eq!(
            (state.run_mode, state.gpu_mode, state.network_mode),
            (RunMode::Never, RunMode::Always, RunMode::Auto)
        );
        assert_eq!(
            parse("<user_run_request>5</user_run_request>").expect_err("mode").problem,
            XmlProblem::UnknownRunMode(5)
        );
        let error = parse_client_state("<cc_config/>", "x.xml").expect_err("root");
        assert_eq!(error.problem, XmlProblem::WrongRoot { expected: "client_state" });
        assert_eq!(error.file, "x.xml");
    }

    #[test]
    fn ten_thousand_jobs_link_to_their_workunits() {
        let mut body = String::from(PROJECT);
        for i in 0..10_000 {
            body.push_str(&format!(
                "<workunit><name>w{i}</name><app_name>a</app_name></workunit>\n\
                 <result><name>r{i}</name><wu_name>w{i}</wu_name><state>2</state></result>\n"
            ));
        }
        let state = parse(&body).expect("valid");
        assert_eq!(state.jobs.len(), 10_000);
        for (i, job) in state.jobs.iter().enumerate() {
            assert_eq!(state.workunit(job.workunit).name, format!("w{i}"));
        }
    }

    #[test]
    fn emulation_only_for_emulated_apps() {
        let state = parse(
            "<project><master_url>u</master_url></project>\
             <app><name>plain</name><max_concurrent>0</max_concurrent></app>\
             <app><name>emu</name><latency_bound>86400</latency_bound><fpops_est>1e12</fpops_est>\
             <max_concurrent>2</max_concurrent></app>",
        )
        .expect("valid");
        assert_eq!(state.apps[0].emulation, None);
        assert_eq!(state.apps[0].max_concurrent, None);
        let emulation = state.apps[1].emulation.expect("emulated");
        assert_eq!((emulation.fpops_mean, emulation.weight), (1e12, 1.0));
        assert_eq!(state.apps[1].max_concurrent, Some(2));
    }
}
