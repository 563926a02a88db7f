//! A volunteer's controls, honoured by the host service (`boinc-rs run` in this
//! process, attached to the real `boinc-rs project-server`, running example-app jobs,
//! driven by Debian's boinccmd): the project's web preferences with two venues arrive in
//! a scheduler reply, are kept in global_prefs.xml and applied for the host's venue with
//! the user's override on top (GUI RPC `get_global_prefs_working` shows them); a computing
//! window that excludes now stops every task within 10 s and `--get_cc_status` names
//! the reason; a network window that excludes now holds a requested RPC back until it
//! opens; a running `<exclusive_app>` stops computing and its end lets it resume.

use crate::served;
use crate::support;

use boinc_core::control::SuspendReason;
use boinc_gui_rpc::{GuiRpcClient, PASSWORD_FILE};
use boinc_runtime::runtime::messages::StateSnapshot;
use boinc_service::account_files::write_account_file;
use boinc_service::host_discovery::local_time_at;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};
use support::in_process::InProcessService;
use support::project_server::ProjectServerProcess;
use support::wait::wait_for;

const PASSWORD: &str = "controls-test-password";
/// The longest the first task takes to start (the example app is downloaded first).
const START_WAIT: Duration = Duration::from_secs(240);
/// How soon a changed condition must stop or start computing (the acceptance's 10 s).
const REACTION: Duration = Duration::from_secs(10);

/// The project's web preferences: general values, and a "home" and a "work" venue.
const WEB_PREFS: &str = "<global_preferences>\n\
    <mod_time>1700000000</mod_time>\n\
    <cpu_usage_limit>100</cpu_usage_limit>\n\
    <work_buf_additional_days>0.5</work_buf_additional_days>\n\
    <venue name=\"home\">\n\
      <cpu_usage_limit>99</cpu_usage_limit>\n\
      <disk_interval>120</disk_interval>\n\
      <work_buf_additional_days>0.3</work_buf_additional_days>\n\
    </venue>\n\
    <venue name=\"work\">\n\
      <cpu_usage_limit>50</cpu_usage_limit>\n\
    </venue>\n\
    </global_preferences>\n";

struct LiveService {
    service: InProcessService,
    dir: tempfile::TempDir,
    _server: ProjectServerProcess,
}

impl LiveService {
    fn wait_for(
        &self,
        what: &str,
        limit: Duration,
        done: impl Fn(&StateSnapshot) -> bool,
    ) -> StateSnapshot {
        wait_for(what, limit, || Some(self.service.snapshot()).filter(|s| done(s)))
    }

    fn boinccmd(&self, args: &[&str]) -> String {
        served::boinccmd_at(&self.service.gui_rpc, PASSWORD, args, true)
    }

    /// A GUI RPC request's reply, authenticated.
    fn gui_rpc(&self, request: &str) -> String {
        self.service.runtime.block_on(async {
            let mut client = GuiRpcClient::connect(&self.service.gui_rpc).await.expect("connects");
            client.authenticate(PASSWORD).await.expect("authenticated");
            client.call(request).await.expect("a reply")
        })
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    /// Writes the override and has the client read it, as the Manager does.
    fn set_override(&self, body: &str) {
        let text = format!(
            "<global_preferences>\n{body}{}</global_preferences>\n",
            support::host_prefs::NO_CPU_BUSY_CHECK
        );
        std::fs::write(self.path("global_prefs_override.xml"), text).expect("override written");
        self.boinccmd(&["--read_global_prefs_override"]);
    }
}

/// A window that excludes the local hour now: it opens two hours from now and closes
/// an hour later.
fn window_excluding_now() -> (u32, u32) {
    let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).expect("after 1970");
    let hour = local_time_at(now.as_secs_f64()).expect("the local time").hour as u32;
    ((hour + 2) % 24, (hour + 3) % 24)
}

#[test]
#[cfg_attr(not(peer_boinccmd), ignore = "boinccmd is not installed: apt-get install boinc-client")]
fn a_volunteers_controls_are_honoured() {
    let prefs_dir = tempfile::tempdir().expect("a directory for the project's preferences");
    let prefs_file = prefs_dir.path().join("web_prefs.xml");
    std::fs::write(&prefs_file, WEB_PREFS).expect("web preferences");
    let prefs_arg = prefs_file.to_string_lossy().into_owned();
    let server = ProjectServerProcess::start(&[
        "--job-seconds",
        "600",
        "--request-delay",
        "1",
        "--web-prefs",
        &prefs_arg,
        "--host-venue",
        "home",
    ]);
    let dir = tempfile::tempdir().expect("a data directory");
    std::fs::write(dir.path().join(PASSWORD_FILE), PASSWORD).expect("the password");
    std::fs::write(
        dir.path().join("global_prefs_override.xml"),
        format!(
            "<global_preferences><work_buf_additional_days>0.25</work_buf_additional_days>\
             {}</global_preferences>\n",
            support::host_prefs::NO_CPU_BUSY_CHECK
        ),
    )
    .expect("the user's override");
    write_account_file(dir.path(), &server.url, "controls_test_key").expect("attached");
    let service = InProcessService::start(dir.path());
    let live = LiveService { service, dir, _server: server };

    // Web preferences: kept whole, applied for the "home" venue, the override on top.
    let applied = live.wait_for("the home venue's preferences", START_WAIT, |s| {
        s.state.prefs.cpu_usage_limit == 99.0
    });
    let prefs = &applied.state.prefs;
    assert_eq!(applied.state.projects[0].host_venue, "home");
    assert_eq!(prefs.disk_interval, 120.0, "the venue's value");
    assert_eq!(prefs.work_buf_additional_days, 0.25, "the override wins");
    let kept = std::fs::read_to_string(live.path("global_prefs.xml")).expect("global_prefs.xml");
    assert!(kept.contains("<venue name=\"work\">") && kept.contains("1700000000"), "{kept}");
    // BOINC 7.20.5's boinccmd has no --get_global_prefs_working: the Manager's RPCs.
    let working = live.gui_rpc("<get_global_prefs_working/>");
    assert!(working.contains("<cpu_usage_limit>99"), "{working}");
    assert!(working.contains("<work_buf_additional_days>0.25"), "{working}");
    let file = live.gui_rpc("<get_global_prefs_file/>");
    assert!(file.contains("<venue name=\"work\">"), "the file as sent: {file}");
    let over = live.gui_rpc("<get_global_prefs_override/>");
    assert!(over.contains("<work_buf_additional_days>0.25"), "{over}");

    // A computing window that excludes now: every task stops within 10 s, and GUI RPC
    // says why.
    live.wait_for("a task running", START_WAIT, |s| !s.running.is_empty());
    let (start, end) = window_excluding_now();
    let changed = Instant::now();
    live.set_override(&format!("<start_hour>{start}</start_hour><end_hour>{end}</end_hour>\n"));
    let stopped = live.wait_for("the tasks to stop", REACTION, |s| s.running.is_empty());
    let reaction = changed.elapsed();
    assert_eq!(stopped.host.suspend.cpu, Some(SuspendReason::TimeOfDay));
    let status = live.boinccmd(&["--get_cc_status"]);
    assert!(status.contains("time of day"), "{status}");
    eprintln!("computing window: tasks stopped {:.1} s after the change", reaction.as_secs_f64());
    live.set_override("");
    live.wait_for("the tasks to run again", REACTION, |s| !s.running.is_empty());

    // A network window that excludes now: an update waits until it opens.
    live.set_override(&format!(
        "<net_start_hour>{start}</net_start_hour><net_end_hour>{end}</net_end_hour>\n"
    ));
    live.wait_for("the network to close", REACTION, |s| !s.host.connected);
    let rpcs = live.service.snapshot().rpcs;
    let url = live.service.snapshot().state.projects[0].master_url.clone();
    live.boinccmd(&["--project", &url, "update"]);
    // Time passes on purpose: nothing may happen, and there is no event to wait for.
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(live.service.snapshot().rpcs, rpcs, "an RPC went out while the network was closed");
    let status = live.boinccmd(&["--get_cc_status"]);
    assert!(status.contains("time of day"), "{status}");
    live.set_override("");
    live.wait_for("the update's RPC once the window opens", REACTION, |s| s.rpcs > rpcs);

    // An exclusive app: computing stops within 10 s of its start, resumes after its end.
    let program = live.path("exclusive-test-app");
    std::fs::copy("/bin/sleep", &program).expect("a program of our own name");
    std::fs::write(
        live.path("cc_config.xml"),
        "<cc_config><options><exclusive_app>exclusive-test-app</exclusive_app></options>\
         </cc_config>\n",
    )
    .expect("cc_config.xml");
    live.boinccmd(&["--read_cc_config"]);
    live.wait_for("the tasks to run", REACTION, |s| !s.running.is_empty());
    let mut exclusive = Exclusive::start(&program);
    let stopped = live
        .wait_for("the tasks to stop for the exclusive app", REACTION, |s| s.running.is_empty());
    assert_eq!(stopped.host.suspend.cpu, Some(SuspendReason::ExclusiveAppRunning));
    let status = live.boinccmd(&["--get_cc_status"]);
    assert!(status.contains("an exclusive app is running"), "{status}");
    exclusive.stop();
    live.wait_for("the tasks to run after the exclusive app", REACTION, |s| !s.running.is_empty());
}

/// The exclusive program, stopped when dropped.
struct Exclusive(std::process::Child);

impl Exclusive {
    fn start(program: &Path) -> Exclusive {
        Exclusive(std::process::Command::new(program).arg("600").spawn().expect("it starts"))
    }

    fn stop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Exclusive {
    fn drop(&mut self) {
        self.stop();
    }
}
