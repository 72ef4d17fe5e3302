//! Eval score floors, `utils/evals/thresholds.yaml` (spec 40 §1.6, 30 §7.7).
