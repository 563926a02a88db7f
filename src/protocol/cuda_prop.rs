//! The CUDA properties of `<coproc_cuda>` (a scheduler request, the state file): the
//! elements and order of BOINC's client, from `<cudaVersion>` to
//! `<multiProcessorCount>`, which BOINC's scheduler reads for CUDA plan classes
//! (memory, compute capability) and its speed estimate.

use super::error::{XmlError, XmlProblem};
use super::values::quoted_value;
use super::xml_tree::Element;
use super::xml_write::XmlWriter;
use crate::model::CudaProperties;

/// Writes the versions, the compute capability and, where known, the properties, in
/// BOINC's order. With no properties only what is known goes out (the versions when
/// non-zero, the capability when known), as a client without the CUDA driver says.
pub(crate) fn write_cuda_properties(
    writer: &mut XmlWriter,
    cuda_version: u32,
    driver_version: u32,
    compute_capability: (i32, i32),
    properties: Option<&CudaProperties>,
) {
    if cuda_version > 0 {
        writer.integer("cudaVersion", cuda_version);
    }
    if driver_version > 0 {
        writer.integer("drvVersion", driver_version);
    }
    let Some(p) = properties else {
        if compute_capability != (0, 0) {
            writer.integer("major", compute_capability.0);
            writer.integer("minor", compute_capability.1);
        }
        return;
    };
    let triple = |values: [i32; 3]| format!("{} {} {}", values[0], values[1], values[2]);
    writer.number("totalGlobalMem", p.total_global_mem);
    writer.number("sharedMemPerBlock", p.shared_mem_per_block);
    writer.integer("regsPerBlock", p.regs_per_block);
    writer.integer("warpSize", p.warp_size);
    writer.number("memPitch", p.mem_pitch);
    writer.integer("maxThreadsPerBlock", p.max_threads_per_block);
    writer.text("maxThreadsDim", &triple(p.max_threads_dim));
    writer.text("maxGridSize", &triple(p.max_grid_size));
    writer.integer("clockRate", p.clock_rate_khz);
    writer.number("totalConstMem", p.total_const_mem);
    writer.integer("major", compute_capability.0);
    writer.integer("minor", compute_capability.1);
    writer.number("textureAlignment", p.texture_alignment);
    writer.integer("deviceOverlap", i32::from(p.device_overlap));
    writer.integer("multiProcessorCount", p.multiprocessor_count);
}

/// Reads one child of `<coproc_cuda>` into `properties` when it is one of the CUDA
/// properties; `Ok(false)` for any other element. Every property is set only by its
/// element, so a request or state file naming a few of them keeps the others at 0.
pub(crate) fn parse_cuda_property(
    child: &Element,
    properties: &mut CudaProperties,
) -> Result<bool, XmlError> {
    let p = properties;
    match child.name.as_str() {
        "totalGlobalMem" => p.total_global_mem = child.non_negative_f64()?,
        "sharedMemPerBlock" => p.shared_mem_per_block = child.non_negative_f64()?,
        "regsPerBlock" => p.regs_per_block = child.i32()?,
        "warpSize" => p.warp_size = child.i32()?,
        "memPitch" => p.mem_pitch = child.non_negative_f64()?,
        "maxThreadsPerBlock" => p.max_threads_per_block = child.i32()?,
        "maxThreadsDim" => p.max_threads_dim = three_numbers(child)?,
        "maxGridSize" => p.max_grid_size = three_numbers(child)?,
        "clockRate" => p.clock_rate_khz = child.i32()?,
        "totalConstMem" => p.total_const_mem = child.non_negative_f64()?,
        "textureAlignment" => p.texture_alignment = child.non_negative_f64()?,
        "deviceOverlap" => p.device_overlap = child.flag()?,
        "multiProcessorCount" => p.multiprocessor_count = child.i32()?,
        _ => return Ok(false),
    }
    Ok(true)
}

/// `512 512 64`: three whole numbers separated by spaces.
fn three_numbers(element: &Element) -> Result<[i32; 3], XmlError> {
    let text = element.trimmed();
    let mut values = [0; 3];
    let mut parts = text.split_whitespace();
    for value in &mut values {
        *value = parts
            .next()
            .and_then(|part| part.parse().ok())
            .ok_or_else(|| element.error(XmlProblem::NotANumber(quoted_value(text))))?;
    }
    if parts.next().is_some() {
        return Err(element.error(XmlProblem::NotANumber(quoted_value(text))));
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::xml_tree::parse_document;

    /// A GeForce RTX 3080's properties as the CUDA driver gives them.
    fn rtx_3080() -> CudaProperties {
        CudaProperties {
            total_global_mem: 10_485_235_712.0,
            shared_mem_per_block: 49_152.0,
            regs_per_block: 65_536,
            warp_size: 32,
            mem_pitch: 2_147_483_647.0,
            max_threads_per_block: 1024,
            max_threads_dim: [1024, 1024, 64],
            max_grid_size: [2_147_483_647, 65_535, 65_535],
            clock_rate_khz: 1_710_000,
            total_const_mem: 65_536.0,
            texture_alignment: 512.0,
            device_overlap: true,
            multiprocessor_count: 68,
        }
    }

    fn written(properties: Option<&CudaProperties>, capability: (i32, i32)) -> String {
        let mut writer = XmlWriter::new();
        writer.open("coproc_cuda");
        write_cuda_properties(&mut writer, 12020, 53586, capability, properties);
        writer.close("coproc_cuda");
        writer.finish()
    }

    #[test]
    fn properties_go_out_in_boincs_order_and_read_back() {
        let text = written(Some(&rtx_3080()), (8, 6));
        let order = [
            "cudaVersion",
            "drvVersion",
            "totalGlobalMem",
            "sharedMemPerBlock",
            "regsPerBlock",
            "warpSize",
            "memPitch",
            "maxThreadsPerBlock",
            "maxThreadsDim",
            "maxGridSize",
            "clockRate",
            "totalConstMem",
            "major",
            "minor",
            "textureAlignment",
            "deviceOverlap",
            "multiProcessorCount",
        ];
        let positions: Vec<usize> = order
            .iter()
            .map(|name| text.find(&format!("<{name}>")).unwrap_or_else(|| panic!("{name}: {text}")))
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "BOINC's order: {text}");
        assert!(text.contains("<maxThreadsDim>1024 1024 64</maxThreadsDim>"), "{text}");
        let root = parse_document(&text).expect("parses");
        let mut back = CudaProperties::default();
        for child in &root.children {
            parse_cuda_property(child, &mut back).expect("each value reads");
        }
        assert_eq!(back, rtx_3080());
    }

    #[test]
    fn without_properties_only_what_is_known() {
        let text = written(None, (8, 6));
        assert!(text.contains("<major>8</major>") && !text.contains("totalGlobalMem"), "{text}");
        assert!(!written(None, (0, 0)).contains("<major>"));
    }

    #[test]
    fn bad_triples_are_refused_with_the_element_named() {
        for bad in ["1024 1024", "1 2 3 4", "a b c", ""] {
            let root = parse_document(&format!("<c><maxGridSize>{bad}</maxGridSize></c>"))
                .expect("well-formed");
            let error = parse_cuda_property(&root.children[0], &mut CudaProperties::default())
                .expect_err(bad);
            assert!(error.to_string().contains("maxGridSize"), "{error}");
        }
        let root = parse_document("<c><other>1</other></c>").expect("well-formed");
        assert!(
            !parse_cuda_property(&root.children[0], &mut CudaProperties::default())
                .expect("not a property")
        );
    }
}
