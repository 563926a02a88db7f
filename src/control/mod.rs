//! The client's control loop (seed 000 "CPU scheduling policy" triggers, seed 002 RPC
//! sessions): what the client does at each instant, split from the world it acts on.
//!
//! The emulator drives it directly against an emulated world; the actors drive the same
//! code through messages and effect traits, so both make the same decisions. What
//! crosses to the world at a scheduler RPC is a protocol request and reply
//! ([`build_request`], [`apply_reply`]), as with a real project.

pub mod anonymous_platform;
pub mod app_limits;
pub mod attach;
pub mod client_control;
pub mod clock_change;
pub mod commands;
pub mod configuration;
pub mod cpu_throttle;
pub mod credit;
pub mod host_availability;
pub mod message_log;
mod name_set;
pub mod notice_log;
pub mod reply;
pub mod reply_check;
pub mod request;
pub mod rpc_session;
pub mod state_saving;
pub mod suspend_reason;
pub mod task_program;
pub mod user_action;
pub mod web_prefs;

pub use anonymous_platform::{take_app_info, usable_app_info};
pub use app_limits::{
    ADDRESS_SPACE_FLOOR, ExitUnderLimits, address_space_limit, allocation_failure_reported,
    file_size_limit, limit_behind_exit,
};
pub use attach::{AccountChanges, apply_accounts};
pub use client_control::{
    ClientControl, FETCH_POLL_INTERVAL, REPORT_POLL_INTERVAL, RpcCall, RpcGate,
};
pub use clock_change::clamp_backoffs_to_now;
pub use commands::{HostView, ProcessStatus, TaskCommand, TaskSpec};
pub use configuration::{Configuration, ConfigurationFiles, read_configuration};
pub use cpu_throttle::{CpuThrottle, ThrottleAction, ThrottleStep};
pub use credit::{ReportedCredit, STATISTICS_DAYS, take_credit};
pub use host_availability::{HostConditions, LocalTime, host_view};
pub use message_log::{Message, MessageLog, MessagePriority};
pub use notice_log::{DEFAULT_NOTICE_CAPACITY, NoticeLog};
pub use reply::{
    CodeSignKeyUpdate, EXIT_ABORTED_BY_PROJECT, MAX_JOBS_HELD, ReplyOutcome, ReplyProblem,
    apply_reply, work_reply,
};
pub use reply_check::{ReplyRefusal, check_reply, is_plain_file_name};
pub use request::{
    ANONYMOUS_PLATFORM, CLIENT_BRAND, ClientIdentity, PROTOCOL_VERSION, RequestScratch,
    build_request, build_request_with,
};
pub use rpc_session::{ProjectRpcState, apply_master_fetch, apply_rpc_outcome, client_rng};
pub use state_saving::{SaveDue, SavePolicy, SaveReason, SaveSchedule, durable_digest};
pub use suspend_reason::{SuspendReason, SuspendReasons, reason_code};
pub use task_program::{
    SlotFile, SlotFileRole, TaskBounds, TaskIdentity, TaskProgram, project_dir, slot_dir,
    task_program,
};
pub use user_action::{
    ERR_ABORTED_VIA_GUI, EXIT_ABORTED_VIA_GUI, UserAction, UserActionError, apply_user_action,
    find_job, find_project,
};
pub use web_prefs::web_prefs_update;
