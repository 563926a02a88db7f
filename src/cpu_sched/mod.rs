//! CPU scheduling policy (seed 000 "CPU scheduling policy" with 6.4 note 7, seed 001 for
//! `--policy legacy`, recent estimated credit for `--policy rec`): which runnable jobs
//! should hold the processors, and on which GPU instances.

mod eligibility;
mod instance_pool;
mod run_list;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;

pub(crate) use eligibility::{job_is_non_cpu_intensive, job_may_run, job_usage, may_run};
pub use instance_pool::{FIT_TOLERANCE, InstancePool};
pub use run_list::{
    MultithreadNote, MultithreadOutcome, RunList, RunListEntry, RunListScratch, RunReason,
    make_run_list, make_run_list_with_scratch,
};
