//! Scheduler RPCs and master pages over HTTP (docs/design.md "Protocol facts"; seed 002 "RPC
//! sessions"): a master page is a GET of the project's URL, read for its scheduler URLs;
//! a scheduler RPC is a POST of the `<scheduler_request>` with the headers the real
//! client sends (fixtures/boinc-7.20.5/sched_request_http_headers.txt: `User-Agent:
//! BOINC client (PLATFORM VERSION)`, `Accept: */*`, `Content-Type:
//! application/x-www-form-urlencoded`; no `Accept-Encoding`, as this client takes
//! answers unencoded), whose answer is read, bounded, into a `SchedulerReply`. Every
//! failure is an [`RpcError`]; the backoff is the core's.

use super::exchange::{ExchangeError, read_bounded, send};
use super::settings::{HttpSettings, HttpSetupError};
use super::shared_client::SharedClient;
use super::watch::ExchangeWatch;
use boinc_core::protocol::{MasterPage, SchedulerReply, SchedulerRequest};
use boinc_runtime::effects::{EffectFuture, RpcError, SchedulerTransport};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use std::sync::Arc;

/// The content type the real client gives its scheduler requests.
pub const SCHEDULER_REQUEST_CONTENT_TYPE: &str = "application/x-www-form-urlencoded";

/// Scheduler RPCs and master-page fetches over HTTP.
#[derive(Clone)]
pub struct HttpTransport {
    pub(super) client: SharedClient,
    pub(super) settings: Arc<HttpSettings>,
}

impl HttpTransport {
    /// A transport with `settings`.
    pub fn new(settings: HttpSettings) -> Result<HttpTransport, HttpSetupError> {
        let client = SharedClient::new(settings.client()?, settings.proxy_label());
        Ok(HttpTransport { client, settings: Arc::new(settings) })
    }

    /// A transport sharing `client` (and its connections) with other users.
    pub fn with_client(
        client: impl Into<SharedClient>,
        settings: Arc<HttpSettings>,
    ) -> HttpTransport {
        HttpTransport { client: client.into(), settings }
    }
}

/// A connection that failed through a proxy says so: the proxy, not the project, may
/// be what is down.
fn through(proxy: Option<String>) -> impl Fn(ExchangeError) -> ExchangeError {
    move |error| match (error, &proxy) {
        (ExchangeError::Connect(reason), Some(proxy)) => ExchangeError::Connect(format!(
            "{reason}; through the proxy {proxy}: is it running, and are its host, port, \
             user and password right?"
        )),
        (error, _) => error,
    }
}

/// The RPC error for an exchange with `url` that failed with `error`.
pub(super) fn rpc_error(url: &str, error: ExchangeError) -> RpcError {
    let url = url.to_owned();
    match error {
        ExchangeError::Connect(reason) => RpcError::Connect { url, reason },
        ExchangeError::Stalled(reason) => RpcError::Timeout { url, reason },
        ExchangeError::Redirects => {
            RpcError::TooManyRedirects { url, limit: super::settings::MAX_REDIRECTS }
        }
        ExchangeError::Interrupted(reason) => RpcError::Interrupted { url, reason },
        ExchangeError::Http(status) => RpcError::Http { url, status },
        ExchangeError::TooLarge(limit) => RpcError::TooLarge { url, limit },
    }
}

impl SchedulerTransport for HttpTransport {
    fn scheduler_rpc(
        &self,
        url: &str,
        request: &SchedulerRequest<'static>,
    ) -> EffectFuture<Result<SchedulerReply, RpcError>> {
        let body = request.to_xml();
        let (client, proxy) = self.client.in_force();
        let settings = self.settings.clone();
        let url = url.to_owned();
        Box::pin(async move {
            let mut watch = ExchangeWatch::new(&settings);
            let request = client
                .post(&url)
                .header(ACCEPT, "*/*")
                .header(CONTENT_TYPE, SCHEDULER_REQUEST_CONTENT_TYPE)
                .body(body);
            let response = send(request, &mut watch)
                .await
                .map_err(through(proxy))
                .map_err(|e| rpc_error(&url, e))?;
            let bytes = read_bounded(response, settings.max_scheduler_reply, &mut watch)
                .await
                .map_err(|e| rpc_error(&url, e))?;
            let text = String::from_utf8_lossy(&bytes);
            SchedulerReply::from_xml(&text).map_err(|error| RpcError::Malformed {
                url: url.clone(),
                what: "scheduler reply".into(),
                problem: error.to_string(),
            })
        })
    }

    fn master_page(&self, url: &str) -> EffectFuture<Result<MasterPage, RpcError>> {
        let (client, proxy) = self.client.in_force();
        let settings = self.settings.clone();
        let url = url.to_owned();
        Box::pin(async move {
            let mut watch = ExchangeWatch::new(&settings);
            let response = send(client.get(&url).header(ACCEPT, "*/*"), &mut watch)
                .await
                .map_err(through(proxy))
                .map_err(|e| rpc_error(&url, e))?;
            let bytes = read_bounded(response, settings.max_master_page, &mut watch)
                .await
                .map_err(|e| rpc_error(&url, e))?;
            Ok(MasterPage::parse(&String::from_utf8_lossy(&bytes)))
        })
    }
}
