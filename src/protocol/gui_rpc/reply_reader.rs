//! Reading GUI RPC replies, for a client (docs/design.md "Protocol facts", GUI RPC): what
//! `boinc-rs status`, `tasks` and the server's tests need from the replies of boinc-rs
//! or of BOINC's own client. Fields a reply lacks read as their defaults, as the real
//! tools read them.

use crate::protocol::error::XmlError;
use crate::protocol::xml_tree::{Element, parse_document};

/// What a reply to a command says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyOutcome {
    /// `<success/>`.
    Success,
    /// `<authorized/>`.
    Authorized,
    /// `<unauthorized/>`.
    Unauthorized,
    /// `<error>message</error>`.
    Error(String),
    /// Anything else (a query's data).
    Other,
}

/// A reply body (the text inside `<boinc_gui_rpc_reply>`) as one element tree.
fn body(reply: &str) -> Result<Element, XmlError> {
    parse_document(&format!("<reply>{reply}</reply>"))
}

/// What a reply body says.
pub fn read_outcome(reply: &str) -> ReplyOutcome {
    let Ok(root) = body(reply) else { return ReplyOutcome::Other };
    match root.children.first().map(|c| c.name.as_str()) {
        Some("success") => ReplyOutcome::Success,
        Some("authorized") => ReplyOutcome::Authorized,
        Some("unauthorized") => ReplyOutcome::Unauthorized,
        Some("error") => ReplyOutcome::Error(root.children[0].string()),
        _ => ReplyOutcome::Other,
    }
}

/// The nonce of a reply to `<auth1/>`.
pub fn read_nonce(reply: &str) -> Option<String> {
    body(reply).ok()?.child("nonce").map(Element::string)
}

fn text(element: &Element, name: &str) -> String {
    element.child(name).map(Element::string).unwrap_or_default()
}

fn number(element: &Element, name: &str) -> f64 {
    element
        .child(name)
        .and_then(|c| c.trimmed().parse().ok())
        .filter(|v: &f64| v.is_finite())
        .unwrap_or(0.0)
}

fn whole(element: &Element, name: &str) -> i64 {
    element.child(name).and_then(|c| c.trimmed().parse().ok()).unwrap_or(0)
}

fn flag(element: &Element, name: &str) -> bool {
    element.child(name).is_some_and(|c| c.flag().unwrap_or(false))
}

/// Every element named `name` under `root`, at any depth, in document order.
fn all<'a>(root: &'a Element, name: &str, found: &mut Vec<&'a Element>) {
    let mut stack = vec![root];
    while let Some(element) = stack.pop() {
        if element.name == name {
            found.push(element);
            continue;
        }
        stack.extend(element.children.iter().rev());
    }
}

/// One task of a `get_results` (or `get_state`) reply.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskLine {
    /// The result's name.
    pub name: String,
    /// Its project's master URL.
    pub project_url: String,
    /// BOINC's result state (2 downloaded, 5 uploaded, ...).
    pub state: i64,
    /// Whether it has an active task.
    pub active: bool,
    /// BOINC's active-task state (1 executing, 9 suspended, ...).
    pub active_task_state: i64,
    /// BOINC's scheduler state (2 scheduled, 1 preempted).
    pub scheduler_state: i64,
    /// Fraction done, 0 to 1.
    pub fraction_done: f64,
    /// Elapsed seconds.
    pub elapsed_time: f64,
    /// Estimated seconds left.
    pub remaining: f64,
    /// Report deadline.
    pub report_deadline: f64,
    /// Suspended by the user.
    pub suspended_via_gui: bool,
    /// Its project is suspended.
    pub project_suspended_via_gui: bool,
    /// Done and waiting to be reported.
    pub ready_to_report: bool,
    /// Reported, and the project acknowledged the report.
    pub got_server_ack: bool,
}

impl TaskLine {
    /// Whether the task is computing now.
    pub fn running(&self) -> bool {
        self.active && self.active_task_state == 1 && self.scheduler_state == 2
    }
}

/// The tasks of a `get_results` or `get_state` reply.
pub fn read_tasks(reply: &str) -> Result<Vec<TaskLine>, XmlError> {
    let root = body(reply)?;
    let mut results = Vec::new();
    all(&root, "result", &mut results);
    Ok(results
        .into_iter()
        .map(|result| {
            let task = result.child("active_task");
            let of_task = |name| task.map_or(0.0, |t| number(t, name));
            TaskLine {
                name: text(result, "name"),
                project_url: text(result, "project_url"),
                state: whole(result, "state"),
                active: task.is_some(),
                active_task_state: task.map_or(0, |t| whole(t, "active_task_state")),
                scheduler_state: task.map_or(0, |t| whole(t, "scheduler_state")),
                fraction_done: of_task("fraction_done"),
                elapsed_time: of_task("elapsed_time"),
                remaining: number(result, "estimated_cpu_time_remaining"),
                report_deadline: number(result, "report_deadline"),
                suspended_via_gui: flag(result, "suspended_via_gui"),
                project_suspended_via_gui: flag(result, "project_suspended_via_gui"),
                ready_to_report: flag(result, "ready_to_report"),
                got_server_ack: flag(result, "got_server_ack"),
            }
        })
        .collect())
}

/// One project of a `get_project_status` (or `get_state`) reply.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectLine {
    /// Master URL.
    pub master_url: String,
    /// Name.
    pub name: String,
    /// Resource share.
    pub resource_share: f64,
    /// Suspended by the user.
    pub suspended_via_gui: bool,
    /// "No new tasks".
    pub dont_request_more_work: bool,
    /// An RPC is asked for.
    pub sched_rpc_pending: bool,
    /// Failed RPCs in a row.
    pub nrpc_failures: i64,
    /// The user's credit.
    pub user_total_credit: f64,
}

/// The projects of a `get_project_status` or `get_state` reply.
pub fn read_projects(reply: &str) -> Result<Vec<ProjectLine>, XmlError> {
    let root = body(reply)?;
    let mut projects = Vec::new();
    all(&root, "project", &mut projects);
    Ok(projects
        .into_iter()
        .map(|project| ProjectLine {
            master_url: text(project, "master_url"),
            name: text(project, "project_name"),
            resource_share: number(project, "resource_share"),
            suspended_via_gui: flag(project, "suspended_via_gui"),
            dont_request_more_work: flag(project, "dont_request_more_work"),
            sched_rpc_pending: whole(project, "sched_rpc_pending") != 0,
            nrpc_failures: whole(project, "nrpc_failures"),
            user_total_credit: number(project, "user_total_credit"),
        })
        .collect())
}

/// The client's time in a `get_state` reply (`<time_stats><now>`).
pub fn read_client_time(reply: &str) -> Option<f64> {
    let root = body(reply).ok()?;
    let state = root.child("client_state")?;
    let now = state.child("time_stats")?.child("now")?;
    now.trimmed().parse().ok().filter(|t: &f64| t.is_finite())
}

/// The modes of a `get_cc_status` reply, in BOINC's numbers (1 always, 2 auto, 3 never).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CcStatusLine {
    /// Computing mode.
    pub task_mode: i64,
    /// GPU mode.
    pub gpu_mode: i64,
    /// Network mode.
    pub network_mode: i64,
    /// Why computing is suspended (0: it is not).
    pub task_suspend_reason: i64,
    /// Why GPU computing is suspended beyond computing (0: it is not).
    pub gpu_suspend_reason: i64,
    /// Why file transfers and scheduler RPCs are suspended (0: they are not).
    pub network_suspend_reason: i64,
}

/// The modes of a `get_cc_status` reply.
pub fn read_cc_status(reply: &str) -> Result<CcStatusLine, XmlError> {
    let root = body(reply)?;
    let status = root.child("cc_status").unwrap_or(&root);
    Ok(CcStatusLine {
        task_mode: whole(status, "task_mode"),
        gpu_mode: whole(status, "gpu_mode"),
        network_mode: whole(status, "network_mode"),
        task_suspend_reason: whole(status, "task_suspend_reason"),
        gpu_suspend_reason: whole(status, "gpu_suspend_reason"),
        network_suspend_reason: whole(status, "network_suspend_reason"),
    })
}

/// An `<acct_mgr_rpc_reply>`: how the last account manager RPC went.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AccountManagerRpcLine {
    /// 0: done; BOINC's `ERR_IN_PROGRESS` (-204): still running; else it failed.
    pub error_num: i64,
    /// Why it failed, when the client says.
    pub message: String,
}

/// Reads an `acct_mgr_rpc_poll` reply.
pub fn read_account_manager_rpc(reply: &str) -> Result<AccountManagerRpcLine, XmlError> {
    let root = body(reply)?;
    let line = root.child("acct_mgr_rpc_reply").unwrap_or(&root);
    Ok(AccountManagerRpcLine {
        error_num: whole(line, "error_num"),
        message: text(line, "message"),
    })
}

/// An `<acct_mgr_info>`: the account manager in use.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AccountManagerInfoLine {
    /// Its URL (empty: none).
    pub url: String,
    /// Its name.
    pub name: String,
    /// The client holds credentials for it.
    pub have_credentials: bool,
}

/// Reads an `acct_mgr_info` reply.
pub fn read_account_manager_info(reply: &str) -> Result<AccountManagerInfoLine, XmlError> {
    let root = body(reply)?;
    let info = root.child("acct_mgr_info").unwrap_or(&root);
    Ok(AccountManagerInfoLine {
        url: text(info, "acct_mgr_url"),
        name: text(info, "acct_mgr_name"),
        have_credentials: flag(info, "have_credentials"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_manager_replies() {
        let poll = std::str::from_utf8(&super::super::reply::account_manager_rpc_poll(
            -206,
            Some("bad password"),
        ))
        .expect("text")
        .to_owned();
        assert_eq!(
            read_account_manager_rpc(&poll).expect("reads"),
            AccountManagerRpcLine { error_num: -206, message: "bad password".into() }
        );
        let info = super::super::reply::account_manager_info("http://am/", "AM", true);
        let info =
            read_account_manager_info(std::str::from_utf8(&info).expect("text")).expect("reads");
        assert_eq!(
            (info.url.as_str(), info.name.as_str(), info.have_credentials),
            ("http://am/", "AM", true)
        );
    }

    #[test]
    fn outcomes() {
        assert_eq!(read_outcome("<success/>\n"), ReplyOutcome::Success);
        assert_eq!(read_outcome("<unauthorized/>"), ReplyOutcome::Unauthorized);
        assert_eq!(
            read_outcome("<error>No such project</error>\n"),
            ReplyOutcome::Error("No such project".into())
        );
        assert_eq!(read_outcome("<cc_status></cc_status>"), ReplyOutcome::Other);
        assert_eq!(read_outcome("<<<"), ReplyOutcome::Other);
        assert_eq!(
            read_nonce("<nonce>1795247930.818466</nonce>\n").as_deref(),
            Some("1795247930.818466")
        );
    }

    /// The real client's get_results reply while a task ran (gui_rpc_samples.txt, pair 4).
    #[test]
    fn the_real_clients_running_task() {
        let reply = "<results>\n<result>\n    <name>wu_C_r0</name>\n    <wu_name>wu_C</wu_name>\n    \
            <project_url>http://127.0.0.1:8088/</project_url>\n    <state>2</state>\n    \
            <report_deadline>1795853057.000000</report_deadline>\n    \
            <estimated_cpu_time_remaining>7.667835</estimated_cpu_time_remaining>\n\
            <active_task>\n    <active_task_state>1</active_task_state>\n    \
            <scheduler_state>2</scheduler_state>\n    <fraction_done>0.166667</fraction_done>\n    \
            <elapsed_time>6.020264</elapsed_time>\n</active_task>\n</result>\n</results>\n";
        let tasks = read_tasks(reply).expect("readable");
        assert_eq!(tasks.len(), 1);
        let task = &tasks[0];
        assert_eq!((task.name.as_str(), task.state), ("wu_C_r0", 2));
        assert!(task.running());
        assert_eq!(task.fraction_done, 0.166667);
        assert_eq!(task.report_deadline, 1795853057.0);
    }

    #[test]
    fn cc_status_and_projects() {
        let status = read_cc_status(
            "<cc_status>\n   <task_suspend_reason>4</task_suspend_reason>\n   <task_mode>3</task_mode>\n   \
             <gpu_mode>2</gpu_mode>\n   <network_mode>2</network_mode>\n   \
             <network_suspend_reason>8</network_suspend_reason>\n</cc_status>\n",
        )
        .expect("readable");
        assert_eq!(
            status,
            CcStatusLine {
                task_mode: 3,
                gpu_mode: 2,
                network_mode: 2,
                task_suspend_reason: 4,
                gpu_suspend_reason: 0,
                network_suspend_reason: 8,
            }
        );
        let projects = read_projects(
            "<projects>\n<project>\n<master_url>http://a/</master_url>\n<project_name>A</project_name>\n\
             <resource_share>100.000000</resource_share>\n<suspended_via_gui/>\n</project>\n</projects>\n",
        )
        .expect("readable");
        assert_eq!(projects.len(), 1);
        assert!(projects[0].suspended_via_gui && !projects[0].dont_request_more_work);
        assert_eq!(projects[0].name, "A");
    }
}
