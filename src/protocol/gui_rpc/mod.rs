//! BOINC's GUI RPC protocol, the pure part (docs/design.md "Protocol facts", GUI RPC; the
//! fixtures gui_rpc_samples.txt, gui_rpc_edge_cases.txt and
//! gui_rpc_get_state_with_projects.txt): reading a request into an [`Operation`],
//! and rendering every reply body from a [`ClientView`] of the client and its event
//! log. The server that frames, authenticates and carries operations out is
//! `boinc_gui_rpc`.

mod cc_status;
mod client_state;
mod disk_usage;
mod host_info;
mod messages;
mod operation;
mod project_status;
mod reply;
mod reply_reader;
mod request;
mod request_writer;
mod results;
mod statistics;
mod transfers;
mod view;

pub use operation::{
    Access, AccountManagerTarget, AccountRequest, ModeChange, Operation, ProjectAction,
    ResultAction, TransferAction,
};
pub use reply::{
    TERMINATOR, account_manager_info, account_manager_rpc_poll, account_out, authorized, error,
    frame_reply, missing_request, nonce, project_attach_poll, project_config, project_init_status,
    proxy_info, render_query, server_version, success, unauthorized, unrecognized,
};
pub use reply_reader::{
    AccountManagerInfoLine, AccountManagerRpcLine, CcStatusLine, ProjectLine, ReplyOutcome,
    TaskLine, read_account_manager_info, read_account_manager_rpc, read_cc_status,
    read_client_time, read_nonce, read_outcome, read_projects, read_tasks,
};
pub use request::{ArgumentError, Request, parse_request};
pub use request_writer::write_request;
pub use view::{ClientView, ModeStatus, Modes, PROTOCOL_VERSION, ProtocolVersion};
