//! `boinc-rs sim` end to end (issue 3): the same `--seed` gives the same output byte for
//! byte apart from `wall_seconds`, and the same trace; another seed gives another run;
//! `--compare`, `--timeline` and `--notation` work; bad input fails with a clear message.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scenario(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scenarios").join(name);
    assert!(
        dir.join("client_state.xml").is_file(),
        "{} is missing: CI checks out shared/ beside the repository",
        dir.display()
    );
    dir
}

fn sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
        .arg("sim")
        .args(args)
        .output()
        .expect("the boinc-rs binary runs")
}

fn succeed(args: &[&str]) -> String {
    let out = sim(args);
    assert!(
        out.status.success(),
        "boinc-rs sim {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("the output is UTF-8")
}

fn fail(args: &[&str]) -> String {
    let out = sim(args);
    assert!(!out.status.success(), "boinc-rs sim {args:?} should fail but succeeded");
    assert!(out.stdout.is_empty(), "boinc-rs sim {args:?} printed figures although it failed");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The JSON output without its one run-dependent line, `wall_seconds`.
fn without_wall_seconds(json: &str) -> String {
    let lines: Vec<&str> = json.lines().filter(|line| !line.contains("\"wall_seconds\"")).collect();
    assert_eq!(lines.len() + 1, json.lines().count(), "exactly one wall_seconds line");
    lines.join("\n")
}

/// Runs s2 for 10 days with `seed`, writing the trace to `trace`; returns the JSON.
fn run_s2(seed: &str, trace: &Path) -> String {
    let s2 = scenario("s2");
    let s2 = s2.to_str().expect("UTF-8 path");
    let trace = trace.to_str().expect("UTF-8 path");
    succeed(&["--scenario", s2, "--days", "10", "--json", "--seed", seed, "--trace", trace])
}

#[test]
fn the_same_seed_gives_the_same_output_and_trace_byte_for_byte() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (first_trace, second_trace, other_trace) =
        (dir.path().join("1.jsonl"), dir.path().join("2.jsonl"), dir.path().join("3.jsonl"));
    let first = run_s2("7", &first_trace);
    let second = run_s2("7", &second_trace);
    assert_eq!(without_wall_seconds(&first), without_wall_seconds(&second));
    let read = |path: &Path| std::fs::read(path).expect("the trace was written");
    let trace = read(&first_trace);
    assert!(trace.len() > 1000, "the trace holds the run");
    assert!(trace == read(&second_trace), "the traces of two runs with --seed 7 differ");

    let other = run_s2("8", &other_trace);
    assert_ne!(without_wall_seconds(&first), without_wall_seconds(&other));
    assert!(trace != read(&other_trace), "--seed 8 gave the trace of --seed 7");

    let json: Value = serde_json::from_str(&first).expect("--json prints one JSON object");
    for key in [
        "idle_fraction",
        "wasted_fraction",
        "share_violation",
        "fair_share_violation",
        "monotony",
        "rpcs_per_job",
        "sim_days",
        "wall_seconds",
    ] {
        assert!(json[key].as_f64().is_some_and(f64::is_finite), "{key} in {first}");
    }
    assert_eq!(json["sim_days"].as_f64(), Some(10.0));
    let projects = json["projects"].as_object().expect("projects is an object");
    assert_eq!(projects.keys().collect::<Vec<_>>(), ["alpha", "beta", "gamma"]);
    for (name, project) in projects {
        assert!(project["usage"]["cpu"].as_f64().is_some(), "{name}.usage.cpu");
        assert!(project["jobs_done"].as_u64().is_some(), "{name}.jobs_done");
        assert!(project["deadlines_missed"].as_u64().is_some(), "{name}.deadlines_missed");
    }
}

#[test]
fn compare_prints_the_three_policies_side_by_side() {
    let s2 = scenario("s2");
    let out = succeed(&["--scenario", s2.to_str().expect("UTF-8"), "--compare", "seed,legacy,rec"]);
    let header = out.lines().nth(1).expect("a header line");
    let columns: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(columns, ["seed", "legacy", "rec"], "header of\n{out}");
    for row in ["idle fraction", "wasted fraction", "share violation", "monotony", "RPCs per job"] {
        let line = out
            .lines()
            .find(|line| line.trim_start().starts_with(row))
            .unwrap_or_else(|| panic!("no {row} row in\n{out}"));
        let values: Vec<f64> = line[line.find(row).expect("row") + row.len()..]
            .split_whitespace()
            .map(|value| value.parse().unwrap_or_else(|_| panic!("{row}: {line}")))
            .collect();
        assert_eq!(values.len(), 3, "{row}: one value per policy in {line}");
    }
}

/// Checks that `text` is well-formed XML as far as an SVG needs: every tag closed in
/// order, quoted attributes, one root element. Returns the element names seen.
fn check_well_formed(text: &str) -> Vec<String> {
    let mut open: Vec<String> = Vec::new();
    let mut seen = Vec::new();
    let mut roots = 0;
    let mut rest = text;
    while let Some(start) = rest.find('<') {
        assert!(open.len() + roots > 0 || rest[..start].trim().is_empty(), "text outside the root");
        rest = &rest[start..];
        if let Some(after) = rest.strip_prefix("<!--") {
            let end = after.find("-->").expect("comments are closed");
            rest = &after[end + 3..];
            continue;
        }
        if let Some(after) = rest.strip_prefix("<?") {
            let end = after.find("?>").expect("processing instructions are closed");
            rest = &after[end + 2..];
            continue;
        }
        // Find the tag's end outside quoted attribute values.
        let mut quote = None;
        let end = rest
            .char_indices()
            .find(|&(_, c)| match quote {
                Some(q) => {
                    if c == q {
                        quote = None;
                    }
                    false
                }
                None => {
                    if c == '"' || c == '\'' {
                        quote = Some(c);
                    }
                    c == '>'
                }
            })
            .map(|(i, _)| i)
            .expect("every tag is closed with >");
        let tag = &rest[1..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let expected = open.pop().unwrap_or_else(|| panic!("</{name}> closes nothing"));
            assert_eq!(name.trim(), expected, "</{name}> closes <{expected}>");
            continue;
        }
        let name: String =
            tag.chars().take_while(|c| !c.is_whitespace() && *c != '/').collect::<String>();
        assert!(!name.is_empty(), "a tag without a name: <{tag}>");
        assert_eq!(tag.matches('"').count() % 2, 0, "unbalanced quotes in <{tag}>");
        if open.is_empty() {
            roots += 1;
        }
        seen.push(name.clone());
        if !tag.ends_with('/') {
            open.push(name);
        }
    }
    assert!(open.is_empty(), "unclosed elements: {open:?}");
    assert_eq!(roots, 1, "one root element");
    seen
}

#[test]
fn timeline_writes_a_well_formed_svg() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let svg_path = dir.path().join("timeline.svg");
    let gpu_share = scenario("gpu_share");
    succeed(&[
        "--scenario",
        gpu_share.to_str().expect("UTF-8"),
        "--days",
        "2",
        "--timeline",
        svg_path.to_str().expect("UTF-8"),
    ]);
    let svg = std::fs::read_to_string(&svg_path).expect("the timeline was written");
    let elements = check_well_formed(&svg);
    assert!(svg.trim_start().starts_with("<svg") || svg.trim_start().starts_with("<?xml"));
    assert_eq!(elements.iter().find(|e| !e.starts_with('?')).map(String::as_str), Some("svg"));
    // Every bar is one closed subpath (`…z`) of its project's path.
    let bars = svg.matches('z').count();
    assert!(elements.iter().any(|e| e == "path") && bars > 20, "the run's segments are drawn");
    for project in ["A", "B"] {
        assert!(svg.contains(&format!(">{project}<")), "legend entry for {project}");
    }
}

#[test]
fn the_check_of_well_formedness_rejects_broken_xml() {
    for broken in ["<svg><g></svg>", "<svg></svg><svg></svg>", "<svg a=\"1></svg>", "<svg>"] {
        assert!(std::panic::catch_unwind(|| check_well_formed(broken)).is_err(), "{broken}");
    }
    check_well_formed("<?xml version=\"1.0\"?><svg a=\"x>y\"><!-- c --><g/><text>t</text></svg>");
}

#[test]
fn seed_notation_runs() {
    let out = succeed(&[
        "--notation",
        "P1(0.1,1,.5) P2(1,24,.25) P3(1,24,.25)",
        "--ncpus",
        "2",
        "--days",
        "2",
        "--json",
    ]);
    let json: Value = serde_json::from_str(&out).expect("--json prints one JSON object");
    let projects = json["projects"].as_object().expect("projects");
    assert_eq!(projects.len(), 3, "P1, P2, P3 in {out}");
    let done: u64 = projects.values().map(|p| p["jobs_done"].as_u64().unwrap_or(0)).sum();
    assert!(done > 0, "no job finished in {out}");
}

#[test]
fn bad_input_fails_with_a_clear_message() {
    let s2 = scenario("s2");
    let s2 = s2.to_str().expect("UTF-8");

    let missing = fail(&["--scenario", "/nonexistent/scenario"]);
    assert!(missing.contains("/nonexistent/scenario"), "names the directory: {missing}");
    assert!(missing.contains("client_state.xml"), "says what is missing: {missing}");

    for days in ["0", "-3", "NaN", "inf"] {
        let bad = fail(&["--scenario", s2, &format!("--days={days}")]);
        assert!(bad.contains("--days"), "--days {days}: {bad}");
    }
    // A horizon a user cannot mean, and a trace too long to keep, are refused at once.
    let forever = fail(&["--scenario", s2, "--days", "1e9"]);
    assert!(forever.contains("--days") && forever.contains("up to"), "{forever}");
    let trace = std::env::temp_dir().join("boinc-rs-sim-cli-long.jsonl");
    let trace = trace.to_str().expect("UTF-8");
    let long_trace = fail(&["--scenario", s2, "--days", "400", "--trace", trace]);
    assert!(long_trace.contains("--trace") && long_trace.contains("366"), "{long_trace}");

    let not_a_number = fail(&["--scenario", s2, "--days", "ten"]);
    assert!(not_a_number.contains("--days") && not_a_number.contains("ten"), "{not_a_number}");

    let both = fail(&["--scenario", s2, "--notation", "P1(1,24,1)"]);
    assert!(both.contains("not both"), "{both}");
    let neither = fail(&["--days", "1"]);
    assert!(neither.contains("--scenario") && neither.contains("--notation"), "{neither}");

    let notation = fail(&["--notation", "P1(1,24"]);
    assert!(notation.contains("notation"), "{notation}");
}
