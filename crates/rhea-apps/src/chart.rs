//! What each application contributes to the results chart of `docs/apps.md`, and the chart
//! itself: horizontal bars on a logarithmic time axis, Rhea's measured time beside the seeds'
//! published figures, written as a standalone SVG (`rhea app-chart`).

use serde::{Deserialize, Serialize};

/// One application's bars: Rhea's time and the figures it is compared with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChartEntry {
    /// The application (`helr`, `resnet20`, …).
    pub app: String,
    /// What the time measures (`ms per iteration`, `ms per image`, …).
    pub what: String,
    /// Rhea's measured time in milliseconds.
    pub rhea_ms: f64,
    /// Where Rhea's time was measured (`cuda:0 (NVIDIA H100 80GB HBM3)`, `cpu`).
    pub device: String,
    /// The published figures: (who and where, milliseconds).
    pub peers: Vec<(String, f64)>,
}

const WIDTH: f64 = 860.0;
const LEFT: f64 = 250.0;
const RIGHT: f64 = 40.0;
const BAR: f64 = 16.0;
const TOP: f64 = 46.0;

/// The chart of `entries` as an SVG document (one group of bars per entry, Rhea's first; the
/// time axis is logarithmic so that milliseconds and seconds share it).
///
/// ```
/// use rhea_apps::chart::{svg, ChartEntry};
/// let e = ChartEntry {
///     app: "helr".into(),
///     what: "ms per iteration".into(),
///     rhea_ms: 29.2,
///     device: "H100".into(),
///     peers: vec![("Cheddar, H100 PCIe".into(), 40.7)],
/// };
/// let doc = svg(&[e]);
/// assert!(doc.starts_with("<svg") && doc.contains("helr") && doc.contains("40.7"));
/// ```
pub fn svg(entries: &[ChartEntry]) -> String {
    let values: Vec<f64> = entries
        .iter()
        .flat_map(|e| std::iter::once(e.rhea_ms).chain(e.peers.iter().map(|p| p.1)))
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let lo = values
        .iter()
        .cloned()
        .fold(f64::INFINITY, f64::min)
        .max(1e-3);
    let hi = values.iter().cloned().fold(0.0, f64::max).max(lo * 10.0);
    let (d0, d1) = (lo.log10().floor(), hi.log10().ceil());
    let x = |v: f64| LEFT + (v.max(1e-3).log10() - d0) / (d1 - d0) * (WIDTH - LEFT - RIGHT);
    let rows: usize = entries.iter().map(|e| 1 + e.peers.len()).sum();
    let height = TOP + rows as f64 * (BAR + 6.0) + entries.len() as f64 * 18.0 + 40.0;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height:.0}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{LEFT}\" y=\"20\" font-size=\"14\" font-weight=\"bold\">Rhea on encrypted \
         data against the seeds' figures (log scale, shorter is faster)</text>\n"
    );
    let mut decade = d0;
    while decade <= d1 {
        let v = 10f64.powf(decade);
        let gx = x(v);
        s += &format!(
            "<line x1=\"{gx:.1}\" y1=\"{:.0}\" x2=\"{gx:.1}\" y2=\"{:.0}\" stroke=\"#ddd\"/>\n\
             <text x=\"{gx:.1}\" y=\"{:.0}\" text-anchor=\"middle\" fill=\"#666\">{}</text>\n",
            TOP - 8.0,
            height - 30.0,
            height - 14.0,
            label_ms(v)
        );
        decade += 1.0;
    }
    let mut y = TOP;
    for e in entries {
        s += &format!(
            "<text x=\"8\" y=\"{:.0}\" font-weight=\"bold\">{} ({})</text>\n",
            y + 12.0,
            escape(&e.app),
            escape(&e.what)
        );
        y += 18.0;
        let bars = std::iter::once((format!("Rhea, {}", e.device), e.rhea_ms, "#1f77b4"))
            .chain(e.peers.iter().map(|(l, v)| (l.clone(), *v, "#aaaaaa")));
        for (label, v, colour) in bars {
            s += &format!(
                "<text x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"end\">{}</text>\n\
                 <rect x=\"{LEFT}\" y=\"{y:.0}\" width=\"{:.1}\" height=\"{BAR}\" \
                 fill=\"{colour}\"/>\n\
                 <text x=\"{:.1}\" y=\"{:.0}\">{}</text>\n",
                LEFT - 6.0,
                y + 12.0,
                escape(&label),
                (x(v) - LEFT).max(1.0),
                x(v) + 4.0,
                y + 12.0,
                label_ms(v)
            );
            y += BAR + 6.0;
        }
    }
    s + "</svg>\n"
}

/// `29.2 ms`, `1.05 s`.
fn label_ms(v: f64) -> String {
    if v >= 1000.0 {
        format!("{} s", trim(v / 1000.0))
    } else {
        format!("{} ms", trim(v))
    }
}

fn trim(v: f64) -> String {
    let s = if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    s
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(app: &str, rhea: f64, peer: f64) -> ChartEntry {
        ChartEntry {
            app: app.into(),
            what: "ms".into(),
            rhea_ms: rhea,
            device: "H100 <SXM>".into(),
            peers: vec![("Cheddar".into(), peer)],
        }
    }

    #[test]
    fn bars_are_ordered_by_time_on_a_log_axis() {
        let doc = svg(&[entry("helr", 29.2, 40.7), entry("resnet20", 900.0, 1050.0)]);
        let widths: Vec<f64> = doc
            .lines()
            .filter(|l| l.starts_with("<rect x="))
            .map(|l| {
                let w = l.split("width=\"").nth(1).unwrap();
                w[..w.find('"').unwrap()].parse().unwrap()
            })
            .collect();
        assert_eq!(widths.len(), 4);
        assert!(widths[0] < widths[1] && widths[1] < widths[2] && widths[2] < widths[3]);
        // one decade apart (29.2 -> 292) would be the same distance as 100 -> 1000
        assert!(doc.contains("1.05 s") && doc.contains("H100 &lt;SXM&gt;"));
        // the axis starts at the decade below the smallest value: 10 ms at the bars' origin
        assert!(doc.contains(&format!("<line x1=\"{LEFT:.1}\"")), "{doc}");
        assert!(doc.contains(&format!("<text x=\"{LEFT:.1}\" y=")) && doc.contains(">10.0 ms<"));
        assert!(!doc.contains("<SXM>"));
    }
}
