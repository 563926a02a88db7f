//! Strategies shared by the tests that write BOINC XML and read it back
//! (protocol_round_trip.rs, client_state_round_trip.rs): text that needs escaping, names,
//! CDATA that holds its own end marker, hex blocks, numbers of every magnitude, and the
//! host's description and network figures.

#![allow(dead_code)] // Each test binary uses a different subset.

use boinc_core::model::{HostDescription, NetStats, ResourceType};
use proptest::collection::vec;
use proptest::prelude::*;

/// Text as a reader hands it back: trimmed, any characters XML can carry.
pub fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 <>&\"'é€_./:=-]{0,16}".prop_map(|s| s.trim().to_owned())
}

/// A name: text that is not empty.
pub fn name() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_][a-zA-Z0-9_ .<&-]{0,12}".prop_map(|s| s.trim().to_owned())
}

/// An app's stderr: several lines, markup, and CDATA's own end marker.
pub fn stderr() -> impl Strategy<Value = String> {
    "[a-z<>&/\\]\n ]{0,40}".prop_map(|s| s.trim().to_owned())
}

/// A key or signature in BOINC's hex text format.
pub fn hex_block() -> impl Strategy<Value = String> {
    vec("[0-9a-f]{64}", 1..4).prop_map(|lines| format!("{}\n.", lines.join("\n")))
}

/// Any finite number, often an ordinary one.
pub fn number() -> impl Strategy<Value = f64> {
    prop_oneof![-1e12f64..1e12, any::<f64>().prop_filter("finite", |x| x.is_finite()), Just(0.0)]
}

/// A finite number, zero or more.
pub fn non_negative() -> impl Strategy<Value = f64> {
    prop_oneof![0.0f64..1e15, number().prop_map(f64::abs), Just(0.0)]
}

/// A fraction in [0, 1].
pub fn fraction() -> impl Strategy<Value = f64> {
    prop_oneof![0.0f64..=1.0, Just(1.0)]
}

/// A database id: BOINC's ids are signed 64-bit numbers.
pub fn id() -> impl Strategy<Value = u64> {
    0u64..=i64::MAX as u64
}

/// A GPU type.
pub fn gpu() -> impl Strategy<Value = ResourceType> {
    prop::sample::select(ResourceType::GPUS.to_vec())
}

/// Network figures.
pub fn net_stats() -> impl Strategy<Value = NetStats> {
    (non_negative(), non_negative(), number(), non_negative(), non_negative(), number()).prop_map(
        |s| NetStats {
            bwup: s.0,
            avg_up: s.1,
            avg_time_up: s.2,
            bwdown: s.3,
            avg_down: s.4,
            avg_time_down: s.5,
        },
    )
}

/// What a host says about itself beyond its figures.
pub fn host_description() -> impl Strategy<Value = HostDescription> {
    (
        (any::<i32>(), text(), text(), text(), text(), text(), text()),
        (non_negative(), non_negative(), number(), any::<bool>(), non_negative(), text(), text()),
    )
        .prop_map(|(a, b)| HostDescription {
            timezone: a.0,
            domain_name: a.1,
            ip_addr: a.2,
            host_cpid: a.3,
            p_vendor: a.4,
            p_model: a.5,
            p_features: a.6,
            p_iops: b.0,
            p_membw: b.1,
            p_calculated: b.2,
            p_vm_extensions_disabled: b.3,
            m_cache: b.4,
            os_name: b.5,
            os_version: b.6,
            // Versions a state file keeps with its NVIDIA GPU (client_state_round_trip.rs).
            nvidia_driver_version: 0,
            cuda_version: 0,
            nvidia_compute_capability: (0, 0),
            nvidia_properties: None,
            virtualbox_version: String::new(),
            docker_version: String::new(),
            docker_type: 0,
            opencl_gpus: Vec::new(),
        })
}
