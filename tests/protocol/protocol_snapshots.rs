//! Snapshots of the model read from the real client's state files and two emulator
//! scenarios: any change in what the reader produces shows up as a reviewed diff.

use boinc_core::model::ClientState;
use boinc_core::protocol::{SourceText, StateFiles, load_state, parse_client_state};
use std::fs;
use std::path::{Path, PathBuf};

fn shared_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    assert!(
        dir.is_dir(),
        "{} is missing: it holds the test data (fixtures, scenarios)",
        dir.display()
    );
    dir
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn fixture(relative: &str) -> ClientState {
    let path = shared_dir().join("fixtures").join(relative);
    parse_client_state(&read(&path), relative).unwrap_or_else(|e| panic!("{e}"))
}

fn scenario(name: &str) -> ClientState {
    let dir = shared_dir().join("scenarios").join(name);
    let client_state = read(&dir.join("client_state.xml"));
    let global_prefs = read(&dir.join("global_prefs.xml"));
    let cc_config = read(&dir.join("cc_config.xml"));
    load_state(&StateFiles {
        client_state: SourceText { name: "client_state.xml", text: &client_state },
        global_prefs: Some(SourceText { name: "global_prefs.xml", text: &global_prefs }),
        global_prefs_override: None,
        cc_config: Some(SourceText { name: "cc_config.xml", text: &cc_config }),
    })
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn boinc_7_20_5_fresh() {
    insta::assert_json_snapshot!(fixture("boinc-7.20.5/state/client_state_fresh.xml"));
}

#[test]
fn boinc_7_20_5_attached() {
    insta::assert_json_snapshot!(fixture("boinc-7.20.5/state/client_state_attached.xml"));
}

#[test]
fn boinc_7_20_5_pending_result() {
    insta::assert_json_snapshot!(fixture("boinc-7.20.5/state/client_state_pending_result.xml"));
}

#[test]
fn boinc_8_3_0_running_captured() {
    insta::assert_json_snapshot!(fixture("boinc-8.3.0/client_state_running_captured.xml"));
}

#[test]
fn boinc_8_3_0_save_repo_sample() {
    insta::assert_json_snapshot!(fixture("boinc-8.3.0/client_state_save_repo_sample.xml"));
}

#[test]
fn scenario_gpu_share() {
    insta::assert_json_snapshot!(scenario("gpu_share"));
}

#[test]
fn scenario_s2() {
    insta::assert_json_snapshot!(scenario("s2"));
}
