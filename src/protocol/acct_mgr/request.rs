//! The account manager request (`<acct_mgr_request>`, POSTed to the manager's
//! `rpc.php`): who the volunteer is (name and password hash), which host this is, its
//! run mode, and every project it is attached to with its account key, so the manager
//! can tell which of them it attached and what to change. The manager's `<opaque>`
//! data from its last reply goes back as it came. A manager (`boinc-rs project-server`
//! in that role) reads the request back with [`parse_acct_mgr_request`].

use super::raw_element::raw_content;
use crate::model::{ClientState, RunMode};
use crate::protocol::error::{XmlError, XmlProblem};
use crate::protocol::gui_rpc::ProtocolVersion;
use crate::protocol::list_counts::ListCounts;
use crate::protocol::xml_out::XmlOut;
use crate::protocol::xml_tree::{Element, parse_document};

/// The most projects one request may list (a host attached to every BOINC project
/// there is lists well under a hundred).
pub const MAX_ACCT_MGR_PROJECTS: usize = 1000;

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

/// Reads a request, as a manager does: the elements BOINC's clients send that a manager
/// needs; the rest (host details, time statistics, preferences) is skipped. Errors name
/// it `acct_mgr_request`.
pub fn parse_acct_mgr_request(text: &str) -> Result<AccountManagerRequest, XmlError> {
    read_request(text).map_err(|e| e.in_file("acct_mgr_request"))
}

fn read_request(text: &str) -> Result<AccountManagerRequest, XmlError> {
    let root = parse_document(text)?;
    if root.name != "acct_mgr_request" {
        return Err(root.error(XmlProblem::WrongRoot { expected: "acct_mgr_request" }));
    }
    let mut request = AccountManagerRequest {
        name: String::new(),
        password_hash: String::new(),
        host_cpid: String::new(),
        previous_host_cpid: String::new(),
        domain_name: String::new(),
        client_version: ProtocolVersion { major: 0, minor: 0, release: 0 },
        run_mode: RunMode::Auto,
        gui_rpc: None,
        projects: Vec::new(),
        opaque: String::new(),
    };
    let (mut gui_rpc_port, mut gui_rpc_password) = (None, None);
    let mut counts = ListCounts::default();
    for child in &root.children {
        match child.name.as_str() {
            "name" => request.name = child.string(),
            "password_hash" => request.password_hash = child.string(),
            "host_cpid" => request.host_cpid = child.string(),
            "previous_host_cpid" => request.previous_host_cpid = child.string(),
            "domain_name" => request.domain_name = child.string(),
            "client_version" => request.client_version = client_version(child)?,
            "run_mode" => request.run_mode = run_mode(child)?,
            "gui_rpc_port" => {
                let port = child.u64()?;
                gui_rpc_port = Some(u16::try_from(port).map_err(|_| {
                    child.error(XmlProblem::OutOfRange {
                        value: port.to_string(),
                        expected: "a TCP port, 0 to 65535",
                    })
                })?);
            }
            "gui_rpc_password" => gui_rpc_password = Some(child.string()),
            "project" => {
                counts.check(child, "project", MAX_ACCT_MGR_PROJECTS)?;
                request.projects.push(project(child)?);
            }
            _ => {}
        }
    }
    if request.name.is_empty() {
        return Err(root.error(XmlProblem::Missing("name")));
    }
    if let Some(port) = gui_rpc_port {
        request.gui_rpc = Some((port, gui_rpc_password.unwrap_or_default()));
    }
    request.opaque = raw_content(text, "opaque").unwrap_or_default();
    Ok(request)
}

/// `major.minor.release`.
fn client_version(element: &Element) -> Result<ProtocolVersion, XmlError> {
    let text = element.trimmed();
    let mut numbers = text.split('.').map(|n| n.trim().parse::<u32>());
    match (numbers.next(), numbers.next(), numbers.next(), numbers.next()) {
        (Some(Ok(major)), Some(Ok(minor)), Some(Ok(release)), None) => {
            Ok(ProtocolVersion { major, minor, release })
        }
        _ => Err(element.error(XmlProblem::OutOfRange {
            value: text.to_owned(),
            expected: "a version, MAJOR.MINOR.RELEASE",
        })),
    }
}

fn run_mode(element: &Element) -> Result<RunMode, XmlError> {
    match element.trimmed() {
        "always" => Ok(RunMode::Always),
        "auto" | "" => Ok(RunMode::Auto),
        "never" => Ok(RunMode::Never),
        other => Err(element.error(XmlProblem::OutOfRange {
            value: other.to_owned(),
            expected: "always, auto or never",
        })),
    }
}

fn project(element: &Element) -> Result<AccountManagerProject, XmlError> {
    let mut project = AccountManagerProject {
        url: element.required_text("url")?.to_owned(),
        project_name: String::new(),
        suspended_via_gui: false,
        account_key: String::new(),
        hostid: 0,
        attached_via_acct_mgr: false,
    };
    for child in &element.children {
        match child.name.as_str() {
            "project_name" => project.project_name = child.string(),
            "suspended_via_gui" => project.suspended_via_gui = child.flag()?,
            "account_key" => project.account_key = child.string(),
            "hostid" => project.hostid = child.i64()?,
            "attached_via_acct_mgr" => project.attached_via_acct_mgr = child.flag()?,
            _ => {}
        }
    }
    Ok(project)
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

    #[test]
    fn a_manager_reads_back_what_a_client_writes() {
        for request in [request(), {
            let mut asked = request();
            asked.gui_rpc = Some((31416, "secret".into()));
            asked.previous_host_cpid = "old".into();
            asked.run_mode = RunMode::Never;
            asked.opaque.clear();
            asked.projects.clear();
            asked
        }] {
            let text = write_acct_mgr_request(&request);
            assert_eq!(parse_acct_mgr_request(&text).expect("readable"), request, "{text}");
        }
    }

    /// The extra elements a real client sends are skipped.
    #[test]
    fn a_real_clients_extra_elements_are_skipped() {
        let text = "<acct_mgr_request>\n<name>ann</name>\n<password_hash>ab</password_hash>\n\
            <host_cpid>c</host_cpid>\n<client_version>7.20.5</client_version>\n\
            <run_mode>always</run_mode>\n<platform_name>x86_64-pc-linux-gnu</platform_name>\n\
            <project>\n<url>http://p/</url>\n<project_name>P</project_name>\n\
            <suspended_via_gui>0</suspended_via_gui>\n<account_key>k</account_key>\n\
            <hostid>3</hostid>\n<not_started_dur>0.0</not_started_dur>\n\
            <attached_via_acct_mgr/>\n</project>\n\
            <host_info><p_ncpus>2</p_ncpus></host_info>\n</acct_mgr_request>\n";
        let request = parse_acct_mgr_request(text).expect("readable");
        assert_eq!(request.client_version, ProtocolVersion { major: 7, minor: 20, release: 5 });
        assert_eq!(request.run_mode, RunMode::Always);
        assert_eq!(request.projects.len(), 1);
        assert!(request.projects[0].attached_via_acct_mgr);
        assert_eq!(request.projects[0].hostid, 3);
        assert_eq!(request.opaque, "");
    }

    #[test]
    fn hostile_requests_are_errors() {
        for bad in [
            "<html/>",
            "<acct_mgr_request><password_hash>x</password_hash></acct_mgr_request>",
            "<acct_mgr_request><name>a</name><client_version>7.x</client_version></acct_mgr_request>",
            "<acct_mgr_request><name>a</name><run_mode>sometimes</run_mode></acct_mgr_request>",
            "<acct_mgr_request><name>a</name><gui_rpc_port>70000</gui_rpc_port></acct_mgr_request>",
            "<acct_mgr_request><name>a</name><project><hostid>1</hostid></project></acct_mgr_request>",
            "<acct_mgr_request><name>a</name>",
        ] {
            let error = parse_acct_mgr_request(bad).expect_err(bad);
            assert_eq!(error.file, "acct_mgr_request", "{bad}");
        }
        let many = format!(
            "<acct_mgr_request><name>a</name>{}</acct_mgr_request>",
            "<project><url>u</url></project>".repeat(MAX_ACCT_MGR_PROJECTS + 1)
        );
        assert!(parse_acct_mgr_request(&many).is_err());
    }

    /// Found by fuzzing (fuzz target acct_mgr_request): after a byte order mark the
    /// `<opaque>` was cut three bytes early, and the manager's copy of the request was not
    /// well-formed when written again.
    #[test]
    fn a_request_after_a_byte_order_mark() {
        let text = "\u{feff}<acct_mgr_request>\n<name>ann</name>\n\
            <opaque><always/>\n<host_id>43</host_id>\n</opaque>\n</acct_mgr_request>\n";
        let request = parse_acct_mgr_request(text).expect("readable");
        assert_eq!(request.opaque, "<always/>\n<host_id>43</host_id>\n");
        let written = write_acct_mgr_request(&request);
        assert_eq!(parse_acct_mgr_request(&written).expect(&written), request);
    }
}
