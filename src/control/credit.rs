//! Credit as the project's scheduler reports it (docs/design.md "Protocol facts",
//! statistics): the user's and this host's total and recent average credit, kept on the
//! project's account (GUI RPC `get_project_status`, `get_state`), and BOINC's daily
//! history of them (`statistics_<project>.xml`, GUI RPC `get_statistics`): one entry a
//! day holding that day's last figures, the oldest dropped after [`STATISTICS_DAYS`].

use crate::Time;
use crate::model::{DailyStatistics, Project};

/// How many days of history are kept (BOINC's `save_stats_days` default).
pub const STATISTICS_DAYS: usize = 30;

const DAY: f64 = 86_400.0;

/// The credit figures a scheduler reply carries; a figure it leaves out is `None`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ReportedCredit {
    /// `<user_total_credit>`.
    pub user_total: Option<f64>,
    /// `<user_expavg_credit>`.
    pub user_expavg: Option<f64>,
    /// `<host_total_credit>`.
    pub host_total: Option<f64>,
    /// `<host_expavg_credit>`.
    pub host_expavg: Option<f64>,
}

/// A figure a project may report: finite and not negative, else ignored (a hostile or
/// broken server cannot put a NaN into the history).
fn figure(value: Option<f64>) -> Option<f64> {
    value.filter(|v| v.is_finite() && *v >= 0.0)
}

/// Takes the credit a reply reported at `now` into `project`: its account's figures,
/// and today's entry of its history. A reply with no figure changes nothing.
pub fn take_credit(project: &mut Project, credit: ReportedCredit, now: Time) {
    let figures =
        [credit.user_total, credit.user_expavg, credit.host_total, credit.host_expavg].map(figure);
    if figures.iter().all(Option::is_none) {
        return;
    }
    let account = &mut project.account;
    let [user_total, user_expavg, host_total, host_expavg] = figures;
    account.user_total_credit = user_total.unwrap_or(account.user_total_credit);
    account.user_expavg_credit = user_expavg.unwrap_or(account.user_expavg_credit);
    account.host_total_credit = host_total.unwrap_or(account.host_total_credit);
    account.host_expavg_credit = host_expavg.unwrap_or(account.host_expavg_credit);
    let today = DailyStatistics {
        day: (now / DAY).floor() * DAY,
        user_total_credit: account.user_total_credit,
        user_expavg_credit: account.user_expavg_credit,
        host_total_credit: account.host_total_credit,
        host_expavg_credit: account.host_expavg_credit,
    };
    let history = &mut account.statistics;
    match history.last_mut() {
        Some(last) if last.day == today.day => *last = today,
        // A clock set back leaves the history's order alone: the figures go to the
        // last day listed.
        Some(last) if last.day > today.day => *last = DailyStatistics { day: last.day, ..today },
        _ => history.push(today),
    }
    if history.len() > STATISTICS_DAYS {
        history.drain(..history.len() - STATISTICS_DAYS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reported(total: f64) -> ReportedCredit {
        ReportedCredit {
            user_total: Some(total),
            user_expavg: Some(total / 10.0),
            host_total: Some(total / 2.0),
            host_expavg: None,
        }
    }

    #[test]
    fn one_entry_a_day_with_the_days_last_figures() {
        let mut project = Project::new("P", "http://p/", 100.0);
        take_credit(&mut project, reported(100.0), 10.0 * DAY + 5.0);
        take_credit(&mut project, reported(1234.5), 10.0 * DAY + 500.0);
        assert_eq!(project.account.user_total_credit, 1234.5);
        assert_eq!(project.account.host_total_credit, 617.25);
        assert_eq!(project.account.statistics.len(), 1);
        assert_eq!(project.account.statistics[0].day, 10.0 * DAY);
        assert_eq!(project.account.statistics[0].user_total_credit, 1234.5);
        take_credit(&mut project, reported(2000.0), 11.0 * DAY + 1.0);
        assert_eq!(project.account.statistics.len(), 2);
        take_credit(&mut project, ReportedCredit::default(), 12.0 * DAY);
        assert_eq!(project.account.statistics.len(), 2, "no figure, no entry");
    }

    #[test]
    fn history_is_bounded_and_bad_figures_are_ignored() {
        let mut project = Project::new("P", "http://p/", 100.0);
        for day in 0..100 {
            take_credit(&mut project, reported(f64::from(day)), f64::from(day) * DAY);
        }
        assert_eq!(project.account.statistics.len(), STATISTICS_DAYS);
        assert_eq!(project.account.statistics[0].day, 70.0 * DAY);
        let bad = ReportedCredit {
            user_total: Some(f64::NAN),
            host_total: Some(-1.0),
            ..Default::default()
        };
        take_credit(&mut project, bad, 99.0 * DAY);
        assert_eq!(project.account.user_total_credit, 99.0);
    }
}
