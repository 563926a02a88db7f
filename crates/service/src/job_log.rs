//! `job_log_<project>.txt`: a line per finished job, appended when the job is ready to
//! report, in BOINC's format so that tools reading BOINC's job logs read ours:
//! `<completed time> ue <estimated seconds> ct <CPU seconds> fe <flops estimate> nm
//! <name> et <elapsed seconds> es <exit status>`. The log is written beside the state
//! (after each save that finds newly finished jobs), appended to, never rewritten.

use boinc_core::model::{ClientState, Job};
use boinc_core::protocol::data_dir::job_log_file_name;
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

/// The jobs already logged, by name, so that each finished job is logged once.
#[derive(Debug, Default)]
pub(crate) struct JobLog {
    logged: HashSet<String>,
}

impl JobLog {
    /// A log that takes every job already finished in `loaded` (the state read at start)
    /// as logged: a restart logs no job twice.
    pub(crate) fn new(loaded: Option<&ClientState>) -> Self {
        let logged = loaded
            .map(|state| {
                state.jobs.iter().filter(|j| j.ready_to_report).map(|j| j.name.clone()).collect()
            })
            .unwrap_or_default();
        JobLog { logged }
    }

    /// Appends a line for each job of `state` that became ready to report since the last
    /// call, to its project's log in `dir`; forgets the jobs the state no longer holds.
    pub(crate) fn append_finished(
        &mut self,
        dir: &Path,
        state: &ClientState,
    ) -> std::io::Result<()> {
        let mut lines: Vec<(usize, String)> = Vec::new();
        for job in state.jobs.iter().filter(|j| j.ready_to_report) {
            if self.logged.contains(&job.name) {
                continue;
            }
            lines.push((job.project.index(), entry(state, job)));
        }
        lines.sort_by_key(|(project, _)| *project);
        for project_lines in lines.chunk_by(|a, b| a.0 == b.0) {
            let Some(project) = state.projects.get(project_lines[0].0) else { continue };
            let path = dir.join(job_log_file_name(&project.master_url));
            let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&path)?;
            let text: String = project_lines.iter().map(|(_, line)| line.as_str()).collect();
            file.write_all(text.as_bytes())?;
        }
        for job in state.jobs.iter().filter(|j| j.ready_to_report) {
            self.logged.insert(job.name.clone());
        }
        // Jobs reported and gone from the state need not be remembered.
        if self.logged.len() > state.jobs.len() {
            let held: HashSet<&str> = state.jobs.iter().map(|j| j.name.as_str()).collect();
            self.logged.retain(|name| held.contains(name.as_str()));
        }
        Ok(())
    }
}

/// One job's line: when it ended, the estimate it started with (seconds, before any
/// correction), its CPU and elapsed seconds, its flops estimate, its name, its exit
/// status.
fn entry(state: &ClientState, job: &Job) -> String {
    let workunit = state.workunits.get(job.workunit.index());
    let fpops = workunit.map_or(0.0, |w| w.rsc_fpops_est);
    let flops = job.app_version.map_or(0.0, |v| state.app_version(v).flops);
    let estimate = if flops > 0.0 { fpops / flops } else { 0.0 };
    format!(
        "{:.0} ue {:.6} ct {:.6} fe {:.0} nm {} et {:.6} es {}\n",
        job.completed_time,
        estimate,
        job.final_cpu_time,
        fpops,
        job.name,
        job.final_elapsed_time,
        job.exit_status
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use boinc_core::model::{JobState, SyntheticHost, synthetic_host};

    fn finish(state: &mut ClientState, index: usize, now: f64) {
        let job = &mut state.jobs[index];
        job.state = JobState::FilesUploaded;
        job.ready_to_report = true;
        job.completed_time = now;
        job.final_cpu_time = 590.5;
        job.final_elapsed_time = 600.25;
    }

    #[test]
    fn each_finished_job_is_logged_once_in_boincs_format() {
        let dir = tempfile::tempdir().expect("dir");
        let mut state = synthetic_host(SyntheticHost {
            ncpus: 2,
            njobs: 4,
            running_prefix: 0,
            seed: 1,
            now: 0.0,
        });
        let mut log = JobLog::new(Some(&state));
        log.append_finished(dir.path(), &state).expect("nothing to log");
        finish(&mut state, 0, 1_700_000_000.0);
        log.append_finished(dir.path(), &state).expect("logged");
        log.append_finished(dir.path(), &state).expect("not twice");
        let job = &state.jobs[0];
        let url = &state.projects[job.project.index()].master_url;
        let text = std::fs::read_to_string(dir.path().join(job_log_file_name(url))).expect("log");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1, "{text}");
        let fields: Vec<&str> = lines[0].split(' ').collect();
        assert_eq!(fields[0], "1700000000");
        let keys: Vec<&str> = fields[1..].iter().step_by(2).copied().collect();
        assert_eq!(keys, ["ue", "ct", "fe", "nm", "et", "es"]);
        assert_eq!(
            (fields[4], fields[8], fields[10]),
            ("590.500000", job.name.as_str(), "600.250000")
        );
        // A restart takes the jobs already finished as logged.
        let mut again = JobLog::new(Some(&state));
        again.append_finished(dir.path(), &state).expect("nothing new");
        assert_eq!(
            std::fs::read_to_string(dir.path().join(job_log_file_name(url))).expect("log"),
            text
        );
    }
}
