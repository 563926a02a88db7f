//! The actor runtime against the emulator, the journal and replay, supervision and the
//! embedding API (issue "Actor runtime" acceptance).

use boinc_core::model::ClientState;
use boinc_emulator::engine::{SimConfig, SimResult, run_simulation};
use boinc_emulator::trace::TraceEvent;
use boinc_runtime::journal::replay;
use boinc_runtime::journal::{EntryKind, Journal, JournalEntry, read_journal};
use boinc_runtime::runtime::supervision::{ActorKind, InjectedPanic};
use boinc_runtime::sim::effects::Faults;
use boinc_runtime::sim::run_actor_simulation;
use boinc_runtime::{Client, ClientEvent, UserAction};
use std::path::Path;

use crate::scenarios;

fn scenario(name: &str) -> ClientState {
    scenarios::load_scenario(name)
}

fn config(name: &str, days: f64, boinc_compat: bool) -> SimConfig {
    scenarios::sim_config(name, days, boinc_compat, true)
}

fn actors(state: ClientState, config: &SimConfig, faults: Faults, journal: Journal) -> SimResult {
    run_actor_simulation(state, config, faults, journal, |_| {}).expect("the actor run ends")
}

/// The schedule: (time, job, what) for every start, preemption and finish.
fn schedule(trace: &[TraceEvent]) -> Vec<(u64, String, &'static str)> {
    let mut out = Vec::new();
    for event in trace {
        match event {
            TraceEvent::RunSegment { job, start, .. } => {
                out.push((start.to_bits(), job.clone(), "start"))
            }
            TraceEvent::Preempted { time, job, .. } => {
                out.push((time.to_bits(), job.clone(), "preempt"))
            }
            TraceEvent::JobFinished { time, job, .. } => {
                out.push((time.to_bits(), job.clone(), "finish"))
            }
            _ => {}
        }
    }
    out.sort();
    out
}

/// Every shipped scenario (the reference ones and the project's own), each in BOINC's
/// modelling and in boinc-rs's own.
fn every_scenario() -> Vec<(String, bool)> {
    let mut names = scenarios::scenario_names();
    let shipped =
        std::fs::read_dir(scenarios::shipped_scenarios_dir()).expect("examples/scenarios");
    names.extend(
        shipped
            .map(|entry| entry.expect("a directory entry").path())
            .filter(|path| path.join("client_state.xml").is_file())
            .map(|path| path.file_name().expect("named").to_string_lossy().into_owned()),
    );
    names.sort();
    names.dedup();
    names.into_iter().flat_map(|name| [(name.clone(), false), (name, true)]).collect()
}

#[test]
fn actors_make_the_emulators_schedule_and_figures() {
    for (name, compat) in every_scenario() {
        let name = name.as_str();
        let config = config(name, 4.0, compat);
        let core = run_simulation(scenario(name), &config, &mut |_| {});
        let actor = actors(scenario(name), &config, Faults::default(), Journal::off());
        let core_schedule = schedule(&core.trace);
        assert!(core_schedule.len() > 5, "{name}: too little happened to compare");
        let actor_schedule = schedule(&actor.trace);
        if let Some(i) = (0..core_schedule.len().max(actor_schedule.len()))
            .find(|&i| core_schedule.get(i) != actor_schedule.get(i))
        {
            let at = |s: &[(u64, String, &'static str)]| {
                s.get(i).map(|(t, job, what)| (f64::from_bits(*t), job.clone(), *what))
            };
            panic!(
                "{name}: the schedules differ at entry {i}: core {:?}, actors {:?}",
                at(&core_schedule),
                at(&actor_schedule)
            );
        }
        assert_eq!(
            serde_json::to_string(&core.figures).unwrap(),
            serde_json::to_string(&actor.figures).unwrap(),
            "{name}: the figures of merit differ"
        );
        assert_eq!((core.decisions, core.rpcs), (actor.decisions, actor.rpcs), "{name}");
    }
}

fn record(name: &str, days: f64, faults: Faults, path: &Path) -> SimResult {
    let journal = Journal::to_file(path).expect("journal file");
    actors(scenario(name), &config(name, days, false), faults, journal)
}

fn faults() -> Faults {
    Faults { rpc_failure_rate: 0.2, app_crash_rate: 0.01, ..Faults::default() }
}

#[test]
fn the_same_seed_writes_the_same_journal() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    record("s2", 2.0, faults(), &a);
    record("s2", 2.0, faults(), &b);
    let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    assert!(a.len() > 10_000);
    assert!(a == b, "two runs with seed 1 wrote different journals");
}

/// The fetch actor makes seed 003's choice itself, over the outlook the scheduler lends
/// it, and the journal shows each choice with the debt and shortfall it rested on; every
/// session that asks for work asks the project it chose.
#[test]
fn the_fetch_actor_journals_its_choice_with_debt_and_shortfall() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("choices.jsonl");
    record("s2", 2.0, Faults::default(), &path);
    let recorded = read_journal(&path).unwrap();
    let mut choices = 0;
    let mut sessions_asking = 0;
    let mut last_choice: Option<&JournalEntry> = None;
    for entry in recorded.iter().filter(|e| e.actor == "fetch" && e.kind == EntryKind::Message) {
        match entry.name.as_str() {
            "ChooseWork" => {
                if entry.body["project"].is_u64() {
                    choices += 1;
                    assert!(entry.body["long_term_debt"].is_f64(), "{:?}", entry.body);
                    assert!(entry.body["shortfall"].is_array(), "{:?}", entry.body);
                    assert!(entry.body["score"].is_array(), "{:?}", entry.body);
                }
                last_choice = Some(entry);
            }
            "RunSession" => {
                let choice = last_choice.expect("a choice before every session");
                assert_eq!(choice.time, entry.time, "the session follows its step's choice");
                let request = &entry.body["call"]["request"];
                let asks = request["resources"]
                    .as_array()
                    .is_some_and(|r| r.iter().any(|r| r["req_seconds"].as_f64() > Some(0.0)));
                if asks && choice.body["project"].is_u64() {
                    sessions_asking += 1;
                    assert_eq!(request["project"], choice.body["project"], "{:?}", entry.body);
                }
            }
            _ => {}
        }
    }
    assert!(choices > 5, "{choices} choices of a project in 2 days");
    assert!(sessions_asking > 5, "{sessions_asking} sessions asked for work");
}

fn inputs_named<'a>(
    entries: &'a [JournalEntry],
    name: &str,
) -> impl Iterator<Item = &'a JournalEntry> {
    entries.iter().filter(move |e| e.kind == EntryKind::Input && e.name == name)
}

#[test]
fn a_faulty_run_replays_identically_and_a_mutated_input_diverges_there() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("faulty.jsonl");
    record("s2", 3.0, faults(), &path);
    let recorded = read_journal(&path).unwrap();
    // The faults did happen: failed RPCs and crashed apps are in the journal.
    assert!(inputs_named(&recorded, "RpcReply").any(|e| e.body.get("Err").is_some()));
    assert!(
        inputs_named(&recorded, "ProcessReport")
            .any(|e| { e.body.pointer("/Ok/Exited/exit/Signal").is_some() })
    );

    let report = replay(recorded.clone()).unwrap();
    assert_eq!(report.divergence, None);
    assert_eq!(report.entries, recorded.len() as u64);

    // Take back the jobs of a server reply whose first job the client started at once:
    // the replayed client has nothing to start, so its very next message differs.
    let mut mutated = recorded.clone();
    // The project's actor settles the session before the reply is taken in: the first
    // command after the reply is the decision's (the resource actors hear of the new
    // buffers beside it).
    let started_at_once = |i: usize| {
        let first_job = recorded[i].body["Ok"]["results"][0]["name"].as_str();
        let beside = |e: &&JournalEntry| {
            !e.actor.starts_with("project:") && !e.actor.starts_with("resource:")
        };
        recorded[i + 1..].iter().find(beside).is_some_and(|next| {
            next.name == "Command" && next.body["command"]["Start"]["job"].as_str() == first_job
        })
    };
    let target = (0..recorded.len())
        .find(|&i| {
            let e = &recorded[i];
            e.kind == EntryKind::Input
                && e.name == "RpcReply"
                && e.seq > 200
                && e.body
                    .pointer("/Ok/results")
                    .and_then(|j| j.as_array())
                    .is_some_and(|j| !j.is_empty())
                && started_at_once(i)
        })
        .expect("a reply whose first job started at once");
    mutated[target].body["Ok"]["results"] = serde_json::json!([]);
    let report = replay(mutated).unwrap();
    let divergence = report.divergence.expect("the mutated reply changes a decision");
    assert_eq!(divergence.last_input, Some(target as u64), "{divergence}");
    assert!(divergence.seq > target as u64);
    assert!(
        recorded[target + 1..divergence.seq as usize].iter().all(|e| e.kind == EntryKind::Input
            || e.actor == "project:0"
            || e.actor.starts_with("fetch")),
        "the divergence is reported at the first decision after the mutated input: {divergence}"
    );
}

/// Runs a scenario through the embedding API; the events a blocking subscriber got.
fn embedded(name: &'static str, days: f64, faults: Faults) -> (Vec<ClientEvent>, SimResult) {
    let system = boinc_runtime::sim::paused_system().unwrap();
    system.block_on(async move {
        let handle = Client::builder()
            .state(scenario(name))
            .config(config(name, days, false))
            .faults(faults)
            .spawn()
            .unwrap();
        let events = handle.events_blocking();
        let result = handle.finished().await.unwrap().simulation.unwrap();
        (events.try_iter().collect(), result)
    })
}

#[test]
fn a_panicking_project_actor_is_restarted_and_the_run_goes_on() {
    let name = "s2";
    let panic = InjectedPanic { kind: ActorKind::Project, index: Some(0), from: 0.0, count: 1 };
    let faults = Faults { panics: vec![panic], ..Faults::default() };
    let result = actors(scenario(name), &config(name, 3.0, false), faults.clone(), Journal::off());
    let alpha = &result.figures.projects["alpha"];
    assert!(alpha.jobs_done > 0, "project alpha kept working after its actor was restarted");

    // The restart is reported on the event stream.
    let (events, _) = embedded(name, 1.0, faults);
    assert!(
        events.iter().any(
            |e| matches!(e, ClientEvent::ActorRestarted { actor, .. } if actor == "project:0")
        ),
        "no restart event"
    );
}

#[test]
fn an_embedding_host_sees_events_and_a_suspended_project_stops() {
    let name = "s2";
    let system = boinc_runtime::sim::paused_system().unwrap();
    let (events, result) = system.block_on(async move {
        let handle = Client::builder()
            .state(scenario(name))
            .config(config(name, 2.0, false))
            .spawn()
            .unwrap();
        let mut stream = handle.events();
        handle.act(UserAction::SuspendProject("gamma".into())).await.unwrap();
        let unknown = handle.act(UserAction::SuspendProject("nobody".into())).await;
        assert!(unknown.is_err(), "an unknown project is an error");
        let result = handle.finished().await.unwrap().simulation.unwrap();
        let mut events = Vec::new();
        while let Ok(event) = stream.try_recv() {
            events.push(event);
        }
        (events, result)
    });
    assert!(events.iter().any(|e| matches!(e, ClientEvent::TaskStarted { .. })));
    assert!(events.iter().any(|e| matches!(e, ClientEvent::WorkRequested { .. })));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, ClientEvent::TaskStarted { project, .. } if project == "gamma"))
    );
    assert_eq!(result.figures.projects["gamma"].usage.get("cpu").copied().unwrap_or(0.0), 0.0);
}

#[test]
fn the_disk_actor_keeps_projects_to_their_shares_and_says_so() {
    let (events, result) = embedded("disk_pressure", 2.0, Faults::default());
    assert!(
        events.iter().any(
            |e| matches!(e, ClientEvent::DiskAction { action, .. } if action.starts_with("deleted"))
        ),
        "the disk actor deleted nothing under pressure"
    );
    let deleted: u32 = result.figures.projects.values().filter_map(|p| p.files_deleted).sum();
    assert!(deleted > 0);
}
