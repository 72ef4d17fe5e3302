//! Golden acceptance-length YAML (spec 30 §7.3).
