//! SRT-Slurm recipes (PR content): `lint` reads the file leniently (duplicate keys: last wins),
//! resolves every variant like srtctl and reads each variant's dispatch facts. When the first
//! line is `#ref <path>[:selector]`, that reference is parsed and the recipe is resolved with
//! its selector, as `sweepgate recipe resolve FILE[:selector]` does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sweepgate::domain::srt_recipe::{lint, Recipe, RecipeRef};

const FILE: &str = "recipe.yaml";

fuzz_target!(|text: &str| {
    let _ = lint(text, FILE);
    let Some(arg) = text.lines().next().and_then(|line| line.strip_prefix("#ref ")) else { return };
    let Ok(reference) = RecipeRef::parse(arg) else { return };
    let Ok(recipe) = Recipe::parse(text, FILE) else { return };
    if let Ok(resolution) = recipe.resolve(reference.selector.as_ref()) {
        let _ = resolution.variants.iter().map(|variant| variant.to_json()).count();
    }
});
