//! `<host_info>` (GUI RPC `get_host_info`, and inside `get_state`): the host as the
//! fixture gui_rpc_samples.txt shows BOINC 7.20.5 writing it.

use crate::model::{Host, ResourceType};
use crate::protocol::xml_out::XmlOut;

/// BOINC's element for a coprocessor type in `<coprocs>`.
pub(crate) fn coproc_element(resource: ResourceType) -> &'static str {
    match resource {
        ResourceType::Cpu => "coproc_cpu",
        ResourceType::Nvidia => "coproc_cuda",
        ResourceType::Amd => "coproc_ati",
        ResourceType::Intel => "coproc_intel_gpu",
    }
}

/// Writes `<host_info>`.
pub(crate) fn write_host_info(out: &mut XmlOut, host: &Host) {
    let id = &host.description;
    out.start("host_info");
    out.int("timezone", id.timezone);
    out.text("domain_name", &id.domain_name);
    out.text("ip_addr", &id.ip_addr);
    out.text("host_cpid", &id.host_cpid);
    out.int("p_ncpus", host.p_ncpus);
    out.text("p_vendor", &id.p_vendor);
    out.text("p_model", &id.p_model);
    out.text("p_features", &id.p_features);
    out.real("p_fpops", host.p_fpops);
    out.real("p_iops", id.p_iops);
    out.real("p_membw", id.p_membw);
    out.real("p_calculated", id.p_calculated);
    out.bit("p_vm_extensions_disabled", false);
    out.real("m_nbytes", host.m_nbytes);
    out.real("m_cache", id.m_cache);
    out.real("m_swap", host.m_swap);
    out.real("d_total", host.d_total);
    out.real("d_free", host.d_free);
    out.text("os_name", &id.os_name);
    out.text("os_version", &id.os_version);
    let usable: u32 =
        host.coprocessors.iter().filter_map(|(_, c)| c.as_ref()).map(|c| c.count).sum();
    out.int("n_usable_coprocs", usable);
    out.bit("wsl_available", false);
    out.start("coprocs");
    for (resource, coprocessor) in host.coprocessors.iter() {
        let Some(coprocessor) = coprocessor else { continue };
        let element = coproc_element(resource);
        out.start(element);
        out.int("count", coprocessor.count);
        out.text("name", &coprocessor.name);
        out.real("available_ram", coprocessor.available_ram);
        out.real("peak_flops", coprocessor.peak_flops);
        out.end(element);
    }
    out.end("coprocs");
    out.end("host_info");
}
