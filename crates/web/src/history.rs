//! What the client did lately, as the dashboard sees it from the client's event stream
//! (docs/dashboard.md "Schedule", "Metrics"): counters since the dashboard started (RPCs
//! by project and outcome, bytes moved, app restarts, tasks that ended in an error) for
//! `/metrics`, and which task ran when over the last [`WINDOW`] seconds for the schedule
//! page's timeline, drawn as `boinc-rs sim --timeline` draws a run. Every collection is
//! bounded: old runs are forgotten, and past a limit new keys are counted together.

use boinc_core::Time;
use boinc_runtime::runtime::events::ClientEvent;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::mpsc::Receiver;

/// How far back the timeline reaches, seconds.
pub(crate) const WINDOW: Time = 6.0 * 3600.0;
/// The most finished runs kept.
const MAX_RUNS: usize = 20_000;
/// The most tasks running at once, transfers under way, or projects counted apart.
const MAX_KEYS: usize = 4096;
/// The project name counted for keys past [`MAX_KEYS`].
const OTHER: &str = "(others)";

/// A task's run: from `start` to `end` (`None`: still running).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Run {
    pub(crate) job: String,
    pub(crate) project: String,
    pub(crate) start: Time,
    pub(crate) end: Option<Time>,
}

/// The counters and runs.
#[derive(Debug, Default)]
pub(crate) struct History {
    /// When the dashboard began watching (the first event's time).
    pub(crate) since: Option<Time>,
    /// Scheduler RPCs by project name and success.
    pub(crate) rpcs: BTreeMap<(String, bool), u64>,
    /// Bytes moved: downloads, uploads.
    pub(crate) bytes: [u64; 2],
    /// Apps that crashed and were restarted.
    pub(crate) app_restarts: u64,
    /// Tasks that ended in an error, by project name.
    pub(crate) task_errors: BTreeMap<String, u64>,
    /// Actors the client rebuilt after a failure.
    pub(crate) actor_restarts: u64,
    running: HashMap<String, Run>,
    finished: VecDeque<Run>,
    /// Bytes of each transfer under way so far, by (file, upload).
    transfers: HashMap<(String, bool), u64>,
}

/// A key for a bounded map: `key`, unless the map is full and lacks it.
fn bounded<'a, V>(map: &BTreeMap<String, V>, key: &'a str) -> &'a str {
    if map.len() >= MAX_KEYS && !map.contains_key(key) { OTHER } else { key }
}

impl History {
    /// Takes one event in.
    pub(crate) fn take(&mut self, event: &ClientEvent) {
        match event {
            ClientEvent::TaskStarted { time, project, job } => {
                self.since.get_or_insert(*time);
                if self.running.len() < MAX_KEYS || self.running.contains_key(job) {
                    self.running.entry(job.clone()).or_insert_with(|| Run {
                        job: job.clone(),
                        project: project.clone(),
                        start: *time,
                        end: None,
                    });
                }
            }
            ClientEvent::TaskPreempted { time, job, .. } => self.ended(job, *time),
            ClientEvent::TaskFinished { time, project, job, error } => {
                self.ended(job, *time);
                if *error {
                    let key = bounded(&self.task_errors, project).to_owned();
                    *self.task_errors.entry(key).or_default() += 1;
                }
            }
            ClientEvent::TaskRestarting { time, job, .. } => {
                self.ended(job, *time);
                self.app_restarts += 1;
            }
            ClientEvent::RpcDone { time, project, success, .. } => {
                self.since.get_or_insert(*time);
                let known = self.rpcs.contains_key(&(project.clone(), *success));
                let project = if self.rpcs.len() >= MAX_KEYS && !known { OTHER } else { project };
                *self.rpcs.entry((project.to_owned(), *success)).or_default() += 1;
            }
            ClientEvent::TransferProgress { file, upload, bytes, .. } => {
                let key = (file.clone(), *upload);
                if self.transfers.len() < MAX_KEYS || self.transfers.contains_key(&key) {
                    self.transfers.insert(key, *bytes);
                }
            }
            ClientEvent::TransferEnded { file, upload, .. } => {
                let moved = self.transfers.remove(&(file.clone(), *upload)).unwrap_or(0);
                self.bytes[usize::from(*upload)] += moved;
            }
            ClientEvent::ActorRestarted { .. } => self.actor_restarts += 1,
            _ => {}
        }
    }

    fn ended(&mut self, job: &str, time: Time) {
        if let Some(mut run) = self.running.remove(job) {
            run.end = Some(time.max(run.start));
            self.finished.push_back(run);
        }
        while self.finished.len() > MAX_RUNS {
            self.finished.pop_front();
        }
        while self.finished.front().is_some_and(|run| run.end.unwrap_or(time) < time - WINDOW) {
            self.finished.pop_front();
        }
    }

    /// The runs that overlap the last [`WINDOW`] before `now`, oldest first.
    pub(crate) fn runs(&self, now: Time) -> Vec<Run> {
        let mut runs: Vec<Run> = self
            .finished
            .iter()
            .chain(self.running.values())
            .filter(|run| run.end.unwrap_or(now) >= now - WINDOW)
            .cloned()
            .collect();
        runs.sort_by(|a, b| a.start.total_cmp(&b.start).then_with(|| a.job.cmp(&b.job)));
        runs
    }
}

/// The history, shared between its recorder and the routes.
#[derive(Clone, Default)]
pub(crate) struct SharedHistory(Arc<Mutex<History>>);

impl SharedHistory {
    pub(crate) fn lock(&self) -> MutexGuard<'_, History> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes the client's events in until it stops.
    pub(crate) async fn record(self, mut events: Receiver<ClientEvent>) {
        while let Some(event) = events.recv().await {
            self.lock().take(&event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started(time: Time, job: &str) -> ClientEvent {
        ClientEvent::TaskStarted { time, project: "P".into(), job: job.into() }
    }

    #[test]
    fn runs_open_and_close_with_the_tasks() {
        let mut history = History::default();
        history.take(&started(100.0, "a"));
        history.take(&started(110.0, "b"));
        history.take(&ClientEvent::TaskPreempted {
            time: 200.0,
            project: "P".into(),
            job: "a".into(),
            removed_from_memory: false,
        });
        history.take(&started(300.0, "a"));
        let runs = history.runs(400.0);
        let spans: Vec<(&str, Time, Option<Time>)> =
            runs.iter().map(|r| (r.job.as_str(), r.start, r.end)).collect();
        assert_eq!(spans, [("a", 100.0, Some(200.0)), ("b", 110.0, None), ("a", 300.0, None)]);
        assert_eq!(history.since, Some(100.0));
    }

    #[test]
    fn runs_older_than_the_window_are_forgotten() {
        let mut history = History::default();
        history.take(&started(0.0, "old"));
        history.take(&ClientEvent::TaskFinished {
            time: 10.0,
            project: "P".into(),
            job: "old".into(),
            error: true,
        });
        history.take(&started(WINDOW + 100.0, "new"));
        history.take(&ClientEvent::TaskFinished {
            time: WINDOW + 200.0,
            project: "P".into(),
            job: "new".into(),
            error: false,
        });
        let runs = history.runs(WINDOW + 300.0);
        assert_eq!(runs.len(), 1, "{runs:?}");
        assert_eq!(runs[0].job, "new");
        assert_eq!(history.task_errors.get("P"), Some(&1));
    }

    #[test]
    fn rpcs_and_bytes_are_counted() {
        let mut history = History::default();
        for success in [true, true, false] {
            history.take(&ClientEvent::RpcDone {
                time: 1.0,
                project: "P".into(),
                success,
                jobs: 0,
            });
        }
        history.take(&ClientEvent::TransferProgress {
            time: 1.0,
            project: "P".into(),
            file: "in".into(),
            upload: false,
            bytes: 700,
            total: Some(1000),
            rate: 1.0,
        });
        history.take(&ClientEvent::TransferProgress {
            time: 2.0,
            project: "P".into(),
            file: "in".into(),
            upload: false,
            bytes: 1000,
            total: Some(1000),
            rate: 1.0,
        });
        history.take(&ClientEvent::TransferEnded {
            time: 2.0,
            project: "P".into(),
            file: "in".into(),
            upload: false,
            success: true,
            message: String::new(),
        });
        assert_eq!(history.rpcs.get(&("P".to_owned(), true)), Some(&2));
        assert_eq!(history.rpcs.get(&("P".to_owned(), false)), Some(&1));
        assert_eq!(history.bytes, [1000, 0]);
    }

    #[test]
    fn running_tasks_past_the_limit_are_not_kept() {
        let mut history = History::default();
        for i in 0..MAX_KEYS + 10 {
            history.take(&started(1.0, &format!("job{i}")));
        }
        assert_eq!(history.running.len(), MAX_KEYS);
    }
}
