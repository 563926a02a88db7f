//! The account manager request (`<acct_mgr_request>`, POSTed to the manager's
//! `rpc.php`): who the volunteer is (name and password hash), which host this is, its
//! run mode, and every project it is attached to with its account key, so the manager
//! can tell which of them it attached and what to change. The manager's `<opaque>`
//! data from its last reply goes back as it came.

use crate::model::{ClientState, RunMode};
use crate::protocol::gui_rpc::ProtocolVersion;
use crate::protocol::xml_out::XmlOut;

/// One attached project as the request describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountManagerProject {
    /// Master URL.
    pub url: String,
    /// Name.
    pub project_name: String,
    /// Suspended by the user.
    pub suspended_via_gui: bool,
    /// The account's authenticator.
    pub account_key: String,
    /// The host's id on the project.
    pub hostid: i64,
    /// The manager attached it.
    pub attached_via_acct_mgr: bool,
}

/// An account manager request.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountManagerRequest {
    /// The account's login name.
    pub name: String,
    /// md5(password + lowercase name), hex.
    pub password_hash: String,
    /// The host's cross-project id.
    pub host_cpid: String,
    /// The id the host had at the last request, when it changed since (empty: none).
    pub previous_host_cpid: String,
    /// The host's name.
    pub domain_name: String,
    /// The client's version.
    pub client_version: ProtocolVersion,
    /// The permanent computing mode.
    pub run_mode: RunMode,
    /// The GUI RPC port and password, for managers that asked for them
    /// (`<send_gui_rpc_info/>`).
    pub gui_rpc: Option<(u16, String)>,
    /// The attached projects.
    pub projects: Vec<AccountManagerProject>,
    /// The manager's `<opaque>` content from its last reply, as it came.
    pub opaque: String,
}

impl AccountManagerRequest {
    /// The projects of `state` (detached ones left out) with their account keys, which
    /// the host service keeps in the account files (`authenticator` gives each one's).
    pub fn projects_of(
        state: &ClientState,
        authenticator: impl Fn(&str) -> Option<String>,
    ) -> Vec<AccountManagerProject> {
        state
            .projects
            .iter()
            .filter(|p| !p.detached)
            .map(|p| AccountManagerProject {
                url: p.master_url.clone(),
                project_name: p.name.clone(),
                suspended_via_gui: p.suspended,
                account_key: authenticator(&p.master_url).unwrap_or_default(),
                hostid: i64::try_from(p.hostid).unwrap_or(i64::MAX),
                attached_via_acct_mgr: p.account.attached_via_acct_mgr,
            })
            .collect()
    }
}

fn run_mode_name(mode: RunMode) -> &'static str {
    match mode {
        RunMode::Always => "always",
        RunMode::Auto => "auto",
        RunMode::Never => "never",
    }
}

/// The request's XML.
pub fn write_acct_mgr_request(request: &AccountManagerRequest) -> String {
    let mut out = XmlOut::new();
    out.start("acct_mgr_request");
    out.text("name", &request.name);
    out.text("password_hash", &request.password_hash);
    out.text("host_cpid", &request.host_cpid);
    out.text("domain_name", &request.domain_name);
    let version = request.client_version;
    out.text("client_version", &format!("{}.{}.{}", version.major, version.minor, version.release));
    out.text("run_mode", run_mode_name(request.run_mode));
    if !request.previous_host_cpid.is_empty() {
        out.text("previous_host_cpid", &request.previous_host_cpid);
    }
    if let Some((port, password)) = &request.gui_rpc {
        out.int("gui_rpc_port", *port);
        out.text("gui_rpc_password", password);
    }
    for project in &request.projects {
        out.start("project");
        out.text("url", &project.url);
        out.text("project_name", &project.project_name);
        out.bit("suspended_via_gui", project.suspended_via_gui);
        out.text("account_key", &project.account_key);
        out.int("hostid", project.hostid);
        out.flag("attached_via_acct_mgr", project.attached_via_acct_mgr);
        out.end("project");
    }
    if !request.opaque.is_empty() {
        out.raw("opaque", &request.opaque);
    }
    out.end("acct_mgr_request");
    String::from_utf8_lossy(&out.finish()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Project;
    use crate::protocol::gui_rpc::PROTOCOL_VERSION;
    use crate::protocol::xml_tree::parse_document;

    fn request() -> AccountManagerRequest {
        let mut state = ClientState::default();
        let mut seti = Project::new("SETI@home", "http://setiathome.berkeley.edu/", 100.0);
        seti.hostid = 123;
        seti.account.attached_via_acct_mgr = true;
        seti.suspended = true;
        state.projects.push(seti);
        let mut gone = Project::new("Gone", "http://gone.example/", 100.0);
        gone.detached = true;
        state.projects.push(gone);
        AccountManagerRequest {
            name: "John".into(),
            password_hash: "f7a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3".into(),
            host_cpid: "b11ddc5f36c9a86ff093c96e6930646a".into(),
            previous_host_cpid: String::new(),
            domain_name: "host.domain".into(),
            client_version: PROTOCOL_VERSION,
            run_mode: RunMode::Auto,
            gui_rpc: None,
            projects: AccountManagerRequest::projects_of(&state, |_| Some("key123".into())),
            opaque: "\n<farm>7</farm>\n".into(),
        }
    }

    /// The elements of BOINC's documented request, with their values.
    #[test]
    fn the_documented_request() {
        let text = write_acct_mgr_request(&request());
        let root = parse_document(&text).expect("well-formed");
        assert_eq!(root.name, "acct_mgr_request");
        let child = |name: &str| root.child(name).map(|c| c.string());
        assert_eq!(child("name").as_deref(), Some("John"));
        assert_eq!(child("client_version").as_deref(), Some("7.20.5"));
        assert_eq!(child("run_mode").as_deref(), Some("auto"));
        assert_eq!(child("previous_host_cpid"), None);
        let projects: Vec<_> = root.children.iter().filter(|c| c.name == "project").collect();
        assert_eq!(projects.len(), 1, "detached projects are left out");
        let project = projects[0];
        assert_eq!(
            project.child("url").map(|c| c.string()).as_deref(),
            Some("http://setiathome.berkeley.edu/")
        );
        assert_eq!(project.child("suspended_via_gui").map(|c| c.string()).as_deref(), Some("1"));
        assert_eq!(project.child("account_key").map(|c| c.string()).as_deref(), Some("key123"));
        assert_eq!(project.child("hostid").map(|c| c.string()).as_deref(), Some("123"));
        assert!(project.child("attached_via_acct_mgr").is_some());
        let opaque = root.child("opaque").expect("opaque");
        assert_eq!(opaque.child("farm").map(|c| c.string()).as_deref(), Some("7"));
    }

    #[test]
    fn gui_rpc_details_only_when_asked() {
        let mut asked = request();
        asked.gui_rpc = Some((31416, "secret".into()));
        asked.previous_host_cpid = "old".into();
        let text = write_acct_mgr_request(&asked);
        assert!(text.contains("<gui_rpc_port>31416</gui_rpc_port>"), "{text}");
        assert!(text.contains("<gui_rpc_password>secret</gui_rpc_password>"), "{text}");
        assert!(text.contains("<previous_host_cpid>old</previous_host_cpid>"), "{text}");
        assert!(!write_acct_mgr_request(&request()).contains("gui_rpc"));
    }
}
