//! The emulator's SVG timeline (issue 3 "Timeline", docs/design.md "Emulator": one lane per
//! CPU/GPU instance, coloured by project, deadline misses marked), drawn from the trace
//! alone so that any saved trace can be redrawn.
//!
//! The trace does not say which CPU a job ran on, only how many CPUs it occupied, so CPU
//! lanes are assigned here: at each segment's start its `avg_ncpus` is packed first-fit
//! into the CPU lanes by lane index — whole CPUs onto wholly free lanes first, then the
//! rest into the lowest free vertical slot of each lane (a job using 0.5 CPU is a
//! half-height bar); a job continuing where it stopped tries its previous lanes first. GPU segments go on the instance lanes the
//! trace names, with the fraction of the instance as bar height.

mod availability_shading;
mod draw;
mod lanes;
mod svg_text;
#[cfg(test)]
mod tests;

pub use draw::render_timeline;
