//! `.github/CODEOWNERS` with GitHub's semantics (spec 30 §7.1).
