//! The schedule page's `explain` of this instant (docs/explain.md): the decision the
//! client's policy makes on the current state, and why, as `boinc-rs explain` prints it.

use boinc_core::Policy;
use boinc_core::decision::decide;
use boinc_core::explain::{Explanation, render_text};
use boinc_runtime::runtime::messages::StateSnapshot;

/// How long before now the previous decision is taken to have been enforced (the
/// client decides at least once a minute).
const LAST_DECISION_AGO: f64 = 60.0;

/// `explain`'s text for `snapshot`, under the live client's policy (the seed policy).
pub(crate) fn explain_text(snapshot: &StateSnapshot) -> String {
    let now = snapshot.time;
    let decision = decide(&snapshot.state, Policy::Seed, now - LAST_DECISION_AGO, now);
    render_text(&Explanation::new(&snapshot.state, &decision))
}
