//! `boinc-rs status`, `tasks`, `project URL ACTION` and `quit` against
//! `boinc-rs sim --engine actors --gui-rpc-port 0`, end to end through the binary: the
//! simulated client is served on the port the system gives it (announced on stderr),
//! our own commands read and change it over GUI RPC, and `quit` ends the run with its
//! figures printed.

use crate::served;
use crate::support;

use served::{WAIT, run_bounded, shipped};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use support::wait::wait_for;

const BINARY: &str = env!("CARGO_BIN_EXE_boinc-rs");

/// The served simulation; killed if the test ends before it does.
struct Simulation(Child);

impl Drop for Simulation {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn boinc_rs(args: &[&str], port: u16, dir: &Path) -> (bool, String) {
    let output = run_bounded(
        Command::new(BINARY).args(args).args(["--port", &port.to_string(), "--dir"]).arg(dir),
        WAIT,
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

#[test]
fn our_commands_read_and_control_a_served_simulation() {
    let dir = tempfile::tempdir().expect("a data directory");
    let mut child = Command::new(BINARY)
        .args(["sim", "--engine", "actors", "--existing-jobs-only", "--days", "30"])
        .args(["--gui-rpc-port", "0", "--realtime-factor", "10", "--scenario"])
        .arg(shipped("cpu_only"))
        .arg("--gui-rpc-dir")
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("boinc-rs sim starts");
    let stderr = child.stderr.take().expect("stderr");
    let stdout = child.stdout.take().expect("stdout");
    let simulation = Simulation(child);
    // The served address is announced on stderr.
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    let announcement = receiver.recv_timeout(WAIT).expect("the sim announces its port");
    let port: u16 = announcement
        .split("127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("no port in: {announcement}"));
    assert!(dir.path().join("gui_rpc_auth.cfg").is_file(), "the password file is created");

    let (ok, status) = boinc_rs(&["status"], port, dir.path());
    assert!(ok, "{status}");
    assert!(status.contains("projects: 3"), "{status}");
    assert!(status.contains("tasks: 4 ("), "{status}");
    assert!(status.contains("computing: according to preferences"), "{status}");

    let (ok, tasks) = boinc_rs(&["tasks"], port, dir.path());
    assert!(ok, "{tasks}");
    for name in ["math_wu_1_0", "math_wu_2_0", "climate_wu_1_0", "fold_wu_1_0"] {
        assert!(tasks.contains(name), "{name} missing: {tasks}");
    }
    assert!(tasks.contains("running"), "{tasks}");
    // `boinc-rs tasks | head`: a reader that goes away ends it quietly, not in a panic.
    let mut piped = Command::new(BINARY)
        .args(["tasks", "--port", &port.to_string(), "--dir"])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("boinc-rs tasks starts");
    drop(piped.stdout.take());
    let ended = piped.wait_with_output().expect("boinc-rs tasks ends");
    let said = String::from_utf8_lossy(&ended.stderr);
    assert!(ended.status.success() && !said.contains("panicked"), "{:?}: {said}", ended.status);

    let url = "https://math.example.org/";
    let (ok, said) = boinc_rs(&["project", url, "suspend"], port, dir.path());
    assert!(ok && said.contains("suspended"), "{said}");
    let (_, tasks) = boinc_rs(&["tasks"], port, dir.path());
    let math: Vec<&str> = tasks.lines().filter(|l| l.contains("math_wu")).collect();
    assert!(math.iter().all(|l| l.contains("project suspended")), "{tasks}");
    let (ok, status) = boinc_rs(&["status"], port, dir.path());
    assert!(ok && status.contains("[suspended]"), "{status}");
    let (ok, said) = boinc_rs(&["project", url, "resume"], port, dir.path());
    assert!(ok && said.contains("resumed"), "{said}");
    let (ok, said) = boinc_rs(&["project", url, "update"], port, dir.path());
    assert!(ok, "{said}");

    let (ok, refused) = boinc_rs(&["project", "http://nowhere/", "suspend"], port, dir.path());
    assert!(!ok && refused.contains("No such project"), "{refused}");
    let (ok, refused) = boinc_rs(&["quit", "--passwd", "wrong"], port, dir.path());
    assert!(!ok && refused.contains("refused the password"), "{refused}");

    let (ok, said) = boinc_rs(&["quit"], port, dir.path());
    assert!(ok, "{said}");
    let mut simulation = simulation;
    let status = wait_for("the sim to quit", WAIT, || simulation.0.try_wait().expect("waits"));
    assert!(status.success());
    let mut figures = String::new();
    std::io::Read::read_to_string(&mut BufReader::new(stdout), &mut figures).expect("figures");
    assert!(figures.contains("boinc-rs sim: scenario cpu_only"), "{figures}");
}
