//! Apps separated from the client (issue 16 item 4; docs/app-isolation.md) with real
//! child processes: the file-size limit stops an app writing past its disk bound and
//! the address-space limit fails one allocating past the memory limit, each ending in
//! its limit's error; with an app user, the example app runs as that user (its ids and
//! groups read from /proc), finishes and its output comes back, and an app run as that
//! user can neither read gui_rpc_auth.cfg, write the client's state nor list the data
//! directory; `boinc-rs run` sets the data directory's modes and refuses an app user it
//! cannot use.
//!
//! Switching users needs root (CI runs as root): where the tests run unprivileged, the
//! parts that need it print `SKIPPED: ...` and return.

use crate::support;

use boinc_core::supervise::{EXIT_DISK_LIMIT_EXCEEDED, EXIT_MEM_LIMIT_EXCEEDED};
use boinc_runtime::runtime::messages::TaskReport;
use boinc_service::data_dir_modes::{
    CLIENT_TREE_MODE, DATA_DIR_MODE, PRIVATE_FILE_MODE, SHARED_DIR_MODE,
};
use boinc_service::process::AppUser;
use nix::unistd::{Uid, User};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::Duration;
use support::service::{signal, wait_exit};
use support::*;

const POLL: Duration = Duration::from_millis(200);
const BOUND: Duration = Duration::from_secs(60);
/// The throwaway user the tests run apps as (created when missing).
const TEST_APP_USER: &str = "boinc-rs-test-app";
const MIB: u64 = 1024 * 1024;

/// The app user for a test, creating the throwaway one if needed; `None` (with a loud
/// SKIPPED line) where the test does not run as root.
fn test_app_user(test: &str) -> Option<AppUser> {
    if !Uid::effective().is_root() {
        eprintln!(
            "SKIPPED (not passed): {test} needs root to run apps as another user; run the \
             tests as root (CI does)"
        );
        return None;
    }
    if User::from_name(TEST_APP_USER).ok().flatten().is_none() {
        // Tests run side by side: a second useradd finds the user made; look again.
        let _ = std::process::Command::new("useradd")
            .args(["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", TEST_APP_USER])
            .status();
    }
    let name = if User::from_name(TEST_APP_USER).ok().flatten().is_some() {
        TEST_APP_USER
    } else {
        "nobody"
    };
    Some(AppUser::look_up(name).expect("root can run apps as the test user"))
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).expect("the path exists").permissions().mode() & 0o7777
}

/// A status line of /proc/PID/status, its fields.
fn status_ids(pid: i32, key: &str) -> Vec<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the app's status");
    let line = status.lines().find_map(|l| l.strip_prefix(key)).expect("the line");
    line.split_whitespace().map(|id| id.parse().expect("an id")).collect()
}

#[test]
fn the_file_size_limit_stops_an_app_at_its_disk_bound() {
    let scratch = Scratch::new();
    let bound = 8 * MIB;
    let written = (5 * bound).to_string();
    let mut spec =
        example_spec(&scratch, 0, "big", true, &["--seconds", "0.2", "--write-bytes", &written]);
    spec.program.bounds.disk_bound = bound as f64;
    // The measured check waits an hour after its first look (at start): only the
    // operating system's limit can stop the write.
    let run = run_to_end(&scratch, &spec, QUICK_RESTARTS, |c| {
        c.disk_check_interval = Duration::from_secs(3600)
    });
    let (status, message) = failed(&run);
    assert_eq!(status, EXIT_DISK_LIMIT_EXCEEDED, "{message}");
    assert!(message.contains("disk limit"), "{message}");
    let output = std::fs::metadata(scratch.project_file("big_out")).expect("the partial output");
    assert_eq!(output.len(), bound, "the write stopped exactly at the bound");

    // Under its bound the same app finishes.
    let mut spec =
        example_spec(&scratch, 1, "small", true, &["--seconds", "0.2", "--write-bytes", "1000000"]);
    spec.program.bounds.disk_bound = bound as f64;
    let run = run_to_end(&scratch, &spec, QUICK_RESTARTS, |c| {
        c.disk_check_interval = Duration::from_secs(3600)
    });
    finished(&run);
}

#[test]
fn the_address_space_limit_fails_an_app_allocating_past_it() {
    let scratch = Scratch::new();
    let limit = 2048 * MIB;
    let mut spec = example_spec(
        &scratch,
        0,
        "greedy",
        true,
        &["--seconds", "0.2", "--allocate", &(limit + 512 * MIB).to_string()],
    );
    spec.program.bounds.address_space_limit = limit as f64;
    let (status, message) = failed(&run_to_end(&scratch, &spec, QUICK_RESTARTS, |_| {}));
    assert_eq!(status, EXIT_MEM_LIMIT_EXCEEDED, "{message}");
    assert!(message.contains("memory limit"), "{message}");

    // An app within the limit allocates and finishes under it.
    let mut spec = example_spec(
        &scratch,
        1,
        "modest",
        true,
        &["--seconds", "0.2", "--allocate", &(64 * MIB).to_string()],
    );
    spec.program.bounds.address_space_limit = limit as f64;
    let run = run_to_end(&scratch, &spec, QUICK_RESTARTS, |_| {});
    finished(&run);
}

#[test]
fn the_example_app_runs_as_the_app_user() {
    let Some(user) = test_app_user("the_example_app_runs_as_the_app_user") else { return };
    let scratch = Scratch::new();
    std::fs::write(scratch.project_file("in_file"), "as another user\n").unwrap();
    let mut spec =
        example_spec(&scratch, 0, "separated", true, &["--seconds", "1.5", "--input", "in"]);
    spec.program.bounds.address_space_limit = (3 * 1024 * MIB) as f64;
    spec.program.bounds.disk_bound = (100 * MIB) as f64;
    // Landlock stays on (where the kernel has it): it is enforced after the switch.
    let app_user = user.clone();
    let host = scratch.host(move |c| c.app_user = Some(app_user));
    live(async {
        let driver = driver(&host, &spec, QUICK_RESTARTS);
        driver.start(&spec).await.unwrap();
        let running = poll_until(
            &driver,
            POLL,
            BOUND,
            |r| matches!(r, TaskReport::Running(s) if s.current_cpu_time > 0.2),
        )
        .await;
        assert!(matches!(running.last(), TaskReport::Running(_)), "{running:?}");
        let pid = host.process_id(0).expect("the app runs");
        assert_eq!(status_ids(pid, "Uid:"), vec![user.uid; 4], "real, effective, saved, fs uid");
        assert_eq!(status_ids(pid, "Gid:"), vec![user.gid; 4], "real, effective, saved, fs gid");
        let mut groups = status_ids(pid, "Groups:");
        let mut expected = user.groups.clone();
        groups.sort_unstable();
        expected.sort_unstable();
        assert_eq!(groups, expected, "the user's groups, none of the client's");
        // The limits hold for the app (soft and hard: it cannot raise them).
        let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
        let limit = |name: &str| {
            let line = limits.lines().find(|l| l.starts_with(name)).expect("the limit");
            line[name.len()..].split_whitespace().take(2).map(str::to_owned).collect::<Vec<_>>()
        };
        assert_eq!(limit("Max address space"), vec![(3 * 1024 * MIB).to_string(); 2]);
        assert_eq!(limit("Max file size"), vec![(100 * MIB).to_string(); 2]);
        let run = poll_until(&driver, POLL, BOUND, |_| false).await;
        finished(&run);
    });
    let output_path = scratch.project_file("separated_out");
    let output = std::fs::read_to_string(&output_path).expect("the output came back");
    assert!(output.starts_with("AS ANOTHER USER\nresult "), "{output}");
    assert_eq!(std::fs::metadata(&output_path).unwrap().uid(), user.uid, "written by the app user");
}

#[test]
fn an_app_user_cannot_touch_the_clients_files() {
    let Some(user) = test_app_user("an_app_user_cannot_touch_the_clients_files") else { return };
    let scratch = Scratch::new();
    let data = scratch.data_dir();
    // Left readable by an older client: the host makes them private when it starts.
    for (name, text) in
        [("gui_rpc_auth.cfg", "secret\n"), ("client_state.xml", "<client_state/>\n")]
    {
        std::fs::write(data.join(name), text).unwrap();
        std::fs::set_permissions(data.join(name), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let probe = scratch.project_file("probe.sh");
    std::fs::write(
        &probe,
        "#!/bin/sh\n\
         r=read; cat ../../gui_rpc_auth.cfg >/dev/null 2>&1 || r=unreadable\n\
         w=written; (echo x >> ../../client_state.xml) 2>/dev/null || w=unwritable\n\
         l=listed; ls ../.. >/dev/null 2>&1 || l=unlisted\n\
         echo \"$r $w $l $(id -u)\" > out\n",
    )
    .unwrap();
    std::fs::set_permissions(&probe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut spec = example_spec(&scratch, 0, "probe", false, &[]);
    spec.program.executable = "probe.sh".into();
    spec.program.arguments.clear();
    // Landlock off: what keeps the app out is the user and the modes alone.
    let app_user = user.clone();
    let run = run_to_end(&scratch, &spec, QUICK_RESTARTS, move |c| {
        c.app_user = Some(app_user);
        c.contain_writes = false;
    });
    finished(&run);
    let answer = std::fs::read_to_string(scratch.project_file("probe_out")).unwrap();
    assert_eq!(answer.trim(), format!("unreadable unwritable unlisted {}", user.uid));
    assert_eq!(
        std::fs::read_to_string(data.join("client_state.xml")).unwrap(),
        "<client_state/>\n"
    );
    assert_eq!(mode(&data.join("gui_rpc_auth.cfg")), PRIVATE_FILE_MODE);
}

/// Starts `boinc-rs run` on `dir` with `extra` arguments and waits (bounded) until it
/// serves GUI RPC (its password file exists, its signal handlers are in place).
fn service_started(dir: &Path, log: &Path, extra: &[&str]) -> support::service::ServiceProcess {
    let mut service = support::service::start_service_with(dir, log, extra, &[]);
    service.gui_rpc_port();
    service
}

/// Stops a service with SIGTERM; it must exit cleanly in time.
fn stop(mut service: support::service::ServiceProcess, log: &Path) {
    signal(&service, nix::sys::signal::Signal::SIGTERM);
    let status = wait_exit(&mut service, BOUND).expect("stopped in time");
    assert!(status.success(), "{status}: {}", std::fs::read_to_string(log).unwrap_or_default());
}

#[test]
fn boinc_rs_run_sets_the_data_directory_modes() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("data");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(dir.join("cc_config.xml"), "<cc_config/>\n").unwrap();
    std::fs::set_permissions(dir.join("cc_config.xml"), std::fs::Permissions::from_mode(0o644))
        .unwrap();
    let log = scratch.path().join("run.log");
    stop(service_started(&dir, &log, &[]), &log);
    assert_eq!(mode(&dir), DATA_DIR_MODE);
    for name in ["cc_config.xml", "gui_rpc_auth.cfg", "client_state.xml"] {
        assert_eq!(mode(&dir.join(name)), PRIVATE_FILE_MODE, "{name}");
    }
    assert_eq!(mode(&dir.join("projects")), CLIENT_TREE_MODE);
    assert_eq!(mode(&dir.join("slots")), CLIENT_TREE_MODE);
}

#[test]
fn boinc_rs_run_refuses_an_app_user_it_cannot_use_and_shares_with_one_it_can() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("data");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
        .args(["run", "--no-gui-rpc", "--app-user", "boinc-rs-no-such-user", "--dir"])
        .arg(&dir)
        .output()
        .expect("boinc-rs runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("boinc-rs-no-such-user does not exist") && stderr.contains("useradd"),
        "{stderr}"
    );

    let Some(user) =
        test_app_user("boinc_rs_run_refuses_an_app_user_it_cannot_use_and_shares_with_one_it_can")
    else {
        return;
    };
    let log = scratch.path().join("run.log");
    let service = service_started(&dir, &log, &["--app-user", &user.name]);
    for tree in ["projects", "slots"] {
        let meta = std::fs::metadata(dir.join(tree)).unwrap();
        assert_eq!(meta.gid(), user.gid, "{tree} belongs to the app user's group");
        assert_eq!(meta.permissions().mode() & 0o7777, SHARED_DIR_MODE, "{tree}");
    }
    stop(service, &log);
}
