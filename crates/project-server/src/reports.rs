//! Reported results (docs/design.md "Protocol facts": `result_ack` lets the client forget a
//! reported result): each report is counted, acknowledged (also a repeated one, or one
//! of a result the project never made, so the client stops sending it), and a first
//! report is validated in the simplest way: a result the client says succeeded is valid
//! when its output arrived and is not empty.

use super::records::{JobStatus, Outcome, ProjectRecords, STORED_STDERR_BYTES, StoredReport};
use boinc_core::protocol::ReportedResult;

/// BOINC's result state for a job whose outputs are all uploaded (`RESULT_FILES_UPLOADED`).
const FILES_UPLOADED: i64 = 5;

/// What a report was.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Report {
    /// A first report, with the verdict.
    First(Outcome),
    /// A result reported before.
    Repeated,
    /// A result the project never made.
    Unknown,
}

/// Takes one reported result from `hostid` at `now` into the records.
pub(crate) fn take_report(
    records: &mut ProjectRecords,
    hostid: u64,
    result: &ReportedResult,
    now: f64,
) -> Report {
    let uploads = &records.uploads;
    let Some(job) = records.jobs.get_mut(result.name.as_ref()) else {
        records.counters.unknown_reports += 1;
        return Report::Unknown;
    };
    job.times_reported += 1;
    if matches!(job.status, JobStatus::Reported { .. }) {
        records.counters.duplicate_reports += 1;
        return Report::Repeated;
    }
    let counters = &mut records.counters;
    counters.results_received += 1;
    let outcome = if result.exit_status != 0 || result.state != FILES_UPLOADED {
        counters.results_failed += 1;
        Outcome::ClientError { exit_status: result.exit_status }
    } else {
        match uploads.get(&job.output) {
            Some(upload) if upload.nbytes > 0 => {
                counters.results_validated += 1;
                Outcome::Valid
            }
            Some(_) => {
                counters.results_invalid += 1;
                Outcome::Invalid { reason: "the output is empty".into() }
            }
            None => {
                counters.results_invalid += 1;
                Outcome::Invalid { reason: "the output never arrived".into() }
            }
        }
    };
    job.status = JobStatus::Reported { hostid, received: now, outcome: outcome.clone() };
    job.report = Some(stored_report(result));
    Report::First(outcome)
}

/// What the records keep of a first report: its figures, and its stderr cut to what a
/// BOINC project's database holds (the client's own cut is at 63 KB of the app's text;
/// a hostile client's longer text is cut here, at a character boundary).
fn stored_report(result: &ReportedResult) -> StoredReport {
    let text = result.stderr_out.as_ref();
    let mut end = text.len().min(STORED_STDERR_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    StoredReport {
        exit_status: result.exit_status,
        cpu_time: result.final_cpu_time,
        elapsed_time: result.final_elapsed_time,
        peak_working_set_size: result.final_peak_working_set_size.unwrap_or(0.0),
        peak_swap_size: result.final_peak_swap_size.unwrap_or(0.0),
        peak_disk_usage: result.final_peak_disk_usage.unwrap_or(0.0),
        stderr_out: text[..end].to_owned(),
    }
}
