//! `perf-changelog.yaml` entries (spec 20 §4, 30 §7.6).
