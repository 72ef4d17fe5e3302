//! CODEOWNERS files and owner lookup of the paths a PR changes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sweepgate::domain::codeowners::Codeowners;

fuzz_target!(|text: &str| {
    let (owners, _diagnostics) = Codeowners::parse(text, ".github/CODEOWNERS");
    let _ = owners.is_valid();
    for path in ["perf-changelog.yaml", "configs/nvidia-master.yaml", "a/b/c.sh", ""] {
        let _ = owners.owners_of(path);
    }
    // Lines of the input double as changed paths (patterns matched against themselves).
    for line in text.lines().take(16) {
        let _ = owners.owners_of(line);
        let _ = owners.lists_user_anywhere(line);
    }
});
