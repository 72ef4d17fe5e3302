//! Webhook payload normalisation: the first byte picks the event name, the rest is the body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sweepgate::intake::event::parse;

const EVENTS: [&str; 5] = ["pull_request", "issue_comment", "ping", "check_run", "workflow_run"];

fuzz_target!(|data: &[u8]| {
    let Some((&first, body)) = data.split_first() else { return };
    let name = EVENTS[usize::from(first) % EVENTS.len()];
    if let Ok(event) = parse(name, body) {
        let _ = (event.pr_key(), event.installation_id());
    }
});
