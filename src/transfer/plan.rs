//! Which transfers start now (BOINC's `start_new_file_xfer` and the persistent
//! transfers' polls): the files jobs wait for come down and the outputs finished jobs
//! produced go up, each when its own backoff and its project's allow, at most
//! `max_file_xfers` at once in each direction and `max_file_xfers_per_project` of one
//! project. A file that cannot be had at all (an executable without a signature, no
//! URL, a size over its own `max_nbytes` or over all the disk BOINC may use) is given up
//! at once instead, and jobs whose files are all present can run. Once the preferences'
//! daily transfer limit is reached (`daily_xfer_limit_mb` over `daily_xfer_period_days`)
//! no new transfer starts until the window moves on; those under way finish.

use super::backoff::project_may_transfer;
use super::job_files::{
    JobChanges, advance_downloading_jobs, advance_uploading_jobs, needed_files, waits_for_files,
};
use super::order::error_codes::{ERR_GIVEUP_DOWNLOAD, ERR_GIVEUP_UPLOAD};
use super::order::{Direction, TransferOrder};
use super::settle::{Settlement, StagedDownload, TransferNotice, backoff_of, give_up, urls_of};
use super::verify::check_before_download;
use crate::Time;
use crate::disk::disk_full;
use crate::model::{
    ClientState, FileId, FileStatus, JobId, JobState, over_transfer_limit, transfer_limit_moves,
};
use serde::{Deserialize, Serialize};

/// How soon downloads held back by a full disk are looked at again, seconds: a live
/// client measures its disk at every poll.
pub const FULL_DISK_RECHECK: f64 = 1.0;

/// What the planner decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransferPlan {
    /// The attempts to start now (already marked in flight).
    pub orders: Vec<TransferOrder>,
    /// Jobs that may run now, or ended because a file they need was given up.
    pub changes: JobChanges,
    /// Lines for the user.
    pub notices: Vec<TransferNotice>,
    /// When a file or project now waiting out a backoff may start (infinity: none
    /// waits). Files held back by the limits start when a transfer ends.
    pub next_check: Time,
}

/// Transfers in flight, per direction: in all, and per project.
struct InFlight {
    total: [u32; 2],
    per_project: Vec<[u32; 2]>,
}

impl InFlight {
    fn count(state: &ClientState) -> InFlight {
        let mut in_flight =
            InFlight { total: [0; 2], per_project: vec![[0; 2]; state.projects.len()] };
        for file in state.files.iter().filter(|f| f.transfer.in_flight) {
            let direction = if file.upload_when_present { 1 } else { 0 };
            in_flight.total[direction] += 1;
            if let Some(project) = in_flight.per_project.get_mut(file.project.index()) {
                project[direction] += 1;
            }
        }
        in_flight
    }
}

/// Decides which transfers start at `now` and marks them in flight; gives up the files
/// that cannot be had and moves on the jobs whose files are settled.
pub fn plan_transfers(state: &mut ClientState, now: Time) -> TransferPlan {
    let mut settlement = Settlement {
        staged: StagedDownload::Keep,
        changes: advance_downloading_jobs(state, None, now),
        notices: Vec::new(),
        retry_at: None,
    };
    settlement.changes.extend(advance_uploading_jobs(state, None, now));
    let mut plan = TransferPlan {
        orders: Vec::new(),
        changes: JobChanges::default(),
        notices: Vec::new(),
        next_check: f64::INFINITY,
    };
    let mut in_flight = InFlight::count(state);
    let full = disk_full(state);
    let prefs = &state.prefs;
    let over_limit = over_transfer_limit(
        &state.daily_transfers,
        prefs.reported.daily_xfer_limit_mb,
        prefs.reported.daily_xfer_period_days,
        now,
    );
    if over_limit {
        plan.next_check = transfer_limit_moves(now);
    }
    for direction in [Direction::Download, Direction::Upload] {
        // Files that cannot be had are given up first: the jobs needing them end, and
        // their other files are no longer wanted.
        for file in wanted_files(state, direction) {
            let usable = match direction {
                Direction::Download => check_before_download(state, file).map_err(|rejection| {
                    (
                        rejection.code(),
                        format!("download of {}: {rejection}", state.file(file).name),
                    )
                }),
                Direction::Upload => Ok(()),
            };
            let usable = usable.and_then(|()| {
                if urls_of(state, file, direction) == 0 {
                    let code = match direction {
                        Direction::Download => ERR_GIVEUP_DOWNLOAD,
                        Direction::Upload => ERR_GIVEUP_UPLOAD,
                    };
                    let name = &state.file(file).name;
                    Err((
                        code,
                        format!("{} of {name}: the project gave no URL for it", direction.name()),
                    ))
                } else {
                    Ok(())
                }
            });
            if let Err((code, message)) = usable {
                give_up(state, file, direction, code, message, now, &mut settlement);
            }
        }
        if over_limit {
            continue;
        }
        for file in wanted_files(state, direction) {
            if let Some(order) =
                start_if_allowed(state, file, direction, &mut in_flight, now, full, &mut plan)
            {
                plan.orders.push(order);
            }
        }
    }
    plan.changes = settlement.changes;
    plan.notices = settlement.notices;
    plan
}

/// The files jobs wait for in `direction`, each once, in file order: inputs and app
/// files of jobs waiting for them (such jobs are marked downloading), outputs of jobs
/// uploading.
fn wanted_files(state: &mut ClientState, direction: Direction) -> Vec<FileId> {
    let mut wanted = vec![false; state.files.len()];
    for index in 0..state.jobs.len() {
        let id = JobId::from_index(index);
        let project = state.project(state.job(id).project);
        if project.suspended || project.detached {
            continue;
        }
        match direction {
            Direction::Download => {
                if !waits_for_files(state, id) {
                    continue;
                }
                let mut any = false;
                for file in needed_files(state, id) {
                    if state
                        .files
                        .get(file.index())
                        .is_some_and(|f| f.status == FileStatus::NotPresent)
                    {
                        wanted[file.index()] = true;
                        any = true;
                    }
                }
                if any && state.jobs[index].state == JobState::New {
                    state.jobs[index].state = JobState::FilesDownloading;
                }
            }
            Direction::Upload => {
                if state.job(id).state != JobState::FilesUploading {
                    continue;
                }
                for reference in &state.jobs[index].output_files {
                    if state.files.get(reference.file.index()).is_some_and(|f| {
                        f.upload_when_present && !f.uploaded && f.status == FileStatus::Present
                    }) {
                        wanted[reference.file.index()] = true;
                    }
                }
            }
        }
    }
    wanted
        .iter()
        .enumerate()
        .filter(|(index, wanted)| **wanted && !state.files[*index].transfer.in_flight)
        .map(|(index, _)| FileId::from_index(index))
        .collect()
}

/// Starts `file`'s next attempt if its backoff, its project's and the limits allow (and,
/// for a download, the disk is not `full`); otherwise notes when it could start.
fn start_if_allowed(
    state: &mut ClientState,
    file: FileId,
    direction: Direction,
    in_flight: &mut InFlight,
    now: Time,
    full: bool,
    plan: &mut TransferPlan,
) -> Option<TransferOrder> {
    let record = state.file(file);
    let project = record.project;
    if record.transfer.next_request_time > now {
        plan.next_check = plan.next_check.min(record.transfer.next_request_time);
        return None;
    }
    if direction == Direction::Download && full {
        // Nothing is fetched onto a full disk; a disk poll looks at the room again.
        plan.next_check = plan.next_check.min(now + FULL_DISK_RECHECK);
        return None;
    }
    let backoff = *backoff_of(state, project, direction);
    if !project_may_transfer(&backoff, now) {
        plan.next_check = plan.next_check.min(backoff.next_time);
        return None;
    }
    let d = match direction {
        Direction::Download => 0,
        Direction::Upload => 1,
    };
    let limits = &state.config;
    let per_project = in_flight.per_project.get(project.index()).map_or(0, |p| p[d]);
    if in_flight.total[d] >= limits.max_file_xfers.max(1)
        || per_project >= limits.max_file_xfers_per_project.max(1)
    {
        return None;
    }
    in_flight.total[d] += 1;
    if let Some(p) = in_flight.per_project.get_mut(project.index()) {
        p[d] += 1;
    }
    let master_url = state.project(project).master_url.clone();
    let max_bytes_sec = match direction {
        Direction::Download => state.prefs.reported.max_bytes_sec_down,
        Direction::Upload => state.prefs.reported.max_bytes_sec_up,
    };
    let record = &mut state.files[file.index()];
    let urls = match direction {
        Direction::Download => &record.download_urls,
        Direction::Upload => &record.upload_urls,
    };
    let url = urls[record.transfer.url_index as usize % urls.len()].clone();
    let transfer = &mut record.transfer;
    transfer.in_flight = true;
    if transfer.first_request_time <= 0.0 {
        transfer.first_request_time = now;
    }
    record.transfer_deferred = false;
    let max_nbytes = match direction {
        Direction::Download if record.nbytes > 0.0 => record.nbytes,
        _ => record.max_nbytes,
    };
    Some(TransferOrder {
        file,
        project,
        direction,
        name: record.name.clone(),
        url,
        path: TransferOrder::project_path(&master_url, &record.name),
        staging_path: match direction {
            Direction::Download => TransferOrder::staging_path_of(&master_url, &record.name),
            Direction::Upload => String::new(),
        },
        nbytes: record.nbytes,
        max_nbytes,
        md5_cksum: record.md5_cksum.clone(),
        executable: record.executable,
        started: now,
        max_bytes_sec,
    })
}
