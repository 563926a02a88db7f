//! Work fetch (seed 003; seed 000 scalar fallback; seed 001 ETTPRC for `legacy`).
