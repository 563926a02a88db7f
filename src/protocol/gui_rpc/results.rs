//! `<result>` and its `<active_task>` (GUI RPC `get_results`, `get_state`,
//! `get_simple_gui_info`, `get_screensaver_tasks`): a task as BOINC 7.20.5 writes it
//! (fixture gui_rpc_samples.txt, pair 4), with the remaining-time estimate of seed 000
//! note 5. Active-task and scheduler states use BOINC's numbers, which the real tools
//! print by name (EXECUTING, SUSPENDED; scheduled, preempted).

use super::view::ClientView;
use crate::estimate::remaining_duration;
use crate::model::{ActiveTask, JobId, ResourceUsage, SchedulerState};
use crate::protocol::xml_out::XmlOut;

/// BOINC's `PROCESS_UNINITIALIZED`: the task has no process.
const PROCESS_UNINITIALIZED: i64 = 0;
/// BOINC's `PROCESS_EXECUTING`.
const PROCESS_EXECUTING: i64 = 1;
/// BOINC's `PROCESS_SUSPENDED`: the process is kept in memory, stopped.
const PROCESS_SUSPENDED: i64 = 9;

/// BOINC's `CPU_SCHED_UNINITIALIZED`: never scheduled.
const CPU_SCHED_UNINITIALIZED: i64 = 0;
/// BOINC's `CPU_SCHED_PREEMPTED`.
const CPU_SCHED_PREEMPTED: i64 = 1;
/// BOINC's `CPU_SCHED_SCHEDULED`.
const CPU_SCHED_SCHEDULED: i64 = 2;

/// (active_task_state, scheduler_state) of a task.
fn task_states(task: &ActiveTask) -> (i64, i64) {
    match task.scheduler_state {
        // Its app crashed and waits out the restart backoff: it holds its place, but no
        // process runs.
        SchedulerState::Running if task.restart_at.is_some() => {
            (PROCESS_UNINITIALIZED, CPU_SCHED_SCHEDULED)
        }
        SchedulerState::Running => (PROCESS_EXECUTING, CPU_SCHED_SCHEDULED),
        SchedulerState::Preempted => (PROCESS_SUSPENDED, CPU_SCHED_PREEMPTED),
        // A task quit out of memory has run before; one that never ran has not.
        SchedulerState::Uninitialized if task.elapsed_time > 0.0 => {
            (PROCESS_UNINITIALIZED, CPU_SCHED_PREEMPTED)
        }
        SchedulerState::Uninitialized => (PROCESS_UNINITIALIZED, CPU_SCHED_UNINITIALIZED),
    }
}

/// BOINC's description of what a task uses (`<resources>`), e.g. `0.5 CPUs + 1 NVIDIA
/// GPU`; `None` for the plain one CPU the real tools assume when it is absent.
pub(crate) fn resources_text(usage: &ResourceUsage) -> Option<String> {
    let cpus = if (usage.avg_ncpus - 1.0).abs() < 1e-9 {
        "1 CPU".to_string()
    } else {
        format!("{} CPUs", short_number(usage.avg_ncpus))
    };
    match usage.coprocessor {
        Some((resource, count)) => Some(format!(
            "{cpus} + {} {} GPU",
            short_number(count),
            super::project_status::resource_name(resource)
        )),
        None if cpus == "1 CPU" => None,
        None => Some(cpus),
    }
}

/// A count as BOINC prints it with `%.3g`: `0.5`, `1`, `12`.
fn short_number(value: f64) -> String {
    let rounded = (value * 1000.0).round() / 1000.0;
    let text = format!("{rounded:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Writes one `<result>`.
pub(crate) fn write_result(out: &mut XmlOut, view: &ClientView, id: JobId) {
    let state = view.state;
    let job = state.job(id);
    let project = state.project(job.project);
    let workunit = state.workunit(job.workunit);
    let version = job.app_version.map(|v| state.app_version(v));
    out.start("result");
    out.text("name", &job.name);
    out.text("wu_name", &workunit.name);
    out.text("platform", view.platform);
    out.int("version_num", version.map_or(0, |v| v.version_num));
    out.text("plan_class", version.map_or("", |v| v.plan_class.as_str()));
    out.text("project_url", &project.master_url);
    // A running task's CPU time so far; an ended one's as it ended.
    out.real(
        "final_cpu_time",
        job.task.as_ref().map_or(job.final_cpu_time, |t| t.current_cpu_time),
    );
    out.real("final_elapsed_time", job.final_elapsed_time);
    out.int("exit_status", job.exit_status);
    out.int("state", job.state.code());
    out.real("report_deadline", job.report_deadline);
    out.real("received_time", job.received_time);
    out.real("estimated_cpu_time_remaining", remaining_duration(state, id));
    out.flag("suspended_via_gui", job.suspended);
    out.flag("project_suspended_via_gui", project.suspended);
    out.flag("ready_to_report", job.ready_to_report);
    out.flag("got_server_ack", job.got_server_ack);
    if job.completed_time > 0.0 {
        out.real("completed_time", job.completed_time);
    }
    if let Some(text) = version.and_then(|v| resources_text(&v.usage)) {
        out.text("resources", &text);
    }
    if let Some(task) = &job.task {
        let (process_state, scheduler_state) = task_states(task);
        out.start("active_task");
        out.int("active_task_state", process_state);
        out.int("app_version_num", version.map_or(0, |v| v.version_num));
        out.int("slot", task.slot);
        out.int("pid", task.process.pid);
        out.int("scheduler_state", scheduler_state);
        out.real("checkpoint_cpu_time", task.checkpoint_cpu_time);
        out.real("fraction_done", task.fraction_done);
        out.real("current_cpu_time", task.current_cpu_time);
        out.real("elapsed_time", task.elapsed_time);
        out.real("swap_size", task.process.swap_size);
        out.real("working_set_size", task.process.working_set_size);
        out.real("working_set_size_smoothed", task.working_set_size);
        out.real("page_fault_rate", task.process.page_fault_rate);
        // What an app moves over the network itself is not measured (BOINC counts it
        // only for apps that report it).
        out.real("bytes_sent", 0.0);
        out.real("bytes_received", 0.0);
        let rate =
            if task.elapsed_time > 0.0 { task.fraction_done / task.elapsed_time } else { 0.0 };
        out.real("progress_rate", rate);
        out.flag("too_large", task.too_large);
        out.end("active_task");
    }
    out.end("result");
}

/// The tasks of the projects still attached, in the state's order, less those the
/// project has acknowledged (BOINC forgets a result once it is reported; they are
/// `get_old_results`'); with `active_only`, only those that have a task (started at
/// some time).
pub(crate) fn write_each_result(out: &mut XmlOut, view: &ClientView, active_only: bool) {
    for id in view.state.job_ids() {
        let job = view.state.job(id);
        if !view.shown(job.project) || job.got_server_ack || (active_only && job.task.is_none()) {
            continue;
        }
        write_result(out, view, id);
    }
}

/// The `<results>` of `get_results`.
pub(crate) fn write_results(out: &mut XmlOut, view: &ClientView, active_only: bool) {
    out.start("results");
    write_each_result(out, view, active_only);
    out.end("results");
}

/// How long a reported result stays in `get_old_results` (BOINC's hour).
const OLD_RESULT_SECONDS: f64 = 3600.0;

/// Writes `<old_results>`: the results the projects acknowledged in the last hour that
/// the client still holds (an acknowledged result is forgotten once enough of them
/// pile up, possibly within the hour).
pub(crate) fn write_old_results(out: &mut XmlOut, view: &ClientView) {
    out.start("old_results");
    for id in view.state.job_ids() {
        let job = view.state.job(id);
        if !job.got_server_ack || view.now - job.completed_time > OLD_RESULT_SECONDS {
            continue;
        }
        let project = view.state.project(job.project);
        let app = view.state.app(view.state.workunit(job.workunit).app);
        out.start("old_result");
        out.text("project_url", &project.master_url);
        out.text("result_name", &job.name);
        out.text("app_name", &app.name);
        out.int("exit_status", job.exit_status);
        out.real("elapsed_time", job.final_elapsed_time);
        out.real("cpu_time", job.final_cpu_time);
        out.real("completed_time", job.completed_time);
        out.real("create_time", job.received_time);
        out.end("old_result");
    }
    out.end("old_results");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ProcessUsage, ResourceType};
    use crate::model::{SyntheticHost, synthetic_host};

    #[test]
    fn resources_as_boinc_words_them() {
        let usage = |avg_ncpus, coprocessor| ResourceUsage { avg_ncpus, coprocessor };
        assert_eq!(resources_text(&usage(1.0, None)), None);
        assert_eq!(resources_text(&usage(4.0, None)).as_deref(), Some("4 CPUs"));
        assert_eq!(
            resources_text(&usage(0.5, Some((ResourceType::Nvidia, 1.0)))).as_deref(),
            Some("0.5 CPUs + 1 NVIDIA GPU")
        );
        assert_eq!(
            resources_text(&usage(1.0, Some((ResourceType::Amd, 0.25)))).as_deref(),
            Some("1 CPU + 0.25 ATI GPU")
        );
    }

    #[test]
    fn task_states_in_boincs_numbers() {
        let mut task = ActiveTask::new(3);
        assert_eq!(task_states(&task), (PROCESS_UNINITIALIZED, CPU_SCHED_UNINITIALIZED));
        task.scheduler_state = SchedulerState::Running;
        assert_eq!(task_states(&task), (PROCESS_EXECUTING, CPU_SCHED_SCHEDULED));
        task.restart_at = Some(100.0);
        assert_eq!(task_states(&task), (PROCESS_UNINITIALIZED, CPU_SCHED_SCHEDULED));
        task.restart_at = None;
        task.scheduler_state = SchedulerState::Preempted;
        assert_eq!(task_states(&task), (PROCESS_SUSPENDED, CPU_SCHED_PREEMPTED));
        task.scheduler_state = SchedulerState::Uninitialized;
        task.elapsed_time = 10.0;
        assert_eq!(task_states(&task), (PROCESS_UNINITIALIZED, CPU_SCHED_PREEMPTED));
    }

    /// A running task's process as BOINC 7.20.5 shows it (fixture
    /// gui_rpc_samples.txt, pair 4): its pid, memory, swap and page faults, in BOINC's
    /// order.
    #[test]
    fn a_running_task_shows_its_process_as_boinc_does() {
        let now = 10_000.0;
        let mut state =
            synthetic_host(SyntheticHost { ncpus: 2, njobs: 2, running_prefix: 1, seed: 3, now });
        let task = state.jobs[0].task.as_mut().expect("a running task");
        task.working_set_size = 2015232.0;
        task.process = ProcessUsage {
            pid: 8261,
            working_set_size: 4030464.0,
            working_set_size_smoothed: 2015232.0,
            swap_size: 6877184.0,
            page_fault_rate: 0.5,
        };
        let view = ClientView::plain(&state, now);
        let mut out = XmlOut::new();
        write_result(&mut out, &view, JobId::from_index(0));
        let text = String::from_utf8(out.finish()).expect("utf-8");
        let order = [
            "<slot>",
            "<pid>8261</pid>",
            "<scheduler_state>",
            "<elapsed_time>",
            "<swap_size>6877184.000000</swap_size>",
            "<working_set_size>4030464.000000</working_set_size>",
            "<working_set_size_smoothed>2015232.000000</working_set_size_smoothed>",
            "<page_fault_rate>0.500000</page_fault_rate>",
            "<bytes_sent>0.000000</bytes_sent>",
            "<bytes_received>0.000000</bytes_received>",
            "<progress_rate>",
        ];
        let mut from = 0;
        for element in order {
            let at = text[from..].find(element).unwrap_or_else(|| panic!("{element} in {text}"));
            from += at + element.len();
        }
    }

    #[test]
    fn old_results_are_the_last_hours_acknowledged_ones() {
        let now = 10_000.0;
        let mut state =
            synthetic_host(SyntheticHost { ncpus: 2, njobs: 4, running_prefix: 0, seed: 3, now });
        for (job, completed) in [(0, now - 10.0), (1, now - 7200.0)] {
            state.jobs[job].got_server_ack = true;
            state.jobs[job].completed_time = completed;
            state.jobs[job].final_cpu_time = 12.5;
        }
        let view = ClientView::plain(&state, now);
        let mut out = XmlOut::new();
        write_old_results(&mut out, &view);
        let text = String::from_utf8(out.finish()).expect("utf-8");
        assert_eq!(text.matches("<old_result>").count(), 1, "{text}");
        assert!(text.contains(&format!("<result_name>{}</result_name>", state.jobs[0].name)));
        assert!(text.contains("<cpu_time>12.500000</cpu_time>"), "{text}");
        // Reported and acknowledged, they are no longer tasks.
        let mut out = XmlOut::new();
        write_results(&mut out, &view, false);
        let text = String::from_utf8(out.finish()).expect("utf-8");
        assert_eq!(text.matches("<result>").count(), 2, "{text}");
        assert!(!text.contains(&format!("<name>{}</name>", state.jobs[0].name)), "{text}");
    }

    #[test]
    fn a_task_waiting_for_memory_says_so_as_boinc_does() {
        let now = 10_000.0;
        let mut state =
            synthetic_host(SyntheticHost { ncpus: 2, njobs: 2, running_prefix: 0, seed: 3, now });
        state.jobs[1].task = Some(ActiveTask { too_large: true, ..ActiveTask::new(1) });
        let view = ClientView::plain(&state, now);
        let mut out = XmlOut::new();
        write_results(&mut out, &view, false);
        let text = String::from_utf8(out.finish()).expect("utf-8");
        assert_eq!(text.matches("<too_large/>").count(), 1, "{text}");
    }
}
