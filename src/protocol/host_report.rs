//! What a scheduler request tells a project about the host (docs/design.md "Protocol facts";
//! the elements and their order are the real client's, fixtures/boinc-7.20.5 and 8.3.0):
//! `<host_info>`, `<time_stats>`, `<net_stats>`, `<disk_usage>` and the per-GPU
//! `<coprocs>` entries that carry seed 003's `req_secs`/`req_instances`.
//!
//! The time statistics' durations are left out until the client has started a session
//! (a state made for the emulator has none). `<disk_usage>` carries BOINC's three
//! figures only: seed 004's free-space figures, which BOINC's scheduler does not parse
//! (it logs each unknown element), travel in memory between the emulator's client and
//! its servers ([`DiskUsageReport::free_space`]) but are never written; a server that
//! reads a request works them out from BOINC's figures.
//!
//! The host's description and the GPUs' names may be borrowed from the state a request
//! is made from ([`Cow`]); a request read from text owns them.

use super::cuda_prop::{parse_cuda_property, write_cuda_properties};
use super::error::XmlError;
use super::host_info::{parse_time_stats, read_description};
use super::opencl_prop::{parse_opencl_prop, write_opencl_prop};
use super::xml_tree::Element;
use super::xml_write::XmlWriter;
use crate::disk::FreeSpaceFigures;
use crate::model::{
    CudaProperties, HostDescription, NetStats, OpenclDevice, ResourceType, TimeStats,
};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// A request's `<host_info>`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HostInfo<'a> {
    /// Identity, processor and operating system.
    pub description: Cow<'a, HostDescription>,
    /// CPUs (`<p_ncpus>`): the hardware count, or cc_config's `<ncpus>`.
    pub p_ncpus: u32,
    /// Benchmarked speed of one CPU, flops (`<p_fpops>`).
    pub p_fpops: f64,
    /// Physical memory, bytes (`<m_nbytes>`).
    pub m_nbytes: f64,
    /// Swap, bytes (`<m_swap>`).
    pub m_swap: f64,
    /// Size of the data directory's disk, bytes (`<d_total>`).
    pub d_total: f64,
    /// Free space on it, bytes (`<d_free>`).
    pub d_free: f64,
    /// GPUs the client may use (`<n_usable_coprocs>`).
    pub n_usable_coprocs: u32,
}

impl HostInfo<'_> {
    /// The same, owning the description.
    pub fn into_owned(self) -> HostInfo<'static> {
        HostInfo { description: Cow::Owned(self.description.into_owned()), ..self }
    }

    pub(crate) fn parse(element: &Element) -> Result<HostInfo<'static>, XmlError> {
        let mut host = HostInfo::default();
        for child in &element.children {
            match child.name.as_str() {
                "p_ncpus" => host.p_ncpus = child.u32()?,
                "p_fpops" => host.p_fpops = child.non_negative_f64()?,
                "m_nbytes" => host.m_nbytes = child.non_negative_f64()?,
                "m_swap" => host.m_swap = child.non_negative_f64()?,
                "d_total" => host.d_total = child.non_negative_f64()?,
                "d_free" => host.d_free = child.non_negative_f64()?,
                "n_usable_coprocs" => host.n_usable_coprocs = child.u32()?,
                _ => {
                    read_description(child, host.description.to_mut())?;
                }
            }
        }
        Ok(host)
    }

    pub(crate) fn write(&self, writer: &mut XmlWriter) {
        writer.open("host_info");
        self.write_fields(writer);
        writer.close("host_info");
    }

    /// The elements inside `<host_info>`: a state file adds the host's `<coprocs>`
    /// after them.
    pub(crate) fn write_fields(&self, writer: &mut XmlWriter) {
        let d = &self.description;
        writer.integer("timezone", d.timezone);
        writer.text("domain_name", &d.domain_name);
        writer.text("ip_addr", &d.ip_addr);
        writer.text("host_cpid", &d.host_cpid);
        writer.integer("p_ncpus", self.p_ncpus);
        writer.text("p_vendor", &d.p_vendor);
        writer.text("p_model", &d.p_model);
        writer.text("p_features", &d.p_features);
        writer.number("p_fpops", self.p_fpops);
        writer.number("p_iops", d.p_iops);
        writer.number("p_membw", d.p_membw);
        writer.number("p_calculated", d.p_calculated);
        writer.flag("p_vm_extensions_disabled", d.p_vm_extensions_disabled);
        writer.number("m_nbytes", self.m_nbytes);
        writer.number("m_cache", d.m_cache);
        writer.number("m_swap", self.m_swap);
        writer.number("d_total", self.d_total);
        writer.number("d_free", self.d_free);
        writer.text("os_name", &d.os_name);
        writer.text("os_version", &d.os_version);
        writer.integer("n_usable_coprocs", self.n_usable_coprocs);
        // Linux has no Windows Subsystem for Linux; BOINC's client says so every time.
        writer.flag("wsl_available", false);
        writer.text_if_any("virtualbox_version", &d.virtualbox_version);
        if !d.docker_version.is_empty() {
            writer.text("docker_version", &d.docker_version);
            writer.integer("docker_type", d.docker_type);
        }
    }
}

/// A request's `<time_stats>`: the availability fractions, and the durations a client
/// that measures them reports.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TimeStatsReport {
    /// Fraction of time the client runs (`<on_frac>`).
    pub on_frac: f64,
    /// Fraction of that time the network is up (`<connected_frac>`; -1: unknown).
    pub connected_frac: f64,
    /// Fraction of it computing and the network are both allowed.
    pub cpu_and_network_available_frac: f64,
    /// Fraction of it computing is allowed (`<active_frac>`).
    pub active_frac: f64,
    /// Fraction of it GPU computing is allowed (`<gpu_active_frac>`).
    pub gpu_active_frac: f64,
    /// When the client started (`<client_start_time>`).
    pub client_start_time: Option<f64>,
    /// When the statistics started (`<total_start_time>`).
    pub total_start_time: Option<f64>,
    /// Seconds measured (`<total_duration>`).
    pub total_duration: Option<f64>,
    /// Seconds of them computing was allowed (`<total_active_duration>`).
    pub total_active_duration: Option<f64>,
    /// Seconds of them GPU computing was allowed (`<total_gpu_active_duration>`).
    pub total_gpu_active_duration: Option<f64>,
    /// The client's clock when it wrote the request (`<now>`).
    pub now: Option<f64>,
    /// How long the previous session ran (`<previous_uptime>`).
    pub previous_uptime: Option<f64>,
    /// Seconds of this session computing was allowed (`<session_active_duration>`).
    pub session_active_duration: Option<f64>,
    /// Seconds of this session GPU computing was allowed.
    pub session_gpu_active_duration: Option<f64>,
}

impl TimeStatsReport {
    /// The optional figures, by element name, in the order the real client writes them.
    fn durations(&self) -> [(&'static str, Option<f64>); 9] {
        [
            ("client_start_time", self.client_start_time),
            ("total_start_time", self.total_start_time),
            ("total_duration", self.total_duration),
            ("total_active_duration", self.total_active_duration),
            ("total_gpu_active_duration", self.total_gpu_active_duration),
            ("now", self.now),
            ("previous_uptime", self.previous_uptime),
            ("session_active_duration", self.session_active_duration),
            ("session_gpu_active_duration", self.session_gpu_active_duration),
        ]
    }

    fn duration_mut(&mut self, name: &str) -> Option<&mut Option<f64>> {
        Some(match name {
            "client_start_time" => &mut self.client_start_time,
            "total_start_time" => &mut self.total_start_time,
            "total_duration" => &mut self.total_duration,
            "total_active_duration" => &mut self.total_active_duration,
            "total_gpu_active_duration" => &mut self.total_gpu_active_duration,
            "now" => &mut self.now,
            "previous_uptime" => &mut self.previous_uptime,
            "session_active_duration" => &mut self.session_active_duration,
            "session_gpu_active_duration" => &mut self.session_gpu_active_duration,
            _ => return None,
        })
    }

    /// The client's statistics as reported at `now`: the fractions, and the durations
    /// once a session has started (BOINC's client sends them all).
    pub fn of(stats: &TimeStats, now: f64) -> TimeStatsReport {
        let totals = &stats.totals;
        let started = totals.started();
        let known = |value: f64| started.then_some(value);
        TimeStatsReport {
            client_start_time: known(totals.client_start_time),
            total_start_time: known(totals.total_start_time),
            total_duration: known(totals.total_duration),
            total_active_duration: known(totals.total_active_duration),
            total_gpu_active_duration: known(totals.total_gpu_active_duration),
            now: Some(now),
            previous_uptime: known(totals.previous_uptime),
            session_active_duration: known(totals.session_active_duration),
            session_gpu_active_duration: known(totals.session_gpu_active_duration),
            ..TimeStatsReport::from_fractions(stats)
        }
    }

    /// The fractions of the client's statistics, with no durations.
    pub fn from_fractions(stats: &TimeStats) -> TimeStatsReport {
        TimeStatsReport {
            on_frac: stats.on_frac,
            connected_frac: stats.connected_frac,
            cpu_and_network_available_frac: stats.cpu_and_network_available_frac,
            active_frac: stats.active_frac,
            gpu_active_frac: stats.gpu_active_frac,
            ..TimeStatsReport::default()
        }
    }

    pub(crate) fn parse(element: &Element) -> Result<TimeStatsReport, XmlError> {
        // The fractions are read and checked as the state file's are.
        let mut stats = TimeStatsReport::from_fractions(&parse_time_stats(element)?);
        for child in &element.children {
            if let Some(slot) = stats.duration_mut(&child.name) {
                *slot = Some(child.f64()?);
            }
        }
        Ok(stats)
    }

    pub(crate) fn write(&self, writer: &mut XmlWriter) {
        writer.open("time_stats");
        self.write_fields(writer);
        writer.close("time_stats");
    }

    /// The elements inside `<time_stats>`: a state file adds the emulator's period
    /// lengths after them.
    pub(crate) fn write_fields(&self, writer: &mut XmlWriter) {
        writer.number("on_frac", self.on_frac);
        writer.number("connected_frac", self.connected_frac);
        writer.number("cpu_and_network_available_frac", self.cpu_and_network_available_frac);
        writer.number("active_frac", self.active_frac);
        writer.number("gpu_active_frac", self.gpu_active_frac);
        for (name, value) in self.durations() {
            writer.number_if_any(name, value);
        }
    }
}

/// Writes `<net_stats>` as the real client does.
pub(crate) fn write_net_stats(stats: &NetStats, writer: &mut XmlWriter) {
    writer.open("net_stats");
    writer.number("bwup", stats.bwup);
    writer.number("avg_up", stats.avg_up);
    writer.number("avg_time_up", stats.avg_time_up);
    writer.number("bwdown", stats.bwdown);
    writer.number("avg_down", stats.avg_down);
    writer.number("avg_time_down", stats.avg_time_down);
    writer.close("net_stats");
}

/// A request's `<disk_usage>`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DiskUsageReport {
    /// Bytes all projects' files take (`<d_boinc_used_total>`).
    pub d_boinc_used_total: f64,
    /// Bytes the requesting project's files take (`<d_boinc_used_project>`).
    pub d_boinc_used_project: f64,
    /// Bytes the project may use (`<d_project_share>`).
    pub d_project_share: f64,
    /// Seed 004's three free-space figures for this project.
    pub free_space: Option<FreeSpaceFigures>,
}

impl DiskUsageReport {
    pub(crate) fn parse(element: &Element) -> Result<DiskUsageReport, XmlError> {
        let mut usage = DiskUsageReport::default();
        let mut figures = [None; 3];
        for child in &element.children {
            match child.name.as_str() {
                "d_boinc_used_total" => usage.d_boinc_used_total = child.non_negative_f64()?,
                "d_boinc_used_project" => usage.d_boinc_used_project = child.non_negative_f64()?,
                "d_project_share" => usage.d_project_share = child.non_negative_f64()?,
                "free_space" => figures[0] = Some(child.non_negative_f64()?),
                "free_space_after_offenders" => figures[1] = Some(child.non_negative_f64()?),
                "free_space_after_offenders_and_self" => {
                    figures[2] = Some(child.non_negative_f64()?)
                }
                _ => {}
            }
        }
        // The later figures are at least the earlier ones (seed 004); a missing one is
        // taken as the one before it.
        if let [Some(free), after_offenders, after_self] = figures {
            let after_offenders = after_offenders.unwrap_or(free);
            usage.free_space = Some(FreeSpaceFigures {
                free,
                free_after_offenders: after_offenders,
                free_after_offenders_and_self: after_self.unwrap_or(after_offenders),
            });
        }
        Ok(usage)
    }

    pub(crate) fn write(&self, writer: &mut XmlWriter) {
        writer.open("disk_usage");
        writer.number("d_boinc_used_total", self.d_boinc_used_total);
        writer.number("d_boinc_used_project", self.d_boinc_used_project);
        writer.number("d_project_share", self.d_project_share);
        writer.close("disk_usage");
    }
}

/// One GPU type in a request's `<coprocs>` (`<coproc_cuda>`, `<coproc_ati>`,
/// `<coproc_intel_gpu>`): what the host has and, seed 003, how much of its work the
/// client asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuReport<'a> {
    /// The GPU type.
    pub resource: ResourceType,
    /// Instances the client may use (`<count>`).
    pub count: u32,
    /// Model name (`<name>`).
    pub name: Cow<'a, str>,
    /// Memory, bytes (`<available_ram>`).
    pub available_ram: f64,
    /// Peak speed of one instance, flops (`<peak_flops>`).
    pub peak_flops: f64,
    /// Instance-seconds of work asked for (`<req_secs>`).
    pub req_secs: f64,
    /// Instances to keep busy (`<req_instances>`).
    pub req_instances: f64,
    /// Seconds until an instance would idle (`<estimated_delay>`).
    pub estimated_delay: f64,
    /// NVIDIA: the CUDA version the driver supports (`<cudaVersion>`, 12020 for 12.2;
    /// 0: unknown). Servers send CUDA work only to a client that says it.
    #[serde(default)]
    pub cuda_version: u32,
    /// NVIDIA: the driver's version (`<drvVersion>`, 53586 for 535.86; 0: unknown).
    #[serde(default)]
    pub driver_version: u32,
    /// NVIDIA: the compute capability (`<major>`, `<minor>`; (0, 0): unknown), which
    /// plan classes require.
    #[serde(default)]
    pub compute_capability: (i32, i32),
    /// NVIDIA: the first GPU's CUDA properties (`<totalGlobalMem>` …
    /// `<multiProcessorCount>`), where the driver told them.
    #[serde(default)]
    pub cuda_properties: Option<CudaProperties>,
    /// The type's first OpenCL device, as OpenCL describes it (`<coproc_opencl>`;
    /// `<have_opencl>` says there is one).
    #[serde(default)]
    pub opencl: Option<OpenclDevice>,
}

impl GpuReport<'_> {
    /// The same, owning its name.
    pub fn into_owned(self) -> GpuReport<'static> {
        GpuReport { name: Cow::Owned(self.name.into_owned()), ..self }
    }

    /// The element BOINC writes for a GPU type.
    pub(crate) fn element_name(resource: ResourceType) -> Option<&'static str> {
        match resource {
            ResourceType::Cpu => None,
            ResourceType::Nvidia => Some("coproc_cuda"),
            ResourceType::Amd => Some("coproc_ati"),
            ResourceType::Intel => Some("coproc_intel_gpu"),
        }
    }

    /// Reads one entry of `<coprocs>`; `None` for an element that is not a GPU type
    /// this client knows.
    pub(crate) fn parse(element: &Element) -> Result<Option<GpuReport<'static>>, XmlError> {
        let Some(resource) = ResourceType::GPUS
            .into_iter()
            .find(|&r| Self::element_name(r) == Some(element.name.as_str()))
        else {
            return Ok(None);
        };
        let mut gpu = GpuReport {
            resource,
            count: 0,
            name: Cow::Borrowed(""),
            available_ram: 0.0,
            peak_flops: 0.0,
            req_secs: 0.0,
            req_instances: 0.0,
            estimated_delay: 0.0,
            cuda_version: 0,
            driver_version: 0,
            compute_capability: (0, 0),
            cuda_properties: None,
            opencl: None,
        };
        let mut properties = CudaProperties::default();
        let mut any_property = false;
        for child in &element.children {
            match child.name.as_str() {
                "count" => gpu.count = child.u32()?,
                "name" => gpu.name = Cow::Owned(child.string()),
                "available_ram" => gpu.available_ram = child.non_negative_f64()?,
                "peak_flops" => gpu.peak_flops = child.non_negative_f64()?,
                "req_secs" => gpu.req_secs = child.non_negative_f64()?,
                "req_instances" => gpu.req_instances = child.non_negative_f64()?,
                "estimated_delay" => gpu.estimated_delay = child.f64()?,
                "cudaVersion" => gpu.cuda_version = child.u32()?,
                "drvVersion" => gpu.driver_version = child.u32()?,
                "major" => gpu.compute_capability.0 = child.i32()?,
                "minor" => gpu.compute_capability.1 = child.i32()?,
                "coproc_opencl" => gpu.opencl = Some(parse_opencl_prop(child, resource)?),
                _ => any_property |= parse_cuda_property(child, &mut properties)?,
            }
        }
        if any_property && resource == ResourceType::Nvidia {
            gpu.cuda_properties = Some(properties);
        }
        Ok(Some(gpu))
    }

    pub(crate) fn write(&self, writer: &mut XmlWriter) {
        let Some(name) = Self::element_name(self.resource) else { return };
        // BOINC's order: what the GPU is, the request, then its description.
        writer.open(name);
        writer.integer("count", self.count);
        writer.text("name", &self.name);
        writer.number("available_ram", self.available_ram);
        let nvidia = self.resource == ResourceType::Nvidia;
        if nvidia {
            // What BOINC's servers check before they send CUDA work ("Client did not
            // provide cuda or driver version" otherwise).
            writer.flag("have_cuda", true);
        }
        writer.flag("have_opencl", self.opencl.is_some());
        writer.number("req_secs", self.req_secs);
        writer.number("req_instances", self.req_instances);
        writer.number("estimated_delay", self.estimated_delay);
        writer.number("peak_flops", self.peak_flops);
        if nvidia {
            write_cuda_properties(
                writer,
                self.cuda_version,
                self.driver_version,
                self.compute_capability,
                self.cuda_properties.as_ref(),
            );
        }
        if let Some(device) = &self.opencl {
            write_opencl_prop(device, writer);
        }
        writer.close(name);
    }
}
