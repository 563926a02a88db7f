#![no_main]
//! A slot's init_data.xml (InitData::parse: what an app, or boinc-rs's own app side,
//! reads), and its round trip through InitData::to_xml.

use boinc_core::protocol::app_api::InitData;
use boinc_fuzz::{assert_round_trip, text, written_unchanged};
use libfuzzer_sys::fuzz_target;

/// A number as InitData::to_xml writes it (`%f`, six decimals, as BOINC's client does)
/// and reads it back.
fn as_written(value: f64) -> f64 {
    format!("{value:.6}").parse().unwrap_or(value)
}

/// The value read with every number rounded as the writer rounds it: the writer's one
/// documented normalisation, so that what is left to compare is every field exactly.
fn normalised(read: &InitData) -> InitData {
    let mut value = read.clone();
    for number in [
        &mut value.wu_cpu_time,
        &mut value.starting_elapsed_time,
        &mut value.resource_share_fraction,
        &mut value.checkpoint_period,
        &mut value.fraction_done_start,
        &mut value.fraction_done_end,
        &mut value.gpu_usage,
        &mut value.ncpus,
        &mut value.rsc_fpops_est,
        &mut value.rsc_fpops_bound,
        &mut value.rsc_memory_bound,
        &mut value.rsc_disk_bound,
        &mut value.computation_deadline,
        &mut value.host_info.p_fpops,
        &mut value.host_info.m_nbytes,
    ] {
        *number = as_written(*number);
    }
    value
}

fuzz_target!(|data: &[u8]| {
    let text = text(data);
    if let Ok(read) = InitData::parse(&text) {
        assert_round_trip(
            written_unchanged(&text),
            &normalised(&read),
            InitData::to_xml,
            InitData::parse,
        );
    }
});
