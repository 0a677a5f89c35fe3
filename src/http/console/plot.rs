//! The overview's charts as inline SVG, built on the server (no script, no external
//! resource, nothing but numbers and dates in them): per day a stacked column, and
//! optionally a line. Each day's group has a `<title>` (a tooltip and what screen
//! readers announce); the page also has the numbers as tables.

use std::fmt::Write;

/// One day of a chart.
pub struct Column {
    /// The day's tooltip.
    pub title: String,
    /// `11-29`, shown under every seventh column counting back from the last.
    pub label: String,
    /// The stack, bottom first: a CSS class (its colour) and a count.
    pub stack: Vec<(String, u64)>,
    /// The line's value on this day, for a chart with a line.
    pub line: Option<u64>,
}

/// What a chart is called, for its `<title>` and `<desc>`; `id` makes their ids unique
/// on the page.
pub struct Named<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub desc: &'a str,
}

const W: f64 = 600.0;
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

/// The SVG element of `columns` (oldest first), `height` units tall in a 600-wide box.
pub fn svg(named: &Named<'_>, height: f64, columns: &[Column]) -> String {
    let top = columns
        .iter()
        .map(|c| {
            let stacked: u64 = c.stack.iter().map(|(_, n)| n).sum();
            stacked.max(c.line.unwrap_or(0))
        })
        .max()
        .unwrap_or(0);
    let step = grid_step(top);
    let ceiling = step.saturating_mul(4) as f64;
    let plot_h = height - TOP - BOTTOM;
    let y = |n: u64| TOP + plot_h - (n as f64 / ceiling) * plot_h;
    let slot_w = (W - LEFT - RIGHT) / columns.len().max(1) as f64;
    let bar_w = (slot_w * 0.64).max(1.0);
    let Named { id, title, desc } = named;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg viewBox=\"0 0 {W} {height}\" role=\"img\" aria-labelledby=\"{id}-title {id}-desc\" \
         xmlns=\"http://www.w3.org/2000/svg\">\
         <title id=\"{id}-title\">{title}</title><desc id=\"{id}-desc\">{desc}</desc>"
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
    let mut line = Vec::with_capacity(columns.len());
    for (i, c) in columns.iter().enumerate() {
        let x = LEFT + slot_w * i as f64;
        let bx = x + (slot_w - bar_w) / 2.0;
        let _ = write!(s, "<g><title>{}</title>", c.title);
        // A transparent full-height target, so the tooltip shows on empty days too.
        let _ = write!(
            s,
            "<rect x=\"{x:.1}\" y=\"{TOP}\" width=\"{slot_w:.1}\" height=\"{plot_h:.1}\" fill=\"transparent\"/>"
        );
        let mut base = 0u64;
        for (class, n) in c.stack.iter().filter(|(_, n)| *n > 0) {
            let (y0, y1) = (y(base), y(base + n));
            let _ = write!(
                s,
                "<rect class=\"{class}\" x=\"{bx:.1}\" y=\"{y1:.1}\" width=\"{bar_w:.1}\" height=\"{:.1}\"/>",
                (y0 - y1).max(0.5)
            );
            base += n;
        }
        s.push_str("</g>");
        if let Some(n) = c.line {
            line.push((x + slot_w / 2.0, y(n)));
        }
        if (columns.len() - 1 - i) % 7 == 0 {
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                x + slot_w / 2.0,
                height - 8.0,
                c.label
            );
        }
    }
    if !line.is_empty() {
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
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_chart_without_a_line_draws_none_and_names_itself() {
        let columns: Vec<Column> = (0..3)
            .map(|i| Column {
                title: format!("day {i}"),
                label: format!("0{i}"),
                stack: vec![("c1".into(), i), ("c2".into(), 0)],
                line: None,
            })
            .collect();
        let named = Named {
            id: "status-chart",
            title: "T",
            desc: "D",
        };
        let svg = svg(&named, 180.0, &columns);
        assert!(svg.contains("aria-labelledby=\"status-chart-title status-chart-desc\""));
        assert!(svg.contains("<title id=\"status-chart-title\">T</title>"));
        assert_eq!(
            svg.matches("class=\"c1\"").count(),
            2,
            "no rect for 0: {svg}"
        );
        assert!(!svg.contains("class=\"c2\"") && !svg.contains("polyline"));
        assert!(svg.contains("viewBox=\"0 0 600 180\""));
    }
}
