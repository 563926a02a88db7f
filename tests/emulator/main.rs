//! The emulator over boinc-core's policies: every reference and shipped scenario in virtual time, the acceptance figures against BOINC's, disk pressure and hostile scenarios.

#[path = "../support/mod.rs"]
mod support;

mod disk_pressure;
mod emulator_acceptance;
mod emulator_scenarios;
mod example_scenarios;
mod scenario_mutations;
