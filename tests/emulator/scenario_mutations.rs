//! Hostile scenarios (issue 15 item 7): every shipped scenario (the shared ones and
//! examples/scenarios), with values set to extremes and elements deleted or duplicated,
//! either fails to load with a clear error or runs: within a bounded number of steps per
//! simulated day, with a bounded queue, and with finite figures; and `explain` of its
//! state gives finite figures too.

use crate::support;

use boinc_core::Policy;
use boinc_core::decision::decide;
use boinc_core::explain::{Explanation, state_time};
use boinc_core::model::{ClientState, ResourceType, SECONDS_PER_DAY};
use boinc_core::protocol::{SourceText, StateFiles, load_state};
use boinc_core::work_fetch::runnable_job_cap;
use boinc_emulator::engine::{
    SimConfig, SimError, max_steps_per_day, run_to_snapshot, try_run_simulation,
};
use boinc_emulator::figures::FiguresOfMerit;
use boinc_emulator::notation::{NotationOptions, scenario_from_notation};
use boinc_emulator::project_server::MAX_JOBS_PER_REQUEST;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// One scenario's files.
#[derive(Debug, Clone)]
struct Scenario {
    name: String,
    client_state: String,
    global_prefs: Option<String>,
    cc_config: Option<String>,
}

fn scenario_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = Vec::new();
    for parent in [support::scenarios_dir(), root.join("examples/scenarios")] {
        let entries = std::fs::read_dir(&parent).expect("a scenario folder");
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.join("client_state.xml").is_file() {
                dirs.push(path);
            }
        }
    }
    dirs.sort();
    dirs
}

fn scenarios() -> &'static [Scenario] {
    static SCENARIOS: OnceLock<Vec<Scenario>> = OnceLock::new();
    SCENARIOS.get_or_init(|| {
        scenario_dirs()
            .into_iter()
            .map(|dir| {
                let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
                Scenario {
                    name: dir.file_name().expect("named").to_string_lossy().into_owned(),
                    client_state: read("client_state.xml").expect("client_state.xml"),
                    global_prefs: read("global_prefs.xml"),
                    cc_config: read("cc_config.xml"),
                }
            })
            .collect()
    })
}

/// An element of a document: where it starts and ends, and for an element with text
/// only, where its text is.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    depth: usize,
    text: Option<(usize, usize)>,
}

/// The elements of a well-formed document (comments and declarations skipped).
fn spans(text: &str) -> Vec<Span> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    // Open elements: (start, end of the start tag, has a child element).
    let mut open: Vec<(usize, usize, bool)> = Vec::new();
    let mut at = 0;
    while let Some(offset) = text[at..].find('<') {
        let start = at + offset;
        let rest = &text[start..];
        if rest.starts_with("<!--") {
            at = start + rest.find("-->").map_or(rest.len(), |e| e + 3);
            continue;
        }
        let Some(close) = rest.find('>') else { break };
        let end = start + close + 1;
        if rest.starts_with("<?") || rest.starts_with("<!") {
            at = end;
            continue;
        }
        if rest.starts_with("</") {
            if let Some((open_start, content, had_child)) = open.pop() {
                let text_range = (!had_child).then_some((content, start));
                found.push(Span { start: open_start, end, depth: open.len(), text: text_range });
            }
        } else if bytes[end - 2] == b'/' {
            if let Some(parent) = open.last_mut() {
                parent.2 = true;
            }
            found.push(Span { start, end, depth: open.len(), text: None });
        } else {
            if let Some(parent) = open.last_mut() {
                parent.2 = true;
            }
            open.push((start, end, false));
        }
        at = end;
    }
    found
}

/// Values at the edges of what a number may be: the first ones a reader accepts for many
/// elements, the last ones none (they must give a clear error).
const EXTREMES: [&str; 12] = [
    "0",
    "1e-300",
    "1e-8",
    "4294967295",
    "99999999999",
    "1e308",
    "-1",
    "-1e308",
    "NaN",
    "inf",
    "",
    "x",
];

#[derive(Debug, Clone)]
enum Mutation {
    /// Sets the text of the n-th text element to an extreme.
    Set(usize, usize),
    /// Deletes the n-th element (never the root).
    Delete(usize),
    /// Duplicates the n-th element (never the root).
    Duplicate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), 0..6usize).prop_map(|(n, v)| Mutation::Set(n, v)),
        1 => (any::<usize>(), 6..EXTREMES.len()).prop_map(|(n, v)| Mutation::Set(n, v)),
        1 => any::<usize>().prop_map(Mutation::Delete),
        1 => any::<usize>().prop_map(Mutation::Duplicate),
    ]
}

fn mutate(text: &str, mutation: &Mutation) -> String {
    let all = spans(text);
    let pick = |candidates: Vec<Span>, n: usize| {
        (!candidates.is_empty()).then(|| candidates[n % candidates.len()])
    };
    match *mutation {
        Mutation::Set(n, value) => {
            // Numbers only: a name or URL set to a number only makes a reference dangle.
            let is_number =
                |s: &Span| s.text.is_some_and(|(a, b)| text[a..b].trim().parse::<f64>().is_ok());
            let leaves: Vec<Span> = all.into_iter().filter(is_number).collect();
            match pick(leaves, n).and_then(|s| s.text) {
                Some((from, to)) => format!("{}{}{}", &text[..from], EXTREMES[value], &text[to..]),
                None => text.to_string(),
            }
        }
        Mutation::Delete(n) => match pick(all.into_iter().filter(|s| s.depth > 0).collect(), n) {
            Some(s) => format!("{}{}", &text[..s.start], &text[s.end..]),
            None => text.to_string(),
        },
        Mutation::Duplicate(n) => {
            match pick(all.into_iter().filter(|s| s.depth > 0).collect(), n) {
                Some(s) => format!("{}{}", &text[..s.end], &text[s.start..]),
                None => text.to_string(),
            }
        }
    }
}

fn assert_finite(what: &str, figures: &FiguresOfMerit) -> Result<(), TestCaseError> {
    let values = [
        ("idle", figures.idle_fraction),
        ("wasted", figures.wasted_fraction),
        ("share violation", figures.share_violation),
        ("fair-share violation", figures.fair_share_violation),
        ("monotony", figures.monotony),
        ("RPCs per job", figures.rpcs_per_job),
        ("days", figures.sim_days),
    ];
    for (name, value) in values {
        prop_assert!(value.is_finite(), "{what}: {name} = {value}");
    }
    for (project, p) in &figures.projects {
        for (device, usage) in &p.usage {
            prop_assert!(usage.is_finite(), "{what}: {project} {device} usage {usage}");
        }
        prop_assert!(p.fair_share.is_finite() && p.processing_share.is_finite(), "{what}");
    }
    Ok(())
}

/// Simulated days each mutated scenario runs.
const DAYS: f64 = 2.0;

/// The most jobs a run's client may hold: the failsafe cap per project and resource
/// ([`boinc_core::work_fetch::runnable_job_cap`]) for each, what a reply may bring on
/// top, and what the scenario held at its start.
fn job_bound(state: &ClientState) -> usize {
    let caps: usize = ResourceType::ALL.iter().map(|&r| runnable_job_cap(state, r)).sum();
    state.projects.len().max(1) * (caps + MAX_JOBS_PER_REQUEST) + state.jobs.len()
}

/// Loads a scenario's files and, if they load, explains and runs them (see the module
/// documentation for what must hold).
fn check(
    what: &str,
    client_state: &str,
    global_prefs: Option<&str>,
    cc_config: Option<&str>,
    boinc_compat: bool,
) -> Result<(), TestCaseError> {
    let files = StateFiles {
        client_state: SourceText { name: "client_state.xml", text: client_state },
        global_prefs: global_prefs.map(|text| SourceText { name: "global_prefs.xml", text }),
        global_prefs_override: None,
        cc_config: cc_config.map(|text| SourceText { name: "cc_config.xml", text }),
    };
    let state = match load_state(&files) {
        Ok(state) => state,
        Err(error) => {
            // A clear error: it names the file.
            let message = error.to_string();
            prop_assert!(message.contains(".xml"), "{what}: {message}");
            return Ok(());
        }
    };
    check_state(what, state, boinc_compat)
}

/// Explains and runs a loaded state.
fn check_state(what: &str, state: ClientState, boinc_compat: bool) -> Result<(), TestCaseError> {
    // `explain` of the state as loaded.
    let now = state_time(&state);
    let decision = decide(&state, Policy::Seed, now - 60.0, now);
    let json = serde_json::to_string(&Explanation::new(&state, &decision));
    prop_assert!(json.is_ok(), "{what}: explain's JSON: {json:?}");

    let config = SimConfig {
        scenario: "mutated".to_string(),
        policy: Policy::Seed,
        seed: 1,
        duration: DAYS * SECONDS_PER_DAY,
        boinc_compat,
        existing_jobs_only: false,
        trace: false,
    };
    let bound = job_bound(&state);
    let steps_per_day = max_steps_per_day(&state);
    let result = try_run_simulation(state.clone(), &config, &mut |_| {});
    let figures = match &result {
        Ok(result) => {
            // Bounded: the run's steps are what decisions it made, at most two a step.
            let cap = 2 * steps_per_day * (DAYS as u64 + 1);
            prop_assert!(result.decisions <= cap, "{what}: {} decisions", result.decisions);
            &result.figures
        }
        Err(error @ SimError::Runaway { partial, .. }) => {
            prop_assert!(error.to_string().contains("stopped"), "{what}: {error}");
            &partial.figures
        }
    };
    assert_finite(what, figures)?;
    // Bounded memory: the client never holds more than the failsafe caps allow.
    let snapshot = run_to_snapshot(state, &config);
    let live = snapshot.state.jobs.iter().filter(|j| !j.got_server_ack).count();
    prop_assert!(live <= bound, "{what}: {live} jobs held");
    Ok(())
}

proptest! {
    // Seeded: the same 96 mutated scenarios on every run, a few seconds in CI.
    #![proptest_config(ProptestConfig {
        cases: 96,
        rng_seed: RngSeed::Fixed(15),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_scenarios_load_with_a_clear_error_or_run_bounded_and_finite(
        index in any::<usize>(),
        mutations in prop::collection::vec(mutation(), 1..4),
        prefs in prop::bool::weighted(0.2),
        boinc_compat in any::<bool>(),
    ) {
        let scenario = &scenarios()[index % scenarios().len()];
        let mut client_state = scenario.client_state.clone();
        let mut global_prefs = scenario.global_prefs.clone();
        for m in &mutations {
            match (&mut global_prefs, prefs) {
                (Some(text), true) => *text = mutate(text, m),
                _ => client_state = mutate(&client_state, m),
            }
        }
        let what = format!("{} {:?}", scenario.name, mutations);
        check(&what, &client_state, global_prefs.as_deref(), scenario.cc_config.as_deref(), boinc_compat)?;
    }
}

#[test]
fn spans_find_elements_text_and_nesting() {
    let text = "<?xml version=\"1.0\"?>\n<!-- c <x> -->\n<a><b>1</b><c/><d><e>2</e></d></a>";
    let found = spans(text);
    let names: Vec<&str> = found.iter().map(|s| &text[s.start..s.start + 2]).collect();
    assert_eq!(names, ["<b", "<c", "<e", "<d", "<a"]);
    let leaf = found[0].text.expect("b has text");
    assert_eq!(&text[leaf.0..leaf.1], "1");
    assert!(found[3].text.is_none(), "d has a child");
    assert_eq!(mutate(text, &Mutation::Set(1, 3)), text.replace("<e>2</e>", "<e>4294967295</e>"));
    assert_eq!(mutate(text, &Mutation::Delete(1)), text.replace("<c/>", ""));
    assert_eq!(mutate(text, &Mutation::Duplicate(0)), text.replace("<b>1</b>", "<b>1</b><b>1</b>"));
}

/// The first `<element>` of a scenario's client_state.xml set to `value`.
fn with_value(scenario: &str, element: &str, value: &str) -> String {
    let text =
        &scenarios().iter().find(|s| s.name == scenario).expect("a shipped scenario").client_state;
    let open = format!("<{element}>");
    let start =
        text.find(&open).unwrap_or_else(|| panic!("{scenario} has no <{element}>")) + open.len();
    let end = start + text[start..].find('<').expect("a closing tag");
    format!("{}{}{}", &text[..start], value, &text[end..])
}

fn check_value(scenario: &str, element: &str, value: &str) {
    let prefs =
        scenarios().iter().find(|s| s.name == scenario).and_then(|s| s.global_prefs.clone());
    for boinc_compat in [false, true] {
        let what = format!("{scenario} <{element}>{value}");
        check(&what, &with_value(scenario, element, value), prefs.as_deref(), None, boinc_compat)
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// The inputs that hung or aborted the emulator and `explain` before there were bounds:
/// each now loads with a clear error or runs bounded and finite.
#[test]
fn the_known_hostile_values_run_bounded_or_fail_clearly() {
    // Estimates a hundred million times too small: the client would fetch a reply's
    // worth of jobs a minute for ever.
    check_value("s2", "fpops_est", "2.88e5");
    check_value("gpu_share", "fpops_est", "1e-300");
    // Jobs that occupy no CPU, or next to none, or more CPUs than any host has.
    for value in ["0", "1e-300", "99999999999"] {
        check_value("cpu_only", "avg_ncpus", value);
    }
    // A host with four billion CPUs or GPUs, or CPUs of absurd speed.
    check_value("s2", "p_ncpus", "4294967295");
    check_value("gpu_share", "count", "4294967295");
    check_value("s2", "p_fpops", "1e308");
    check_value("gpu_share", "peak_flops", "1e308");
    // Seed 000's notation with jobs that take no time.
    for notation in ["P1(1e-300,1,1)", "P1(1e-300,1e-300,1) P2(1,24,0)"] {
        let state = scenario_from_notation(notation, &NotationOptions::default())
            .unwrap_or_else(|e| panic!("{notation}: {e}"));
        for boinc_compat in [false, true] {
            check_state(notation, state.clone(), boinc_compat).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}
