//! Proxies from the environment (issue "Talking to real project servers", item 1): a
//! client whose settings name no proxy sends its requests through the one `http_proxy`
//! names, as reqwest reads it. Alone in its test binary, because the environment is
//! the whole process's.

mod support;

use boinc_core::control::ClientIdentity;
use boinc_core::model::{CcConfig, ProxyChoice};
use boinc_runtime::effects::SchedulerTransport;
use boinc_service::http::{HttpSettings, HttpTransport};
use support::http::{TestServer, block_on};

#[test]
fn the_proxy_the_environment_names_carries_the_requests() {
    let proxy = TestServer::start();
    // SAFETY: this test binary has this one test; no other thread reads the
    // environment while it is changed.
    unsafe {
        for name in ["no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY", "HTTP_PROXY"] {
            std::env::remove_var(name);
        }
        std::env::set_var("http_proxy", proxy.url(""));
    }
    let settings = HttpSettings::new(&CcConfig::default(), &ClientIdentity::default());
    assert_eq!(settings.proxy.choice(), ProxyChoice::Environment);
    let transport = HttpTransport::new(settings).expect("a transport");
    // A host no resolver knows: only the proxy can answer.
    let page = block_on(transport.master_page("http://project.invalid/master"))
        .expect("the proxy answers");
    assert_eq!(page.scheduler_urls, [proxy.url("/cgi")]);
    let asked = proxy.last_request().expect("the proxy was asked");
    assert_eq!(asked.uri, "http://project.invalid/master");
}
