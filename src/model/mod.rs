//! The client's data model (seed 000 "Concepts and terms", seed 003 "Terminology"):
//! host and processing resources, projects, apps, app versions, workunits, jobs, files,
//! preferences, and the result and project predicates the policies are written in.

mod app;
mod app_config;
mod client_state;
mod cuda_properties;
mod daily_transfers;
mod host;
mod ids;
mod job;
pub mod log_flags;
mod opencl;
mod predicates;
mod prefs;
mod project;
mod project_labels;
mod proxy;
mod resource;
mod synthetic;
mod workunit;

pub use app::{App, AppEmulation, AppFiles, AppVersion, ResourceUsage};
pub use app_config::{AppConfig, AppSettings, AppVersionSettings, project_running};
pub use client_state::{ClientState, RunMode};
pub use cuda_properties::CudaProperties;
pub use daily_transfers::{
    DAILY_TRANSFER_DAYS, DailyTransfer, day_of, over_transfer_limit, record_transfer,
    transfer_limit_moves,
};
pub use host::{
    BENCHMARK_PERIOD, DEFAULT_SPELL, Host, HostDescription, LATE_REPORT_RISK, MAX_CPUS,
    MAX_GPU_INSTANCES, MAX_INSTANCE_FLOPS, NetStats, TimeStats, TimeTotals,
};
pub use ids::{AppId, AppVersionId, FileId, JobId, ProjectId, WorkunitId};
pub use job::{ActiveTask, Job, JobState, ProcessUsage, SchedulerState, TaskPeaks};
pub use opencl::OpenclDevice;
pub use predicates::ProjectFacts;
pub(crate) use predicates::is_positive_finite;
pub use prefs::{
    CcConfig, DEFAULT_DISK_INTERVAL, DEFAULT_MAX_STDOUT_FILE_SIZE, DayPrefs, GpuExclusion,
    MIN_WORK_BUFFER_SECONDS, Prefs, ReportedPrefs, SECONDS_PER_DAY, TimeWindow,
};
pub use project::{
    Availability, DailyStatistics, DeletionPolicy, Project, ProjectAccount, ProjectResource,
    TransferBackoff, TransferBackoffs,
};
pub use project_labels::project_labels;
pub use proxy::{DEFAULT_PROXY_PORT, ProxyChoice, ProxyInfo};
pub use resource::{Coprocessor, GPU_PEAK_FLOPS_SCALE, ResourceMap, ResourceType};
pub use synthetic::{SyntheticHost, synthetic_host};
pub use workunit::{FileInfo, FileRef, FileStatus, FileTransferState, Workunit};
