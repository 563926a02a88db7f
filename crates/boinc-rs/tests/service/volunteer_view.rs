//! What the volunteer sees and says, with Debian's boinccmd against the host service
//! (`boinc-rs run`, in this process) and the real `boinc-rs project-server`: an account
//! made and looked up by e-mail and password (`--create_account`, `--lookup_account`),
//! the project attached with the key that came back (no key typed), the project's
//! scheduler message and its news feed's notice in `--get_messages` and `--get_notices`
//! within 10 s of the scheduler RPC, the message in `stdoutdae.txt`, and the credit the
//! project granted for a finished task shown by `--get_project_status`, kept in
//! `statistics_<project>.xml` and still there after a restart.

use crate::served;
use crate::support;

use boinc_core::protocol::data_dir::statistics_file_name;
use boinc_gui_rpc::{EVENT_LOG_FILE, GuiRpcClient, PASSWORD_FILE};
use boinc_runtime::runtime::messages::StateSnapshot;
use served::values;
use std::path::Path;
use std::time::{Duration, Instant};
use support::in_process::InProcessService;
use support::project_server::ProjectServerProcess;
use support::wait::{holds_within, wait_for};

const PASSWORD: &str = "volunteer-test-password";
/// The longest a wait for work to be done lasts (a debug build of the app downloads).
const WAIT: Duration = Duration::from_secs(240);
/// What the acceptance allows from the scheduler RPC to the message and notice.
const SHOWN_WITHIN: Duration = Duration::from_secs(10);
const SCHEDULER_NOTICE: &str = "Your GPU driver is too old for this project's GPU app";
const NEWS_TITLE: &str = "Maintenance";
const NEWS_TEXT: &str = "The project's server is down on Sunday at noon";

struct Running(InProcessService);

impl Running {
    fn start(dir: &Path) -> Running {
        Running(InProcessService::start(dir))
    }

    fn snapshot(&self) -> StateSnapshot {
        self.0.snapshot()
    }

    fn boinccmd(&self, args: &[&str]) -> String {
        served::boinccmd_at(&self.0.gui_rpc, PASSWORD, args, true)
    }

    /// A GUI RPC boinccmd has no command for, sent as the Manager sends it.
    fn gui_rpc(&self, operation: &str) -> String {
        self.0.runtime.block_on(async {
            let mut client = GuiRpcClient::connect(&self.0.gui_rpc).await.expect("connects");
            client.authenticate(PASSWORD).await.expect("authenticates");
            client.call(operation).await.expect("answers")
        })
    }

    fn stop(&mut self) {
        self.0.stop();
    }
}

#[test]
#[cfg_attr(not(peer_boinccmd), ignore = "boinccmd is not installed: apt-get install boinc-client")]
fn a_volunteer_attaches_by_email_and_sees_messages_notices_and_credit() {
    let server = ProjectServerProcess::start(&[
        "--job-seconds",
        "1",
        "--jobs",
        "2",
        "--request-delay",
        "1",
        "--message",
        &format!("notice:{SCHEDULER_NOTICE}"),
        "--notice",
        &format!("{NEWS_TITLE}:{NEWS_TEXT}"),
    ]);
    let dir = tempfile::tempdir().expect("a data directory");
    std::fs::write(dir.path().join(PASSWORD_FILE), PASSWORD).expect("the password");
    let mut running = Running::start(dir.path());

    // An account made, then looked up, by e-mail address and password.
    let created = running.boinccmd(&[
        "--create_account",
        &server.url,
        "ada@example.org",
        "correct horse",
        "Ada",
    ]);
    let made_key = values(&created, "account key").first().map(|k| k.to_string());
    let made_key = made_key.unwrap_or_else(|| panic!("no key from --create_account: {created}"));
    assert_eq!(made_key.len(), 32, "{created}");
    let wrong = served::boinccmd_at(
        &running.0.gui_rpc,
        PASSWORD,
        &["--lookup_account", &server.url, "ada@example.org", "wrong"],
        false,
    );
    assert!(values(&wrong, "account key").is_empty(), "a wrong password gets no key: {wrong}");
    let looked_up =
        running.boinccmd(&["--lookup_account", &server.url, "ada@example.org", "correct horse"]);
    assert_eq!(values(&looked_up, "account key"), [made_key.as_str()], "{looked_up}");
    let config = running.boinccmd(&["--get_project_config", &server.url]);
    assert!(config.contains("boinc-rs test project"), "{config}");

    // The project attached with the key the lookup gave.
    let key = values(&looked_up, "account key")[0].to_owned();
    running.boinccmd(&["--project_attach", &server.url, &key]);
    let replied = wait_for("the first scheduler reply", WAIT, || {
        let snapshot = running.snapshot();
        let project = snapshot.state.projects.iter().find(|p| p.master_url == server.url)?;
        (project.hostid != 0).then(Instant::now)
    });
    let status = running.boinccmd(&["--get_project_status"]);
    assert_eq!(values(&status, "user_name"), ["Ada"], "the account made above: {status}");

    // Its message and its news, within 10 s of the reply.
    let shown = holds_within(SHOWN_WITHIN.saturating_sub(replied.elapsed()), || {
        let messages = running.boinccmd(&["--get_messages", "0"]);
        let notices = running.boinccmd(&["--get_notices", "0"]);
        messages.contains(&format!("Message from server: {SCHEDULER_NOTICE}"))
            && notices.contains(SCHEDULER_NOTICE)
            && notices.contains(NEWS_TEXT)
    });
    let messages = running.boinccmd(&["--get_messages", "0"]);
    let notices = running.boinccmd(&["--get_notices", "0"]);
    assert!(shown, "not shown within {SHOWN_WITHIN:?}:\n{messages}\n{notices}");
    // boinccmd prints a notice's text; its title and category are in the reply.
    let reply = running.gui_rpc("<get_notices>\n<seqno>0</seqno>\n</get_notices>");
    assert!(reply.contains(&format!("<title>{NEWS_TITLE}</title>")), "{reply}");
    assert!(reply.contains("<category>scheduler</category>"), "{reply}");
    let event_log = std::fs::read_to_string(dir.path().join(EVENT_LOG_FILE)).expect("the log");
    assert!(event_log.contains(SCHEDULER_NOTICE), "{event_log}");
    assert!(dir.path().join("notices").read_dir().expect("notices/").count() >= 2);

    // Credit for the finished tasks, with its history.
    let credited = wait_for("credit for a finished task", WAIT, || {
        let status = running.boinccmd(&["--get_project_status"]);
        let credit: f64 = values(&status, "user_total_credit").first()?.parse().ok()?;
        (credit > 0.0).then_some(credit)
    });
    let statistics = running.gui_rpc("<get_statistics/>");
    assert!(statistics.contains("<daily_statistics>"), "{statistics}");
    let history = dir.path().join(statistics_file_name(&server.url));
    wait_for("the credit history on disk", WAIT, || history.exists().then_some(()));
    running.stop();

    // A restart shows the same credit and history.
    let running = Running::start(dir.path());
    let status = running.boinccmd(&["--get_project_status"]);
    let credit: f64 = values(&status, "user_total_credit")[0].parse().expect("a number");
    assert!(credit >= credited, "after the restart: {credit} < {credited}\n{status}");
    let statistics = running.gui_rpc("<get_statistics/>");
    assert!(statistics.contains("<daily_statistics>"), "{statistics}");
    let notices = running.boinccmd(&["--get_notices", "0"]);
    assert!(notices.contains(NEWS_TEXT), "the archived news after a restart: {notices}");
}
