//! What the checks share: the Evidence, and values derived from it once (parsed policy files,
//! parsed sign-off, …). Derivations are pure and lazy: a check that needs nothing pays nothing.

use crate::evidence::Evidence;

pub struct Context<'e> {
    pub evidence: &'e Evidence,
}

impl<'e> Context<'e> {
    pub fn new(evidence: &'e Evidence) -> Context<'e> {
        Context { evidence }
    }
}
