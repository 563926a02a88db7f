//! CPU schedule enforcement (seed 000 "CPU schedule enforcement").
