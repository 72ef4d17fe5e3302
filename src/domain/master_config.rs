//! Master configs `configs/*-master.yaml` (spec 20 §3, 30 §7.5).
