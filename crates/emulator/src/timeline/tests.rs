use super::draw::{MISS_COLOUR, render_timeline, tick_label, tick_step};
use super::lanes::{Layout, layout};
use super::svg_text::{Coord, Escaped};
use crate::trace::TraceProject;
use crate::trace::{AvailabilityKind, TraceEvent, TraceGpu};
use boinc_core::Policy;
use boinc_core::Time;
use boinc_core::model::ResourceType;
use quick_xml::Reader;
use quick_xml::events::Event;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const START: Time = 1.0e9;
const DAY: f64 = 86_400.0;

fn setup(ncpus: u32, gpus: u32, projects: &[&str], days: f64) -> TraceEvent {
    TraceEvent::Setup {
        scenario: "test <run>".to_string(),
        policy: Policy::Seed,
        seed: 7,
        boinc_compat: false,
        start: START,
        end: START + days * DAY,
        ncpus,
        p_fpops: 1e9,
        gpus: if gpus > 0 {
            vec![TraceGpu { resource: ResourceType::Nvidia, count: gpus, peak_flops: 1e12 }]
        } else {
            Vec::new()
        },
        projects: projects
            .iter()
            .map(|name| TraceProject {
                name: name.to_string(),
                resource_share: 100.0,
                devices: None,
            })
            .collect(),
        scheduling_period: 3600.0,
    }
}

fn segment(job: &str, project: &str, from: f64, to: f64, avg_ncpus: f64) -> TraceEvent {
    TraceEvent::RunSegment {
        job: job.to_string(),
        project: project.to_string(),
        start: START + from,
        end: START + to,
        avg_ncpus,
        gpu: None,
    }
}

fn gpu_segment(
    job: &str,
    project: &str,
    from: f64,
    to: f64,
    instance: u32,
    fraction: f64,
) -> TraceEvent {
    TraceEvent::RunSegment {
        job: job.to_string(),
        project: project.to_string(),
        start: START + from,
        end: START + to,
        avg_ncpus: 0.2,
        gpu: Some((ResourceType::Nvidia, vec![instance], fraction)),
    }
}

fn missed(job: &str, project: &str, at: f64) -> TraceEvent {
    TraceEvent::JobReported {
        time: START + at,
        job: job.to_string(),
        project: project.to_string(),
        deadline: START,
        missed: true,
    }
}

/// Parses the SVG to the end; returns every text node, unescaped, and the number of
/// elements of each interesting kind.
fn parse(svg: &str) -> (Vec<String>, usize, usize, usize) {
    let mut reader = Reader::from_str(svg);
    let (mut texts, mut rects, mut paths, mut markers) = (Vec::new(), 0, 0, 0);
    let mut depth = 0i32;
    loop {
        match reader.read_event() {
            Ok(Event::Eof) => break,
            Ok(Event::Start(_)) => depth += 1,
            Ok(Event::End(_)) => depth -= 1,
            Ok(Event::Empty(e)) => match e.name().as_ref() {
                b"rect" => rects += 1,
                b"polygon" => markers += 1,
                b"path" => paths += 1,
                _ => {}
            },
            Ok(Event::Text(t)) => texts.push(t.unescape().expect("valid entities").into_owned()),
            Ok(_) => {}
            Err(error) => panic!("malformed SVG at {}: {error}", reader.buffer_position()),
        }
    }
    assert_eq!(depth, 0, "unbalanced elements");
    (texts, rects, paths, markers)
}

fn small_run() -> Vec<TraceEvent> {
    vec![
        setup(2, 2, &["Alpha & <Beta>", "Gamma"], 1.0),
        segment("a1", "Alpha & <Beta>", 0.0, 7200.0, 1.0),
        segment("g1", "Gamma", 0.0, 3600.0, 1.0),
        gpu_segment("g2", "Gamma", 0.0, 40_000.0, 1, 0.5),
        missed("g1", "Gamma", 5000.0),
        TraceEvent::Availability {
            time: START + 50_000.0,
            what: AvailabilityKind::HostOn,
            up: false,
        },
        TraceEvent::Availability {
            time: START + 60_000.0,
            what: AvailabilityKind::HostOn,
            up: true,
        },
        TraceEvent::Availability {
            time: START + 70_000.0,
            what: AvailabilityKind::GpuActive,
            up: false,
        },
    ]
}

#[test]
fn svg_is_well_formed_with_lanes_legend_and_markers() {
    let svg = render_timeline(&small_run());
    let (texts, rects, paths, markers) = parse(&svg);
    for label in ["CPU 0", "CPU 1", "NVIDIA 0", "NVIDIA 1"] {
        assert!(texts.iter().any(|t| t == label), "no lane {label}");
    }
    assert!(!texts.iter().any(|t| t == "CPU 2" || t == "NVIDIA 2"));
    for project in ["Alpha & <Beta>", "Gamma"] {
        assert!(texts.iter().filter(|t| *t == project).count() >= 2, "{project} not in legend");
    }
    assert!(texts.iter().any(|t| t.starts_with("deadline missed")));
    assert!(texts.iter().any(|t| t == "host off or computing suspended"));
    assert!(texts.iter().any(|t| t == "GPU computing suspended"));
    assert!(texts.iter().any(|t| t == "12h"), "{texts:?}");
    assert!(svg.contains(MISS_COLOUR));
    // One miss on the lanes plus the legend's sample.
    assert_eq!(markers, 2);
    // One path of bars per project that ran.
    assert_eq!(paths, 2);
    // a1, g1 and g2, whose 0.2 CPU does not fit beside a1 and g1.
    assert_eq!(svg.matches("z\n").count(), 3);
    assert!(rects > 8);
}

#[test]
fn cpu_fractions_are_packed_first_fit_and_gpu_jobs_use_their_instances() {
    let events = vec![
        setup(2, 1, &["A", "B"], 1.0),
        segment("half1", "A", 0.0, 100.0, 0.5),
        segment("double", "B", 0.0, 100.0, 1.5),
        gpu_segment("gpu", "B", 50.0, 150.0, 0, 0.25),
        segment("late", "A", 100.0, 200.0, 1.0),
    ];
    let layout = layout(&events).expect("setup present");
    let bars: Vec<(usize, f64, f64, Time)> =
        layout.bars.iter().map(|b| (b.lane, b.offset, b.height, b.start - START)).collect();
    // half1 takes the bottom of CPU 0, double fills the rest of CPU 0 then CPU 1.
    assert!(bars.contains(&(0, 0.0, 0.5, 0.0)));
    assert!(bars.contains(&(0, 0.5, 0.5, 0.0)));
    assert!(bars.contains(&(1, 0.0, 1.0, 0.0)));
    // The GPU job's 0.2 CPU does not fit (CPUs full): drawn on its GPU lane only.
    assert!(bars.contains(&(2, 0.0, 0.25, 50.0)));
    assert!(!bars.iter().any(|b| b.3 == 50.0 && b.0 < 2));
    // At t=100 the CPU lanes are free again.
    assert!(bars.contains(&(0, 0.0, 1.0, 100.0)));
    assert_eq!(layout.lanes.len(), 3);
}

#[test]
fn continued_segments_of_a_job_merge_and_misses_sit_on_its_last_lane() {
    let events = vec![
        setup(2, 0, &["A", "B"], 1.0),
        segment("x", "B", 0.0, 100.0, 1.0),
        segment("j", "A", 0.0, 100.0, 1.0),
        segment("j", "A", 100.0, 200.0, 1.0),
        segment("j", "A", 300.0, 400.0, 1.0),
        missed("j", "A", 500.0),
    ];
    let layout = layout(&events).expect("setup present");
    let job_bars: Vec<_> = layout.bars.iter().filter(|b| b.project == 0).collect();
    // The continuation at 100 keeps lane 1 and merges; the later run takes lane 0.
    assert_eq!(job_bars.len(), 2, "{job_bars:?}");
    assert_eq!((job_bars[0].lane, job_bars[0].start - START), (0, 300.0));
    assert_eq!((job_bars[1].lane, job_bars[1].start - START), (1, 0.0));
    assert_eq!(job_bars[1].end - START, 200.0);
    assert_eq!(layout.misses, vec![(START + 500.0, 0)]);
}

#[test]
fn availability_shading() {
    let events = small_run();
    let layout = layout_of(&events);
    assert_eq!(layout.off, vec![(START + 50_000.0, START + 60_000.0)]);
    assert_eq!(layout.gpu_off, vec![(START + 70_000.0, START + DAY)]);
    let starts_off = vec![
        setup(1, 0, &["A"], 1.0),
        TraceEvent::Availability { time: START, what: AvailabilityKind::Active, up: false },
        TraceEvent::Availability { time: START + 10.0, what: AvailabilityKind::Active, up: true },
    ];
    assert_eq!(layout_of(&starts_off).off, vec![(START, START + 10.0)]);
}

fn layout_of(events: &[TraceEvent]) -> Layout<'_> {
    layout(events).expect("setup present")
}

#[test]
fn coordinates_and_names_are_written_compactly_and_safely() {
    assert_eq!(Coord(12.04).to_string(), "12");
    assert_eq!(Coord(12.06).to_string(), "12.1");
    assert_eq!(Coord(-0.01).to_string(), "0");
    assert_eq!(Escaped("a<b>&\"c'\n").to_string(), "a&lt;b&gt;&amp;&quot;c&apos; ");
    assert_eq!(tick_label(DAY + 6.0 * 3600.0), "1d 6h");
    assert_eq!(tick_step(10.0 * DAY), DAY);
}

#[test]
fn a_trace_without_setup_still_gives_an_svg() {
    let (texts, _, _, _) = parse(&render_timeline(&[]));
    assert!(texts[0].contains("no setup"));
}

/// Ten days on 8 CPUs and 2 GPUs with jobs preempted every scheduling period or so:
/// several thousand segments, as a real run produces.
pub(super) fn ten_day_run() -> Vec<TraceEvent> {
    let projects =
        ["Einstein@Home", "climate<prediction>", "Rosetta & friends", "WCG", "PrimeGrid"];
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut events = vec![setup(8, 2, &projects, 10.0)];
    let mut job = 0;
    for lane in 0..10u32 {
        let mut t = 0.0;
        while t < 10.0 * DAY {
            let project = projects[rng.random_range(0..4)];
            let length = rng.random_range(600.0..7200.0);
            let end = (t + length).min(10.0 * DAY);
            let name = format!("job_{job}");
            // Preempt mid-job now and then: the job continues later on the same lane.
            let split = t + length * 0.5;
            let pieces =
                if rng.random_bool(0.2) { vec![(t, split), (split, end)] } else { vec![(t, end)] };
            for (from, to) in pieces {
                if lane < 8 {
                    events.push(segment(&name, project, from, to, 1.0));
                } else {
                    events.push(gpu_segment(&name, "PrimeGrid", from, to, lane - 8, 1.0));
                }
            }
            if rng.random_bool(0.01) {
                events.push(missed(&name, project, end + 600.0));
            }
            job += 1;
            t = end + rng.random_range(0.0..120.0);
        }
    }
    for day in 0..10 {
        let night = f64::from(day) * DAY + 0.9 * DAY;
        events.push(TraceEvent::Availability {
            time: START + night,
            what: AvailabilityKind::HostOn,
            up: false,
        });
        events.push(TraceEvent::Availability {
            time: START + night + 0.05 * DAY,
            what: AvailabilityKind::HostOn,
            up: true,
        });
    }
    events
}

#[test]
fn a_ten_day_run_stays_small_and_deterministic() {
    let events = ten_day_run();
    let segments = events.iter().filter(|e| matches!(e, TraceEvent::RunSegment { .. })).count();
    assert!(segments > 2000, "{segments}");
    let svg = render_timeline(&events);
    assert_eq!(svg, render_timeline(&events));
    let (texts, _, _, _) = parse(&svg);
    assert!(texts.iter().any(|t| t == "5d"));
    // GPU jobs' CPU fractions add slivers on the CPU lanes; merging keeps the rest.
    let bars = svg.matches("z\n").count();
    assert!(bars < 2 * segments, "{bars} bars for {segments} segments");
    assert!(svg.len() < 40 * segments, "{} bytes for {segments} segments", svg.len());
}
