//! The account manager RPC over HTTP (BOINC's account manager protocol; issue "GUI RPC
//! server", account managers): the `<acct_mgr_request>` POSTed to the manager's URL +
//! `rpc.php`, as the real client posts it, and the `<acct_mgr_reply>` read back, bounded,
//! over the same HTTP client, proxies and stall timeout as scheduler RPCs.

use super::exchange::{read_bounded, send};
use super::transport::{HttpTransport, SCHEDULER_REQUEST_CONTENT_TYPE, rpc_error};
use super::watch::ExchangeWatch;
use boinc_core::protocol::acct_mgr::{
    AccountManagerReply, AccountManagerRequest, parse_acct_mgr_reply, write_acct_mgr_request,
};
use boinc_runtime::effects::RpcError;
use reqwest::header::{ACCEPT, CONTENT_TYPE};

/// The largest account manager reply read: a list of accounts with signed URLs, a few
/// kilobytes per project, and preferences.
pub const MAX_ACCOUNT_MANAGER_REPLY: u64 = 1 << 20;

/// The URL a manager at `manager_url` answers requests on.
pub fn account_manager_rpc_url(manager_url: &str) -> String {
    format!("{}/rpc.php", manager_url.trim_end_matches('/'))
}

impl HttpTransport {
    /// Sends `request` to the account manager at `manager_url` and reads its reply.
    pub async fn account_manager_rpc(
        &self,
        manager_url: &str,
        request: &AccountManagerRequest,
    ) -> Result<AccountManagerReply, RpcError> {
        let url = account_manager_rpc_url(manager_url);
        let mut watch = ExchangeWatch::silent(&self.settings);
        let post = self
            .client
            .get()
            .post(&url)
            .header(ACCEPT, "*/*")
            .header(CONTENT_TYPE, SCHEDULER_REQUEST_CONTENT_TYPE)
            .body(write_acct_mgr_request(request));
        let response = send(post, &mut watch).await.map_err(|e| rpc_error(&url, e))?;
        let bytes = read_bounded(response, MAX_ACCOUNT_MANAGER_REPLY, &mut watch)
            .await
            .map_err(|e| rpc_error(&url, e))?;
        parse_acct_mgr_reply(&String::from_utf8_lossy(&bytes)).map_err(|error| {
            RpcError::Malformed {
                url: url.clone(),
                what: "account manager reply".into(),
                problem: error.to_string(),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_go_to_rpc_php_under_the_managers_url() {
        assert_eq!(account_manager_rpc_url("http://a.org/am/"), "http://a.org/am/rpc.php");
        assert_eq!(account_manager_rpc_url("http://a.org/am"), "http://a.org/am/rpc.php");
    }
}
