//! Debt and credit accounting: short-term debt for the CPU scheduler (seed 000, 001),
//! per-resource long-term debt for work fetch (seed 003) against the cross-resource
//! fair-share target, and recent estimated credit for the `rec` policy (modern BOINC).

pub mod fair_share;
pub mod long_term_debt;
pub mod rec;
pub mod short_term_debt;
