//! Deterministic samplers for the emulator (docs/design.md "Emulator": job sizes drawn from
//! the normal distribution, availability periods of exponential length). They read only
//! the RNG they are handed, in a fixed order, so a run is a function of its seed.

use rand::Rng;

/// The smallest uniform draw the exponential sampler uses: `-ln` of it is about 690, so
/// a period is never infinite however unlucky the draw.
const MIN_UNIFORM: f64 = 1e-300;

/// A draw from Normal(`mean`, `std_dev`) by the Box–Muller transform (two uniforms).
/// A zero, negative or non-finite `std_dev` gives `mean` and consumes nothing, so a
/// scenario with fixed job sizes does not advance the RNG for them.
pub fn normal(rng: &mut impl Rng, mean: f64, std_dev: f64) -> f64 {
    if !(std_dev.is_finite() && std_dev > 0.0) {
        return mean;
    }
    let u1 = rng.random::<f64>().max(MIN_UNIFORM);
    let u2 = rng.random::<f64>();
    let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
    mean + std_dev * z
}

/// A draw from the exponential distribution with the given mean (one uniform). A zero,
/// negative or non-finite mean gives 0 and consumes nothing. Never infinite.
pub fn exponential(rng: &mut impl Rng, mean: f64) -> f64 {
    if !(mean.is_finite() && mean > 0.0) {
        return 0.0;
    }
    let u = rng.random::<f64>().max(MIN_UNIFORM);
    -mean * u.ln()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn normal_has_the_requested_mean_and_spread() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let n = 20_000;
        let draws: Vec<f64> = (0..n).map(|_| normal(&mut rng, 10.0, 2.0)).collect();
        let mean = draws.iter().sum::<f64>() / n as f64;
        let var = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!((mean - 10.0).abs() < 0.05, "mean {mean}");
        assert!((var.sqrt() - 2.0).abs() < 0.05, "std dev {}", var.sqrt());
    }

    #[test]
    fn normal_without_spread_is_the_mean_and_leaves_the_rng_alone() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut untouched = rng.clone();
        assert_eq!(normal(&mut rng, 5.0, 0.0), 5.0);
        assert_eq!(normal(&mut rng, 5.0, f64::NAN), 5.0);
        assert_eq!(rng.random::<u64>(), untouched.random::<u64>());
    }

    #[test]
    fn exponential_has_the_requested_mean_and_is_finite() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let n = 20_000;
        let draws: Vec<f64> = (0..n).map(|_| exponential(&mut rng, 100.0)).collect();
        assert!(draws.iter().all(|x| x.is_finite() && *x >= 0.0));
        let mean = draws.iter().sum::<f64>() / n as f64;
        assert!((mean - 100.0).abs() < 3.0, "mean {mean}");
        assert_eq!(exponential(&mut rng, 0.0), 0.0);
        assert_eq!(exponential(&mut rng, -1.0), 0.0);
    }

    #[test]
    fn same_seed_same_draws() {
        let mut a = ChaCha8Rng::seed_from_u64(9);
        let mut b = ChaCha8Rng::seed_from_u64(9);
        for _ in 0..100 {
            assert_eq!(normal(&mut a, 1.0, 0.5), normal(&mut b, 1.0, 0.5));
            assert_eq!(exponential(&mut a, 3.0), exponential(&mut b, 3.0));
        }
    }
}
