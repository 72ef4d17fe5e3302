//! Performance against the published curve (issue 26): per point and metric, the head run's
//! value against the last published run's, a noise band from the point's ingested history, and
//! a class. Pure: the caller matches points and gathers the history (`checks::performance`).
//!
//! Noise band (decision PF1): the median absolute deviation of the point's history, scaled to a
//! standard deviation (× 1.4826) and widened to three of them, as a percentage of the history's
//! median, never below [`MIN_BAND_PCT`]; [`DEFAULT_BAND_PCT`] when the history holds fewer than
//! [`MIN_HISTORY`] valid values.

use serde::{Deserialize, Serialize};

use super::pareto::RemovedCoverage;
use super::round_to;

/// Fewer valid history values than this get the default band.
pub const MIN_HISTORY: usize = 3;
/// The band of a point whose history is too short (percent of the published value).
pub const DEFAULT_BAND_PCT: f64 = 10.0;
/// The narrowest band: identical history values never make every difference "real".
pub const MIN_BAND_PCT: f64 = 2.0;
/// MAD → σ for normally distributed noise.
const MAD_TO_SIGMA: f64 = 1.4826;
/// Band half-width in σ.
const BAND_SIGMAS: f64 = 3.0;

/// A compared metric, with its direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Total token throughput per GPU (higher is better).
    TputPerGpu,
    /// tok/s/user at the run's percentile (higher is better).
    Interactivity,
    /// Time to first token in seconds at the run's percentile (lower is better).
    Ttft,
    /// End-to-end latency in seconds at the run's percentile (lower is better).
    E2el,
}

impl Metric {
    pub const ALL: [Metric; 4] = [Metric::TputPerGpu, Metric::Interactivity, Metric::Ttft, Metric::E2el];

    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::TputPerGpu | Metric::Interactivity)
    }
}

/// One point's measured values: NaN when the aggregate lacks one (the aggregate reader parses
/// strict JSON, so a NaN here is always a missing metric, never a literal).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Values {
    pub tput_per_gpu: f64,
    pub interactivity: f64,
    pub ttft: f64,
    pub e2el: f64,
}

impl Values {
    pub fn get(&self, metric: Metric) -> f64 {
        match metric {
            Metric::TputPerGpu => self.tput_per_gpu,
            Metric::Interactivity => self.interactivity,
            Metric::Ttft => self.ttft,
            Metric::E2el => self.e2el,
        }
    }
}

/// A row's class. `unknown` rows name why in their notes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Regression,
    Improvement,
    Removed,
    New,
    Unknown,
    Noise,
}

/// What a row could not use, named in the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Note {
    /// The published run, or its aggregates for this series, could not be read.
    NoBaseline,
    /// A value is zero, negative or infinite.
    Invalid,
    /// An aggregate lacks the metric (some upstream aggregates have no TTFT, for one).
    NoMetric,
    /// Fewer than [`MIN_HISTORY`] history values: the band is [`DEFAULT_BAND_PCT`].
    DefaultBand,
}

/// A removed point's coverage by the head frontier (Check 18(g)'s verdict).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Coverage {
    Dominated,
    Bracketed,
    AboveSegment,
    OutsideFrontier,
    InvalidEvidence,
}

impl Coverage {
    pub fn of(coverage: &RemovedCoverage) -> Coverage {
        match coverage {
            RemovedCoverage::Dominated { .. } => Coverage::Dominated,
            RemovedCoverage::Bracketed { .. } => Coverage::Bracketed,
            RemovedCoverage::AboveSegment { .. } => Coverage::AboveSegment,
            RemovedCoverage::OutsideFrontier { .. } => Coverage::OutsideFrontier,
            RemovedCoverage::InvalidEvidence => Coverage::InvalidEvidence,
        }
    }

    pub fn is_covered(self) -> bool {
        matches!(self, Coverage::Dominated | Coverage::Bracketed)
    }
}

/// A noise band in percent of the published value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    pub pct: f64,
    /// True when the history was too short and the band is [`DEFAULT_BAND_PCT`].
    pub default: bool,
}

fn valid(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The band of one point and metric from its history (invalid values are left out).
pub fn noise_band(history: &[f64]) -> Band {
    let mut values: Vec<f64> = history.iter().copied().filter(|v| valid(*v)).collect();
    if values.len() < MIN_HISTORY {
        return Band { pct: DEFAULT_BAND_PCT, default: true };
    }
    values.sort_by(f64::total_cmp);
    let m = median(&values);
    let mut deviations: Vec<f64> = values.iter().map(|v| (v - m).abs()).collect();
    deviations.sort_by(f64::total_cmp);
    let spread = BAND_SIGMAS * MAD_TO_SIGMA * median(&deviations) / m * 100.0;
    Band { pct: spread.max(MIN_BAND_PCT), default: false }
}

/// A compared point: its identity, values and what is known of its baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct PointInput<'a> {
    pub config: &'a str,
    /// The series' scenario (`8k1k`, `agentic-coding`).
    pub scenario: String,
    /// `<scenario> <recipe> c<conc>` (multinode: `<scenario> c<conc>`).
    pub point: String,
    pub published: Option<Values>,
    pub head: Option<Values>,
    /// The point's values in the ingested history (the published run included).
    pub history: Vec<Values>,
    /// Known baseline: false when the published run or its aggregates could not be read.
    pub baseline_known: bool,
    pub published_run: Option<u64>,
    pub head_run: Option<u64>,
    /// On the published frontier (interactivity plane), or the head's for a new point.
    pub frontier: bool,
    pub coverage: Option<Coverage>,
}

/// One row of the `performance` array.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub config: String,
    pub scenario: String,
    pub point: String,
    pub metric: Metric,
    pub published: Option<f64>,
    pub head: Option<f64>,
    pub delta_pct: Option<f64>,
    pub noise_pct: Option<f64>,
    pub class: Class,
    pub notes: Vec<Note>,
    pub published_run: Option<u64>,
    pub head_run: Option<u64>,
    /// History values the band was computed from.
    pub history: usize,
    pub frontier: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// The four rows of one point.
pub fn compare_point(input: &PointInput<'_>) -> Vec<Row> {
    Metric::ALL
        .iter()
        .map(|&metric| {
            let published = input.published.map(|v| v.get(metric));
            let head = input.head.map(|v| v.get(metric));
            let history: Vec<f64> = input.history.iter().map(|v| v.get(metric)).collect();
            let mut row = Row {
                config: input.config.to_owned(),
                scenario: input.scenario.clone(),
                point: input.point.clone(),
                metric,
                published: published.and_then(finite),
                head: head.and_then(finite),
                delta_pct: None,
                noise_pct: None,
                class: Class::Unknown,
                notes: Vec::new(),
                published_run: input.published_run,
                head_run: input.head_run,
                history: history.iter().filter(|v| valid(**v)).count(),
                frontier: input.frontier,
                coverage: input.coverage,
            };
            let present = [published, head].into_iter().flatten();
            let missing = present.clone().any(f64::is_nan);
            let invalid = present.clone().any(|v| !v.is_nan() && !valid(v));
            if invalid {
                row.notes.push(Note::Invalid);
            }
            if missing {
                row.notes.push(Note::NoMetric);
            }
            let invalid = invalid || missing;
            match (published, head) {
                (Some(p), Some(h)) => {
                    let band = noise_band(&history);
                    row.noise_pct = Some(round_to(band.pct, 2));
                    if band.default {
                        row.notes.push(Note::DefaultBand);
                    }
                    if !invalid {
                        let delta = (h - p) / p * 100.0;
                        let better = if metric.higher_is_better() { delta } else { -delta };
                        row.delta_pct = Some(round_to(delta, 2));
                        row.class = if delta.abs() <= band.pct {
                            Class::Noise
                        } else if better > 0.0 {
                            Class::Improvement
                        } else {
                            Class::Regression
                        };
                    }
                }
                (None, Some(_)) if input.baseline_known => row.class = Class::New,
                (None, Some(_)) => row.notes.push(Note::NoBaseline),
                (Some(_), None) => row.class = Class::Removed,
                (None, None) => row.notes.push(Note::NoBaseline),
            }
            row
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(tput: f64, intvty: f64, ttft: f64, e2el: f64) -> Values {
        Values { tput_per_gpu: tput, interactivity: intvty, ttft, e2el }
    }

    fn input(published: Option<Values>, head: Option<Values>, history: &[Values]) -> PointInput<'static> {
        PointInput {
            config: "dsr1-fp4-b200-sglang",
            scenario: "8k1k".into(),
            point: "8k1k tp8 ep1 dpa:false spec:none c4".into(),
            published,
            head,
            history: history.to_vec(),
            baseline_known: true,
            published_run: Some(5),
            head_run: Some(9),
            frontier: true,
            coverage: None,
        }
    }

    #[test]
    fn the_band_is_three_scaled_mads_of_the_history_with_a_floor_and_a_default() {
        // Median 100, deviations 0,2,4,6,10 → MAD 4 → 3 × 1.4826 × 4 % = 17.7912 %.
        let band = noise_band(&[100.0, 98.0, 104.0, 94.0, 110.0]);
        assert!((band.pct - 17.7912).abs() < 1e-9, "{band:?}");
        assert!(!band.default);
        // Identical values: MAD 0, the floor applies.
        assert_eq!(noise_band(&[50.0, 50.0, 50.0]), Band { pct: MIN_BAND_PCT, default: false });
        // Two valid values (a NaN and a zero are not history): the default band.
        assert_eq!(noise_band(&[50.0, f64::NAN, 0.0, 51.0]), Band { pct: DEFAULT_BAND_PCT, default: true });
    }

    #[test]
    fn hand_computed_deltas_one_regression_beyond_its_band_and_one_within() {
        // History of 5 runs: tput 1000,980,1020,1010,990 → median 1000, MAD 10 → band 4.4478 %.
        let history = [
            values(1000.0, 50.0, 1.0, 20.0),
            values(980.0, 50.0, 1.0, 20.0),
            values(1020.0, 50.0, 1.0, 20.0),
            values(1010.0, 50.0, 1.0, 20.0),
            values(990.0, 50.0, 1.0, 20.0),
        ];
        let published = values(1000.0, 50.0, 1.0, 20.0);
        // tput −10 % (beyond 4.4478 %): regression; interactivity +1 % (within the 2 % floor):
        // noise; TTFT 1.0 → 0.9 s (−10 %, lower is better): improvement; E2EL 20 → 21 s (+5 %
        // beyond the 2 % floor, lower is better): regression.
        let head = values(900.0, 50.5, 0.9, 21.0);
        let rows = compare_point(&input(Some(published), Some(head), &history));
        let got: Vec<(Metric, Option<f64>, Option<f64>, Class)> =
            rows.iter().map(|r| (r.metric, r.delta_pct, r.noise_pct, r.class)).collect();
        assert_eq!(
            got,
            [
                (Metric::TputPerGpu, Some(-10.0), Some(4.45), Class::Regression),
                (Metric::Interactivity, Some(1.0), Some(2.0), Class::Noise),
                (Metric::Ttft, Some(-10.0), Some(2.0), Class::Improvement),
                (Metric::E2el, Some(5.0), Some(2.0), Class::Regression),
            ]
        );
        assert!(rows.iter().all(|r| r.notes.is_empty() && r.history == 5));
        // −3 % tput is within the 4.45 % band.
        let rows = compare_point(&input(Some(published), Some(values(970.0, 50.0, 1.0, 20.0)), &history));
        assert_eq!((rows[0].delta_pct, rows[0].class), (Some(-3.0), Class::Noise));
    }

    #[test]
    fn short_history_invalid_values_new_removed_and_unknown_baselines_are_named() {
        let p = values(1000.0, 50.0, 1.0, 20.0);
        let rows = compare_point(&input(Some(p), Some(values(1050.0, 50.0, 1.0, 20.0)), &[p]));
        assert_eq!(
            (rows[0].class, rows[0].noise_pct, &rows[0].notes[..]),
            (Class::Noise, Some(10.0), &[Note::DefaultBand][..])
        );
        let rows = compare_point(&input(Some(p), Some(values(0.0, f64::NAN, 1.0, 20.0)), &[p]));
        assert_eq!((rows[0].class, rows[0].head, rows[0].delta_pct), (Class::Unknown, Some(0.0), None));
        assert_eq!(rows[0].notes, [Note::Invalid, Note::DefaultBand]);
        assert_eq!((rows[1].class, rows[1].head), (Class::Unknown, None));
        assert_eq!(rows[1].notes, [Note::NoMetric, Note::DefaultBand], "a missing metric is named, not 'invalid'");
        let infinite = compare_point(&input(Some(p), Some(values(f64::INFINITY, 50.0, 1.0, 20.0)), &[p]));
        assert_eq!(
            (infinite[0].class, &infinite[0].notes[..]),
            (Class::Unknown, &[Note::Invalid, Note::DefaultBand][..])
        );
        assert!(compare_point(&input(None, Some(p), &[])).iter().all(|r| r.class == Class::New));
        let mut removed = input(Some(p), None, &[]);
        removed.coverage = Some(Coverage::AboveSegment);
        assert!(compare_point(&removed).iter().all(|r| r.class == Class::Removed && r.coverage.is_some()));
        let mut unknown = input(None, Some(p), &[]);
        unknown.baseline_known = false;
        assert!(compare_point(&unknown).iter().all(|r| r.class == Class::Unknown && r.notes == [Note::NoBaseline]));
    }
}
