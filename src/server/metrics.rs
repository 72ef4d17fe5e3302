//! Prometheus text metrics: deliveries by event and outcome, queue depth and the age of its
//! oldest event, handler latency, failures and event retries, GitHub API calls, retries and
//! errors, state-file errors, reconcile passes.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::github::ApiMetrics;

/// Upper bounds (seconds) of the handler latency histogram.
const BUCKETS: [f64; 10] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0, 30.0];
/// Upper bounds of the requests-per-event histograms (an empty push aims at 3 GitHub requests,
/// a full collection takes about 40).
const REQUEST_BUCKETS: [u64; 7] = [0, 3, 10, 30, 100, 300, 1000];

#[derive(Default)]
pub struct Metrics {
    deliveries: Mutex<BTreeMap<(&'static str, &'static str), u64>>,
    handled: AtomicU64,
    /// Attempts that failed transiently and were queued again with backoff.
    event_retries: AtomicU64,
    failed: AtomicU64,
    latency_buckets: [AtomicU64; BUCKETS.len()],
    latency_micros: AtomicU64,
    state_errors: AtomicU64,
    /// One lock for all reconcile totals, so a scrape sees whole passes.
    reconcile: Mutex<ReconcileTotals>,
    /// Requests per event, by event kind: (event, action) → totals.
    requests: Mutex<BTreeMap<(&'static str, &'static str), RequestTotals>>,
    pub api: Arc<ApiMetrics>,
}

/// The GitHub and upstream requests of the events of one kind.
#[derive(Default)]
struct RequestTotals {
    events: u64,
    github: Histogram,
    upstream: Histogram,
}

#[derive(Default)]
struct Histogram {
    buckets: [u64; REQUEST_BUCKETS.len()],
    sum: u64,
}

impl Histogram {
    fn observe(&mut self, value: u64) {
        self.sum += value;
        for (bound, bucket) in REQUEST_BUCKETS.iter().zip(&mut self.buckets) {
            if value <= *bound {
                *bucket += 1;
            }
        }
    }
}

/// Actions become label values only from this list (every action the intake reads, and the
/// reconcile's own), so a sender cannot grow the series.
const ACTIONS: [&str; 15] = [
    "opened",
    "reopened",
    "ready_for_review",
    "synchronize",
    "edited",
    "labeled",
    "unlabeled",
    "converted_to_draft",
    "closed",
    "created",
    "submitted",
    "checks_requested",
    "sweepgate-reconcile",
    "dispatch",
    "",
];

/// An action as a label value: one of [`ACTIONS`], or `other`.
pub fn action_label(action: &str) -> &'static str {
    ACTIONS.iter().find(|a| **a == action).copied().unwrap_or("other")
}

/// The queue as a scrape sees it (read from the lanes at that moment).
#[derive(Debug, Default, Clone, Copy)]
pub struct QueueGauges {
    /// Events waiting (not being processed).
    pub depth: usize,
    /// Age of the oldest waiting event.
    pub oldest_age: Option<Duration>,
}

/// What one reconcile pass did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReconcilePass {
    pub repos: usize,
    /// PRs queued for the label handler, and PRs whose shard was full.
    pub queued: u64,
    pub skipped: u64,
    /// Repositories whose open PRs could not be listed.
    pub errors: u64,
}

#[derive(Default)]
struct ReconcileTotals {
    passes: u64,
    queued: u64,
    skipped: u64,
    errors: u64,
}

/// Event names become label values only from this list, so a sender cannot grow the series.
pub fn event_label(name: &str) -> &'static str {
    match name {
        "pull_request" => "pull_request",
        "issue_comment" => "issue_comment",
        "pull_request_review" => "pull_request_review",
        "pull_request_review_comment" => "pull_request_review_comment",
        "workflow_dispatch" => "workflow_dispatch",
        "merge_group" => "merge_group",
        "ping" => "ping",
        _ => "other",
    }
}

impl Metrics {
    pub fn new(api: Arc<ApiMetrics>) -> Metrics {
        Metrics { api, ..Metrics::default() }
    }

    pub fn delivery(&self, event: &'static str, outcome: &'static str) {
        let mut map = self.deliveries.lock().unwrap_or_else(|p| p.into_inner());
        *map.entry((event, outcome)).or_default() += 1;
    }

    pub fn handled(&self, took: Duration, ok: bool) {
        let counter = if ok { &self.handled } else { &self.failed };
        counter.fetch_add(1, Ordering::Relaxed);
        let secs = took.as_secs_f64();
        for (bound, bucket) in BUCKETS.iter().zip(&self.latency_buckets) {
            if secs <= *bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.latency_micros.fetch_add(took.as_micros() as u64, Ordering::Relaxed);
    }

    pub fn event_retry(&self) {
        self.event_retries.fetch_add(1, Ordering::Relaxed);
    }

    /// A write to the state file failed (a delivery id or a repository).
    pub fn state_error(&self) {
        self.state_errors.fetch_add(1, Ordering::Relaxed);
    }

    /// One event of kind (`event`, `action`) sent `github` GitHub and `upstream` upstream requests.
    pub fn event_requests(&self, event: &'static str, action: &'static str, github: u64, upstream: u64) {
        let mut map = self.requests.lock().unwrap_or_else(|p| p.into_inner());
        let totals = map.entry((event, action)).or_default();
        totals.events += 1;
        totals.github.observe(github);
        totals.upstream.observe(upstream);
    }

    pub fn reconciled(&self, pass: &ReconcilePass) {
        let mut totals = self.reconcile.lock().unwrap_or_else(|p| p.into_inner());
        totals.passes += 1;
        totals.queued += pass.queued;
        totals.skipped += pass.skipped;
        totals.errors += pass.errors;
    }

    /// The Prometheus text exposition.
    pub fn render(&self, queue: &QueueGauges) -> String {
        let mut out = String::new();
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        out.push_str("# HELP sweepgate_webhook_deliveries_total Webhook deliveries by event and outcome.\n");
        out.push_str("# TYPE sweepgate_webhook_deliveries_total counter\n");
        for ((event, outcome), n) in self.deliveries.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            let _ = writeln!(out, "sweepgate_webhook_deliveries_total{{event=\"{event}\",outcome=\"{outcome}\"}} {n}");
        }
        out.push_str("# HELP sweepgate_queue_depth Events waiting for a worker.\n# TYPE sweepgate_queue_depth gauge\n");
        let _ = writeln!(out, "sweepgate_queue_depth {}", queue.depth);
        out.push_str("# HELP sweepgate_queue_oldest_age_seconds Age of the oldest waiting event (0: none).\n");
        let _ = writeln!(
            out,
            "# TYPE sweepgate_queue_oldest_age_seconds gauge\nsweepgate_queue_oldest_age_seconds {:.3}",
            queue.oldest_age.unwrap_or_default().as_secs_f64()
        );
        out.push_str("# HELP sweepgate_events_handled_total Events processed, by result.\n");
        out.push_str("# TYPE sweepgate_events_handled_total counter\n");
        let _ = writeln!(out, "sweepgate_events_handled_total{{result=\"ok\"}} {}", load(&self.handled));
        let _ = writeln!(out, "sweepgate_events_handled_total{{result=\"failed\"}} {}", load(&self.failed));
        out.push_str("# HELP sweepgate_handler_seconds Time to process one event.\n");
        out.push_str("# TYPE sweepgate_handler_seconds histogram\n");
        for (bound, bucket) in BUCKETS.iter().zip(&self.latency_buckets) {
            let _ = writeln!(out, "sweepgate_handler_seconds_bucket{{le=\"{bound}\"}} {}", load(bucket));
        }
        let count = load(&self.handled) + load(&self.failed);
        let _ = writeln!(out, "sweepgate_handler_seconds_bucket{{le=\"+Inf\"}} {count}");
        let _ = writeln!(out, "sweepgate_handler_seconds_sum {}", load(&self.latency_micros) as f64 / 1e6);
        let _ = writeln!(out, "sweepgate_handler_seconds_count {count}");
        for (name, help, value) in [
            (
                "sweepgate_event_retries_total",
                "Event attempts that failed transiently and were queued again with backoff.",
                &self.event_retries,
            ),
            ("sweepgate_github_api_calls_total", "GitHub API requests sent (retries included).", &self.api.calls),
            ("sweepgate_github_api_retries_total", "GitHub API requests retried.", &self.api.retries),
            ("sweepgate_github_api_errors_total", "GitHub API calls that failed after retries.", &self.api.errors),
            (
                "sweepgate_state_errors_total",
                "Reads and writes of the state file that failed (event queue, repositories).",
                &self.state_errors,
            ),
        ] {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}", load(value));
        }
        let requests = self.requests.lock().unwrap_or_else(|p| p.into_inner());
        for (name, whom) in [("github", "GitHub API"), ("upstream", "upstream")] {
            let family = format!("sweepgate_event_{name}_requests");
            let _ = writeln!(out, "# HELP {family} {whom} requests one event sent, by event and action.");
            let _ = writeln!(out, "# TYPE {family} histogram");
            for ((event, action), totals) in requests.iter() {
                let histogram = if name == "github" { &totals.github } else { &totals.upstream };
                let labels = format!("event=\"{event}\",action=\"{action}\"");
                for (bound, n) in REQUEST_BUCKETS.iter().zip(&histogram.buckets) {
                    let _ = writeln!(out, "{family}_bucket{{{labels},le=\"{bound}\"}} {n}");
                }
                let _ = writeln!(out, "{family}_bucket{{{labels},le=\"+Inf\"}} {}", totals.events);
                let _ = writeln!(out, "{family}_sum{{{labels}}} {}", histogram.sum);
                let _ = writeln!(out, "{family}_count{{{labels}}} {}", totals.events);
            }
        }
        drop(requests);
        let r = self.reconcile.lock().unwrap_or_else(|p| p.into_inner());
        out.push_str("# HELP sweepgate_reconcile_passes_total Reconcile passes over open PRs.\n");
        let _ = writeln!(
            out,
            "# TYPE sweepgate_reconcile_passes_total counter\nsweepgate_reconcile_passes_total {}",
            r.passes
        );
        out.push_str(
            "# HELP sweepgate_reconcile_prs_total Open PRs a reconcile pass queued, or skipped (full shard).\n",
        );
        out.push_str("# TYPE sweepgate_reconcile_prs_total counter\n");
        let _ = writeln!(out, "sweepgate_reconcile_prs_total{{result=\"queued\"}} {}", r.queued);
        let _ = writeln!(out, "sweepgate_reconcile_prs_total{{result=\"skipped\"}} {}", r.skipped);
        out.push_str("# HELP sweepgate_reconcile_errors_total Repositories whose open PRs could not be listed.\n");
        let _ = writeln!(
            out,
            "# TYPE sweepgate_reconcile_errors_total counter\nsweepgate_reconcile_errors_total {}",
            r.errors
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition_has_every_family() {
        let m = Metrics::new(Arc::default());
        m.delivery("pull_request", "queued");
        m.delivery("pull_request", "queued");
        m.delivery(event_label("evil\"}"), "unauthorized");
        m.handled(Duration::from_millis(3), true);
        m.handled(Duration::from_secs(2), false);
        m.event_retry();
        let gauges = QueueGauges { depth: 3, oldest_age: Some(Duration::from_millis(1500)) };
        let text = m.render(&gauges);
        assert!(text.contains("sweepgate_queue_depth 3\n"));
        assert!(text.contains("sweepgate_queue_oldest_age_seconds 1.500\n"));
        assert!(text.contains("sweepgate_event_retries_total 1\n"));
        assert!(text.contains("sweepgate_webhook_deliveries_total{event=\"pull_request\",outcome=\"queued\"} 2"));
        assert!(text.contains("sweepgate_webhook_deliveries_total{event=\"other\",outcome=\"unauthorized\"} 1"));
        assert!(text.contains("sweepgate_handler_seconds_bucket{le=\"0.005\"} 1"));
        assert!(text.contains("sweepgate_handler_seconds_bucket{le=\"+Inf\"} 2"));
        assert!(text.contains("sweepgate_events_handled_total{result=\"failed\"} 1"));
        assert!(text.contains("sweepgate_github_api_calls_total 0"));
        m.reconciled(&ReconcilePass { repos: 1, queued: 3, skipped: 1, errors: 0 });
        let text = m.render(&QueueGauges::default());
        assert!(text.contains("sweepgate_queue_oldest_age_seconds 0.000\n"));
        assert!(text.contains("sweepgate_reconcile_passes_total 1"));
        assert!(text.contains("sweepgate_reconcile_prs_total{result=\"queued\"} 3"));
    }

    #[test]
    fn requests_per_event_are_a_histogram_per_event_kind() {
        let m = Metrics::new(Arc::default());
        m.event_requests("pull_request", action_label("synchronize"), 3, 0);
        m.event_requests("pull_request", action_label("synchronize"), 44, 48);
        m.event_requests("pull_request", action_label("evil\"}"), 1, 0);
        let text = m.render(&QueueGauges::default());
        let sync = "event=\"pull_request\",action=\"synchronize\"";
        for line in [
            format!("sweepgate_event_github_requests_bucket{{{sync},le=\"3\"}} 1"),
            format!("sweepgate_event_github_requests_bucket{{{sync},le=\"100\"}} 2"),
            format!("sweepgate_event_github_requests_sum{{{sync}}} 47"),
            format!("sweepgate_event_github_requests_count{{{sync}}} 2"),
            format!("sweepgate_event_upstream_requests_bucket{{{sync},le=\"0\"}} 1"),
            format!("sweepgate_event_upstream_requests_sum{{{sync}}} 48"),
            "sweepgate_event_github_requests_count{event=\"pull_request\",action=\"other\"} 1".to_owned(),
        ] {
            assert!(text.contains(&format!("{line}\n")), "{line} in:\n{text}");
        }
    }
}
