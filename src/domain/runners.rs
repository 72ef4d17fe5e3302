//! `configs/runners.yaml` (spec 20 §3).
