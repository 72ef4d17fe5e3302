//! `MODELS.md`: deprecations, scenarios, policy baselines (spec 30 §7.2).
