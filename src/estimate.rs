//! Duration estimates (seed 000 notes 1-5).
