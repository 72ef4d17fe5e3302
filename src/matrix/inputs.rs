//! Reading the generator's inputs (both master files, the runner file) from one revision.

use super::MatrixError;
use crate::domain::master_config::{load_master_configs, read_master_configs, MasterConfigError, MasterConfigs};
use crate::domain::runners::Runners;
use crate::repo::{Layout, Logical, Tree};
use crate::yaml;

/// Master files in upstream's order (`MASTER_CONFIGS`).
pub const MASTER_FILES: [&str; 2] = ["amd-master.yaml", "nvidia-master.yaml"];
pub const RUNNER_FILE: &str = "runners.yaml";

/// Everything the generator reads at one revision.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inputs {
    pub configs: MasterConfigs,
    pub runners: Runners,
}

/// The configs folder of `tree` (Rule L1), `configs` when neither layout has one.
pub fn configs_dir(tree: &dyn Tree, layout: &Layout) -> Result<String, MatrixError> {
    Ok(layout.resolve(tree, Logical::ConfigsDir)?.unwrap_or_else(|| "configs".to_owned()))
}

fn read_text(tree: &dyn Tree, path: &str) -> Result<Option<String>, MatrixError> {
    match tree.read(path)? {
        None => Ok(None),
        Some(bytes) => {
            let text =
                yaml::text_of(&bytes).map_err(|e| MatrixError::Config(MasterConfigError::Yaml(e.in_file(path))))?;
            Ok(Some(text.to_owned()))
        }
    }
}

/// Loads and validates the master configs (AMD, then NVIDIA) of `tree`.
pub fn load_master(tree: &dyn Tree, layout: &Layout) -> Result<MasterConfigs, MatrixError> {
    let texts = master_texts(tree, layout)?;
    let refs: Vec<(&str, &str)> = texts.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    Ok(load_master_configs(&refs)?)
}

/// Reads the generator's inputs forward (decision TD1): the configs that can be read, and an
/// error naming each entry that cannot.
pub fn read_each(tree: &dyn Tree, layout: &Layout) -> Result<(Inputs, Vec<MasterConfigError>), MatrixError> {
    let texts = master_texts(tree, layout)?;
    let refs: Vec<(&str, &str)> = texts.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let (configs, invalid) = read_master_configs(&refs)?;
    let runners = load_runners(tree, layout)?;
    Ok((Inputs { configs, runners }, invalid))
}

fn master_texts(tree: &dyn Tree, layout: &Layout) -> Result<Vec<(String, String)>, MatrixError> {
    let dir = configs_dir(tree, layout)?;
    let mut texts: Vec<(String, String)> = Vec::new();
    for name in MASTER_FILES {
        let path = format!("{dir}/{name}");
        match read_text(tree, &path)? {
            Some(text) => texts.push((path, text)),
            None => return Err(MasterConfigError::MissingFile { file: path }.into()),
        }
    }
    Ok(texts)
}

/// Loads and validates the runner file of `tree`.
pub fn load_runners(tree: &dyn Tree, layout: &Layout) -> Result<Runners, MatrixError> {
    let path = format!("{}/{RUNNER_FILE}", configs_dir(tree, layout)?);
    let text = read_text(tree, &path)?
        .ok_or_else(|| MatrixError::MissingFile(format!("Runner config file '{path}' does not exist.")))?;
    Runners::parse(&text, &path).map_err(MatrixError::Runners)
}

/// Master configs first (their errors win, as in upstream's `main()`), then runners.
pub fn load(tree: &dyn Tree, layout: &Layout) -> Result<Inputs, MatrixError> {
    let configs = load_master(tree, layout)?;
    let runners = load_runners(tree, layout)?;
    Ok(Inputs { configs, runners })
}
