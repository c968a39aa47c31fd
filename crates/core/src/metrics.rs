//! A small Prometheus registry: counters, gauges and fixed-bucket histograms with labels, and
//! their exposition in the text format 0.0.4 (`text/plain; version=0.0.4`).
//!
//! Each process part (the API, the conductor) owns its families in a struct of its own and
//! implements [`Collector`] for it; the metrics listener (`openkeel::metrics`) encodes every
//! collector it was given on each scrape. Nothing here is global: two parts in one process
//! (the all-in-one server, or tests that start both services) never share a series.
//!
//! Series are kept in a `BTreeMap` by label values behind a mutex, so the exposition is in a
//! stable order and an update costs one short lock. The label values must come from bounded
//! sets (route templates, method names, status codes, error classes): every distinct value
//! is a series kept for the life of the process.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, PoisonError};

/// The `Content-Type` of the text exposition format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Prometheus client libraries' default buckets (seconds): requests that take from a few
/// milliseconds to ten seconds.
pub const DEFAULT_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Buckets for slow work (driver calls, status-sync sweeps): 10 ms to the 10-minute bound
/// of the longest driver call.
pub const SLOW_BUCKETS: &[f64] = &[
    0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0,
];

/// Something that writes metric families into a scrape.
#[async_trait::async_trait]
pub trait Collector: Send + Sync {
    /// Append this collector's families, in the text format, to `out`.
    async fn collect(&self, out: &mut String);
}

/// A label value escaped as the text format wants it: `\` → `\\`, `"` → `\"`, newline → `\n`.
pub fn escape_label_value(value: &str) -> String {
    let mut s = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

/// A `# HELP` text escaped as the text format wants it: `\` → `\\`, newline → `\n`.
fn escape_help(help: &str) -> String {
    help.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A sample value as the text format writes it (`+Inf`, `-Inf`, `NaN`, else the shortest
/// decimal that reads back as the same number).
pub fn format_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".to_string()
    } else if v == f64::INFINITY {
        "+Inf".to_string()
    } else if v == f64::NEG_INFINITY {
        "-Inf".to_string()
    } else {
        format!("{v}")
    }
}

/// `{a="x",b="y"}` (empty for no labels); `extra` is appended last (a histogram's `le`).
fn label_set(names: &[&str], values: &[String], extra: Option<(&str, &str)>) -> String {
    let mut pairs: Vec<String> = names
        .iter()
        .zip(values)
        .map(|(n, v)| format!("{n}=\"{}\"", escape_label_value(v)))
        .collect();
    if let Some((n, v)) = extra {
        pairs.push(format!("{n}=\"{}\"", escape_label_value(v)));
    }
    if pairs.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", pairs.join(","))
    }
}

fn header(out: &mut String, name: &str, help: &str, kind: &str) {
    let _ = writeln!(out, "# HELP {name} {}", escape_help(help));
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// The values of `labels` as owned strings, checked against the family's label names.
fn key(family: &str, names: &[&str], labels: &[&str]) -> Vec<String> {
    debug_assert_eq!(
        names.len(),
        labels.len(),
        "{family}: expected labels {names:?}, got {labels:?}"
    );
    labels.iter().map(|l| (*l).to_string()).collect()
}

/// A counter family with labels.
#[derive(Debug)]
pub struct CounterVec {
    name: &'static str,
    help: &'static str,
    labels: &'static [&'static str],
    series: Mutex<BTreeMap<Vec<String>, u64>>,
}

impl CounterVec {
    pub fn new(name: &'static str, help: &'static str, labels: &'static [&'static str]) -> Self {
        CounterVec {
            name,
            help,
            labels,
            series: Mutex::new(BTreeMap::new()),
        }
    }

    /// Add one to the series of `labels` (in the family's label order).
    pub fn inc(&self, labels: &[&str]) {
        self.inc_by(labels, 1);
    }

    pub fn inc_by(&self, labels: &[&str], n: u64) {
        let k = key(self.name, self.labels, labels);
        let mut series = self.series.lock().unwrap_or_else(PoisonError::into_inner);
        *series.entry(k).or_insert(0) += n;
    }

    /// The current value of one series (0 when it was never incremented).
    pub fn get(&self, labels: &[&str]) -> u64 {
        let k = key(self.name, self.labels, labels);
        let series = self.series.lock().unwrap_or_else(PoisonError::into_inner);
        series.get(&k).copied().unwrap_or(0)
    }

    pub fn encode(&self, out: &mut String) {
        header(out, self.name, self.help, "counter");
        let series = self.series.lock().unwrap_or_else(PoisonError::into_inner);
        for (values, n) in series.iter() {
            let _ = writeln!(
                out,
                "{}{} {n}",
                self.name,
                label_set(self.labels, values, None)
            );
        }
    }
}

/// A gauge without labels (e.g. requests in flight).
#[derive(Debug)]
pub struct Gauge {
    name: &'static str,
    help: &'static str,
    value: AtomicI64,
}

impl Gauge {
    pub fn new(name: &'static str, help: &'static str) -> Self {
        Gauge {
            name,
            help,
            value: AtomicI64::new(0),
        }
    }

    pub fn inc(&self) {
        self.value.fetch_add(1, Ordering::Relaxed);
    }

    pub fn dec(&self) {
        self.value.fetch_sub(1, Ordering::Relaxed);
    }

    pub fn get(&self) -> i64 {
        self.value.load(Ordering::Relaxed)
    }

    pub fn encode(&self, out: &mut String) {
        header(out, self.name, self.help, "gauge");
        let _ = writeln!(out, "{} {}", self.name, self.get());
    }
}

/// One gauge family written whole at scrape time (values computed by the collector).
pub fn encode_gauge_family(
    out: &mut String,
    name: &str,
    help: &str,
    labels: &[&str],
    series: &[(Vec<String>, f64)],
) {
    header(out, name, help, "gauge");
    for (values, v) in series {
        let _ = writeln!(
            out,
            "{name}{} {}",
            label_set(labels, values, None),
            format_value(*v)
        );
    }
}

#[derive(Debug, Clone)]
struct HistogramSeries {
    /// Per bucket (not cumulative), plus the `+Inf` overflow last.
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

/// A histogram family with labels and fixed upper bounds.
#[derive(Debug)]
pub struct HistogramVec {
    name: &'static str,
    help: &'static str,
    labels: &'static [&'static str],
    buckets: &'static [f64],
    series: Mutex<BTreeMap<Vec<String>, HistogramSeries>>,
}

impl HistogramVec {
    /// `buckets` are the upper bounds, increasing, without `+Inf` (always added).
    pub fn new(
        name: &'static str,
        help: &'static str,
        labels: &'static [&'static str],
        buckets: &'static [f64],
    ) -> Self {
        debug_assert!(
            buckets.windows(2).all(|w| w[0] < w[1]),
            "{name}: buckets must increase"
        );
        HistogramVec {
            name,
            help,
            labels,
            buckets,
            series: Mutex::new(BTreeMap::new()),
        }
    }

    /// Record one observation of `value` (seconds) in the series of `labels`.
    pub fn observe(&self, labels: &[&str], value: f64) {
        let k = key(self.name, self.labels, labels);
        // The first bucket whose bound is >= value (`le` is inclusive); past the last: +Inf.
        let at = self
            .buckets
            .iter()
            .position(|b| value <= *b)
            .unwrap_or(self.buckets.len());
        let mut series = self.series.lock().unwrap_or_else(PoisonError::into_inner);
        let s = series.entry(k).or_insert_with(|| HistogramSeries {
            counts: vec![0; self.buckets.len() + 1],
            sum: 0.0,
            count: 0,
        });
        s.counts[at] += 1;
        s.sum += value;
        s.count += 1;
    }

    /// The number of observations in one series.
    pub fn count(&self, labels: &[&str]) -> u64 {
        let k = key(self.name, self.labels, labels);
        let series = self.series.lock().unwrap_or_else(PoisonError::into_inner);
        series.get(&k).map_or(0, |s| s.count)
    }

    /// The number of observations over every series.
    pub fn total_count(&self) -> u64 {
        let series = self.series.lock().unwrap_or_else(PoisonError::into_inner);
        series.values().map(|s| s.count).sum()
    }

    pub fn encode(&self, out: &mut String) {
        header(out, self.name, self.help, "histogram");
        let series = self.series.lock().unwrap_or_else(PoisonError::into_inner);
        for (values, s) in series.iter() {
            let mut cumulative = 0;
            let bounds = self
                .buckets
                .iter()
                .map(|b| format_value(*b))
                .chain(std::iter::once("+Inf".to_string()));
            for (bound, n) in bounds.zip(&s.counts) {
                cumulative += n;
                let _ = writeln!(
                    out,
                    "{}_bucket{} {cumulative}",
                    self.name,
                    label_set(self.labels, values, Some(("le", &bound)))
                );
            }
            let labels = label_set(self.labels, values, None);
            let _ = writeln!(out, "{}_sum{labels} {}", self.name, format_value(s.sum));
            let _ = writeln!(out, "{}_count{labels} {}", self.name, s.count);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label_value(r#"a\b"c"#), r#"a\\b\"c"#);
        assert_eq!(escape_label_value("two\nlines"), "two\\nlines");
        assert_eq!(
            escape_label_value("/v1/clusters/{cluster_ident}"),
            "/v1/clusters/{cluster_ident}"
        );
        let c = CounterVec::new("t_total", "A \\ help\nwith two lines.", &["route"]);
        c.inc(&["say \"hi\"\\\n"]);
        let mut out = String::new();
        c.encode(&mut out);
        assert_eq!(
            out,
            "# HELP t_total A \\\\ help\\nwith two lines.\n\
             # TYPE t_total counter\n\
             t_total{route=\"say \\\"hi\\\"\\\\\\n\"} 1\n"
        );
    }

    #[test]
    fn counters_add_per_label_set_in_a_stable_order() {
        let c = CounterVec::new("r_total", "Requests.", &["method", "status"]);
        c.inc(&["POST", "201"]);
        c.inc(&["GET", "200"]);
        c.inc(&["GET", "200"]);
        c.inc_by(&["GET", "404"], 3);
        assert_eq!(c.get(&["GET", "200"]), 2);
        assert_eq!(c.get(&["PUT", "200"]), 0);
        let mut out = String::new();
        c.encode(&mut out);
        assert_eq!(
            out,
            "# HELP r_total Requests.\n# TYPE r_total counter\n\
             r_total{method=\"GET\",status=\"200\"} 2\n\
             r_total{method=\"GET\",status=\"404\"} 3\n\
             r_total{method=\"POST\",status=\"201\"} 1\n"
        );
    }

    #[test]
    fn a_family_without_series_has_only_its_header() {
        let c = CounterVec::new("e_total", "Nothing yet.", &["a"]);
        let mut out = String::new();
        c.encode(&mut out);
        assert_eq!(out, "# HELP e_total Nothing yet.\n# TYPE e_total counter\n");
    }

    #[test]
    fn histogram_buckets_are_cumulative_with_sum_and_count() {
        static B: &[f64] = &[0.1, 0.5, 1.0];
        let h = HistogramVec::new("d_seconds", "Durations.", &["route"], B);
        // On a bound counts in that bucket (`le` is "less than or equal").
        for v in [0.05, 0.1, 0.3, 1.0, 7.5] {
            h.observe(&["/"], v);
        }
        h.observe(&["/v1"], 0.2);
        assert_eq!(h.count(&["/"]), 5);
        assert_eq!(h.total_count(), 6);
        let mut out = String::new();
        h.encode(&mut out);
        assert_eq!(
            out,
            "# HELP d_seconds Durations.\n# TYPE d_seconds histogram\n\
             d_seconds_bucket{route=\"/\",le=\"0.1\"} 2\n\
             d_seconds_bucket{route=\"/\",le=\"0.5\"} 3\n\
             d_seconds_bucket{route=\"/\",le=\"1\"} 4\n\
             d_seconds_bucket{route=\"/\",le=\"+Inf\"} 5\n\
             d_seconds_sum{route=\"/\"} 8.95\n\
             d_seconds_count{route=\"/\"} 5\n\
             d_seconds_bucket{route=\"/v1\",le=\"0.1\"} 0\n\
             d_seconds_bucket{route=\"/v1\",le=\"0.5\"} 1\n\
             d_seconds_bucket{route=\"/v1\",le=\"1\"} 1\n\
             d_seconds_bucket{route=\"/v1\",le=\"+Inf\"} 1\n\
             d_seconds_sum{route=\"/v1\"} 0.2\n\
             d_seconds_count{route=\"/v1\"} 1\n"
        );
    }

    #[test]
    fn gauges_go_up_and_down() {
        let g = Gauge::new("in_flight", "In flight.");
        g.inc();
        g.inc();
        g.dec();
        let mut out = String::new();
        g.encode(&mut out);
        assert_eq!(
            out,
            "# HELP in_flight In flight.\n# TYPE in_flight gauge\nin_flight 1\n"
        );
        let mut out = String::new();
        encode_gauge_family(
            &mut out,
            "clusters",
            "By status.",
            &["status"],
            &[(vec!["CREATE_COMPLETE".into()], 2.0)],
        );
        assert_eq!(
            out,
            "# HELP clusters By status.\n# TYPE clusters gauge\nclusters{status=\"CREATE_COMPLETE\"} 2\n"
        );
    }

    #[test]
    fn special_values_are_spelled_as_the_format_wants() {
        assert_eq!(format_value(f64::INFINITY), "+Inf");
        assert_eq!(format_value(f64::NEG_INFINITY), "-Inf");
        assert_eq!(format_value(f64::NAN), "NaN");
        assert_eq!(format_value(0.005), "0.005");
        assert_eq!(format_value(10.0), "10");
        // Never an exponent Go's parser would need to guess at.
        assert_eq!(format_value(1e-7), "0.0000001");
    }
}
