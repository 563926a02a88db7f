//! An NVIDIA GPU's peak speed and driver versions as a scheduler request states them
//! (issue "The host service", GPU discovery): peak flops are two operations (a fused
//! multiply-add) per CUDA core per clock at the highest shader clock; the CUDA cores of
//! one streaming multiprocessor follow from the compute capability (NVIDIA's CUDA
//! programming guide, "Compute Capabilities").

/// What a GPU whose speed could not be read counts as, flops: a modest card's peak, so
/// that the client still estimates durations (the driver's NVML misses the core count
/// before driver 520).
pub(crate) const UNKNOWN_GPU_PEAK_FLOPS: f64 = 5e10;

/// CUDA cores per streaming multiprocessor for compute capability `major.minor`; the
/// newest known figure for capabilities newer than the table.
pub(crate) fn cores_per_multiprocessor(major: i32, minor: i32) -> u32 {
    match (major, minor) {
        (..=1, _) => 8,
        (2, 0) => 32,
        (2, _) => 48,
        (3, _) => 192,
        (4..=5, _) => 128,
        (6, 0) => 64,
        (6, _) => 128,
        (7, _) => 64,
        (8, 0) => 64,
        _ => 128,
    }
}

/// Peak flops of a GPU with `cuda_cores` cores (all multiprocessors together) whose shader
/// clock reaches `max_clock_mhz`: one fused multiply-add, two operations, per core per clock.
pub(crate) fn peak_flops(cuda_cores: u32, max_clock_mhz: u32) -> f64 {
    2.0 * f64::from(cuda_cores) * f64::from(max_clock_mhz) * 1e6
}

/// The multiprocessor count of a GPU with `cuda_cores` cores of compute capability
/// `major.minor` (a scheduler request's `<multiProcessorCount>`).
pub(crate) fn multiprocessors(cuda_cores: u32, major: i32, minor: i32) -> u32 {
    cuda_cores / cores_per_multiprocessor(major, minor)
}

/// The driver's version string (`535.86.05`) as a request's `<drvVersion>` encodes it:
/// major × 100 + minor (53586; a three-digit minor is added as it is, as the real client
/// reads it); 0 for a string that does not start with two numbers.
pub(crate) fn encode_driver_version(version: &str) -> u32 {
    let mut parts = version.trim().split('.').map(str::parse::<u32>);
    match (parts.next(), parts.next()) {
        (Some(Ok(major)), Some(Ok(minor))) => major.saturating_mul(100).saturating_add(minor),
        _ => 0,
    }
}

/// NVML's CUDA driver version (major × 1000 + minor × 10, `12020` for 12.2) as a request's
/// `<cudaVersion>` carries it: the same encoding; 0 for a negative figure.
pub(crate) fn encode_cuda_version(version: i32) -> u32 {
    u32::try_from(version).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_flops_of_known_cards() {
        // An RTX 3080: 68 multiprocessors of capability 8.6, 128 cores each, 1710 MHz
        // boost: NVIDIA's 29.8 TFLOPS.
        let cores = 68 * cores_per_multiprocessor(8, 6);
        assert_eq!(cores, 8704);
        assert!((peak_flops(cores, 1710) - 29.77e12).abs() < 0.01e12);
        assert_eq!(multiprocessors(cores, 8, 6), 68);
        // An H100 SXM: 132 multiprocessors of capability 9.0, 1980 MHz: 66.9 TFLOPS.
        let cores = 132 * cores_per_multiprocessor(9, 0);
        assert!((peak_flops(cores, 1980) - 66.9e12).abs() < 0.1e12);
        // A V100: 80 multiprocessors of 64 cores at 1530 MHz: 15.7 TFLOPS.
        assert!((peak_flops(80 * cores_per_multiprocessor(7, 0), 1530) - 15.67e12).abs() < 0.01e12);
        // A GTX 1080 (6.1) has 128 cores per multiprocessor, a P100 (6.0) 64.
        assert_eq!((cores_per_multiprocessor(6, 1), cores_per_multiprocessor(6, 0)), (128, 64));
        assert_eq!(cores_per_multiprocessor(3, 5), 192);
        assert_eq!(cores_per_multiprocessor(12, 0), 128, "newer than the table");
        assert_eq!(peak_flops(0, 1500), 0.0);
    }

    #[test]
    fn versions_as_requests_carry_them() {
        assert_eq!(encode_driver_version("535.86.05"), 53586);
        assert_eq!(encode_driver_version("550.54"), 55054);
        assert_eq!(encode_driver_version("570.124.06"), 57124);
        assert_eq!(encode_driver_version("garbage"), 0);
        assert_eq!(encode_driver_version("4294967295.1"), u32::MAX);
        assert_eq!(encode_cuda_version(12020), 12020);
        assert_eq!(encode_cuda_version(-1), 0);
    }
}
