//! `<host_info>`, `<time_stats>` and `<net_stats>` of client_state.xml: the processing
//! resources of seed 003 "Terminology" (CPU count and speed, coprocessor instances and
//! peak flops), the host's description that scheduler requests carry, the availability
//! fractions of seed 000 "Normalized CPU time" and the network averages.

use super::cuda_prop::parse_cuda_property;
use super::error::XmlError;
use super::xml_tree::Element;
use crate::model::{
    Coprocessor, CudaProperties, Host, HostDescription, MAX_CPUS, MAX_GPU_INSTANCES,
    MAX_INSTANCE_FLOPS, NetStats, ResourceType, TimeStats,
};

/// Reads `<host_info>`; elements not present keep [`Host::default`]'s values.
pub(crate) fn parse_host_info(element: &Element) -> Result<Host, XmlError> {
    let mut host = Host::default();
    for child in &element.children {
        match child.name.as_str() {
            "p_ncpus" => {
                host.p_ncpus = child.u32_in(0, MAX_CPUS, "a whole number from 0 to 65536")?
            }
            "p_fpops" => {
                // A client that has not run its benchmarks yet writes 0; BOINC then
                // assumes its default speed, as the model's default does.
                let p_fpops = child.f64_in(0.0, MAX_INSTANCE_FLOPS, "between 0 and 1e18")?;
                if p_fpops > 0.0 {
                    host.p_fpops = p_fpops;
                }
            }
            "m_nbytes" => host.m_nbytes = child.non_negative_f64()?,
            "m_swap" => host.m_swap = child.non_negative_f64()?,
            "d_total" => host.d_total = child.non_negative_f64()?,
            "d_free" => host.d_free = child.non_negative_f64()?,
            "coprocs" => parse_coprocs(child, &mut host)?,
            _ => {
                read_description(child, &mut host.description)?;
            }
        }
    }
    Ok(host)
}

/// Reads one element of `<host_info>` that describes the host (identity, processor,
/// operating system) into `description`; returns whether it was one. Shared by the state
/// file and the scheduler request, which write these elements alike.
pub(crate) fn read_description(
    child: &Element,
    description: &mut HostDescription,
) -> Result<bool, XmlError> {
    match child.name.as_str() {
        "timezone" => description.timezone = child.i32()?,
        "domain_name" => description.domain_name = child.string(),
        "ip_addr" => description.ip_addr = child.string(),
        "host_cpid" => description.host_cpid = child.string(),
        "p_vendor" => description.p_vendor = child.string(),
        "p_model" => description.p_model = child.string(),
        "p_features" => description.p_features = child.string(),
        "p_iops" => description.p_iops = child.non_negative_f64()?,
        "p_membw" => description.p_membw = child.non_negative_f64()?,
        "p_calculated" => description.p_calculated = child.f64()?,
        "p_vm_extensions_disabled" => description.p_vm_extensions_disabled = child.flag()?,
        "m_cache" => description.m_cache = child.non_negative_f64()?,
        "os_name" => description.os_name = child.string(),
        "os_version" => description.os_version = child.string(),
        "virtualbox_version" => description.virtualbox_version = child.string(),
        "docker_version" => description.docker_version = child.string(),
        "docker_type" => description.docker_type = child.u32()?,
        _ => return Ok(false),
    }
    Ok(true)
}

/// Reads `<net_stats>`.
pub(crate) fn parse_net_stats(element: &Element) -> Result<NetStats, XmlError> {
    let mut stats = NetStats::default();
    for child in &element.children {
        match child.name.as_str() {
            "bwup" => stats.bwup = child.non_negative_f64()?,
            "avg_up" => stats.avg_up = child.non_negative_f64()?,
            "avg_time_up" => stats.avg_time_up = child.f64()?,
            "bwdown" => stats.bwdown = child.non_negative_f64()?,
            "avg_down" => stats.avg_down = child.non_negative_f64()?,
            "avg_time_down" => stats.avg_time_down = child.f64()?,
            _ => {}
        }
    }
    Ok(stats)
}

/// Reads `<coprocs>`: the vendor elements BOINC writes (`<coproc_cuda>`, with the NVIDIA
/// driver's `<drvVersion>` and `<cudaVersion>`, `<coproc_ati>`, `<coproc_intel_gpu>`) and
/// the generic `<coproc><type>` form. Types the model has no
/// resource for are skipped: the host simply doesn't use those devices.
fn parse_coprocs(element: &Element, host: &mut Host) -> Result<(), XmlError> {
    for child in &element.children {
        let resource = match child.name.as_str() {
            "coproc_cuda" => ResourceType::Nvidia,
            "coproc_ati" => ResourceType::Amd,
            "coproc_intel_gpu" => ResourceType::Intel,
            "coproc" => {
                let Some(resource) =
                    child.child("type").and_then(|t| ResourceType::from_boinc_name(t.trimmed()))
                else {
                    continue;
                };
                if !resource.is_gpu() {
                    continue;
                }
                resource
            }
            _ => continue,
        };
        let coprocessor = parse_coprocessor(child, resource)?;
        if resource == ResourceType::Nvidia && coprocessor.count > 0 {
            let description = &mut host.description;
            let mut properties = CudaProperties::default();
            let mut any_property = false;
            for version in &child.children {
                match version.name.as_str() {
                    "drvVersion" => description.nvidia_driver_version = version.u32()?,
                    "cudaVersion" => description.cuda_version = version.u32()?,
                    "major" => description.nvidia_compute_capability.0 = version.i32()?,
                    "minor" => description.nvidia_compute_capability.1 = version.i32()?,
                    _ => any_property |= parse_cuda_property(version, &mut properties)?,
                }
            }
            description.nvidia_properties = any_property.then_some(properties);
        }
        host.coprocessors[resource] = (coprocessor.count > 0).then_some(coprocessor);
    }
    Ok(())
}

fn parse_coprocessor(element: &Element, resource: ResourceType) -> Result<Coprocessor, XmlError> {
    let mut coprocessor = Coprocessor {
        resource,
        name: String::new(),
        count: 0,
        peak_flops: 0.0,
        available_ram: 0.0,
    };
    for child in &element.children {
        match child.name.as_str() {
            "count" => {
                coprocessor.count =
                    child.u32_in(0, MAX_GPU_INSTANCES, "a whole number from 0 to 1024")?
            }
            "name" => coprocessor.name = child.string(),
            "peak_flops" => {
                coprocessor.peak_flops =
                    child.f64_in(0.0, MAX_INSTANCE_FLOPS, "between 0 and 1e18")?
            }
            "available_ram" => coprocessor.available_ram = child.non_negative_f64()?,
            _ => {}
        }
    }
    Ok(coprocessor)
}

/// Reads `<time_stats>`, including the emulator's `*_lambda` period lengths.
pub(crate) fn parse_time_stats(element: &Element) -> Result<TimeStats, XmlError> {
    const FRACTION: &str = "between 0 and 1";
    let mut stats = TimeStats::default();
    for child in &element.children {
        match child.name.as_str() {
            "on_frac" => stats.on_frac = child.f64_in(0.0, 1.0, FRACTION)?,
            // BOINC writes -1 while it doesn't know yet.
            "connected_frac" => {
                stats.connected_frac = child.f64_in(-1.0, 1.0, "between 0 and 1, or -1")?
            }
            "cpu_and_network_available_frac" => {
                stats.cpu_and_network_available_frac = child.f64_in(0.0, 1.0, FRACTION)?
            }
            "active_frac" => stats.active_frac = child.f64_in(0.0, 1.0, FRACTION)?,
            "gpu_active_frac" => stats.gpu_active_frac = child.f64_in(0.0, 1.0, FRACTION)?,
            "on_lambda" => stats.on_lambda = Some(child.non_negative_f64()?),
            "connected_lambda" => stats.connected_lambda = Some(child.non_negative_f64()?),
            "active_lambda" => stats.active_lambda = Some(child.non_negative_f64()?),
            "gpu_active_lambda" => stats.gpu_active_lambda = Some(child.non_negative_f64()?),
            "client_start_time" => stats.totals.client_start_time = child.f64()?,
            "total_start_time" => stats.totals.total_start_time = child.f64()?,
            "total_duration" => stats.totals.total_duration = child.f64()?,
            "total_active_duration" => stats.totals.total_active_duration = child.f64()?,
            "total_gpu_active_duration" => stats.totals.total_gpu_active_duration = child.f64()?,
            "previous_uptime" => stats.totals.previous_uptime = child.f64()?,
            "session_active_duration" => stats.totals.session_active_duration = child.f64()?,
            "session_gpu_active_duration" => {
                stats.totals.session_gpu_active_duration = child.f64()?
            }
            // The state file's name for it; a request calls it `now`.
            "last_update" | "now" => stats.totals.last_update = child.f64()?,
            _ => {}
        }
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::error::XmlProblem;
    use crate::protocol::xml_tree::parse_document;

    #[test]
    fn a_host_beyond_any_machine_is_refused() {
        for (text, element) in [
            ("<host_info><p_ncpus>4294967295</p_ncpus></host_info>", "p_ncpus"),
            ("<host_info><p_fpops>1e308</p_fpops></host_info>", "p_fpops"),
            (
                "<host_info><coprocs><coproc_cuda><count>4294967295</count></coproc_cuda></coprocs></host_info>",
                "count",
            ),
            (
                "<host_info><coprocs><coproc_cuda><count>1</count><peak_flops>1e308</peak_flops></coproc_cuda></coprocs></host_info>",
                "peak_flops",
            ),
        ] {
            let root = parse_document(text).expect("well-formed");
            let err = parse_host_info(&root).expect_err(element);
            assert_eq!(err.element.as_deref(), Some(element));
            assert!(matches!(err.problem, XmlProblem::OutOfRange { .. }), "{err}");
        }
        let root = parse_document("<host_info><p_ncpus>65536</p_ncpus></host_info>").expect("xml");
        assert_eq!(parse_host_info(&root).expect("the most CPUs").p_ncpus, MAX_CPUS);
    }

    #[test]
    fn vendor_and_generic_coprocessors() {
        let root = parse_document(
            "<host_info><p_ncpus>8</p_ncpus><p_fpops>4e+09</p_fpops><coprocs>\
             <coproc_cuda><count>2</count><name>GTX</name><peak_flops>1e13</peak_flops>\
             <available_ram>8e9</available_ram></coproc_cuda>\
             <coproc><type>intel_gpu</type><count>1</count></coproc>\
             <coproc><type>apple_gpu</type><count>1</count></coproc>\
             <coproc_ati><count>0</count></coproc_ati>\
             </coprocs></host_info>",
        )
        .expect("well-formed");
        let host = parse_host_info(&root).expect("valid");
        assert_eq!(host.p_ncpus, 8);
        assert_eq!(host.p_fpops, 4e9);
        let nvidia = host.coprocessors[ResourceType::Nvidia].as_ref().expect("nvidia");
        assert_eq!((nvidia.count, nvidia.peak_flops, nvidia.name.as_str()), (2, 1e13, "GTX"));
        let intel = host.coprocessors[ResourceType::Intel].as_ref().expect("intel");
        assert_eq!((intel.count, intel.peak_flops), (1, 0.0));
        assert!(host.coprocessors[ResourceType::Amd].is_none());
    }

    #[test]
    fn description_and_network_figures() {
        let root = parse_document(
            "<host_info><timezone>-3600</timezone><host_cpid>abc</host_cpid>\
             <p_vendor>GenuineIntel</p_vendor><p_iops>2e9</p_iops><m_cache>1e6</m_cache>\
             <os_name>Linux</os_name><p_vm_extensions_disabled>1</p_vm_extensions_disabled>\
             </host_info>",
        )
        .expect("xml");
        let description = parse_host_info(&root).expect("valid").description;
        assert_eq!((description.timezone, description.host_cpid.as_str()), (-3600, "abc"));
        assert_eq!((description.p_iops, description.m_cache), (2e9, 1e6));
        assert!(description.p_vm_extensions_disabled);
        let root =
            parse_document("<net_stats><bwup>5</bwup><avg_time_down>7</avg_time_down></net_stats>")
                .expect("xml");
        let stats = parse_net_stats(&root).expect("valid");
        assert_eq!((stats.bwup, stats.avg_time_down), (5.0, 7.0));
    }

    #[test]
    fn unbenchmarked_speed_keeps_default() {
        let root = parse_document("<host_info><p_fpops>0</p_fpops></host_info>").expect("xml");
        assert_eq!(parse_host_info(&root).expect("valid").p_fpops, Host::default().p_fpops);
    }

    #[test]
    fn fractions_are_checked() {
        let root =
            parse_document("<time_stats>\n<on_frac>1.5</on_frac></time_stats>").expect("xml");
        let error = parse_time_stats(&root).expect_err("out of range");
        assert_eq!(error.line, 2);
        assert!(matches!(error.problem, XmlProblem::OutOfRange { .. }));
        let root = parse_document(
            "<time_stats><connected_frac>-1</connected_frac><on_lambda>14400</on_lambda></time_stats>",
        )
        .expect("xml");
        let stats = parse_time_stats(&root).expect("valid");
        assert_eq!(stats.connected_frac, -1.0);
        assert_eq!(stats.on_lambda, Some(14400.0));
    }
}
