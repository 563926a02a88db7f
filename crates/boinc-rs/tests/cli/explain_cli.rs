//! `boinc-rs explain` end to end: every real state file in tests/fixtures and every
//! scenario in tests/scenarios and examples/scenarios loads, and the JSON carries the
//! documented keys; a broken state fails with the file, line and element named.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn shared() -> PathBuf {
    let dir = repo_root().join("tests");
    assert!(
        dir.is_dir(),
        "{} is missing: it holds the test data (fixtures, scenarios)",
        dir.display()
    );
    dir
}

fn explain(dir: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
        .arg("explain")
        .arg("--state")
        .arg(dir)
        .args(extra)
        .output()
        .expect("the boinc-rs binary runs")
}

fn explain_json(dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["--json"];
    args.extend_from_slice(extra);
    let out = explain(dir, &args);
    assert!(
        out.status.success(),
        "explain failed on {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("explain --json prints one JSON object")
}

const RESOURCE_KEYS: [&str; 4] = ["cpu", "nvidia", "amd", "intel"];

fn check_keys(json: &Value, what: &str) {
    assert!(json["run_list"].is_array(), "{what}: run_list");
    assert!(json["jobs"].is_array(), "{what}: jobs");
    for key in RESOURCE_KEYS {
        let r = &json["resources"][key];
        assert!(r["shortfall"].as_f64().is_some_and(|s| s >= 0.0), "{what}: resources.{key}");
        assert!(r["nidle"].is_number(), "{what}: resources.{key}.nidle");
    }
    let projects = json["projects"].as_object().expect("projects is an object");
    for (name, project) in projects {
        for key in RESOURCE_KEYS {
            assert!(project["resources"][key]["shortfall"].is_number(), "{what}: {name}.{key}");
        }
        assert!(project["short_term_debt"].is_number(), "{what}: {name} debts");
        assert!(project["long_term_debt"].is_number(), "{what}: {name} debts");
    }
    let request = &json["work_request"];
    assert!(request["reason"].is_string(), "{what}: work_request.reason");
    assert!(
        request["project"].is_string() || request["project"].is_null(),
        "{what}: work_request.project"
    );
    for key in RESOURCE_KEYS {
        assert!(request["resources"][key]["req_seconds"].is_number(), "{what}: request {key}");
        assert!(request["resources"][key]["req_ninstances"].is_number(), "{what}: request {key}");
    }
    let disk = &json["disk"];
    assert!(disk["limits"]["all_projects_usage"].is_number(), "{what}: disk.limits");
    assert!(disk["delete_next"].is_array(), "{what}: disk.delete_next");
    for name in projects.keys() {
        let project = &disk["projects"][name];
        assert!(project["usage"].is_number(), "{what}: disk.projects.{name}.usage");
        assert!(project["offender"].is_boolean(), "{what}: disk.projects.{name}.offender");
    }
}

fn scenario_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for parent in [shared().join("scenarios"), repo_root().join("examples/scenarios")] {
        for entry in std::fs::read_dir(&parent).expect("scenario folder is readable") {
            let path = entry.expect("directory entry").path();
            if path.join("client_state.xml").is_file() {
                dirs.push(path);
            }
        }
    }
    dirs.sort();
    dirs
}

#[test]
fn every_scenario_explains_under_every_policy() {
    let dirs = scenario_dirs();
    assert!(dirs.len() >= 9, "expected the 8 shared scenarios and the shipped ones, got {dirs:?}");
    for dir in dirs {
        for policy in ["seed", "legacy", "rec"] {
            let json = explain_json(&dir, &["--policy", policy]);
            check_keys(&json, &format!("{} ({policy})", dir.display()));
            assert_eq!(json["policy"], policy);
        }
    }
}

#[test]
fn every_real_state_file_explains() {
    let mut files = Vec::new();
    for version in ["boinc-7.20.5/state", "boinc-8.3.0"] {
        let dir = shared().join("fixtures").join(version);
        for entry in std::fs::read_dir(&dir).expect("fixture folder is readable") {
            let path = entry.expect("directory entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            if name.starts_with("client_state") && name.ends_with(".xml") {
                files.push(path);
            }
        }
    }
    assert!(files.len() >= 5, "expected the five captured state files, got {files:?}");
    for file in files {
        let dir = tempfile::tempdir().expect("temporary directory");
        std::fs::copy(&file, dir.path().join("client_state.xml")).expect("copy the state file");
        let json = explain_json(dir.path(), &[]);
        check_keys(&json, &file.display().to_string());
    }
}

#[test]
fn the_real_data_directory_with_override_and_config_explains() {
    // The captured data directory, laid out as the real client keeps it.
    let source = shared().join("fixtures/boinc-7.20.5/state");
    let dir = tempfile::tempdir().expect("temporary directory");
    for (from, to) in [
        ("client_state_attached.xml", "client_state.xml"),
        ("global_prefs_override.xml", "global_prefs_override.xml"),
        ("cc_config.xml", "cc_config.xml"),
    ] {
        std::fs::copy(source.join(from), dir.path().join(to)).expect("copy a data file");
    }
    let json = explain_json(dir.path(), &[]);
    check_keys(&json, "boinc-7.20.5 data directory");
    assert!(json["projects"].as_object().is_some_and(|p| !p.is_empty()));
}

#[test]
fn the_shipped_scenario_shows_edf_and_a_packed_gpu() {
    let json = explain_json(&repo_root().join("examples/scenarios/desktop_gpu"), &[]);
    let run_list = json["run_list"].as_array().expect("run list");
    let reason_of =
        |job: &str| run_list.iter().find(|e| e["job"] == job).map(|e| e["reason"].clone());
    assert_eq!(reason_of("protein_wu_1_0"), Some(Value::from("edf")));
    let on_gpu0 = run_list.iter().filter(|e| e["gpu_instances"] == serde_json::json!([0])).count();
    assert_eq!(on_gpu0, 2, "two half-GPU jobs share GPU 0");
    let protein = json["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .find(|j| j["name"] == "protein_wu_1_0")
        .cloned();
    assert_eq!(protein.map(|j| j["deadline_missed"].clone()), Some(Value::Bool(true)));
}

#[test]
fn a_time_that_is_not_a_number_is_refused() {
    let out = explain(&repo_root().join("examples/scenarios/desktop_gpu"), &["--now", "NaN"]);
    assert!(!out.status.success(), "explain --now NaN should fail");
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(message.contains("--now"), "{message}");
}

#[test]
fn the_disk_pressure_scenario_shows_offenders_and_what_goes_first() {
    let json = explain_json(&repo_root().join("examples/scenarios/disk_pressure"), &[]);
    let disk = &json["disk"];
    assert_eq!(disk["limits"]["all_projects_limit"], 4e9);
    assert_eq!(disk["projects"]["alpha"]["limit"], 3e9);
    assert_eq!(disk["projects"]["alpha"]["offender"], true);
    assert_eq!(disk["projects"]["beta"]["offender"], true);
    let next = disk["delete_next"].as_array().expect("delete_next is an array");
    let freed: f64 = next.iter().filter_map(|d| d["nbytes"].as_f64()).sum();
    // 5.2 GB on disk, 4 GB allowed: at least 1.2 GB goes, alpha's pinned map never.
    assert!(freed >= 1.2e9, "{next:?}");
    assert!(next.iter().all(|d| d["file"] != "alpha_pinned_map"));
    assert_eq!(next[0]["project"], "alpha");
    assert_eq!(next[0]["reason"], "priority 1");
}

#[test]
fn text_output_names_every_section() {
    let out = explain(&repo_root().join("examples/scenarios/desktop_gpu"), &[]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for section in
        ["Run list", "Enforcement", "Jobs", "Resources", "Projects", "Work request", "Disk"]
    {
        assert!(text.contains(section), "text output lacks {section}:\n{text}");
    }
}

#[test]
fn a_broken_state_names_file_line_and_element() {
    let dir = tempfile::tempdir().expect("temporary directory");
    std::fs::write(
        dir.path().join("client_state.xml"),
        "<client_state>\n<host_info>\n<p_ncpus>many</p_ncpus>\n</host_info>\n</client_state>\n",
    )
    .expect("write state");
    let out = explain(dir.path(), &[]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("client_state.xml line 3"), "{stderr}");
    assert!(stderr.contains("<p_ncpus>"), "{stderr}");
}

#[test]
fn a_missing_state_and_a_bad_policy_are_clear_errors() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = explain(dir.path(), &[]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no client_state.xml"));
    let out = explain(dir.path(), &["--policy", "fastest"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("seed, legacy, rec"));
}

/// `explain --scenario ... --after-days D`, as JSON.
fn explain_after(scenario: &str, days: &str) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
        .args(["explain", "--json", "--after-days", days, "--scenario"])
        .arg(repo_root().join("examples/scenarios").join(scenario))
        .output()
        .expect("the boinc-rs binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// In the middle of intermittent_deadlines, explain says why the 12-hour project's GPU
/// job runs first: the host is often out of reach, so a job finishing within the
/// late-report margin of its deadline counts as at risk, and its project runs EDF.
#[test]
fn explain_in_the_middle_of_a_run_says_why_the_short_deadline_project_runs_first() {
    let json = explain_after("intermittent_deadlines", "0.62");
    assert!(json["late_report_margin"].as_f64().is_some_and(|m| m > 3600.0), "{json}");
    let run_list = json["run_list"].as_array().expect("run list");
    let first = &run_list[0];
    assert_eq!(first["project"], "nowcast", "{first}");
    assert_eq!(first["reason"], "edf", "{first}");
}

/// In the middle of seed_scenario1, explain says why P1's finished result is not reported
/// yet: its queue is well stocked, so the result waits for the refill, and says by when.
#[test]
fn explain_in_the_middle_of_a_run_says_why_a_result_waits_to_be_reported() {
    let json = explain_after("seed_scenario1.txt", "2.01");
    let p1 = &json["projects"]["P1"];
    assert_eq!(p1["results_waiting"], 1, "{p1}");
    assert_eq!(p1["report_batching"], "well_stocked", "{p1}");
    let now = json["now"].as_f64().expect("now");
    let due = p1["report_due"].as_f64().expect("a report time");
    // Within the hour P1 gives its jobs, and not now.
    assert!(due > now && due < now + 3600.0, "due {due}, now {now}");
    assert_eq!(json["projects"]["P2"]["report_batching"], "unbatched");
    let out = Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
        .args(["explain", "--after-days", "2.01", "--scenario"])
        .arg(repo_root().join("examples/scenarios/seed_scenario1.txt"))
        .output()
        .expect("the boinc-rs binary runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("held while its queue is well stocked"), "{text}");
}

/// In the middle of multithread_mix, explain says what the 8-thread job does and why:
/// at its turn it runs, the single-thread jobs it displaced running on to their
/// checkpoints beside it; before its turn it waits, and explain says so.
#[test]
fn explain_in_the_middle_of_a_run_says_why_the_multithread_job_runs_or_waits() {
    let runs = explain_after("multithread_mix", "0.1400");
    assert_eq!(runs["run_list"][0]["project"], "lattice", "{runs}");
    let actions = runs["actions"].as_array().expect("actions");
    let to_checkpoint = actions.iter().filter(|a| a["reason"] == "not_checkpointed").count();
    assert!(to_checkpoint > 0, "{runs}");
    assert!(actions.iter().any(|a| a["project"] == "lattice" && a["reason"] == "scheduled"));
    let waits = explain_after("multithread_mix", "3.206");
    assert_eq!(waits["multithread"]["project"], "lattice");
    assert_eq!(waits["multithread"]["outcome"], "waits_its_turn", "{waits}");
}
