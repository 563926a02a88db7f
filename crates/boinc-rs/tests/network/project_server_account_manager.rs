//! `boinc-rs project-server` as a minimal account manager (issue "GUI RPC server",
//! account managers): hosts sign in with BOINC's account manager RPC, written and read
//! with the core's types (`write_acct_mgr_request`, `parse_acct_mgr_reply`), get the
//! configured projects with URLs signed by the manager's key, and follow a change of the
//! list (made through `/admin/account_manager` or by writing the file): the core's
//! `plan_reply` attaches the new project and detaches the one no longer listed, on two
//! hosts, every URL signed by the manager's own key (not the code-signing key).
//! Strangers, wrong passwords and unreadable requests get error replies.

use crate::support;

use boinc_core::control::UserAction;
use boinc_core::model::{ClientState, Project as ClientProject, RunMode};
use boinc_core::protocol::acct_mgr::account_manager_password_hash;
use boinc_core::protocol::acct_mgr::{
    AccountManagerAction, AccountManagerReply, AccountManagerRequest, parse_acct_mgr_reply,
    plan_reply, write_acct_mgr_request,
};
use boinc_core::protocol::code_signing::{CodeSignKey, Signature, md5_hex, verify_text_signature};
use boinc_core::protocol::gui_rpc::PROTOCOL_VERSION;
use boinc_project_server::{ACCOUNT_MANAGER_FILE, AccountManagerConfig};
use serde_json::json;
use support::project_server::ProjectServerProcess;

const NAME: &str = "Ann";
const PASSWORD: &str = "correct horse";

/// A host signing in: its state and the manager's key it keeps.
struct Host {
    cpid: String,
    state: ClientState,
    manager_key: Option<String>,
}

fn verify(url: &str, signature: &str, key: &str) -> bool {
    let (Ok(key), Ok(signature)) = (CodeSignKey::parse(key), Signature::parse(signature)) else {
        return false;
    };
    verify_text_signature(&key, &signature, url).is_ok()
}

impl Host {
    fn new(cpid: &str) -> Host {
        Host { cpid: cpid.into(), state: ClientState::default(), manager_key: None }
    }

    fn request(&self, password: &str) -> AccountManagerRequest {
        AccountManagerRequest {
            name: NAME.to_lowercase(),
            password_hash: account_manager_password_hash(NAME, password),
            host_cpid: self.cpid.clone(),
            previous_host_cpid: String::new(),
            domain_name: format!("host-{}", self.cpid),
            client_version: PROTOCOL_VERSION,
            run_mode: RunMode::Auto,
            gui_rpc: None,
            projects: AccountManagerRequest::projects_of(&self.state, |_| {
                Some("held-authenticator".into())
            }),
            opaque: String::new(),
        }
    }

    /// One RPC: the reply, and the actions it leads to, carried out on the state as the
    /// host service would.
    fn sign_in(
        &mut self,
        manager: &ProjectServerProcess,
        password: &str,
    ) -> (AccountManagerReply, Vec<AccountManagerAction>) {
        let url = manager.status()["account_manager_url"].as_str().expect("url").to_owned();
        let path = url.strip_prefix(&manager.url).expect("on the project's URL");
        let request = write_acct_mgr_request(&self.request(password));
        let answer = manager
            .post(&format!("{path}rpc.php"), request.into_bytes())
            .expect("the manager answers");
        assert_eq!(answer.status, 200);
        assert_eq!(answer.header("content-type"), Some("text/xml"));
        let text = String::from_utf8(answer.body).expect("text");
        let reply = parse_acct_mgr_reply(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        let plan =
            plan_reply(&reply, &self.state, self.manager_key.as_deref(), verify, |_| None, 0.0);
        assert!(plan.rejected.is_empty(), "{:?}", plan.rejected);
        if let Some(key) = plan.signing_key.clone() {
            self.manager_key = Some(key);
        }
        for action in &plan.actions {
            match action {
                AccountManagerAction::Attach { master_url, .. } => {
                    let mut project = ClientProject::new(master_url, master_url, 100.0);
                    project.account.attached_via_acct_mgr = true;
                    self.state.projects.push(project);
                }
                AccountManagerAction::User(UserAction::Detach(url)) => {
                    self.state.projects.retain(|p| &p.master_url != url);
                }
                _ => {}
            }
        }
        (reply, plan.actions)
    }

    fn projects(&self) -> Vec<&str> {
        self.state.projects.iter().map(|p| p.master_url.as_str()).collect()
    }
}

fn attaches(actions: &[AccountManagerAction]) -> Vec<&str> {
    actions
        .iter()
        .filter_map(|a| match a {
            AccountManagerAction::Attach { master_url, .. } => Some(master_url.as_str()),
            _ => None,
        })
        .collect()
}

fn detaches(actions: &[AccountManagerAction]) -> Vec<&str> {
    actions
        .iter()
        .filter_map(|a| match a {
            AccountManagerAction::User(UserAction::Detach(url)) => Some(url.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn two_hosts_get_the_projects_and_follow_a_change_of_the_list() {
    let manager = ProjectServerProcess::start(&["--jobs", "0"]);
    let first = "http://127.0.0.1:9/first/";
    let second = "http://127.0.0.1:9/second/";
    let (code, body) = manager.put(
        "admin/account_manager",
        json!({"name": "Test farm", "repeat_seconds": 30,
               "users": [{"name": NAME, "password": PASSWORD}],
               "projects": [{"url": first, "authenticator": "auth-first", "resource_share": 25}]}),
    );
    assert_eq!(code, 200, "{body}");
    let mut hosts = [Host::new("host-a"), Host::new("host-b")];
    let code_sign_key_md5 = manager.status()["code_sign_key_md5"].as_str().expect("md5").to_owned();
    for host in &mut hosts {
        let (reply, actions) = host.sign_in(&manager, PASSWORD);
        // The manager signs with a key of its own, never the code-signing key.
        let key = CodeSignKey::parse(reply.signing_key.as_deref().expect("a key")).expect("key");
        assert_ne!(md5_hex(key.to_text().as_bytes()), code_sign_key_md5);
        assert_eq!(reply.name, "Test farm");
        assert_eq!(reply.repeat_sec, Some(30.0));
        assert_eq!(reply.accounts[0].authenticator, "auth-first");
        assert_eq!(attaches(&actions), [first]);
        assert_eq!(host.projects(), [first]);
        // Asked again, nothing changes.
        let (_, again) = host.sign_in(&manager, PASSWORD);
        assert!(attaches(&again).is_empty() && detaches(&again).is_empty(), "{again:?}");
    }

    // The list changes by a hand-written file.
    let config: AccountManagerConfig = serde_json::from_value(json!({
        "users": [{"name": NAME, "password": PASSWORD}],
        "projects": [{"url": second, "authenticator": "auth-second"}]}))
    .expect("config");
    std::fs::write(
        manager.dir.join(ACCOUNT_MANAGER_FILE),
        serde_json::to_vec(&config).expect("json"),
    )
    .expect("written");
    for host in &mut hosts {
        let (_, actions) = host.sign_in(&manager, PASSWORD);
        assert_eq!(attaches(&actions), [second], "{actions:?}");
        assert_eq!(detaches(&actions), [first], "{actions:?}");
        assert_eq!(host.projects(), [second]);
    }
    let status = manager.status();
    assert_eq!(status["account_manager_hosts"], 2, "{status:#}");
    assert_eq!(status["account_manager_requests"], 6, "{status:#}");
    let (code, body) = manager.get_text("admin/account_manager");
    assert_eq!(code, 200);
    assert!(body.contains("auth-second"), "{body}");
}

#[test]
fn strangers_wrong_passwords_and_garbage_get_error_replies() {
    let manager = ProjectServerProcess::start(&["--jobs", "0"]);
    let mut host = Host::new("host-a");
    // No configuration yet: the role is off, and says how to turn it on.
    let (reply, actions) = host.sign_in(&manager, PASSWORD);
    assert!(reply.error.as_deref().is_some_and(|e| e.contains(ACCOUNT_MANAGER_FILE)), "{reply:?}");
    assert!(actions.is_empty());
    let (code, _) = manager.put(
        "admin/account_manager",
        json!({"users": [{"name": NAME, "password": PASSWORD}],
               "projects": [{"url": "ftp://nowhere/", "authenticator": "a"}]}),
    );
    assert_eq!(code, 400, "a bad list is refused");
    let (code, body) = manager.put(
        "admin/account_manager",
        json!({"users": [{"name": NAME, "password": PASSWORD}],
               "projects": [{"url": "http://127.0.0.1:9/", "authenticator": "a"}]}),
    );
    assert_eq!(code, 200, "{body}");
    let (reply, actions) = host.sign_in(&manager, "guess");
    assert_eq!(reply.error_num, -206, "{reply:?}");
    assert!(actions.is_empty() && host.projects().is_empty());
    for garbage in [&b"<html>no</html>"[..], b"\xff\xfe", b"<acct_mgr_request><name>x"] {
        let answer = manager.post("account_manager/rpc.php", garbage.to_vec()).expect("answers");
        let reply =
            parse_acct_mgr_reply(&String::from_utf8(answer.body).expect("text")).expect("XML");
        assert_eq!(reply.error_num, -112, "{reply:?}");
    }
    let oversized = manager.post("account_manager/rpc.php", vec![b'x'; 2 << 20]);
    assert!(oversized.is_err() || oversized.is_ok_and(|a| a.status == 413));
    // A damaged file keeps the last good list.
    std::fs::write(manager.dir.join(ACCOUNT_MANAGER_FILE), "{").expect("damaged");
    let (reply, actions) = host.sign_in(&manager, PASSWORD);
    assert_eq!(reply.error, None);
    assert_eq!(attaches(&actions), ["http://127.0.0.1:9/"]);
}
