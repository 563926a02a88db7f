//! `GET /metrics` (docs/dashboard.md "Metrics"): the client in Prometheus' text
//! exposition format (version 0.0.4). Gauges come from one snapshot of the state, the
//! one GUI RPC's replies are rendered from: tasks by state and resource, how busy each
//! resource is, each project's failures in a row, backoffs, next RPC and credit, tasks
//! past their deadline, disk use against the limit. Counters come from the dashboard's
//! history of the client's events since it started: RPCs by project and outcome, bytes
//! moved, app restarts, tasks that ended in an error.

use super::history::History;
use boinc_core::disk::limits::{project_usage, total_limit};
use boinc_core::model::{ClientState, JobState, ResourceType};
use boinc_runtime::runtime::messages::StateSnapshot;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The content type of the text format.
pub(crate) const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A state's name as the metrics label it.
pub(crate) fn state_label(state: JobState) -> &'static str {
    match state {
        JobState::New => "new",
        JobState::FilesDownloading => "downloading",
        JobState::FilesDownloaded => "downloaded",
        JobState::ComputeError => "compute_error",
        JobState::FilesUploading => "uploading",
        JobState::FilesUploaded => "uploaded",
        JobState::Aborted => "aborted",
        JobState::UploadFailed => "upload_failed",
    }
}

/// A label value escaped as the format asks (backslash, quote, newline).
fn label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A number as the format writes it (NaN and infinities have their own words).
fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value.is_infinite() {
        if value > 0.0 { "+Inf".into() } else { "-Inf".into() }
    } else {
        format!("{value}")
    }
}

struct Out(String);

impl Out {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.0, "# HELP {name} {help}");
        let _ = writeln!(self.0, "# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.0.push_str(name);
        if !labels.is_empty() {
            let pairs: Vec<String> =
                labels.iter().map(|(k, v)| format!("{k}=\"{}\"", label(v))).collect();
            let _ = write!(self.0, "{{{}}}", pairs.join(","));
        }
        let _ = writeln!(self.0, " {}", number(value));
    }
}

/// The resource a job mainly uses (its app version's GPU, else the CPU).
fn resource_of(state: &ClientState, job: &boinc_core::model::Job) -> ResourceType {
    job.app_version.map_or(ResourceType::Cpu, |v| state.app_version(v).usage.main_resource())
}

/// The metrics of `snapshot`, in the text format.
pub(crate) fn render(snapshot: &StateSnapshot, history: &History) -> String {
    let state = &snapshot.state;
    let now = snapshot.time;
    let mut out = Out(String::with_capacity(4096));
    let attached = |job: &&boinc_core::model::Job| !state.project(job.project).detached;

    let mut by_state: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    let mut past_deadline: BTreeMap<&str, u64> = BTreeMap::new();
    for job in state.jobs.iter().filter(attached) {
        let resource = resource_of(state, job).key();
        *by_state.entry((state_label(job.state), resource)).or_default() += 1;
        if !job.ready_to_report && !job.got_server_ack && job.report_deadline < now {
            *past_deadline.entry(resource).or_default() += 1;
        }
    }
    out.family("boinc_tasks", "gauge", "Tasks of the attached projects, by state and resource.");
    for ((job_state, resource), count) in &by_state {
        out.sample("boinc_tasks", &[("state", job_state), ("resource", resource)], *count as f64);
    }

    let mut running: BTreeMap<&str, u64> = BTreeMap::new();
    let mut busy = [0.0_f64; ResourceType::ALL.len()];
    for id in &snapshot.running {
        let job = state.job(*id);
        *running.entry(resource_of(state, job).key()).or_default() += 1;
        if let Some(version) = job.app_version {
            let usage = &state.app_version(version).usage;
            for resource in ResourceType::ALL {
                busy[resource.index()] += usage.usage_of(resource);
            }
        }
    }
    out.family("boinc_tasks_running", "gauge", "Tasks running now, by resource.");
    for (resource, count) in &running {
        out.sample("boinc_tasks_running", &[("resource", resource)], *count as f64);
    }
    out.family("boinc_resource_instances", "gauge", "Instances of each resource the client uses.");
    for resource in ResourceType::ALL {
        let instances = state.instances(resource);
        if instances > 0 {
            out.sample(
                "boinc_resource_instances",
                &[("resource", resource.key())],
                instances.into(),
            );
        }
    }
    out.family(
        "boinc_resource_busy_fraction",
        "gauge",
        "The share of each resource's instances the running tasks use (0 to 1).",
    );
    for resource in ResourceType::ALL {
        let instances = state.instances(resource);
        if instances > 0 {
            let used = busy[resource.index()] / f64::from(instances);
            out.sample(
                "boinc_resource_busy_fraction",
                &[("resource", resource.key())],
                used.min(1.0),
            );
        }
    }
    out.family(
        "boinc_tasks_past_deadline",
        "gauge",
        "Tasks not yet reported whose report deadline has passed, by resource.",
    );
    for (resource, count) in &past_deadline {
        out.sample("boinc_tasks_past_deadline", &[("resource", resource)], *count as f64);
    }

    let projects: Vec<_> = state.projects.iter().filter(|p| !p.detached).collect();
    out.family(
        "boinc_project_rpcs_total",
        "counter",
        "Scheduler RPCs to each project since the dashboard started, by outcome.",
    );
    for ((project, success), count) in &history.rpcs {
        let outcome = if *success { "success" } else { "failure" };
        let labels = [("name", project.as_str()), ("outcome", outcome)];
        out.sample("boinc_project_rpcs_total", &labels, *count as f64);
    }
    out.family(
        "boinc_project_rpc_failures",
        "gauge",
        "Scheduler RPCs to each project that failed in a row.",
    );
    for p in &projects {
        out.sample(
            "boinc_project_rpc_failures",
            &[("project", &p.master_url)],
            p.nrpc_failures.into(),
        );
    }
    out.family(
        "boinc_project_next_rpc_seconds",
        "gauge",
        "Seconds until each project may be contacted again (0: now).",
    );
    for p in &projects {
        let wait = (p.min_rpc_time - now).max(0.0);
        out.sample("boinc_project_next_rpc_seconds", &[("project", &p.master_url)], wait);
    }
    out.family(
        "boinc_project_backoff_seconds",
        "gauge",
        "Seconds left of each project's work-fetch backoff, by resource.",
    );
    for p in &projects {
        for (resource, r) in p.resources.iter() {
            if state.instances(resource) > 0 {
                let left = (r.backoff_time - now).max(0.0);
                let labels = [("project", p.master_url.as_str()), ("resource", resource.key())];
                out.sample("boinc_project_backoff_seconds", &labels, left);
            }
        }
    }
    out.family("boinc_project_user_total_credit", "gauge", "The account's total credit.");
    for p in &projects {
        out.sample(
            "boinc_project_user_total_credit",
            &[("project", &p.master_url)],
            p.account.user_total_credit,
        );
    }
    out.family("boinc_project_host_total_credit", "gauge", "This host's total credit.");
    for p in &projects {
        out.sample(
            "boinc_project_host_total_credit",
            &[("project", &p.master_url)],
            p.account.host_total_credit,
        );
    }
    out.family("boinc_project_suspended", "gauge", "1 when the user suspended the project.");
    for p in &projects {
        let value = if p.suspended { 1.0 } else { 0.0 };
        out.sample("boinc_project_suspended", &[("project", &p.master_url)], value);
    }
    out.family(
        "boinc_app_restarts_total",
        "counter",
        "Apps that crashed and were restarted from their checkpoint since the dashboard started.",
    );
    out.sample("boinc_app_restarts_total", &[], history.app_restarts as f64);
    out.family(
        "boinc_task_errors_total",
        "counter",
        "Tasks that ended in an error since the dashboard started, by project name.",
    );
    for (project, count) in &history.task_errors {
        out.sample("boinc_task_errors_total", &[("name", project)], *count as f64);
    }
    out.family(
        "boinc_transferred_bytes_total",
        "counter",
        "Bytes of files downloaded and uploaded since the dashboard started.",
    );
    out.sample("boinc_transferred_bytes_total", &[("direction", "down")], history.bytes[0] as f64);
    out.sample("boinc_transferred_bytes_total", &[("direction", "up")], history.bytes[1] as f64);

    let usage = project_usage(state);
    out.family("boinc_disk_project_bytes", "gauge", "Bytes of each project's files on disk.");
    let mut used = 0.0;
    for id in state.project_ids().filter(|&id| !state.project(id).detached) {
        let bytes = usage.get(id.index()).copied().unwrap_or(0.0);
        used += bytes;
        out.sample(
            "boinc_disk_project_bytes",
            &[("project", &state.project(id).master_url)],
            bytes,
        );
    }
    out.family(
        "boinc_disk_allowed_bytes",
        "gauge",
        "Bytes the projects may use under the disk preferences (GUI RPC's d_allowed).",
    );
    let allowed = total_limit(&state.prefs, &state.host, used);
    let allowed = if allowed.is_finite() { allowed.max(0.0) } else { state.host.d_free };
    out.sample("boinc_disk_allowed_bytes", &[], allowed);
    out.family("boinc_disk_free_bytes", "gauge", "Free bytes on the data directory's disk.");
    out.sample("boinc_disk_free_bytes", &[], state.host.d_free);

    out.family(
        "boinc_network_average_bytes_per_second",
        "gauge",
        "The network's average transfer rate while transferring, by direction.",
    );
    let net = &state.net_stats;
    out.sample("boinc_network_average_bytes_per_second", &[("direction", "up")], net.avg_up);
    out.sample("boinc_network_average_bytes_per_second", &[("direction", "down")], net.avg_down);
    out.family(
        "boinc_scheduling_decisions_total",
        "counter",
        "Scheduling decisions made since the client started.",
    );
    out.sample("boinc_scheduling_decisions_total", &[], snapshot.decisions as f64);
    out.family(
        "boinc_scheduler_rpcs_total",
        "counter",
        "Scheduler RPCs started since the client started.",
    );
    out.sample("boinc_scheduler_rpcs_total", &[], snapshot.rpcs as f64);
    out.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_numbers_are_written_as_the_format_asks() {
        assert_eq!(label(r#"a"b\c"#), r#"a\"b\\c"#);
        assert_eq!(label("two\nlines"), "two\\nlines");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(number(2.5), "2.5");
        assert_eq!(number(3.0), "3");
    }

    #[test]
    fn an_empty_client_has_families_and_no_tasks() {
        let snapshot = StateSnapshot {
            time: 1000.0,
            state: ClientState::default(),
            running: Vec::new(),
            in_flight: Vec::new(),
            decisions: 7,
            rpcs: 2,
            host: boinc_core::control::HostView::UP,
        };
        let text = render(&snapshot, &History::default());
        assert!(text.contains("# TYPE boinc_tasks gauge\n"), "{text}");
        assert!(!text.contains("boinc_tasks{"), "{text}");
        assert!(text.contains("boinc_scheduling_decisions_total 7\n"), "{text}");
        assert!(text.contains("boinc_scheduler_rpcs_total 2\n"), "{text}");
    }
}
