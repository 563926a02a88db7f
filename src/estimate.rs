//! Duration estimates (seed 000 notes 1-5) and the duration correction factor (note 3,
//! docs/design.md "DCF").
//!
//! BOINC keeps one duration correction factor per project, so a project with a CPU app
//! and a GPU app, or two apps whose estimates are off by different factors, has both
//! estimates wrong: each job that finishes pulls the factor towards its own app's error.
//! Here each app version keeps its own factor, seeded from the project's (which goes on
//! learning from all of the project's jobs, for versions that have not finished one yet).
//!
//! All durations here are *processing seconds*: seconds of dedicated running on the job's
//! resources. Turning them into wall time (on-fraction, active-fraction, resource share)
//! is the round-robin simulation's business.
//!
//! The remaining time of a started job blends two estimates (note 5):
//!
//! - the *static* estimate, `unstarted_duration − elapsed`: what the flops estimate, the
//!   app version's speed and the project's DCF still leave to do;
//! - the *dynamic* estimate, `elapsed / fraction_done − elapsed`: what the job's own
//!   progress report implies, measured in elapsed (wall) time, not CPU time, so a GPU job
//!   that used little CPU is not judged nearly finished.
//!
//! The weight of the dynamic estimate is the fraction done itself: a job that just started
//! reports a noisy fraction and is judged by its static estimate, a job near the end by its
//! progress. A job that has run past its static estimate without a progress report is not
//! declared finished: its static remainder is floored at a small positive time
//! ([`OVERRUN_REMAINING_FRACTION`] of its elapsed time, at least
//! [`MIN_OVERRUN_REMAINING`]), so the simulation still sees it occupying its resources.

use crate::model::{AppVersion, ClientState, Job, JobId, Project, is_positive_finite};

/// The smallest duration correction factor (docs/design.md: clamped to [0.01, 100]).
pub const DCF_MIN: f64 = 0.01;
/// The largest duration correction factor.
pub const DCF_MAX: f64 = 100.0;
/// A job that ran longer than this multiple of its estimate makes the DCF jump up to the
/// observed ratio at once: overestimating is harmless, underestimating misses deadlines.
pub const DCF_JUMP_RATIO: f64 = 1.1;
/// Weight of the newest observation when the DCF is smoothed rather than jumped.
pub const DCF_SMOOTHING_WEIGHT: f64 = 0.1;
/// Flops assumed when neither the app version nor the host benchmark gives a usable speed.
pub const FALLBACK_FLOPS: f64 = 1e9;
/// A job past its static estimate with no progress report still has this fraction of its
/// elapsed time left.
pub const OVERRUN_REMAINING_FRACTION: f64 = 0.01;
/// ... and at least this many seconds.
pub const MIN_OVERRUN_REMAINING: f64 = 1.0;

/// A usable duration correction factor: BOINC's clamp, with 1 for a corrupt value.
fn sane_dcf(dcf: f64) -> f64 {
    if is_positive_finite(dcf) { dcf.clamp(DCF_MIN, DCF_MAX) } else { 1.0 }
}

/// Seed 000 note 2: estimated processing seconds of a job that has not started: the
/// workunit's flops estimate over the app version's flops, scaled by the version's DCF
/// (the version's own, else its project's).
/// A missing or non-positive app-version speed falls back to the host's CPU benchmark,
/// then to [`FALLBACK_FLOPS`]; a corrupt flops estimate counts as no work.
pub fn unstarted_duration(state: &ClientState, job: JobId) -> f64 {
    let dcf = job_dcf(state, job);
    let job = state.job(job);
    let av_flops = job.app_version.map_or(0.0, |av| state.app_version(av).flops);
    let flops = usable_flops(av_flops, state.host.p_fpops);
    unstarted_from(state.workunit(job.workunit).rsc_fpops_est, flops, dcf)
}

/// The duration correction factor a job's estimates use: its app version's, or its
/// project's where it has no app version.
pub fn job_dcf(state: &ClientState, job: JobId) -> f64 {
    let job = state.job(job);
    let project = state.project(job.project);
    match job.app_version.and_then(|v| state.app_versions.get(v.index())) {
        Some(version) => version_dcf(project, version),
        None => project_dcf(project),
    }
}

/// An app version's duration correction factor made usable: its own once it has one,
/// else its project's (see [`sane_dcf`]).
pub(crate) fn version_dcf(project: &Project, version: &AppVersion) -> f64 {
    if project.dont_use_dcf {
        return 1.0;
    }
    sane_dcf(version.duration_correction_factor.unwrap_or(project.duration_correction_factor))
}

/// The speed a job runs at (note 2's fallbacks): the app version's flops when usable,
/// else the host's CPU benchmark, else [`FALLBACK_FLOPS`]. Depends only on the app
/// version and the host, so a caller estimating many jobs computes it once per version.
pub(crate) fn usable_flops(av_flops: f64, host_p_fpops: f64) -> f64 {
    if is_positive_finite(av_flops) {
        av_flops
    } else if is_positive_finite(host_p_fpops) {
        host_p_fpops
    } else {
        FALLBACK_FLOPS
    }
}

/// The project's duration correction factor made usable (see [`sane_dcf`]), for callers
/// that estimate many jobs and look it up once per project.
pub(crate) fn project_dcf(project: &Project) -> f64 {
    if project.dont_use_dcf {
        return 1.0;
    }
    sane_dcf(project.duration_correction_factor)
}

/// [`unstarted_duration`] from its parts: the workunit's flops estimate, the speed from
/// [`usable_flops`] and the DCF from [`version_dcf`].
pub(crate) fn unstarted_from(fpops_est: f64, flops: f64, dcf: f64) -> f64 {
    // Run for every job at every decision: one comparison of the bits (see
    // `is_positive_finite`) rather than the float tests' dozen instructions.
    let fpops_est = if is_positive_finite(fpops_est) { fpops_est } else { 0.0 };
    let duration = fpops_est / flops * dcf;
    if duration.is_finite() { duration } else { f64::MAX }
}

/// The dynamic estimate of note 5: processing seconds left if the job keeps progressing
/// as it has, judged by elapsed time. `None` when there is no progress to judge by.
pub fn dynamic_remaining(elapsed: f64, fraction_done: f64) -> Option<f64> {
    if fraction_done.is_nan() || fraction_done <= 0.0 || !elapsed.is_finite() {
        return None;
    }
    let fraction_done = fraction_done.min(1.0);
    let elapsed = elapsed.max(0.0);
    Some((elapsed / fraction_done - elapsed).max(0.0))
}

/// The static estimate for a started job: what its unstarted estimate leaves after
/// `elapsed`, floored at a small positive time for a job that overran it.
pub fn static_remaining(unstarted: f64, elapsed: f64) -> f64 {
    let left = unstarted - elapsed;
    let floor = (elapsed * OVERRUN_REMAINING_FRACTION).max(MIN_OVERRUN_REMAINING);
    if left > floor { left } else { floor }
}

/// Seed 000 notes 2 and 5: estimated processing seconds until the job finishes computing.
/// Unstarted jobs get [`unstarted_duration`]; started ones the blend described in the
/// module documentation; jobs done computing 0. Never negative, always finite.
pub fn remaining_duration(state: &ClientState, job: JobId) -> f64 {
    remaining_after(unstarted_duration(state, job), state.job(job))
}

/// [`remaining_duration`] of `record` given its [`unstarted_duration`], for callers that
/// compute the unstarted estimate from per-version and per-project values looked up once.
pub(crate) fn remaining_after(unstarted: f64, record: &Job) -> f64 {
    if record.state.computing_done() {
        return 0.0;
    }
    let Some(task) = &record.task else { return unstarted };
    let elapsed = if task.elapsed_time.is_finite() { task.elapsed_time.max(0.0) } else { 0.0 };
    let fraction_done =
        if task.fraction_done.is_finite() { task.fraction_done.clamp(0.0, 1.0) } else { 0.0 };
    if elapsed == 0.0 && fraction_done == 0.0 {
        return unstarted;
    }
    let static_part = static_remaining(unstarted, elapsed);
    let blended = match dynamic_remaining(elapsed, fraction_done) {
        Some(dynamic) => fraction_done * dynamic + (1.0 - fraction_done) * static_part,
        None => static_part,
    };
    if blended.is_finite() { blended.max(0.0) } else { f64::MAX }
}

/// Seed 000 note 3: updates the project's duration correction factor after one of its
/// jobs finished. `estimated_duration` is the estimate made with the project's current
/// DCF, `actual_elapsed` the job's final elapsed time.
///
/// The DCF jumps straight to the observed ratio when the job ran more than
/// [`DCF_JUMP_RATIO`] times its estimate, and is otherwise smoothed 0.9/0.1 towards it;
/// it stays within [[`DCF_MIN`], [`DCF_MAX`]]. Unusable inputs leave it unchanged.
pub fn update_duration_correction_factor(
    project: &mut Project,
    estimated_duration: f64,
    actual_elapsed: f64,
) {
    if project.dont_use_dcf {
        return;
    }
    let dcf = sane_dcf(project.duration_correction_factor);
    if let Some(updated) = updated_dcf(dcf, estimated_duration / dcf, actual_elapsed) {
        project.duration_correction_factor = updated;
    }
}

/// A job finished after `actual_elapsed` seconds: its app version's duration correction
/// factor (seeded from the project's if it had none) and its project's learn from it,
/// each by [`update_duration_correction_factor`]'s rule applied to its own estimate.
/// Unusable inputs leave both unchanged.
pub fn learn_duration_correction(state: &mut ClientState, job: JobId, actual_elapsed: f64) {
    let record = state.job(job);
    let (project, version, workunit) = (record.project, record.app_version, record.workunit);
    // A project that said `<dont_use_dcf/>` estimates well itself: nothing is learnt.
    if state.project(project).dont_use_dcf {
        return;
    }
    let av_flops = version.map_or(0.0, |v| state.app_version(v).flops);
    let flops = usable_flops(av_flops, state.host.p_fpops);
    let uncorrected = unstarted_from(state.workunit(workunit).rsc_fpops_est, flops, 1.0);
    let project_factor = project_dcf(state.project(project));
    if let Some(version) = version.and_then(|v| state.app_versions.get_mut(v.index())) {
        let current = sane_dcf(version.duration_correction_factor.unwrap_or(project_factor));
        if let Some(updated) = updated_dcf(current, uncorrected, actual_elapsed) {
            version.duration_correction_factor = Some(updated);
        }
    }
    if let Some(updated) = updated_dcf(project_factor, uncorrected, actual_elapsed) {
        state.projects[project.index()].duration_correction_factor = updated;
    }
}

/// Note 3's rule: the factor `dcf` after a job whose uncorrected estimate was
/// `uncorrected` seconds ran `actual_elapsed`; `None` when the inputs are unusable.
fn updated_dcf(dcf: f64, uncorrected: f64, actual_elapsed: f64) -> Option<f64> {
    let usable = uncorrected.is_finite()
        && uncorrected > 0.0
        && actual_elapsed.is_finite()
        && actual_elapsed >= 0.0;
    if !usable {
        return None;
    }
    let raw_ratio = actual_elapsed / uncorrected;
    let corrected_ratio = raw_ratio / dcf;
    let updated = if corrected_ratio > DCF_JUMP_RATIO {
        raw_ratio
    } else {
        dcf * (1.0 - DCF_SMOOTHING_WEIGHT) + raw_ratio * DCF_SMOOTHING_WEIGHT
    };
    Some(updated.clamp(DCF_MIN, DCF_MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ActiveTask, ResourceType, ResourceUsage, SchedulerState};
    use crate::rr_sim::test_support::StateBuilder;

    fn cpu() -> ResourceUsage {
        ResourceUsage { avg_ncpus: 1.0, coprocessor: None }
    }

    fn started(state: &mut ClientState, job: JobId, elapsed: f64, fraction_done: f64) {
        let mut task = ActiveTask::new(0);
        task.scheduler_state = SchedulerState::Running;
        task.elapsed_time = elapsed;
        task.fraction_done = fraction_done;
        state.jobs[job.index()].task = Some(task);
    }

    #[test]
    fn unstarted_is_flops_over_app_speed_times_dcf() {
        let mut b = StateBuilder::new(1);
        let p = b.project("A", 1.0);
        let av = b.app_version(p, cpu(), 2e9);
        let j = b.job(p, av, 0.0, 1e9);
        b.state.workunits[b.state.jobs[j.index()].workunit.index()].rsc_fpops_est = 4e12;
        b.state.projects[p.index()].duration_correction_factor = 1.5;
        assert!((unstarted_duration(&b.state, j) - 3000.0).abs() < 1e-9);
    }

    /// A project with two apps, one whose jobs take twice their estimate and one whose
    /// jobs take a quarter of it: each version learns its own factor, where one factor
    /// for the project is pulled back and forth and gets both wrong.
    #[test]
    fn each_app_version_learns_its_own_correction() {
        let mut b = StateBuilder::new(1);
        let p = b.project("A", 1.0);
        let slow = b.app_version(p, cpu(), 1e9);
        let fast = b.app_version(p, cpu(), 1e9);
        let (slow_job, fast_job) = (b.job(p, slow, 3600.0, 1e9), b.job(p, fast, 3600.0, 1e9));
        let mut state = b.state;
        // Versions start from the project's factor.
        state.projects[p.index()].duration_correction_factor = 1.2;
        assert!((unstarted_duration(&state, slow_job) - 1.2 * 3600.0).abs() < 1e-6);
        // (A factor falls only by smoothing: 50 jobs bring the fast one within 2%.)
        for _ in 0..50 {
            learn_duration_correction(&mut state, slow_job, 2.0 * 3600.0);
            learn_duration_correction(&mut state, fast_job, 0.25 * 3600.0);
        }
        assert!((unstarted_duration(&state, slow_job) - 2.0 * 3600.0).abs() < 0.05 * 3600.0);
        assert!((unstarted_duration(&state, fast_job) - 0.25 * 3600.0).abs() < 0.05 * 3600.0);
        assert_eq!(state.app_version(slow).duration_correction_factor, Some(2.0));
        // The project's single factor jumps up after each slow job and is only smoothed
        // down after a fast one: it overestimates the fast app eightfold.
        let project = state.project(p).duration_correction_factor;
        assert!(project > 1.5, "{project}");
        // Unusable inputs change nothing.
        let before = state.app_version(fast).duration_correction_factor;
        learn_duration_correction(&mut state, fast_job, f64::NAN);
        assert_eq!(state.app_version(fast).duration_correction_factor, before);
    }

    #[test]
    fn bad_app_speed_falls_back_to_host_then_default() {
        let mut b = StateBuilder::new(1);
        let p = b.project("A", 1.0);
        let av = b.app_version(p, cpu(), 0.0);
        let j = b.job(p, av, 0.0, 1e9);
        b.state.workunits[b.state.jobs[j.index()].workunit.index()].rsc_fpops_est = 4e12;
        b.state.host.p_fpops = 4e9;
        assert!((unstarted_duration(&b.state, j) - 1000.0).abs() < 1e-9);
        b.state.host.p_fpops = f64::NAN;
        assert!((unstarted_duration(&b.state, j) - 4e12 / FALLBACK_FLOPS).abs() < 1e-9);
        b.state.workunits[0].rsc_fpops_est = f64::INFINITY;
        assert_eq!(unstarted_duration(&b.state, j), 0.0);
    }

    #[test]
    fn note_5_gpu_job_dynamic_estimate_uses_elapsed_time() {
        // Running 5 min, 25% done, 1 min of CPU: 20 min in all, 15 min left (not 4 min).
        assert_eq!(dynamic_remaining(300.0, 0.25), Some(900.0));
        let mut b = StateBuilder::new(1);
        let p = b.project("A", 1.0);
        let gpu = ResourceUsage { avg_ncpus: 0.2, coprocessor: Some((ResourceType::Nvidia, 1.0)) };
        let av = b.app_version(p, gpu, 1e9);
        let j = b.job(p, av, 1200.0, 1e9);
        started(&mut b.state, j, 300.0, 0.25);
        if let Some(task) = b.state.jobs[j.index()].task.as_mut() {
            task.current_cpu_time = 60.0;
        }
        // Static and dynamic agree at 15 minutes, so the blend does too.
        assert!((remaining_duration(&b.state, j) - 900.0).abs() < 1e-9);
    }

    #[test]
    fn blend_weights_dynamic_by_fraction_done() {
        let mut b = StateBuilder::new(1);
        let p = b.project("A", 1.0);
        let av = b.app_version(p, cpu(), 1e9);
        let j = b.job(p, av, 1000.0, 1e9);
        // Static: 1000 − 100 = 900; dynamic at 50%: 100. Blend: 0.5·100 + 0.5·900.
        started(&mut b.state, j, 100.0, 0.5);
        assert!((remaining_duration(&b.state, j) - 500.0).abs() < 1e-9);
        // No progress report: static only.
        started(&mut b.state, j, 100.0, 0.0);
        assert!((remaining_duration(&b.state, j) - 900.0).abs() < 1e-9);
        // Done according to the app: dynamic only, which is nothing left.
        started(&mut b.state, j, 100.0, 1.0);
        assert_eq!(remaining_duration(&b.state, j), 0.0);
    }

    #[test]
    fn overrun_without_progress_keeps_a_small_positive_remainder() {
        let mut b = StateBuilder::new(1);
        let p = b.project("A", 1.0);
        let av = b.app_version(p, cpu(), 1e9);
        let j = b.job(p, av, 1000.0, 1e9);
        started(&mut b.state, j, 5000.0, 0.0);
        let left = remaining_duration(&b.state, j);
        assert!(left > 0.0 && left <= 5000.0 * OVERRUN_REMAINING_FRACTION + 1e-9, "{left}");
    }

    #[test]
    fn finished_or_nonsense_progress_is_never_negative() {
        let mut b = StateBuilder::new(1);
        let p = b.project("A", 1.0);
        let av = b.app_version(p, cpu(), 1e9);
        let j = b.job(p, av, 1000.0, 1e9);
        started(&mut b.state, j, f64::NAN, f64::INFINITY);
        assert!((remaining_duration(&b.state, j) - 1000.0).abs() < 1e-9);
        started(&mut b.state, j, -5.0, -1.0);
        assert!(remaining_duration(&b.state, j) >= 0.0);
        b.state.jobs[j.index()].state = crate::model::JobState::FilesUploading;
        assert_eq!(remaining_duration(&b.state, j), 0.0);
    }

    #[test]
    fn dcf_jumps_up_on_overrun_and_smooths_otherwise() {
        let mut project = Project::new("A", "http://a/", 1.0);
        // Estimated 100 s with DCF 1, took 200 s: jump to 2.
        update_duration_correction_factor(&mut project, 100.0, 200.0);
        assert!((project.duration_correction_factor - 2.0).abs() < 1e-12);
        // Estimated 200 s (100 s uncorrected × 2), took 100 s: raw ratio 1, smoothed.
        update_duration_correction_factor(&mut project, 200.0, 100.0);
        assert!((project.duration_correction_factor - (2.0 * 0.9 + 0.1)).abs() < 1e-12);
    }

    #[test]
    fn dcf_stays_clamped_and_ignores_garbage() {
        let mut project = Project::new("A", "http://a/", 1.0);
        update_duration_correction_factor(&mut project, 1.0, 1e9);
        assert_eq!(project.duration_correction_factor, DCF_MAX);
        for _ in 0..200 {
            update_duration_correction_factor(&mut project, 1e6, 0.0);
        }
        assert_eq!(project.duration_correction_factor, DCF_MIN);
        update_duration_correction_factor(&mut project, f64::NAN, 10.0);
        update_duration_correction_factor(&mut project, 0.0, 10.0);
        update_duration_correction_factor(&mut project, 10.0, -1.0);
        assert_eq!(project.duration_correction_factor, DCF_MIN);
    }
}
