//! BOINC's account manager protocol, the client's side (the `acct_mgr_request` a client
//! POSTs to the manager's `rpc.php`, the `acct_mgr_reply` it gets back, and what the
//! client does about the reply): how volunteers run many hosts from one web account.
//! Pure: the host service sends the request over HTTP, checks the URL signatures with
//! the manager's key, and carries the plan out. A manager's side reads the request and
//! writes the reply with the same types (`boinc-rs project-server` in that role).

mod password;
mod plan;
mod raw_element;
mod reply;
mod request;
mod settings;

pub use password::account_manager_password_hash;
pub use plan::{
    AccountManagerAction, AccountManagerPlan, DEFAULT_REPEAT_SECONDS, Rejection, plan_reply,
};
pub use reply::{
    AccountManagerAccount, AccountManagerReply, parse_acct_mgr_reply, write_acct_mgr_reply,
};
pub use request::{
    AccountManagerProject, AccountManagerRequest, MAX_ACCT_MGR_PROJECTS, parse_acct_mgr_request,
    write_acct_mgr_request,
};
pub use settings::{ACCT_MGR_LOGIN_FILE, ACCT_MGR_URL_FILE, AccountManagerSettings};
