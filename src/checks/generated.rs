//! The generator's rows for the affected configs at one revision (the matrix module's own
//! `test-config`), shared by Check 15 (claims vs parameters) and Check 18 (a)-(d).

use super::affected::AffectedConfig;
use crate::matrix::generate::{test_config_rows, CommonOptions, TestConfigOptions};
use crate::matrix::inputs;
use crate::matrix::Row;
use crate::repo::{Layout, MemTree};

/// One config's generated rows, or why its search space does not generate.
pub type Generated = (String, Result<Vec<Row>, String>);

/// Rows per affected config key: `Ok(rows)` or why the search space does not generate.
/// `Err` when the revision's master configs or runner file cannot be loaded at all.
pub fn rows_by_config(tree: &MemTree, configs: &[AffectedConfig]) -> Result<Vec<Generated>, String> {
    let inputs = inputs::load(tree, &Layout::default()).map_err(|e| e.to_string())?;
    let common = CommonOptions::default();
    Ok(configs
        .iter()
        .map(|c| {
            let rows = test_config_rows(
                &inputs.configs,
                &inputs.runners,
                std::slice::from_ref(&c.key),
                &TestConfigOptions::default(),
                &common,
            )
            .map_err(|e| e.to_string());
            (c.key.clone(), rows)
        })
        .collect())
}

/// Whether `key` is a config at this revision (a new config has no base search space).
pub fn has_config(tree: &MemTree, key: &str) -> bool {
    inputs::load_master(tree, &Layout::default()).is_ok_and(|m| m.get(key).is_some())
}
