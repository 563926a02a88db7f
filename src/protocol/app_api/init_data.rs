//! `init_data.xml` (docs/design.md "Protocol facts", App API; the fixture
//! `boinc-7.20.5/slot/init_data.xml`): what the client tells an app when it starts it,
//! in the app's slot directory. An app using BOINC's API reads it in `boinc_init`: its
//! job, its project and account, the bounds it runs under, the CPU time its job already
//! has, where its shared memory is (`shm_key` -1: the `boinc_mmap_file` beside it) and
//! which process is the client (`client_pid`: the app exits when that process is gone).
//!
//! The client writes it; the app side of boinc-rs reads it, as can a test. Reading is
//! strict about values and lenient about elements it does not know.

use super::super::error::{XmlError, XmlProblem};
use super::super::xml_tree::{Element, parse_document};
use crate::control::TaskSpec;
use quick_xml::Writer;
use quick_xml::events::{BytesEnd, BytesStart, BytesText, Event};

/// The file's name in a slot directory.
pub const INIT_DATA_FILE: &str = "init_data.xml";

/// The BOINC client version whose app API boinc-rs speaks (major, minor, release):
/// apps that check the client's version see this one.
pub const COMPATIBLE_CLIENT_VERSION: (u32, u32, u32) = (7, 20, 5);

/// The host as an app sees it (`<host_info>`, the part apps use).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InitHostInfo {
    /// Usable CPUs.
    pub p_ncpus: u32,
    /// Per-CPU speed, flops.
    pub p_fpops: f64,
    /// Memory, bytes.
    pub m_nbytes: f64,
    /// The host's name.
    pub domain_name: String,
    /// The operating system's name.
    pub os_name: String,
    /// The operating system's version.
    pub os_version: String,
}

/// Everything `init_data.xml` says.
#[derive(Debug, Clone, PartialEq)]
pub struct InitData {
    /// The client's major version.
    pub major_version: u32,
    /// The client's minor version.
    pub minor_version: u32,
    /// The client's release.
    pub release: u32,
    /// The app version's number.
    pub app_version: u32,
    /// The account's id at the project.
    pub userid: u64,
    /// The team's id at the project.
    pub teamid: u64,
    /// The host's id at the project.
    pub hostid: u64,
    /// The app's short name.
    pub app_name: String,
    /// The app version's plan class.
    pub plan_class: String,
    /// The account's name.
    pub user_name: String,
    /// The team's name.
    pub team_name: String,
    /// The project's directory, absolute.
    pub project_dir: String,
    /// The client's data directory, absolute.
    pub boinc_dir: String,
    /// The account's authenticator.
    pub authenticator: String,
    /// The workunit's name.
    pub wu_name: String,
    /// The result's name.
    pub result_name: String,
    /// The shared memory's key; -1: the `boinc_mmap_file` in the slot.
    pub shm_key: i64,
    /// The slot number.
    pub slot: u32,
    /// The client's process id (0: unknown; the app then relies on heartbeats).
    pub client_pid: u32,
    /// CPU seconds the job had at its last checkpoint.
    pub wu_cpu_time: f64,
    /// Elapsed seconds the job had at its last checkpoint.
    pub starting_elapsed_time: f64,
    /// The project's share of the host, 0–1.
    pub resource_share_fraction: f64,
    /// How often the app may checkpoint, seconds.
    pub checkpoint_period: f64,
    /// Where this run's fraction done starts (compound apps).
    pub fraction_done_start: f64,
    /// Where this run's fraction done ends.
    pub fraction_done_end: f64,
    /// The GPU type (`NVIDIA`, `ATI`, `intel_gpu`; empty for a CPU task).
    pub gpu_type: String,
    /// The GPU device the app must use (-1: none).
    pub gpu_device_num: i32,
    /// The GPU's OpenCL device index (-1: unknown).
    pub gpu_opencl_dev_index: i32,
    /// GPU instances used.
    pub gpu_usage: f64,
    /// CPUs used.
    pub ncpus: f64,
    /// Estimated flops of the job.
    pub rsc_fpops_est: f64,
    /// Flops after which the job is aborted.
    pub rsc_fpops_bound: f64,
    /// Memory bound, bytes.
    pub rsc_memory_bound: f64,
    /// Disk bound, bytes.
    pub rsc_disk_bound: f64,
    /// When the job must be done.
    pub computation_deadline: f64,
    /// The host.
    pub host_info: InitHostInfo,
    /// The app version's files, by name.
    pub app_files: Vec<String>,
}

impl Default for InitData {
    fn default() -> Self {
        let (major_version, minor_version, release) = COMPATIBLE_CLIENT_VERSION;
        InitData {
            major_version,
            minor_version,
            release,
            app_version: 0,
            userid: 0,
            teamid: 0,
            hostid: 0,
            app_name: String::new(),
            plan_class: String::new(),
            user_name: String::new(),
            team_name: String::new(),
            project_dir: String::new(),
            boinc_dir: String::new(),
            authenticator: String::new(),
            wu_name: String::new(),
            result_name: String::new(),
            shm_key: -1,
            slot: 0,
            client_pid: 0,
            wu_cpu_time: 0.0,
            starting_elapsed_time: 0.0,
            resource_share_fraction: 1.0,
            checkpoint_period: 300.0,
            fraction_done_start: 0.0,
            fraction_done_end: 1.0,
            gpu_type: String::new(),
            gpu_device_num: -1,
            gpu_opencl_dev_index: -1,
            gpu_usage: 0.0,
            ncpus: 1.0,
            rsc_fpops_est: 0.0,
            rsc_fpops_bound: 0.0,
            rsc_memory_bound: 0.0,
            rsc_disk_bound: 0.0,
            computation_deadline: 0.0,
            host_info: InitHostInfo::default(),
            app_files: Vec::new(),
        }
    }
}

impl InitData {
    /// What a task's app is told: its spec (job, bounds, identity, the checkpoint it
    /// starts from, its GPU), the absolute project and data directories, the client's
    /// process id and the host.
    pub fn for_task(
        spec: &TaskSpec,
        project_dir: &str,
        boinc_dir: &str,
        client_pid: u32,
        host_info: InitHostInfo,
    ) -> InitData {
        let program = &spec.program;
        let (gpu_type, gpu_usage) = spec
            .usage
            .coprocessor
            .map_or((String::new(), 0.0), |(resource, n)| (resource.boinc_name().to_owned(), n));
        let gpu_device_num = match (&spec.usage.coprocessor, spec.gpu_instances.first()) {
            (Some(_), Some(&device)) => i32::try_from(device).unwrap_or(-1),
            _ => -1,
        };
        InitData {
            app_version: program.version_num,
            hostid: program.identity.hostid,
            app_name: program.app_name.clone(),
            plan_class: program.plan_class.clone(),
            user_name: program.identity.user_name.clone(),
            team_name: program.identity.team_name.clone(),
            project_dir: project_dir.to_owned(),
            boinc_dir: boinc_dir.to_owned(),
            authenticator: program.identity.authenticator.clone(),
            wu_name: program.wu_name.clone(),
            result_name: program.result_name.clone(),
            slot: spec.slot,
            client_pid,
            wu_cpu_time: spec.status.checkpoint_cpu_time,
            starting_elapsed_time: spec.status.checkpoint_elapsed_time,
            resource_share_fraction: program.identity.resource_share_fraction,
            checkpoint_period: program.checkpoint_period,
            gpu_type,
            gpu_device_num,
            gpu_usage,
            ncpus: spec.usage.avg_ncpus,
            rsc_fpops_est: program.bounds.fpops_est,
            rsc_fpops_bound: program.bounds.fpops_bound,
            rsc_memory_bound: program.bounds.memory_bound,
            rsc_disk_bound: program.bounds.disk_bound,
            computation_deadline: program.bounds.deadline,
            host_info,
            app_files: program
                .files
                .iter()
                .filter(|f| f.role == crate::control::SlotFileRole::AppFile)
                .map(|f| f.file_name.clone())
                .collect(),
            ..InitData::default()
        }
    }

    /// The file's text.
    pub fn to_xml(&self) -> String {
        let mut out = InitDataWriter(Writer::new_with_indent(Vec::new(), b' ', 4));
        out.open("app_init_data");
        out.value("major_version", self.major_version);
        out.value("minor_version", self.minor_version);
        out.value("release", self.release);
        out.value("app_version", self.app_version);
        out.value("userid", self.userid);
        out.value("teamid", self.teamid);
        out.value("hostid", self.hostid);
        out.text("app_name", &self.app_name);
        out.text("plan_class", &self.plan_class);
        out.text("user_name", &self.user_name);
        out.text("team_name", &self.team_name);
        out.text("project_dir", &self.project_dir);
        out.text("boinc_dir", &self.boinc_dir);
        out.text("authenticator", &self.authenticator);
        out.text("wu_name", &self.wu_name);
        out.text("result_name", &self.result_name);
        out.value("shm_key", self.shm_key);
        out.value("slot", self.slot);
        out.value("client_pid", self.client_pid);
        out.number("wu_cpu_time", self.wu_cpu_time);
        out.number("starting_elapsed_time", self.starting_elapsed_time);
        out.value("using_sandbox", 0);
        out.number("resource_share_fraction", self.resource_share_fraction);
        out.number("checkpoint_period", self.checkpoint_period);
        out.number("fraction_done_start", self.fraction_done_start);
        out.number("fraction_done_end", self.fraction_done_end);
        out.text("gpu_type", &self.gpu_type);
        out.value("gpu_device_num", self.gpu_device_num);
        out.value("gpu_opencl_dev_index", self.gpu_opencl_dev_index);
        out.number("gpu_usage", self.gpu_usage);
        out.number("ncpus", self.ncpus);
        out.number("rsc_fpops_est", self.rsc_fpops_est);
        out.number("rsc_fpops_bound", self.rsc_fpops_bound);
        out.number("rsc_memory_bound", self.rsc_memory_bound);
        out.number("rsc_disk_bound", self.rsc_disk_bound);
        out.number("computation_deadline", self.computation_deadline);
        out.open("host_info");
        out.text("domain_name", &self.host_info.domain_name);
        out.value("p_ncpus", self.host_info.p_ncpus);
        out.number("p_fpops", self.host_info.p_fpops);
        out.number("m_nbytes", self.host_info.m_nbytes);
        out.text("os_name", &self.host_info.os_name);
        out.text("os_version", &self.host_info.os_version);
        out.close("host_info");
        for file in &self.app_files {
            out.text("app_file", file);
        }
        out.close("app_init_data");
        let mut text = String::from_utf8_lossy(&out.0.into_inner()).into_owned();
        text.push('\n');
        text
    }

    /// Reads the file's text. Unknown elements are skipped; a bad value is an error
    /// naming its element and line.
    pub fn parse(text: &str) -> Result<InitData, XmlError> {
        let root = parse_document(text).map_err(|e| e.in_file(INIT_DATA_FILE))?;
        if root.name != "app_init_data" {
            return Err(root
                .error(XmlProblem::WrongRoot { expected: "app_init_data" })
                .in_file(INIT_DATA_FILE));
        }
        let mut data = InitData::default();
        for child in &root.children {
            read_field(&mut data, child).map_err(|e| e.in_file(INIT_DATA_FILE))?;
        }
        Ok(data)
    }
}

fn read_field(data: &mut InitData, child: &Element) -> Result<(), XmlError> {
    let whole = |e: &Element| -> Result<u64, XmlError> {
        let value = e.i64()?;
        u64::try_from(value).map_err(|_| {
            e.error(XmlProblem::OutOfRange { value: e.string(), expected: "zero or more" })
        })
    };
    match child.name.as_str() {
        "major_version" => data.major_version = child.u32()?,
        "minor_version" => data.minor_version = child.u32()?,
        "release" => data.release = child.u32()?,
        "app_version" => data.app_version = child.u32()?,
        "userid" => data.userid = whole(child)?,
        "teamid" => data.teamid = whole(child)?,
        "hostid" => data.hostid = whole(child)?,
        "app_name" => data.app_name = child.string(),
        "plan_class" => data.plan_class = child.string(),
        "user_name" => data.user_name = child.string(),
        "team_name" => data.team_name = child.string(),
        "project_dir" => data.project_dir = child.string(),
        "boinc_dir" => data.boinc_dir = child.string(),
        "authenticator" => data.authenticator = child.string(),
        "wu_name" => data.wu_name = child.string(),
        "result_name" => data.result_name = child.string(),
        "shm_key" => data.shm_key = child.i64()?,
        "slot" => data.slot = child.u32()?,
        "client_pid" => data.client_pid = child.u32()?,
        "wu_cpu_time" => data.wu_cpu_time = child.non_negative_f64()?,
        "starting_elapsed_time" => data.starting_elapsed_time = child.non_negative_f64()?,
        "resource_share_fraction" => data.resource_share_fraction = child.non_negative_f64()?,
        "checkpoint_period" => data.checkpoint_period = child.non_negative_f64()?,
        "fraction_done_start" => {
            data.fraction_done_start = child.f64_in(0.0, 1.0, "between 0 and 1")?
        }
        "fraction_done_end" => {
            data.fraction_done_end = child.f64_in(0.0, 1.0, "between 0 and 1")?
        }
        "gpu_type" => data.gpu_type = child.string(),
        "gpu_device_num" => data.gpu_device_num = child.i32()?,
        "gpu_opencl_dev_index" => data.gpu_opencl_dev_index = child.i32()?,
        "gpu_usage" => data.gpu_usage = child.non_negative_f64()?,
        "ncpus" => data.ncpus = child.non_negative_f64()?,
        "rsc_fpops_est" => data.rsc_fpops_est = child.non_negative_f64()?,
        "rsc_fpops_bound" => data.rsc_fpops_bound = child.non_negative_f64()?,
        "rsc_memory_bound" => data.rsc_memory_bound = child.non_negative_f64()?,
        "rsc_disk_bound" => data.rsc_disk_bound = child.non_negative_f64()?,
        "computation_deadline" => data.computation_deadline = child.non_negative_f64()?,
        "host_info" => data.host_info = read_host_info(child)?,
        "app_file" => data.app_files.push(child.string()),
        _ => {}
    }
    Ok(())
}

fn read_host_info(element: &Element) -> Result<InitHostInfo, XmlError> {
    let mut host = InitHostInfo::default();
    for child in &element.children {
        match child.name.as_str() {
            "p_ncpus" => host.p_ncpus = child.u32()?,
            "p_fpops" => host.p_fpops = child.non_negative_f64()?,
            "m_nbytes" => host.m_nbytes = child.non_negative_f64()?,
            "domain_name" => host.domain_name = child.string(),
            "os_name" => host.os_name = child.string(),
            "os_version" => host.os_version = child.string(),
            _ => {}
        }
    }
    Ok(host)
}

/// Writes the file's elements. Writing into memory cannot fail, so the writer's results
/// carry nothing to act on.
struct InitDataWriter(Writer<Vec<u8>>);

impl InitDataWriter {
    fn open(&mut self, name: &str) {
        let _ = self.0.write_event(Event::Start(BytesStart::new(name)));
    }

    fn close(&mut self, name: &str) {
        let _ = self.0.write_event(Event::End(BytesEnd::new(name)));
    }

    fn text(&mut self, name: &str, text: &str) {
        let _ = self.0.create_element(name).write_text_content(BytesText::new(text));
    }

    fn value(&mut self, name: &str, value: impl std::fmt::Display) {
        self.text(name, &value.to_string());
    }

    /// Numbers as BOINC writes them here (`%f`).
    fn number(&mut self, name: &str, value: f64) {
        self.text(name, &format!("{value:.6}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::{ProcessStatus, SlotFile, SlotFileRole, TaskProgram};
    use crate::model::{ProjectId, ResourceType, ResourceUsage};
    use proptest::prelude::*;

    fn fixture() -> String {
        let path =
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/boinc-7.20.5/slot/init_data.xml");
        std::fs::read_to_string(path).expect("the shared fixture slot/init_data.xml")
    }

    #[test]
    fn reads_the_real_clients_file() {
        let data = InitData::parse(&fixture()).unwrap();
        assert_eq!((data.major_version, data.minor_version, data.release), (7, 20, 5));
        assert_eq!(data.app_name, "upper");
        assert_eq!(data.result_name, "wu_C_r0");
        assert_eq!(data.shm_key, -1);
        assert_eq!(data.client_pid, 3962);
        assert_eq!(data.hostid, 42);
        assert_eq!(data.gpu_device_num, -1);
        assert_eq!(data.rsc_fpops_bound, 1e12);
        assert_eq!(data.checkpoint_period, 60.0);
        assert_eq!(data.host_info.p_ncpus, 2);
        assert_eq!(data.app_files, ["upper_1.02_x86_64-pc-linux-gnu"]);
    }

    #[test]
    fn round_trips_through_its_text() {
        let mut data = InitData::parse(&fixture()).unwrap();
        data.team_name = "a & b <team>".into();
        assert_eq!(InitData::parse(&data.to_xml()), Ok(data));
    }

    /// Found by fuzzing: a value with more than six decimals reads back rounded, as
    /// BOINC's client writes these numbers (`%f`); the rounding settles at once.
    #[test]
    fn numbers_are_written_to_six_decimals_and_settle() {
        let mut data = InitData::parse(&fixture()).unwrap();
        data.rsc_memory_bound = 1_000.000_000_888_888_8;
        let written = data.to_xml();
        assert!(written.contains("<rsc_memory_bound>1000.000001</rsc_memory_bound>"));
        let again = InitData::parse(&written).unwrap();
        assert_eq!(again.rsc_memory_bound, 1_000.000_001);
        assert_eq!(again.to_xml(), written);
    }

    #[test]
    fn a_gpu_tasks_file_names_its_device() {
        let spec = TaskSpec {
            project: ProjectId(0),
            job: "job_1".into(),
            slot: 3,
            usage: ResourceUsage { avg_ncpus: 0.5, coprocessor: Some((ResourceType::Nvidia, 1.0)) },
            gpu_instances: vec![1],
            status: ProcessStatus {
                checkpoint_cpu_time: 12.0,
                checkpoint_elapsed_time: 20.0,
                ..ProcessStatus::default()
            },
            program: TaskProgram {
                result_name: "job_1".into(),
                files: vec![SlotFile {
                    open_name: "app".into(),
                    file_name: "app_1.0".into(),
                    copy: false,
                    role: SlotFileRole::AppFile,
                }],
                ..TaskProgram::default()
            },
        };
        let data = InitData::for_task(&spec, "/p", "/d", 7, InitHostInfo::default());
        assert_eq!(data.gpu_type, "NVIDIA");
        assert_eq!(data.gpu_device_num, 1);
        assert_eq!((data.wu_cpu_time, data.starting_elapsed_time), (12.0, 20.0));
        assert_eq!((data.slot, data.client_pid, data.shm_key), (3, 7, -1));
        assert_eq!(data.app_files, ["app_1.0"]);
    }

    #[test]
    fn garbage_is_an_error_naming_the_file() {
        for text in
            ["", "<x/>", "<app_init_data><slot>-1</slot></app_init_data>", "<app_init_data>"]
        {
            let error = InitData::parse(text).expect_err(text);
            assert_eq!(error.file, INIT_DATA_FILE);
        }
    }

    proptest! {
        #[test]
        fn any_text_parses_or_fails_cleanly(text in "\\PC{0,400}") {
            let _ = InitData::parse(&text);
        }

        #[test]
        fn any_field_value_parses_or_fails_cleanly(
            name in "(slot|wu_cpu_time|hostid|gpu_device_num|fraction_done_end|app_name)",
            value in "\\PC{0,30}",
        ) {
            let _ = InitData::parse(&format!("<app_init_data><{name}>{value}</{name}></app_init_data>"));
        }
    }
}
