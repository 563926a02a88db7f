//! Seed 004's "Scheduling Server Changes": the disk space a reply may fill, in passes
//! over the request's three free-space figures. Jobs are assigned
//! against the first figure; while nothing has been sent the server moves on to the
//! second, and to the third if the project has `<delete_from_self/>`.

use crate::disk::FreeSpaceFigures;

/// The disk space left for the jobs of one reply.
#[derive(Debug, Clone, Copy)]
pub struct DiskBudget {
    figures: FreeSpaceFigures,
    delete_from_self: bool,
    /// 0, 1, 2: which figure is in force.
    pass: u8,
    /// Bytes of the jobs sent so far.
    used: f64,
}

impl DiskBudget {
    /// A budget over a request's figures; `delete_from_self`: the project's
    /// `<delete_from_self/>`, which opens the third figure.
    pub fn new(figures: FreeSpaceFigures, delete_from_self: bool) -> Self {
        DiskBudget { figures, delete_from_self, pass: 0, used: 0.0 }
    }

    /// The bytes the figure in force allows.
    pub fn allowed(&self) -> f64 {
        match self.pass {
            0 => self.figures.free,
            1 => self.figures.free_after_offenders,
            _ => self.figures.free_after_offenders_and_self,
        }
    }

    /// Whether a job of `nbytes` fits; a later pass is taken only while nothing has
    /// been sent (`nothing_sent`).
    pub fn fits(&mut self, nbytes: f64, nothing_sent: bool) -> bool {
        loop {
            if self.used + nbytes <= self.allowed() {
                return true;
            }
            let last_pass = if self.delete_from_self { 2 } else { 1 };
            if !nothing_sent || self.pass >= last_pass {
                return false;
            }
            self.pass += 1;
        }
    }

    /// A job of `nbytes` was sent.
    pub fn take(&mut self, nbytes: f64) {
        self.used += nbytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIGURES: FreeSpaceFigures = FreeSpaceFigures {
        free: 1.0,
        free_after_offenders: 3.0,
        free_after_offenders_and_self: 6.0,
    };

    #[test]
    fn later_figures_only_while_nothing_was_sent() {
        let mut budget = DiskBudget::new(FIGURES, false);
        assert!(budget.fits(2.0, true), "the second figure opens while nothing was sent");
        budget.take(2.0);
        assert!(!budget.fits(2.0, false), "3 bytes in force, 2 used");
        assert!(budget.fits(1.0, false));
        let mut own = DiskBudget::new(FIGURES, true);
        assert!(own.fits(5.0, true), "delete_from_self opens the third figure");
        let mut other = DiskBudget::new(FIGURES, false);
        assert!(!other.fits(5.0, true));
        let mut sent = DiskBudget::new(FIGURES, true);
        assert!(!sent.fits(2.0, false), "a pass is never taken once something was sent");
    }
}
