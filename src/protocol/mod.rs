//! BOINC XML formats (docs/design.md "Protocol facts"): the state files read into the model
//! (client_state.xml, account files, global_prefs.xml and its override, cc_config.xml),
//! the scheduler RPC's messages in both directions (the request the client writes, the
//! reply a project answers, the master page that names its schedulers), the app API's
//! texts ([`app_api`]: shared-memory messages, init_data.xml, link files), GUI RPC
//! ([`gui_rpc`]), account managers ([`acct_mgr`]) and code signing ([`code_signing`]:
//! keys, signatures, their checks). Pure functions over text; the caller reads and
//! sends.

mod account;
pub mod acct_mgr;
pub mod app_api;
mod app_config;
mod app_description;
mod app_info;
mod cc_config;
mod client_state;
mod client_state_writer;
pub mod code_signing;
mod cuda_prop;
mod daily_transfers;
pub mod data_dir;
mod data_server;
mod error;
mod file_description;
mod file_ref;
pub mod gui_rpc;
mod host_info;
mod host_report;
mod job_description;
mod list_counts;
mod master_page;
mod notices;
mod opencl_prop;
pub mod platform;
mod prefs;
mod project;
mod project_init;
mod proxy_info;
mod queue_report;
mod reported_result;
mod request_refill;
mod scheduler_reply;
mod scheduler_request;
mod server_message;
mod state_files;
mod statistics_file;
mod values;
pub mod web_rpc;
mod xml_out;
mod xml_tree;
mod xml_write;

pub use account::{Account, parse_account, write_account};
pub use app_config::read_app_config;
pub use app_description::{AppDescription, AppVersionDescription, CoprocessorUsage};
pub use app_info::{AppInfo, MAX_APP_INFO_ENTRIES, read_app_info};
pub use cc_config::{parse_cc_config, read_cc_config};
pub use client_state::{parse_client_state, parse_client_state_with_warnings};
pub use client_state_writer::{StateFileOrigin, write_client_state};
pub use daily_transfers::{
    DAILY_TRANSFER_FILE, read_daily_transfer_file, write_daily_transfer_file,
};
pub use data_server::{
    DataServerError, DataServerReply, DataServerRequest, FILE_SIZE_QUERY_THRESHOLD, FileUpload,
    MAX_DATA_SERVER_HEADER,
};
pub use error::{XmlError, XmlProblem};
pub use file_description::FileDescription;
pub use file_ref::FileReference;
pub use host_report::{DiskUsageReport, GpuReport, HostInfo, TimeStatsReport};
pub use job_description::{ResultDescription, WorkunitDescription};
pub use master_page::{MAX_SCHEDULER_URLS, MAX_URL_LEN, MasterPage};
pub use notices::{
    MAX_FEED_BYTES, MAX_FEED_ITEMS, MAX_PROJECT_FEEDS, MIN_POLL_INTERVAL, Notice, RssFeed,
    check_feed_url, parse_rss, read_archive, read_feed_list, write_archive, write_feed_list,
    write_rss,
};
pub use prefs::{
    parse_global_prefs, read_global_prefs, read_global_prefs_in_venue, web_prefs_content,
    web_prefs_document, web_prefs_mod_time, working_prefs_text,
};
pub use project_init::{ProjectInit, read_project_init};
pub use proxy_info::{parse_proxy_info, with_proxy_info};
pub use queue_report::{InProgressResult, OtherResult, StickyFile};
pub use reported_result::{OutputFile, ReportedResult, describe_file_error};
pub use scheduler_reply::{
    MAX_REPLY_APPS, MAX_REPLY_FILE_DELETIONS, MAX_REPLY_FILES, MAX_REPLY_JOBS, MAX_REPLY_MESSAGES,
    MAX_REPLY_RESULT_NAMES, SchedulerReply,
};
pub use scheduler_request::{ClientVersion, MAX_LISTED, SchedulerRequest};
pub use server_message::{MessagePriority, NoWorkReason, ServerMessage};
pub use state_files::{SourceText, StateFiles, load_state, load_state_with_warnings};
pub use statistics_file::{MAX_STATISTICS_DAYS, read_statistics_file, write_statistics_file};
pub use xml_tree::MAX_ELEMENT_TEXT;
