//! The proxy a volunteer sets (cc_config's `<proxy_info>`, BOINC Manager's proxy dialog
//! over GUI RPC): the host service (`boinc-rs run` in this process, attached to the real
//! `boinc-rs project-server`) sends its scheduler RPC and its downloads through a real
//! HTTP proxy that asks for a password (Debian's tinyproxy), then, once
//! `set_proxy_settings` names a SOCKS5 proxy with a password (Debian's microsocks),
//! through that one at once, with the setting kept in cc_config.xml; with the SOCKS5
//! proxy stopped, the RPC fails and the project is never reached around it. Each proxy
//! counts what it carried in its own log.

use crate::support;

use boinc_gui_rpc::{GuiRpcClient, PASSWORD_FILE};
use boinc_service::account_files::write_account_file;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use support::in_process::InProcessService;
use support::peer_port::start_on_an_unused_port;
use support::project_server::ProjectServerProcess;
use support::wait::wait_until;

const PASSWORD: &str = "proxy-test-password";
/// The longest the first RPC and the app's download take.
const WORK_WAIT: Duration = Duration::from_secs(120);
/// The longest a proxy takes to listen.
const PROXY_START: Duration = Duration::from_secs(10);

/// A proxy process, stopped when dropped, whose log counts what it carried.
struct Proxy {
    child: Child,
    log: PathBuf,
    port: u16,
}

impl Proxy {
    /// Starts `command` (given its port), waits until the port takes connections.
    fn start(what: &str, dir: &Path, command: impl Fn(u16, &Path) -> Command) -> Proxy {
        start_on_an_unused_port(what, |port| {
            let log = dir.join(format!("{what}-{port}.log"));
            let out = std::fs::File::create(&log).map_err(|e| e.to_string())?;
            let mut child = command(port, &log)
                .stdin(Stdio::null())
                .stdout(out.try_clone().map_err(|e| e.to_string())?)
                .stderr(out)
                .spawn()
                .map_err(|e| format!("{what} does not start: {e}"))?;
            let listening = support::wait::holds_within(PROXY_START, || {
                std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
                    || matches!(child.try_wait(), Ok(Some(_)))
            });
            match child.try_wait() {
                Ok(None) if listening => Ok(Proxy { child, log, port }),
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    Err(std::fs::read_to_string(&log).unwrap_or_default())
                }
            }
        })
    }

    /// Lines of its log that contain `needle`.
    fn count(&self, needle: &str) -> usize {
        std::fs::read_to_string(&self.log).unwrap_or_default().matches(needle).count()
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop();
    }
}

/// tinyproxy in the foreground on `port`, asking for user `web` and password `w3b`.
fn tinyproxy(dir: &Path) -> Proxy {
    Proxy::start("tinyproxy", dir, |port, log| {
        let config = log.with_extension("conf");
        let text = format!(
            "Port {port}\nListen 127.0.0.1\nTimeout 60\nLogLevel Connect\nLogFile \"{}\"\n\
             MaxClients 50\nBasicAuth web w3b\n",
            log.with_extension("requests").display()
        );
        std::fs::write(&config, text).expect("tinyproxy's configuration");
        let mut command = Command::new("tinyproxy");
        command.arg("-d").arg("-c").arg(&config);
        command
    })
}

/// microsocks on `port`, asking for user `sox` and password `s0x`.
fn microsocks(dir: &Path) -> Proxy {
    Proxy::start("microsocks", dir, |port, _| {
        let mut command = Command::new("microsocks");
        command.args(["-i", "127.0.0.1", "-p", &port.to_string(), "-u", "sox", "-P", "s0x"]);
        command
    })
}

fn gui_rpc(service: &InProcessService, request: &str) -> String {
    service.runtime.block_on(async {
        let mut client = GuiRpcClient::connect(&service.gui_rpc).await.expect("connects");
        client.authenticate(PASSWORD).await.expect("authenticated");
        client.call(request).await.expect("a reply")
    })
}

#[test]
#[cfg_attr(
    not(peer_proxies),
    ignore = "tinyproxy or microsocks is not installed: apt-get install tinyproxy microsocks"
)]
fn every_request_goes_through_the_proxy_the_volunteer_sets() {
    let server = ProjectServerProcess::start(&["--job-seconds", "600", "--request-delay", "1"]);
    let proxies = tempfile::tempdir().expect("a directory for the proxies");
    let http = tinyproxy(proxies.path());
    let dir = tempfile::tempdir().expect("a data directory");
    std::fs::write(dir.path().join(PASSWORD_FILE), PASSWORD).expect("the password");
    std::fs::write(
        dir.path().join("cc_config.xml"),
        format!(
            "<cc_config>\n<options>\n<proxy_info>\n<use_http_proxy/>\n<use_http_auth/>\n\
             <http_server_name>127.0.0.1</http_server_name>\n\
             <http_server_port>{}</http_server_port>\n<http_user_name>web</http_user_name>\n\
             <http_user_passwd>w3b</http_user_passwd>\n</proxy_info>\n</options>\n\
             </cc_config>\n",
            http.port
        ),
    )
    .expect("cc_config.xml");
    write_account_file(dir.path(), &server.url, "proxy_test_key").expect("attached");
    let service = InProcessService::start(dir.path());

    // The first RPC and the app's download, both through the HTTP proxy.
    let requests = |proxy: &Proxy, what: &str| {
        let log = std::fs::read_to_string(proxy.log.with_extension("requests")).unwrap_or_default();
        log.lines().filter(|l| l.contains("Request (") && l.contains(what)).count()
    };
    let cgi = format!("POST {}", server.url.trim_end_matches('/'));
    wait_until("an RPC and a download through the HTTP proxy", WORK_WAIT, || {
        requests(&http, &cgi) >= 1
            && requests(&http, "/download/") >= 1
            && server.counter("download_bytes") > 0
    });
    let via_http = (requests(&http, &cgi), requests(&http, "/download/"));
    eprintln!("through tinyproxy: {} POSTs, {} downloads", via_http.0, via_http.1);
    assert!(via_http.1 >= 1, "no download went through the proxy");
    assert!(server.counter("scheduler_requests") >= 1);
    let shown = gui_rpc(&service, "<get_proxy_settings/>");
    assert!(shown.contains("<use_http_proxy/>"), "{shown}");
    assert!(shown.contains(&format!("<http_server_port>{}</http_server_port>", http.port)));

    // The Manager's dialog switches to SOCKS5: kept in cc_config.xml, used at once.
    let mut socks = microsocks(proxies.path());
    let set = gui_rpc(
        &service,
        &format!(
            "<set_proxy_settings>\n<proxy_info>\n<use_socks_proxy/>\n\
             <socks_server_name>127.0.0.1</socks_server_name>\n\
             <socks_server_port>{}</socks_server_port>\n<socks5_user_name>sox</socks5_user_name>\n\
             <socks5_user_passwd>s0x</socks5_user_passwd>\n</proxy_info>\n</set_proxy_settings>\n",
            socks.port
        ),
    );
    assert!(set.contains("<success/>"), "{set}");
    let kept = std::fs::read_to_string(dir.path().join("cc_config.xml")).expect("cc_config.xml");
    assert!(kept.contains("<use_socks_proxy/>") && !kept.contains("<use_http_proxy/>"), "{kept}");
    let shown = gui_rpc(&service, "<get_proxy_settings/>");
    assert!(shown.contains(&format!("<socks_server_port>{}</socks_server_port>", socks.port)));
    let messages_with = |text: &str| {
        let messages = gui_rpc(&service, "<get_messages>\n<seqno>0</seqno>\n</get_messages>\n");
        messages.matches(text).count()
    };
    let completed = || messages_with("Scheduler request completed");
    let before = (server.counter("scheduler_requests"), requests(&http, &cgi), completed());
    let update =
        format!("<project_update>\n<project_url>{}</project_url>\n</project_update>\n", server.url);
    let server_port =
        server.url.trim_end_matches('/').rsplit(':').next().expect("a port").to_owned();
    let connected = format!("connected to 127.0.0.1:{server_port}");
    gui_rpc(&service, &update);
    // Until the client took the reply in: an Update asked for while its RPC is still
    // under way is answered by that RPC (as in BOINC), and the next one would not go out.
    wait_until("an RPC through the SOCKS5 proxy", WORK_WAIT, || {
        server.counter("scheduler_requests") > before.0
            && socks.count(&connected) >= 1
            && completed() > before.2
    });
    assert_eq!(requests(&http, &cgi), before.1, "the HTTP proxy was still used");
    eprintln!("through microsocks: {} connections", socks.count(&connected));

    // The SOCKS5 proxy stops: the next RPC fails, and the project is not reached.
    socks.stop();
    let failures = || messages_with("Scheduler request failed");
    let before = (server.counter("scheduler_requests"), failures());
    gui_rpc(&service, &update);
    support::wait::wait_until_or(
        "the RPC to fail",
        WORK_WAIT,
        || failures() > before.1,
        || gui_rpc(&service, "<get_messages>\n<seqno>0</seqno>\n</get_messages>\n"),
    );
    assert_eq!(server.counter("scheduler_requests"), before.0, "the project was reached");
    drop(service);
}
