//! The effective serving settings of each affected config, as the launch model reads them
//! per row and variant, or the named reason they cannot be read (Checks 3 and 8 judge them).

use super::configs::AffectedConfig;
use super::reach::affected_reach;
use super::{reason, Context, Reason};
use crate::domain::launch::{ConfigLaunch, RoleSettings, SettingScope, SettingsGap};

/// An affected config's launch: its launch model (`domain::launch`), read once
/// per verification with the rest of the PR's launches.
pub fn launch_of<'c>(cx: &'c Context, config: &AffectedConfig) -> Result<&'c ConfigLaunch, Reason> {
    affected_reach(cx)?
        .iter()
        .find(|r| r.config.key == config.key && r.config.file == config.file)
        .map(|r| &r.launch)
        .ok_or_else(|| reason("not_affected").arg("key", config.key.as_str()))
}

/// Why a settings source could not be read, as a maintainer opens it.
fn gap_reason(launch: &ConfigLaunch, gap: &SettingsGap) -> Reason {
    match gap {
        SettingsGap::InvalidEntry { error } | SettingsGap::UnparsableRecipe { error, .. } => error.as_str().into(),
        SettingsGap::RecipeAbsent { path, row: Some(row), .. } => {
            reason("srt_recipe_absent").arg("path", path.as_str()).arg("at", row.as_str())
        }
        SettingsGap::RecipeAbsent { path, written, row: None } => {
            reason("config_file_recipe_absent").arg("path", path.as_str()).arg("written", written.as_str())
        }
        SettingsGap::ExternalRecipe { checkout, path, at } => reason("external_recipe_unread")
            .arg("checkout", checkout.as_str())
            .arg("path", path.as_str())
            .arg("at", at.as_str()),
        SettingsGap::ExternalUnavailable { checkout, path, at, reason: why } => reason("external_recipe_unavailable")
            .arg("checkout", checkout.as_str())
            .arg("path", path.as_str())
            .arg("at", at.as_str())
            .arg("reason", why.as_str()),
        SettingsGap::RecipeUnlocated { written, at } => {
            let what = format!("CONFIG_FILE={written}");
            let why = launch.unresolved.iter().find(|u| u.what == what).map_or("no_checkout", |u| u.why);
            reason("launch_unresolved").arg("what", what).arg("why", why).arg("at", at.as_str())
        }
        SettingsGap::NoServingVariant { path, label, conc, row } => reason("srt_no_serving_variant")
            .arg("path", path.as_str())
            .arg("label", label.as_str())
            .arg("conc", *conc)
            .arg("at", row.as_str()),
        SettingsGap::NotText { path } => reason("path_not_text").arg("path", path.as_str()),
        SettingsGap::NoServerStarted { path } => reason("no_server_started").arg("path", path.as_str()),
        SettingsGap::DisaggTable { path, at, tried } if tried.is_empty() => {
            reason("disagg_table_absent").arg("path", path.as_str()).arg("at", at.as_str())
        }
        SettingsGap::DisaggTable { path, at, tried } => reason("disagg_entry_absent")
            .arg("path", path.as_str())
            .arg("at", at.as_str())
            .arg("tried", tried.join(", ")),
    }
}

/// The effective settings of a config, as the launch model reads them (decision PM7): the
/// recipe variants of its `srt-recipe` rows, its `CONFIG_FILE` recipes, the benchmark scripts
/// of its other rows. A source that could not be read names what to open.
pub fn effective_settings(launch: &ConfigLaunch) -> Result<&[SettingScope], Reason> {
    if let Some(gap) = launch.gaps.first() {
        return Err(gap_reason(launch, gap));
    }
    if launch.scopes.is_empty() && launch.recipes.is_empty() {
        let unresolved: Vec<serde_json::Value> = (launch.unresolved.iter())
            .map(|u| {
                let why = reason("launch_unresolved").arg("what", u.what.as_str()).arg("why", u.why);
                why.arg("at", u.at.as_str()).into()
            })
            .collect();
        return Err(reason("no_launch_source").arg("key", launch.config.as_str()).arg("unresolved", unresolved));
    }
    Ok(&launch.scopes)
}

/// The effective serving settings of an affected config per role (its recipes, else its launcher
/// scripts with the scripts they source), for checks that judge the effective recipe (Check 8's
/// integer all-reduce). `Err` names what could not be read.
pub fn config_settings(cx: &Context, config: &AffectedConfig) -> Result<Vec<RoleSettings>, Reason> {
    Ok(effective_settings(launch_of(cx, config)?)?.iter().map(|scope| scope.settings.clone()).collect())
}
