//! Per-resource long-term debt weighted by resource speed (seed 003 "Long-term debt").
