//! Scheduler RPC timing and retry policy (seed 002).
