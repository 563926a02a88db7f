//! The real world: the wall-clock driver, and (as they are built) the real effects:
//! processes, HTTP, transfers, the state store, host and GPU discovery.

pub(crate) mod driver;
