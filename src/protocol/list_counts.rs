//! Bounds on how many elements of a kind one document may list (a scheduler request's
//! results, a reply's jobs and files): the reader counts as it goes and stops with an
//! error past the bound, so a hostile document costs no more than its own size.

use super::error::{XmlError, XmlProblem};
use super::xml_tree::Element;

/// How many of each listed element a document had so far, against their limits.
#[derive(Default)]
pub(crate) struct ListCounts(Vec<(&'static str, usize)>);

impl ListCounts {
    /// Counts one more `kind` (found at `element`); an error past `limit`.
    pub(crate) fn check(
        &mut self,
        element: &Element,
        kind: &'static str,
        limit: usize,
    ) -> Result<(), XmlError> {
        let count = match self.0.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, count)) => count,
            None => {
                self.0.push((kind, 0));
                // Just pushed, so the last entry exists.
                let last = self.0.len() - 1;
                &mut self.0[last].1
            }
        };
        *count += 1;
        if *count > limit {
            return Err(element.error(XmlProblem::TooMany { element: kind, limit }));
        }
        Ok(())
    }
}
