//! SRT-Slurm recipes: `base`, `override_*`, `zip_override_*` (spec 50 §1-2).
