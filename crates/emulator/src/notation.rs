//! Seed 000 "Describing scenarios": the scenario notation `P(C, D, R)` — a project with
//! CPU time per task C hours, delay bound D hours and fractional resource share R — plus
//! the optional parameters NCPUS, min_queue, leave_in_memory and cpu_scheduling_period.
//!
//! `P1(0.1,1,.5) P2(1,24,.25) P3(1,24,.25)` becomes a [`ClientState`] the emulator runs
//! like a scenario directory. Projects may be separated by spaces, newlines, commas or
//! semicolons. The parameters come from [`NotationOptions`] (the command line) and may
//! also be written in the text as `name = value` (`ncpus = 2`, `min_queue = 0.5`,
//! `leave_in_memory = false`, `cpu_scheduling_period = 1`), so seed 000's "Scenario 1"
//! can be pasted as written; a parameter in the text wins over the options, because the
//! text is the scenario's own description.
//!
//! What the notation leaves open is fixed as follows:
//! - the host has NCPUS CPUs of [`NOTATION_CPU_FLOPS`] each, no GPUs, and is always on,
//!   connected and active (every time-stats fraction 1);
//! - project `NAME` gets master URL `http://name.example.org/` (lowercased) and resource
//!   share R × 100;
//! - each project has one app with one plain CPU version (1 CPU, the host's speed), so a
//!   task takes exactly C hours of CPU; its jobs all have the same size (no spread),
//!   weight 1, and checkpoint every [`NOTATION_CHECKPOINT_PERIOD`] seconds;
//! - min_queue is the whole work buffer: `work_buf_min_days` = min_queue / 24 and
//!   `work_buf_additional_days` = 0, since the seed's buffer has a single size; without
//!   it the preferences keep BOINC's defaults.

use boinc_core::model::{
    App, AppEmulation, AppFiles, AppId, AppVersion, ClientState, Host, Prefs, Project, ProjectId,
    ResourceType, ResourceUsage, SECONDS_PER_DAY, TimeStats,
};
use thiserror::Error;

/// Speed of each CPU of a notation scenario, flops: 1 GFLOPS, so C hours of CPU time is
/// C × 3600 × 10⁹ flops.
pub const NOTATION_CPU_FLOPS: f64 = 1e9;

/// Checkpoint period of notation apps, seconds: real BOINC apps checkpoint every minute
/// or so (BOINC's default "write to disk at most every" 60 s), which is what makes
/// preempting a task without keeping it in memory cost up to a minute of work.
pub const NOTATION_CHECKPOINT_PERIOD: f64 = 60.0;

const SECONDS_PER_HOUR: f64 = 3600.0;

/// Parameters of a notation scenario that are not written as projects (seed 000).
#[derive(Debug, Clone, PartialEq)]
pub struct NotationOptions {
    /// NCPUS: number of CPUs (default 1).
    pub ncpus: u32,
    /// min_queue, hours: the work buffer (`None`: BOINC's default preferences).
    pub min_queue_hours: Option<f64>,
    /// cpu_scheduling_period, hours (`None`: BOINC's default, one hour).
    pub sched_period_hours: Option<f64>,
    /// leave_in_memory: keep preempted tasks in memory.
    pub leave_in_memory: bool,
}

impl Default for NotationOptions {
    fn default() -> Self {
        NotationOptions {
            ncpus: 1,
            min_queue_hours: None,
            sched_period_hours: None,
            leave_in_memory: false,
        }
    }
}

/// Why a scenario notation could not be read. Positions count characters from 1.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum NotationError {
    /// No project in the text.
    #[error(
        "the scenario notation has no project: write at least one as NAME(C, D, R) with C \
         the CPU hours per task, D the delay bound in hours and R the share, e.g. \
         \"P1(0.1, 1, .5) P2(1, 24, .5)\""
    )]
    Empty,
    /// The text does not follow `NAME(C, D, R)` or `name = value`.
    #[error(
        "scenario notation, character {position}: expected {expected}, found {found}; write \
         each project as NAME(C, D, R), e.g. \"P1(0.1, 1, .5)\", and parameters as \
         name = value"
    )]
    Malformed {
        /// Where the problem is.
        position: usize,
        /// What the notation needs there.
        expected: &'static str,
        /// What the text has there.
        found: String,
    },
    /// C ≤ 0.
    #[error(
        "scenario notation, character {position}: project {project} has CPU time per task \
         {value} hours; give a positive number of hours"
    )]
    NonPositiveCpuTime {
        /// Where the value is.
        position: usize,
        /// The project.
        project: String,
        /// The value given.
        value: f64,
    },
    /// D ≤ 0.
    #[error(
        "scenario notation, character {position}: project {project} has delay bound {value} \
         hours; give a positive number of hours"
    )]
    NonPositiveDelayBound {
        /// Where the value is.
        position: usize,
        /// The project.
        project: String,
        /// The value given.
        value: f64,
    },
    /// R < 0.
    #[error(
        "scenario notation, character {position}: project {project} has resource share \
         {value}; give a share of 0 or more"
    )]
    NegativeShare {
        /// Where the value is.
        position: usize,
        /// The project.
        project: String,
        /// The value given.
        value: f64,
    },
    /// Two projects with the same name (names are compared ignoring case, since they
    /// make the master URL).
    #[error(
        "scenario notation, character {position}: project {project} is described twice; \
         give each project a different name"
    )]
    DuplicateProject {
        /// Where the second description starts.
        position: usize,
        /// The name.
        project: String,
    },
    /// A parameter the notation doesn't have.
    #[error(
        "scenario notation, character {position}: unknown parameter {name}; the parameters \
         are ncpus, min_queue, leave_in_memory and cpu_scheduling_period"
    )]
    UnknownParameter {
        /// Where the parameter is.
        position: usize,
        /// Its name.
        name: String,
    },
    /// A parameter (in the text or the options) with an unusable value.
    #[error("scenario notation: {name} = {value} is not usable; {expected}")]
    BadParameter {
        /// The parameter.
        name: &'static str,
        /// The value given.
        value: String,
        /// What to give instead.
        expected: &'static str,
    },
}

/// One `NAME(C, D, R)`.
struct ProjectSpec {
    name: String,
    cpu_hours: f64,
    delay_bound_hours: f64,
    share: f64,
}

/// A character cursor that knows its 1-based position.
struct Cursor<'a> {
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
    text: &'a str,
    position: usize,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Self {
        Cursor { chars: text.char_indices().peekable(), text, position: 1 }
    }

    fn peek(&mut self) -> Option<char> {
        self.chars.peek().map(|&(_, c)| c)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next().map(|(_, c)| c);
        if c.is_some() {
            self.position += 1;
        }
        c
    }

    fn skip_blanks(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
    }

    /// Skips blanks and the separators allowed between items.
    fn skip_separators(&mut self) {
        while self.peek().is_some_and(|c| c.is_whitespace() || c == ',' || c == ';') {
            self.bump();
        }
    }

    /// The longest run of characters satisfying `accept`.
    fn take_while(&mut self, accept: impl Fn(char) -> bool) -> &'a str {
        let start = self.chars.peek().map_or(self.text.len(), |&(i, _)| i);
        let mut end = start;
        while let Some(&(i, c)) = self.chars.peek() {
            if !accept(c) {
                break;
            }
            end = i + c.len_utf8();
            self.bump();
        }
        &self.text[start..end]
    }

    fn found(&mut self) -> String {
        match self.peek() {
            Some(c) => format!("'{c}'"),
            None => "the end of the text".to_string(),
        }
    }

    fn malformed(&mut self, expected: &'static str) -> NotationError {
        NotationError::Malformed { position: self.position, expected, found: self.found() }
    }

    fn expect(&mut self, wanted: char, expected: &'static str) -> Result<(), NotationError> {
        self.skip_blanks();
        if self.peek() == Some(wanted) {
            self.bump();
            Ok(())
        } else {
            Err(self.malformed(expected))
        }
    }

    /// A number; returns it and where it started.
    fn number(&mut self, expected: &'static str) -> Result<(f64, usize), NotationError> {
        self.skip_blanks();
        let position = self.position;
        let text =
            self.take_while(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'));
        match text.parse::<f64>() {
            Ok(value) if value.is_finite() => Ok((value, position)),
            _ if text.is_empty() => Err(self.malformed(expected)),
            _ => Err(NotationError::Malformed { position, expected, found: format!("\"{text}\"") }),
        }
    }
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// Reads a parameter value as a number, checking it with `valid`.
fn parameter_number(
    name: &'static str,
    value: &str,
    valid: impl Fn(f64) -> bool,
    expected: &'static str,
) -> Result<f64, NotationError> {
    match value.parse::<f64>() {
        Ok(v) if v.is_finite() && valid(v) => Ok(v),
        _ => Err(NotationError::BadParameter { name, value: value.to_string(), expected }),
    }
}

const NCPUS_EXPECTED: &str = "give a whole number of CPUs, 1 or more";
const MIN_QUEUE_EXPECTED: &str = "give the work buffer in hours, 0 or more";
const SCHED_PERIOD_EXPECTED: &str = "give the scheduling period in hours, more than 0";
const BOOL_EXPECTED: &str = "give true or false";

/// Applies `name = value` from the text to the options.
fn apply_parameter(
    options: &mut NotationOptions,
    name: &str,
    value: &str,
    position: usize,
) -> Result<(), NotationError> {
    match name.to_ascii_lowercase().as_str() {
        "ncpus" => {
            let n = parameter_number(
                "ncpus",
                value,
                |v| v >= 1.0 && v.fract() == 0.0 && v <= f64::from(u32::MAX),
                NCPUS_EXPECTED,
            )?;
            options.ncpus = n as u32;
        }
        "min_queue" => {
            options.min_queue_hours =
                Some(parameter_number("min_queue", value, |v| v >= 0.0, MIN_QUEUE_EXPECTED)?);
        }
        "cpu_scheduling_period" | "sched_period" => {
            options.sched_period_hours = Some(parameter_number(
                "cpu_scheduling_period",
                value,
                |v| v > 0.0,
                SCHED_PERIOD_EXPECTED,
            )?);
        }
        "leave_in_memory" => {
            options.leave_in_memory = match value.to_ascii_lowercase().as_str() {
                "true" | "yes" | "1" => true,
                "false" | "no" | "0" => false,
                _ => {
                    return Err(NotationError::BadParameter {
                        name: "leave_in_memory",
                        value: value.to_string(),
                        expected: BOOL_EXPECTED,
                    });
                }
            };
        }
        _ => return Err(NotationError::UnknownParameter { position, name: name.to_string() }),
    }
    Ok(())
}

/// Checks options that came from the command line rather than the text.
fn check_options(options: &NotationOptions) -> Result<(), NotationError> {
    if options.ncpus == 0 {
        return Err(NotationError::BadParameter {
            name: "ncpus",
            value: "0".to_string(),
            expected: NCPUS_EXPECTED,
        });
    }
    if let Some(h) = options.min_queue_hours
        && !(h.is_finite() && h >= 0.0)
    {
        return Err(NotationError::BadParameter {
            name: "min_queue",
            value: h.to_string(),
            expected: MIN_QUEUE_EXPECTED,
        });
    }
    if let Some(h) = options.sched_period_hours
        && !(h.is_finite() && h > 0.0)
    {
        return Err(NotationError::BadParameter {
            name: "cpu_scheduling_period",
            value: h.to_string(),
            expected: SCHED_PERIOD_EXPECTED,
        });
    }
    Ok(())
}

/// Reads the projects and in-text parameters.
fn parse(text: &str, options: &mut NotationOptions) -> Result<Vec<ProjectSpec>, NotationError> {
    let mut cursor = Cursor::new(text);
    let mut projects: Vec<ProjectSpec> = Vec::new();
    loop {
        cursor.skip_separators();
        let Some(c) = cursor.peek() else { break };
        if !is_name_start(c) {
            return Err(cursor.malformed("a project name (a letter first)"));
        }
        let start = cursor.position;
        let name = cursor.take_while(is_name_char).to_string();
        cursor.skip_blanks();
        match cursor.peek() {
            Some('=') => {
                cursor.bump();
                cursor.skip_blanks();
                let value = cursor.take_while(|c| !c.is_whitespace() && c != ';' && c != ',');
                if value.is_empty() {
                    return Err(cursor.malformed("a value after '='"));
                }
                apply_parameter(options, &name, value, start)?;
            }
            Some('(') => {
                cursor.bump();
                let (cpu_hours, c_at) = cursor.number("C, the CPU hours per task")?;
                cursor.expect(',', "',' after C")?;
                let (delay_bound_hours, d_at) = cursor.number("D, the delay bound in hours")?;
                cursor.expect(',', "',' after D")?;
                let (share, r_at) = cursor.number("R, the resource share")?;
                cursor.expect(')', "')' after R")?;
                if cpu_hours <= 0.0 {
                    return Err(NotationError::NonPositiveCpuTime {
                        position: c_at,
                        project: name,
                        value: cpu_hours,
                    });
                }
                if delay_bound_hours <= 0.0 {
                    return Err(NotationError::NonPositiveDelayBound {
                        position: d_at,
                        project: name,
                        value: delay_bound_hours,
                    });
                }
                if share < 0.0 {
                    return Err(NotationError::NegativeShare {
                        position: r_at,
                        project: name,
                        value: share,
                    });
                }
                if projects.iter().any(|p| p.name.eq_ignore_ascii_case(&name)) {
                    return Err(NotationError::DuplicateProject { position: start, project: name });
                }
                projects.push(ProjectSpec { name, cpu_hours, delay_bound_hours, share });
            }
            _ => return Err(cursor.malformed("'(' after the project name, or '='")),
        }
    }
    if projects.is_empty() {
        return Err(NotationError::Empty);
    }
    Ok(projects)
}

/// Builds the scenario a seed-000 notation describes (see the module documentation for
/// what the notation leaves open and how it is filled in).
pub fn scenario_from_notation(
    text: &str,
    options: &NotationOptions,
) -> Result<ClientState, NotationError> {
    let mut options = options.clone();
    check_options(&options)?;
    let projects = parse(text, &mut options)?;

    let mut prefs = Prefs { leave_apps_in_memory: options.leave_in_memory, ..Prefs::default() };
    if let Some(hours) = options.min_queue_hours {
        prefs.work_buf_min_days = hours * SECONDS_PER_HOUR / SECONDS_PER_DAY;
        prefs.work_buf_additional_days = 0.0;
    }
    if let Some(hours) = options.sched_period_hours {
        prefs.cpu_scheduling_period_minutes = hours * 60.0;
    }
    let mut state = ClientState {
        host: Host { p_ncpus: options.ncpus, p_fpops: NOTATION_CPU_FLOPS, ..Host::default() },
        time_stats: TimeStats::default(),
        prefs,
        ..ClientState::default()
    };
    for (index, spec) in projects.into_iter().enumerate() {
        let project_id = ProjectId::from_index(index);
        let url = format!("http://{}.example.org/", spec.name.to_ascii_lowercase());
        let mut project = Project::new(spec.name.clone(), url, spec.share * 100.0);
        project.resources[ResourceType::Cpu].has_app_version = true;
        state.projects.push(project);

        let app_id = AppId::from_index(state.apps.len());
        let fpops = spec.cpu_hours * SECONDS_PER_HOUR * NOTATION_CPU_FLOPS;
        state.apps.push(App {
            emulation: Some(AppEmulation {
                latency_bound: spec.delay_bound_hours * SECONDS_PER_HOUR,
                fpops_est: fpops,
                fpops_mean: fpops,
                fpops_std_dev: 0.0,
                weight: 1.0,
                checkpoint_period: NOTATION_CHECKPOINT_PERIOD,
                files: AppFiles::default(),
            }),
            ..App::new(project_id, format!("{}_app", spec.name))
        });
        state.app_versions.push(AppVersion::new(
            project_id,
            app_id,
            1,
            "",
            ResourceUsage { avg_ncpus: 1.0, coprocessor: None },
            NOTATION_CPU_FLOPS,
        ));
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emulation(state: &ClientState, app: usize) -> AppEmulation {
        state.apps[app].emulation.expect("notation apps carry emulation parameters")
    }

    #[test]
    fn seed_scenario_1() {
        let options = NotationOptions {
            ncpus: 2,
            sched_period_hours: Some(1.0),
            leave_in_memory: false,
            min_queue_hours: None,
        };
        let state =
            scenario_from_notation("P1(0.1,1,.5) P2(1,24,.25) P3(1,24,.25)", &options).unwrap();
        assert_eq!(state.host.p_ncpus, 2);
        assert_eq!(state.ncpus(), 2);
        assert_eq!(state.instances(ResourceType::Nvidia), 0);
        assert_eq!(state.projects.len(), 3);
        assert_eq!(state.projects[0].name, "P1");
        assert_eq!(state.projects[0].master_url, "http://p1.example.org/");
        assert_eq!(state.projects[0].resource_share, 50.0);
        assert_eq!(state.projects[1].resource_share, 25.0);
        assert!(state.projects[2].resources[ResourceType::Cpu].has_app_version);
        let p1 = emulation(&state, 0);
        assert_eq!(p1.latency_bound, 3600.0);
        assert!((p1.fpops_est - 0.1 * 3600.0 * 1e9).abs() < 1.0);
        assert_eq!(p1.fpops_est, p1.fpops_mean);
        assert_eq!(p1.fpops_std_dev, 0.0);
        assert_eq!(p1.checkpoint_period, 60.0);
        let p2 = emulation(&state, 1);
        assert_eq!(p2.latency_bound, 24.0 * 3600.0);
        // One CPU at the host's speed: a task is exactly C hours.
        let av = &state.app_versions[1];
        assert_eq!(av.app, AppId(1));
        assert_eq!(av.project, ProjectId(1));
        assert_eq!(av.usage.main_resource(), ResourceType::Cpu);
        assert_eq!(p2.fpops_est / av.flops, 3600.0);
        assert_eq!(state.prefs.scheduling_period(), 3600.0);
        assert!(!state.prefs.leave_apps_in_memory);
        assert_eq!(state.prefs.work_buf_min_days, Prefs::default().work_buf_min_days);
        assert_eq!(state.time_stats, TimeStats::default());
    }

    #[test]
    fn seed_example_over_lines_with_in_text_parameters() {
        let text = "P1(1000, 2000, .5)\nP2(1, 10, .5)\nleave_in_memory = true\n\
                    cpu_scheduling_period = 2; ncpus = 4, min_queue = 12";
        let state = scenario_from_notation(text, &NotationOptions::default()).unwrap();
        assert_eq!(state.projects.len(), 2);
        assert_eq!(emulation(&state, 0).fpops_est, 1000.0 * 3600.0 * 1e9);
        assert_eq!(emulation(&state, 0).latency_bound, 2000.0 * 3600.0);
        assert_eq!(emulation(&state, 1).latency_bound, 36_000.0);
        assert_eq!(state.host.p_ncpus, 4);
        assert!(state.prefs.leave_apps_in_memory);
        assert_eq!(state.prefs.cpu_scheduling_period_minutes, 120.0);
        assert_eq!(state.prefs.work_buf_min(), 12.0 * 3600.0);
        assert_eq!(state.prefs.work_buf_total(), 12.0 * 3600.0);
    }

    #[test]
    fn options_set_the_buffer_and_text_wins_over_options() {
        let options = NotationOptions {
            ncpus: 3,
            min_queue_hours: Some(6.0),
            sched_period_hours: None,
            leave_in_memory: true,
        };
        let state = scenario_from_notation("A(1,2,1)", &options).unwrap();
        assert_eq!(state.host.p_ncpus, 3);
        assert_eq!(state.prefs.work_buf_min_days, 0.25);
        assert_eq!(state.prefs.work_buf_additional_days, 0.0);
        assert!(state.prefs.leave_apps_in_memory);
        let state = scenario_from_notation("A(1,2,1) ncpus=8", &options).unwrap();
        assert_eq!(state.host.p_ncpus, 8);
    }

    #[test]
    fn errors_say_where_and_what() {
        let o = NotationOptions::default();
        let err = |text: &str| scenario_from_notation(text, &o).unwrap_err();
        assert_eq!(err(""), NotationError::Empty);
        assert_eq!(err("  \n ncpus = 2"), NotationError::Empty);
        assert!(matches!(err("P1(1,2)"), NotationError::Malformed { position: 7, .. }));
        assert!(matches!(err("P1(1,2,x)"), NotationError::Malformed { position: 8, .. }));
        assert!(matches!(err("P1 1,2,3"), NotationError::Malformed { position: 4, .. }));
        assert!(matches!(err("(1,2,3)"), NotationError::Malformed { position: 1, .. }));
        assert!(matches!(err("P1(1..5,2,3)"), NotationError::Malformed { position: 4, .. }));
        assert!(matches!(
            err("P1(0,2,.5)"),
            NotationError::NonPositiveCpuTime { position: 4, value: 0.0, .. }
        ));
        assert!(matches!(
            err("P1(1, -2, .5)"),
            NotationError::NonPositiveDelayBound { position: 7, .. }
        ));
        assert!(matches!(err("P1(1,2,-.5)"), NotationError::NegativeShare { position: 8, .. }));
        assert!(matches!(
            err("P1(1,2,.5) p1(1,2,.5)"),
            NotationError::DuplicateProject { position: 12, .. }
        ));
        assert!(matches!(err("P1(1,2,1) speed = 3"), NotationError::UnknownParameter { .. }));
        assert!(matches!(
            err("P1(1,2,1) ncpus = 1.5"),
            NotationError::BadParameter { name: "ncpus", .. }
        ));
        assert!(matches!(
            err("P1(1,2,1) leave_in_memory = maybe"),
            NotationError::BadParameter { name: "leave_in_memory", .. }
        ));
        let message = err("P1(1,2)").to_string();
        assert!(message.contains("character 7") && message.contains("NAME(C, D, R)"), "{message}");
    }

    #[test]
    fn bad_options_are_refused() {
        let bad = NotationOptions { ncpus: 0, ..NotationOptions::default() };
        assert!(matches!(
            scenario_from_notation("P(1,1,1)", &bad),
            Err(NotationError::BadParameter { name: "ncpus", .. })
        ));
        let bad = NotationOptions { sched_period_hours: Some(0.0), ..NotationOptions::default() };
        assert!(scenario_from_notation("P(1,1,1)", &bad).is_err());
        let bad = NotationOptions { min_queue_hours: Some(f64::NAN), ..NotationOptions::default() };
        assert!(scenario_from_notation("P(1,1,1)", &bad).is_err());
    }

    #[test]
    fn zero_share_is_allowed() {
        let state = scenario_from_notation("A(1,2,0) B(1,2,1)", &NotationOptions::default());
        assert_eq!(state.unwrap().projects[0].resource_share, 0.0);
    }
}
