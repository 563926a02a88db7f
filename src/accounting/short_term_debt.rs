//! Short-term debt (seed 000 "debt", seed 001): owed processing, for the CPU scheduler.
