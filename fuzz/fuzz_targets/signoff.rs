//! Sign-off bodies (untrusted comment text): parse, read links and the Signed line, parse the
//! first URL-looking line as a sign-off URL.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sweepgate::intake::signoff::{has_signoff_phrase, Signoff, SignoffUrl};

fuzz_target!(|text: &str| {
    let _ = has_signoff_phrase(text);
    if let Ok(signoff) = Signoff::parse(text) {
        let _ = signoff.signed_by("nv-owner");
        let _ = signoff.detail_links().count();
    }
    if let Some(line) = text.lines().next() {
        let _ = SignoffUrl::parse(line);
    }
});
