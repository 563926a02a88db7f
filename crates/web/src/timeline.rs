//! The schedule page's timeline (docs/dashboard.md "Schedule"): the runs of the last
//! hours, drawn by the emulator's timeline (`boinc-rs sim --timeline`): a lane per CPU
//! and GPU instance, bars coloured by project. The runs come from the dashboard's
//! history; what each task uses (CPUs, GPU instances) from the client's state.

use super::history::{Run, WINDOW};
use boinc_core::Policy;
use boinc_core::model::{ClientState, ResourceType};
use boinc_emulator::timeline::render_timeline;
use boinc_emulator::trace::{TraceEvent, TraceGpu, TraceProject};
use std::collections::HashMap;

/// What a task uses: CPUs, and its GPU type, instances and share of each.
type Usage = (f64, Option<(ResourceType, Vec<u32>, f64)>);

fn usage_by_job(state: &ClientState) -> HashMap<&str, Usage> {
    state
        .jobs
        .iter()
        .map(|job| {
            let usage = job.app_version.map(|v| state.app_version(v).usage);
            let cpus = usage.as_ref().map_or(1.0, |u| u.avg_ncpus);
            let gpu = usage.and_then(|u| u.coprocessor).map(|(resource, share)| {
                let instances =
                    job.task.as_ref().map(|t| t.gpu_instances.clone()).unwrap_or_default();
                let instances = if instances.is_empty() { vec![0] } else { instances };
                (resource, instances, share)
            });
            (job.name.as_str(), (cpus, gpu))
        })
        .collect()
}

/// The SVG of `runs` on the host of `state`, up to `now`.
pub(crate) fn timeline_svg(
    state: &ClientState,
    runs: &[Run],
    since: Option<f64>,
    now: f64,
) -> String {
    let start = since.map_or(now - WINDOW, |since| since.max(now - WINDOW)).min(now - 60.0);
    let gpus = ResourceType::ALL
        .into_iter()
        .filter(|r| r.is_gpu() && state.instances(*r) > 0)
        .map(|resource| TraceGpu { resource, count: state.instances(resource), peak_flops: 0.0 })
        .collect();
    let projects = state
        .projects
        .iter()
        .filter(|p| !p.detached)
        .map(|p| TraceProject {
            name: p.name.clone(),
            resource_share: p.resource_share,
            devices: None,
        })
        .collect();
    let mut events = vec![TraceEvent::Setup {
        scenario: "this client".into(),
        policy: Policy::Seed,
        seed: 0,
        boinc_compat: false,
        start,
        end: now,
        ncpus: state.instances(ResourceType::Cpu),
        p_fpops: state.host.p_fpops,
        gpus,
        projects,
        scheduling_period: state.prefs.scheduling_period(),
    }];
    let usage = usage_by_job(state);
    for run in runs {
        let (avg_ncpus, gpu) = usage.get(run.job.as_str()).cloned().unwrap_or((1.0, None));
        events.push(TraceEvent::RunSegment {
            job: run.job.clone(),
            project: run.project.clone(),
            start: run.start.max(start),
            end: run.end.unwrap_or(now),
            avg_ncpus,
            gpu,
        });
    }
    render_timeline(&events)
}
