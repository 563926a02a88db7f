//! CPU scheduling policy (seed 000 "CPU scheduling policy", seed 001).
