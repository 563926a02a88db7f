//! The CPU benchmarks behind `<p_fpops>` and `<p_iops>` (issue "The host service", host
//! discovery; seed 000 uses `p_fpops` to turn a job's flops into seconds).
//!
//! - Floating point: the Whetstone benchmark's modules (Curnow and Wichmann, 1976) with
//!   loop count 10, so one pass is one million Whetstone instructions; `p_fpops` is
//!   Whetstone instructions per second, as BOINC's client reports it.
//! - Integer: a Dhrystone-style mix of integer work (arithmetic, shifts, compares and
//!   branches, array loads and stores, record copies), each counted as one operation:
//!   `p_iops` is those operations per second. It is of the order of Dhrystone MIPS × 10⁶,
//!   not equal to it; no scheduler uses it beyond showing it.
//!
//! Like the real client, every logical CPU runs the benchmark at once (so hyperthreads
//! share their cores as they will under work) and the figure is the mean per CPU. It
//! runs on threads of its own for a bounded time; the caller keeps it off the actors.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// What the benchmarks measured, per logical CPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BenchmarkResult {
    /// Floating-point speed, Whetstone instructions per second (`<p_fpops>`).
    pub fpops: f64,
    /// Integer speed, operations per second (`<p_iops>`).
    pub iops: f64,
}

/// Runs both benchmarks on `threads` threads at once (at least one), each for about
/// `duration`, and returns the mean speed per thread.
pub fn run_cpu_benchmarks(threads: u32, duration: Duration) -> BenchmarkResult {
    let threads = threads.max(1);
    let fpops = mean_rate(threads, duration, whetstone_pass, WHETSTONE_INSTRUCTIONS_PER_PASS);
    let iops = mean_rate(threads, duration, integer_pass, INTEGER_OPERATIONS_PER_PASS);
    BenchmarkResult { fpops, iops }
}

/// The mean over `threads` concurrent threads of the rate at which `pass` does
/// `work_per_pass` units, each thread running whole passes until `duration` is over.
fn mean_rate(threads: u32, duration: Duration, pass: fn(u64) -> f64, work_per_pass: f64) -> f64 {
    let rates: Vec<f64> = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..threads)
            .map(|seed| {
                scope.spawn(move || {
                    let start = Instant::now();
                    let mut passes = 0_u64;
                    let mut sink = 0.0;
                    while passes == 0 || start.elapsed() < duration {
                        sink += pass(u64::from(seed) + passes);
                        passes += 1;
                    }
                    black_box(sink);
                    passes as f64 * work_per_pass / start.elapsed().as_secs_f64().max(1e-9)
                })
            })
            .collect();
        // A thread that panicked measured nothing; the others still count.
        runs.into_iter().filter_map(|run| run.join().ok()).collect()
    });
    if rates.is_empty() { 0.0 } else { rates.iter().sum::<f64>() / rates.len() as f64 }
}

/// One pass of the Whetstone modules with loop count 10 is a million Whetstone
/// instructions (the benchmark's definition).
const WHETSTONE_INSTRUCTIONS_PER_PASS: f64 = 1e6;

const T: f64 = 0.499975;
const T1: f64 = 0.50025;
const T2: f64 = 2.0;

/// The Whetstone modules' shared step on four values.
fn whetstone_step(e: &mut [f64; 4]) {
    e[0] = (e[0] + e[1] + e[2] - e[3]) * T;
    e[1] = (e[0] + e[1] - e[2] + e[3]) * T;
    e[2] = (e[0] - e[1] + e[2] + e[3]) * T;
    e[3] = (-e[0] + e[1] + e[2] + e[3]) / T2;
}

/// One pass of the Whetstone modules (array elements, array as parameter, conditional
/// jumps, integer arithmetic, trigonometric functions, procedure calls, array
/// references, standard functions); `seed` keeps the compiler from folding it.
fn whetstone_pass(seed: u64) -> f64 {
    const LOOPS: usize = 10;
    let start = black_box(1.0 + (seed % 2) as f64 * 1e-12);
    let mut e = [start, -1.0, -1.0, -1.0];
    // Array elements.
    for _ in 0..12 * LOOPS {
        whetstone_step(&mut e);
    }
    // Array as a parameter: six steps per call.
    for _ in 0..14 * LOOPS {
        let parameter = black_box(&mut e);
        for _ in 0..6 {
            whetstone_step(parameter);
        }
    }
    // Conditional jumps.
    let mut j: i64 = black_box(1);
    for _ in 0..345 * LOOPS {
        j = if j == 1 { 2 } else { 3 };
        j = if j > 2 { 0 } else { 1 };
        j = if j < 1 { 1 } else { 0 };
    }
    // Integer arithmetic, indexing the array.
    let (mut j, mut k, mut l): (i64, i64, i64) = (black_box(1), 2, 3);
    for _ in 0..210 * LOOPS {
        j = j * (k - j) * (l - k);
        k = l * k - (l - j) * k;
        l = (l - k) * (k + j);
        e[((l - 2).rem_euclid(4)) as usize] = (j + k + l) as f64;
        e[((k - 2).rem_euclid(4)) as usize] = (j * k * l) as f64;
    }
    // Trigonometric functions.
    let (mut x, mut y): (f64, f64) = (black_box(0.5), 0.5);
    for _ in 0..32 * LOOPS {
        x = T * (T2 * x.sin() * x.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
        y = T * (T2 * y.sin() * y.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
    }
    // Procedure calls.
    let (mut x1, mut y1, mut z) = (black_box(1.0), 1.0, 1.0);
    for _ in 0..899 * LOOPS {
        let procedure = black_box(|a: f64, b: f64| {
            let a = T * (a + b);
            let b = T * (a + b);
            (a + b) / T2
        });
        z = procedure(x1, y1);
        (x1, y1) = (black_box(x1), black_box(y1));
    }
    // Array references.
    let mut refs = [0.0, 1.0, 2.0, 3.0];
    let (j, k, l) = (black_box(1), black_box(2), black_box(3));
    for _ in 0..616 * LOOPS {
        refs[j] = refs[k];
        refs[k] = refs[l];
        refs[l] = refs[j];
    }
    // Standard functions.
    let mut s: f64 = black_box(0.75);
    for _ in 0..93 * LOOPS {
        s = (((s.ln()) / T1).exp()).sqrt();
    }
    e.iter().sum::<f64>() + x + y + z + refs[1] + s + j as f64
}

/// Operations in one integer pass: [`INTEGER_ROUNDS`] rounds of [`OPERATIONS_PER_ROUND`].
const INTEGER_OPERATIONS_PER_PASS: f64 = (INTEGER_ROUNDS * OPERATIONS_PER_ROUND) as f64;
const INTEGER_ROUNDS: usize = 100_000;
/// Counted in one round of [`integer_pass`]: 4 arithmetic, 2 shifts and a xor, 2
/// compares with their branch, 2 loads, 2 stores, a 3-field record copy.
const OPERATIONS_PER_ROUND: usize = 16;

/// A record the integer benchmark copies, as Dhrystone does.
#[derive(Clone, Copy)]
struct Record {
    discriminant: u32,
    value: u64,
    next: usize,
}

/// One pass of the integer mix; `seed` keeps the compiler from folding it.
fn integer_pass(seed: u64) -> f64 {
    let mut table = [0_u64; 64];
    let mut records = [Record { discriminant: 0, value: 0, next: 0 }; 8];
    let mut state = black_box(seed | 1);
    let mut count = 0_u64;
    for round in 0..INTEGER_ROUNDS {
        state =
            state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let mixed = (state >> 17) ^ (state << 5);
        let slot = (mixed % 64) as usize;
        let loaded = table[slot];
        if loaded > mixed {
            count += 1;
        } else if loaded == mixed {
            count += 2;
        }
        table[slot] = loaded.wrapping_add(mixed);
        let target = round % 8;
        let source = records[(target + 1) % 8];
        records[target] =
            Record { discriminant: source.discriminant ^ 1, value: loaded, next: slot };
        table[(slot + 1) % 64] = count;
    }
    let records_sum = records.iter().fold(0_u64, |sum, r| {
        sum.wrapping_add(r.value ^ u64::from(r.discriminant) ^ r.next as u64)
    });
    let table_sum = table.iter().fold(0_u64, |sum, &value| sum.wrapping_add(value));
    black_box(records_sum.wrapping_add(table_sum).wrapping_add(count)) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benchmarks_measure_positive_finite_speeds() {
        let result = run_cpu_benchmarks(2, Duration::from_millis(50));
        assert!(result.fpops.is_finite() && result.fpops > 1e5, "{result:?}");
        assert!(result.iops.is_finite() && result.iops > 1e5, "{result:?}");
    }

    #[test]
    fn passes_compute_finite_values() {
        assert!(whetstone_pass(3).is_finite());
        assert!(integer_pass(3).is_finite());
        assert_ne!(integer_pass(3), integer_pass(4), "the seed reaches the work");
    }
}
