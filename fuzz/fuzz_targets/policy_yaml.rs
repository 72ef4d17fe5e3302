//! Policy YAML through the strict reader and the typed domain models: the first byte picks the
//! file kind (changelog, master config, runners), the rest is the file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sweepgate::domain::changelog::Changelog;
use sweepgate::domain::master_config::load_master_configs;
use sweepgate::domain::runners::Runners;

fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    match kind % 3 {
        0 => {
            if let Ok(changelog) = Changelog::parse(text, "perf-changelog.yaml") {
                let _ = changelog.entries.iter().map(|(_, e)| (e.scenarios(), e.to_json())).count();
            }
        }
        1 => {
            let _ = load_master_configs(&[("configs/nvidia-master.yaml", text)]);
        }
        _ => {
            let _ = Runners::parse(text, "configs/runners.yaml");
        }
    }
});
