//! BOINC's app API, the pure part (docs/design.md "Protocol facts", App API): what a client
//! and an app say to each other through the slot directory. The shared-memory channels
//! and their messages, `init_data.xml`, link files, and the files an app leaves when it
//! ends. The client's side lives in boinc-service's live process host, the app's side in
//! its `app_api` module; both read and write these texts through this module.

mod app_status;
mod channel;
mod error;
mod exit_files;
mod fragment;
mod heartbeat;
mod init_data;
mod link_file;
mod process_control;
mod slot_files;

pub use app_status::AppStatusMessage;
pub use channel::{
    CHANNEL_COUNT, CHANNEL_SIZE, Channel, MAX_MESSAGE_LEN, MMAP_FILE_NAME, SHARED_MEMORY_SIZE,
    encode_message, has_message, message_text,
};
pub use error::AppMessageError;
pub use exit_files::{
    DEFAULT_TEMPORARY_EXIT_DELAY, FINISH_FILE, FinishFile, MAX_TEMPORARY_EXIT_DELAY,
    TEMPORARY_EXIT_FILE, TemporaryExit,
};
pub use heartbeat::Heartbeat;
pub use init_data::{COMPATIBLE_CLIENT_VERSION, INIT_DATA_FILE, InitData, InitHostInfo};
pub use link_file::{parse_soft_link, slot_to_project_path, soft_link};
pub use process_control::ProcessControl;
pub use slot_files::{LOCK_FILE, STDERR_FILE, STDERR_FILE_LIMIT, STDERR_REPORT_BYTES};
