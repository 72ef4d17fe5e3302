//! Changelog validation and sweep-matrix generation with upstream parity (spec 20).
