//! Floats as order-preserving integers: the packed completion entries and the
//! pending-event keys of the round-robin simulation, so that a single integer comparison
//! orders them and ties break deterministically.

/// A pending completion, packed into one integer so that a single comparison orders it:
/// the key (in an order-preserving encoding), then the id, then the stamp, so ties break
/// deterministically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Completion(u128);

impl Completion {
    pub(super) fn new(key: f64, id: u32, stamp: u32) -> Self {
        Completion(u128::from(order_bits(key)) << 64 | u128::from(id) << 32 | u128::from(stamp))
    }

    pub(super) fn key(self) -> f64 {
        from_order_bits((self.0 >> 64) as u64)
    }

    pub(super) fn id(self) -> u32 {
        (self.0 >> 32) as u32
    }

    pub(super) fn stamp(self) -> u32 {
        self.0 as u32
    }
}

/// "No pending event" in `Simulation::event_times`; every real key is smaller (see
/// [`event_key`]).
pub(super) const NO_EVENT: u64 = u64::MAX;

/// A pending event at time `t`, ordered by time. The one NaN whose bits would read as
/// [`NO_EVENT`] is kept one below it: a NaN time is still an event.
pub(super) fn event_key(t: f64) -> u64 {
    order_bits(t).min(NO_EVENT - 1)
}

/// The time of a pending event's key.
pub(super) fn event_time(key: u64) -> f64 {
    from_order_bits(key)
}

/// The float whose [`order_bits`] are `ordered`.
pub(super) fn from_order_bits(ordered: u64) -> f64 {
    f64::from_bits(if ordered >> 63 == 1 { ordered & !(1 << 63) } else { !ordered })
}

/// A float's bits as an integer with the same order (`f64::total_cmp`'s).
pub(super) fn order_bits(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 { !bits } else { bits | 1 << 63 }
}
