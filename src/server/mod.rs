//! The axum webhook server: routes, delivery dedupe, work queue, health and metrics.
