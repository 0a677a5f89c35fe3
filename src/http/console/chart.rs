//! The overview's chart, built on the server as inline SVG (no script, no external
//! resource, nothing but numbers and dates in it): per day, a column of the invites
//! verified (by method) and expired, and a line of the invites created. Each day's group
//! has a `<title>` (a tooltip and what screen readers announce); the page also has the
//! numbers as a table.

use std::fmt::Write;
use std::ops::Range;

use crate::clock::rfc3339;
use crate::domain::VerifyMethod;
use crate::store::console::DAY_SECS;
use crate::store::{Tally, TallyEvent};

/// How many verification methods there are: one per credential kind, then `verifier`
/// and `sandbox` (the chart stacks them in [`VerifyMethod::all`]'s order).
pub const METHOD_COUNT: usize = crate::domain::kind::KINDS.len() + 2;

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
    pub expired: u64,
}

impl DayCounts {
    pub fn verified_total(&self) -> u64 {
        self.verified.iter().sum()
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
            TallyEvent::Expired => d.expired += t.count,
        }
    }
    out
}

const W: f64 = 600.0;
const H: f64 = 260.0;
const LEFT: f64 = 46.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 28.0;

/// The grid's step for values up to `n`: the smallest 1, 2 or 5 × 10ⁿ that four steps
/// reach `n` with.
fn grid_step(n: u64) -> u64 {
    let need = n.div_ceil(4).max(1);
    let mut power = 1u64;
    loop {
        for m in [1, 2, 5] {
            let step = power.saturating_mul(m);
            if step >= need {
                return step;
            }
        }
        match power.checked_mul(10) {
            Some(p) => power = p,
            None => return need,
        }
    }
}

/// The SVG element for `days` (oldest first).
pub fn svg(days: &[DayCounts]) -> String {
    let top = days
        .iter()
        .map(|d| d.created.max(d.verified_total() + d.expired))
        .max()
        .unwrap_or(0);
    let step = grid_step(top);
    let ceiling = step.saturating_mul(4) as f64;
    let plot_h = H - TOP - BOTTOM;
    let y = |n: u64| TOP + plot_h - (n as f64 / ceiling) * plot_h;
    let slot_w = (W - LEFT - RIGHT) / days.len().max(1) as f64;
    let bar_w = (slot_w * 0.64).max(1.0);
    let (created, verified, expired) = days.iter().fold((0, 0, 0), |(c, v, e), d| {
        (c + d.created, v + d.verified_total(), e + d.expired)
    });
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg viewBox=\"0 0 {W} {H}\" role=\"img\" aria-labelledby=\"chart-title chart-desc\" \
         xmlns=\"http://www.w3.org/2000/svg\">\
         <title id=\"chart-title\">Invites per day, last {} days</title>\
         <desc id=\"chart-desc\">In all: {created} created, {verified} verified, {expired} \
         expired. The table below the chart lists every day.</desc>",
        days.len()
    );
    for i in 0..=4u64 {
        let value = step.saturating_mul(i);
        let gy = y(value);
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{gy:.1}\" y2=\"{gy:.1}\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{value}</text>",
            W - RIGHT,
            LEFT - 6.0,
            gy + 5.0
        );
    }
    let mut line = Vec::with_capacity(days.len());
    for (i, d) in days.iter().enumerate() {
        let x = LEFT + slot_w * i as f64;
        let bx = x + (slot_w - bar_w) / 2.0;
        let _ = write!(s, "<g><title>{}</title>", d.summary());
        // A transparent full-height target, so the tooltip shows on empty days too.
        let _ = write!(
            s,
            "<rect x=\"{x:.1}\" y=\"{TOP}\" width=\"{slot_w:.1}\" height=\"{plot_h:.1}\" fill=\"transparent\"/>"
        );
        let mut base = 0u64;
        let stack = d
            .verified
            .iter()
            .enumerate()
            .map(|(k, n)| (format!("s{}", k + 1), *n))
            .chain(std::iter::once(("sx".to_owned(), d.expired)));
        for (class, n) in stack {
            if n == 0 {
                continue;
            }
            let (y0, y1) = (y(base), y(base + n));
            let _ = write!(
                s,
                "<rect class=\"{class}\" x=\"{bx:.1}\" y=\"{y1:.1}\" width=\"{bar_w:.1}\" height=\"{:.1}\"/>",
                (y0 - y1).max(0.5)
            );
            base += n;
        }
        s.push_str("</g>");
        line.push((x + slot_w / 2.0, y(d.created)));
        if (days.len() - 1 - i) % 7 == 0 {
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                x + slot_w / 2.0,
                H - 8.0,
                &d.date()[5..]
            );
        }
    }
    let points: Vec<String> = line.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
    let _ = write!(
        s,
        "<polyline class=\"created\" points=\"{}\"/>",
        points.join(" ")
    );
    for (x, y) in &line {
        let _ = write!(
            s,
            "<circle class=\"dot\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"2.5\"/>"
        );
    }
    s.push_str("</svg>");
    s
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
        assert_eq!(d[2].expired, 3);
        assert_eq!(
            d[1].summary(),
            "1970-01-11: 5 created, 2 verified (sandbox 2), 0 expired"
        );
    }

    #[test]
    fn grid_steps_are_round_numbers() {
        assert_eq!(grid_step(0), 1);
        assert_eq!(grid_step(4), 1);
        assert_eq!(grid_step(7), 2);
        assert_eq!(grid_step(40), 10);
        assert_eq!(grid_step(41), 20);
        assert_eq!(grid_step(4001), 2000);
        assert!(grid_step(u64::MAX) >= u64::MAX / 4);
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
}
