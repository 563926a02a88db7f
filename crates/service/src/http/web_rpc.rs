//! A project's web RPCs over HTTP (docs/design.md "Protocol facts", web RPCs): a GET of
//! `<master URL><page>?<query>` (`lookup_account.php`, `create_account.php`,
//! `get_project_config.php`), its answer read as it streams under
//! [`MAX_WEB_RPC_REPLY`] and within [`WEB_RPC_TIMEOUT`]. What the answer says is the
//! core's to read (`protocol::web_rpc`).

use boinc_core::protocol::web_rpc::MAX_WEB_RPC_REPLY;
use std::time::Duration;

/// The longest a web RPC may take, connecting and reading.
pub const WEB_RPC_TIMEOUT: Duration = Duration::from_secs(60);

/// The answer of `page` under `master_url` with `query`, or why there is none.
pub async fn project_web_rpc(
    http: &reqwest::Client,
    master_url: &str,
    page: &str,
    query: &[(&str, String)],
) -> Result<String, String> {
    let base =
        if master_url.ends_with('/') { master_url.to_owned() } else { format!("{master_url}/") };
    let url = format!("{base}{page}");
    let exchange = async {
        let mut response = http
            .get(&url)
            .query(query)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|error| format!("{url}: {error}"))?;
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|error| error.to_string())? {
            if body.len() + chunk.len() > MAX_WEB_RPC_REPLY {
                return Err(format!("{url}: the answer is larger than {MAX_WEB_RPC_REPLY} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(String::from_utf8_lossy(&body).into_owned())
    };
    tokio::time::timeout(WEB_RPC_TIMEOUT, exchange)
        .await
        .map_err(|_| format!("{url}: no answer within {} s", WEB_RPC_TIMEOUT.as_secs()))?
}
