//! The overview's counts per day and its two charts (drawn by [`plot`]): the invites
//! created, verified (by method) and expired; and the verified ones by the credential
//! status their receipts record (docs/console.md#what-it-shows).

use std::ops::Range;

use super::plot::{self, Column, Named};
use crate::clock::rfc3339;
use crate::domain::{CredentialStatus, VerifyMethod};
use crate::store::console::DAY_SECS;
use crate::store::{Tally, TallyEvent};

/// How many verification methods there are: one per credential kind, then `verifier`
/// and `sandbox` (the chart stacks them in [`VerifyMethod::all`]'s order).
pub const METHOD_COUNT: usize = crate::domain::kind::KINDS.len() + 2;

/// How many credential statuses a receipt can record.
pub const STATUS_COUNT: usize = CredentialStatus::ALL.len();

/// The status chart's columns: each status, then "not recorded".
pub const STATUS_COLUMNS: usize = STATUS_COUNT + 1;

/// What the status chart, its legend and its table call each of [`STATUS_COLUMNS`].
pub fn status_names() -> [&'static str; STATUS_COLUMNS] {
    let mut names = [NOT_RECORDED; STATUS_COLUMNS];
    for (name, status) in names.iter_mut().zip(CredentialStatus::ALL) {
        *name = status.as_str();
    }
    names
}

/// Verified invites whose receipts record no credential status.
pub const NOT_RECORDED: &str = "not recorded";

/// The methods in the order the chart stacks them.
pub fn methods() -> Vec<VerifyMethod> {
    VerifyMethod::all().collect()
}

/// Where a method sits in [`methods`].
fn slot(method: VerifyMethod) -> usize {
    match method {
        VerifyMethod::Wallet(kind) => kind.index(),
        VerifyMethod::Verifier => METHOD_COUNT - 2,
        VerifyMethod::Sandbox => METHOD_COUNT - 1,
    }
}

/// One day's counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayCounts {
    /// Days since the Unix epoch (UTC).
    pub day: i64,
    pub created: u64,
    /// By [`methods`]' order.
    pub verified: [u64; METHOD_COUNT],
    /// Verified invites by the credential status their receipts record, in
    /// [`CredentialStatus::ALL`]'s order.
    pub status: [u64; STATUS_COUNT],
    pub expired: u64,
}

impl DayCounts {
    pub fn verified_total(&self) -> u64 {
        self.verified.iter().sum()
    }

    /// The verified invites whose receipts record no credential status: verifier and
    /// sandbox verifications, and those from before statuses were recorded.
    pub fn not_recorded(&self) -> u64 {
        self.verified_total()
            .saturating_sub(self.status.iter().sum())
    }

    /// [`Self::status`], then [`Self::not_recorded`]: the status chart's stack.
    pub fn by_status(&self) -> [u64; STATUS_COLUMNS] {
        let mut all = [0; STATUS_COLUMNS];
        all[..STATUS_COUNT].copy_from_slice(&self.status);
        all[STATUS_COUNT] = self.not_recorded();
        all
    }

    /// What the status chart's tooltip says.
    pub fn status_summary(&self) -> String {
        let total = self.verified_total();
        let by = if total == 0 {
            String::new()
        } else {
            format!(" ({})", named_counts(&self.by_status()))
        };
        format!("{}: {total} verified{by}", self.date())
    }

    /// `2027-01-15`.
    pub fn date(&self) -> String {
        rfc3339(self.day * DAY_SECS)[..10].to_owned()
    }

    /// What the day's tooltip and the table's row say.
    pub fn summary(&self) -> String {
        let methods: Vec<String> = methods()
            .iter()
            .zip(self.verified)
            .filter(|(_, n)| *n > 0)
            .map(|(m, n)| format!("{} {n}", m.as_str()))
            .collect();
        let by = if methods.is_empty() {
            String::new()
        } else {
            format!(" ({})", methods.join(", "))
        };
        format!(
            "{}: {} created, {} verified{by}, {} expired",
            self.date(),
            self.created,
            self.verified_total(),
            self.expired
        )
    }
}

/// Every day of `days`, oldest first, with the tallies that fall in it (zero if none).
pub fn days(tallies: &[Tally], days: Range<i64>) -> Vec<DayCounts> {
    let mut out: Vec<DayCounts> = days
        .clone()
        .map(|day| DayCounts {
            day,
            created: 0,
            verified: [0; METHOD_COUNT],
            status: [0; STATUS_COUNT],
            expired: 0,
        })
        .collect();
    for t in tallies {
        let Some(i) = usize::try_from(t.day - days.start)
            .ok()
            .filter(|&i| i < out.len())
        else {
            continue;
        };
        let d = &mut out[i];
        match t.event {
            TallyEvent::Created => d.created += t.count,
            TallyEvent::Verified(m) => d.verified[slot(m)] += t.count,
            TallyEvent::CredentialStatus(status) => {
                if let Some(k) = CredentialStatus::ALL.iter().position(|s| *s == status) {
                    d.status[k] += t.count;
                }
            }
            TallyEvent::Expired => d.expired += t.count,
        }
    }
    out
}

/// The main chart: per day a column of the invites verified (by method) and expired,
/// and a line of the invites created.
pub fn svg(days: &[DayCounts]) -> String {
    let (created, verified, expired) = days.iter().fold((0, 0, 0), |(c, v, e), d| {
        (c + d.created, v + d.verified_total(), e + d.expired)
    });
    let title = format!("Invites per day, last {} days", days.len());
    let desc = format!(
        "In all: {created} created, {verified} verified, {expired} expired. The table below \
         the chart lists every day."
    );
    let named = Named {
        id: "chart",
        title: &title,
        desc: &desc,
    };
    draw(&named, 260.0, days, |d| {
        let verified = d.verified.iter().enumerate();
        let stack = verified
            .map(|(k, n)| (format!("s{}", k + 1), *n))
            .chain([("sx".to_owned(), d.expired)]);
        (d.summary(), stack.collect(), Some(d.created))
    })
}

/// The second chart: per day a column of the verified invites by the credential status
/// their receipts record, [`STATUS_COLUMNS`]' colours, not recorded last.
pub fn status_svg(days: &[DayCounts]) -> String {
    let mut totals = [0u64; STATUS_COLUMNS];
    for d in days {
        for (t, n) in totals.iter_mut().zip(d.by_status()) {
            *t += n;
        }
    }
    let title = format!(
        "Verified invites per day by credential status, last {} days",
        days.len()
    );
    let desc = format!(
        "In all: {}. The table below the chart lists every day.",
        named_counts(&totals)
    );
    let named = Named {
        id: "status-chart",
        title: &title,
        desc: &desc,
    };
    draw(&named, 180.0, days, |d| {
        let stack = (1..).zip(d.by_status()).map(|(k, n)| (format!("st{k}"), n));
        (d.status_summary(), stack.collect(), None)
    })
}

/// A chart of a column per day, each day's tooltip, stack and line value as `column`
/// gives them.
fn draw(
    named: &Named<'_>,
    height: f64,
    days: &[DayCounts],
    column: impl Fn(&DayCounts) -> (String, Vec<(String, u64)>, Option<u64>),
) -> String {
    let columns: Vec<Column> = days
        .iter()
        .map(|d| {
            let (title, stack, line) = column(d);
            Column {
                title,
                label: d.date()[5..].to_owned(),
                stack,
                line,
            }
        })
        .collect();
    plot::svg(named, height, &columns)
}

/// `valid 2, not recorded 1`: the counts that are not zero.
fn named_counts(counts: &[u64; STATUS_COLUMNS]) -> String {
    let named: Vec<String> = status_names()
        .iter()
        .zip(counts)
        .filter(|(_, n)| **n > 0)
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    if named.is_empty() {
        "none verified".to_owned()
    } else {
        named.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(day: i64, event: TallyEvent, count: u64) -> Tally {
        Tally { day, event, count }
    }

    #[test]
    fn tallies_fill_their_days_and_others_are_zero() {
        let t = [
            tally(10, TallyEvent::Created, 5),
            tally(10, TallyEvent::Verified(VerifyMethod::Sandbox), 2),
            tally(11, TallyEvent::Expired, 3),
            tally(40, TallyEvent::Created, 99),
        ];
        let d = days(&t, 9..12);
        assert_eq!(d.len(), 3);
        assert_eq!((d[0].day, d[0].created), (9, 0));
        assert_eq!(d[1].created, 5);
        assert_eq!(d[1].verified, [0, 0, 0, 0, 0, 0, 2]);
        assert_eq!(d[1].status, [0; STATUS_COUNT]);
        assert_eq!(d[2].expired, 3);
        assert_eq!(
            d[1].summary(),
            "1970-01-11: 5 created, 2 verified (sandbox 2), 0 expired"
        );
    }

    #[test]
    fn the_chart_has_a_group_with_a_title_per_day() {
        let t = [
            tally(1, TallyEvent::Created, 40),
            tally(1, TallyEvent::Verified(VerifyMethod::EU_AV), 30),
            tally(1, TallyEvent::Expired, 10),
        ];
        let svg = svg(&days(&t, 0..30));
        assert_eq!(svg.matches("<title>").count(), 30);
        assert!(svg.contains("30 verified (eu-av 30)"));
        assert!(svg.contains("class=\"s1\"") && svg.contains("class=\"sx\""));
        assert!(svg.contains(">40</text>"), "the axis reaches 40: {svg}");
        assert!(!svg.contains("style="), "inline styles would break the CSP");
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    }

    #[test]
    fn verified_invites_are_split_by_recorded_status_and_the_rest_is_not_recorded() {
        let status = |s, n| tally(3, TallyEvent::CredentialStatus(s), n);
        let t = [
            tally(3, TallyEvent::Verified(VerifyMethod::EU_AV), 4),
            tally(3, TallyEvent::Verified(VerifyMethod::Verifier), 2),
            status(CredentialStatus::Valid, 2),
            status(CredentialStatus::Unchecked, 1),
            status(CredentialStatus::None, 1),
        ];
        let d = &days(&t, 3..4)[0];
        assert_eq!(d.by_status(), [2, 0, 1, 1, 2]);
        assert_eq!(
            d.status_summary(),
            "1970-01-04: 6 verified (valid 2, unchecked 1, none 1, not recorded 2)"
        );
        let svg = status_svg(&days(&t, 0..30));
        assert_eq!(svg.matches("<title>").count(), 30);
        assert!(
            svg.contains("<title>1970-01-01: 0 verified</title>"),
            "{svg}"
        );
        assert!(svg.contains("In all: valid 2, unchecked 1, none 1, not recorded 2."));
        for class in ["st1", "st3", "st4", "st5"] {
            assert!(svg.contains(&format!("class=\"{class}\"")), "{class}");
        }
        assert!(!svg.contains("class=\"st2\"") && !svg.contains("style="));
    }
}
