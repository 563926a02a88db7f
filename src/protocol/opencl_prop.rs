//! `<coproc_opencl>`: an OpenCL GPU's description inside a scheduler request's
//! `<coproc_cuda>`, `<coproc_ati>` or `<coproc_intel_gpu>`, in the elements and order
//! of BOINC's client (`OPENCL_DEVICE_PROP`), which BOINC's scheduler parses for
//! OpenCL plan classes.

use super::error::XmlError;
use super::xml_tree::Element;
use super::xml_write::XmlWriter;
use crate::model::{OpenclDevice, ResourceType};

/// Writes `device` as `<coproc_opencl>`.
pub(crate) fn write_opencl_prop(device: &OpenclDevice, writer: &mut XmlWriter) {
    let integer = |w: &mut XmlWriter, name: &str, value: u64| w.integer(name, value);
    writer.open("coproc_opencl");
    writer.text("name", &device.name);
    writer.text("vendor", &device.vendor);
    integer(writer, "vendor_id", device.vendor_id);
    writer.flag("available", device.available);
    integer(writer, "half_fp_config", device.half_fp_config);
    integer(writer, "single_fp_config", device.single_fp_config);
    integer(writer, "double_fp_config", device.double_fp_config);
    writer.flag("endian_little", device.endian_little);
    integer(writer, "execution_capabilities", device.execution_capabilities);
    writer.text("extensions", &device.extensions);
    integer(writer, "global_mem_size", device.global_mem_size);
    integer(writer, "local_mem_size", device.local_mem_size);
    integer(writer, "max_clock_frequency", device.max_clock_frequency);
    integer(writer, "max_compute_units", device.max_compute_units);
    if device.resource == ResourceType::Nvidia {
        integer(writer, "nv_compute_capability_major", device.nv_compute_capability.0);
        integer(writer, "nv_compute_capability_minor", device.nv_compute_capability.1);
    }
    writer.text("opencl_platform_version", &device.opencl_platform_version);
    writer.text("opencl_device_version", &device.opencl_device_version);
    writer.text("opencl_driver_version", &device.opencl_driver_version);
    writer.integer("device_num", device.device_num);
    writer.number("peak_flops", device.peak_flops);
    writer.number("opencl_available_ram", device.global_mem_size as f64);
    writer.integer("opencl_device_index", device.opencl_device_index);
    writer.flag("warn_bad_cuda", false);
    writer.close("coproc_opencl");
}

/// Reads a `<coproc_opencl>` of a `resource` entry.
pub(crate) fn parse_opencl_prop(
    element: &Element,
    resource: ResourceType,
) -> Result<OpenclDevice, XmlError> {
    let mut device = OpenclDevice { resource, ..OpenclDevice::default() };
    for child in &element.children {
        match child.name.as_str() {
            "name" => device.name = child.string(),
            "vendor" => device.vendor = child.string(),
            "vendor_id" => device.vendor_id = child.u64()?,
            "available" => device.available = child.flag()?,
            "half_fp_config" => device.half_fp_config = child.u64()?,
            "single_fp_config" => device.single_fp_config = child.u64()?,
            "double_fp_config" => device.double_fp_config = child.u64()?,
            "endian_little" => device.endian_little = child.flag()?,
            "execution_capabilities" => device.execution_capabilities = child.u64()?,
            "extensions" => device.extensions = child.string(),
            "global_mem_size" => device.global_mem_size = child.u64()?,
            "local_mem_size" => device.local_mem_size = child.u64()?,
            "max_clock_frequency" => device.max_clock_frequency = child.u64()?,
            "max_compute_units" => device.max_compute_units = child.u64()?,
            "nv_compute_capability_major" => device.nv_compute_capability.0 = child.u64()?,
            "nv_compute_capability_minor" => device.nv_compute_capability.1 = child.u64()?,
            "opencl_platform_version" => device.opencl_platform_version = child.string(),
            "opencl_device_version" => device.opencl_device_version = child.string(),
            "opencl_driver_version" => device.opencl_driver_version = child.string(),
            "device_num" => device.device_num = child.u32()?,
            "peak_flops" => device.peak_flops = child.non_negative_f64()?,
            "opencl_device_index" => device.opencl_device_index = child.u32()?,
            _ => {}
        }
    }
    Ok(device)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::xml_tree::parse_document;

    #[test]
    fn a_device_reads_back_from_what_is_written() {
        let device = OpenclDevice {
            resource: ResourceType::Amd,
            name: "gfx1030".into(),
            vendor: "Advanced Micro Devices, Inc.".into(),
            vendor_id: 4098,
            available: true,
            single_fp_config: 190,
            double_fp_config: 63,
            endian_little: true,
            execution_capabilities: 1,
            extensions: "cl_khr_fp64 cl_khr_global_int32_base_atomics".into(),
            global_mem_size: 17_163_091_968,
            local_mem_size: 65_536,
            max_clock_frequency: 2_575,
            max_compute_units: 40,
            opencl_platform_version: "OpenCL 2.1 AMD-APP (3590.0)".into(),
            opencl_device_version: "OpenCL 2.0".into(),
            opencl_driver_version: "3590.0 (HSA1.1,LC)".into(),
            device_num: 0,
            peak_flops: 1.3e13,
            opencl_device_index: 0,
            ..OpenclDevice::default()
        };
        let mut writer = XmlWriter::new();
        write_opencl_prop(&device, &mut writer);
        let text = writer.finish();
        assert!(!text.contains("nv_compute_capability"), "NVIDIA's only: {text}");
        let root = parse_document(&text).expect("well-formed");
        assert_eq!(parse_opencl_prop(&root, ResourceType::Amd).expect("reads"), device);
    }
}
