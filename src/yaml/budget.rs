//! How much YAML one verification may read in total. [`MAX_FILE_BYTES`](super::MAX_FILE_BYTES)
//! and [`MAX_NODES`](super::MAX_NODES) bound one document, but the checks of one verification
//! parse the same head files many times: an 8 MB flat list in a head config cost 1.4 GB and
//! 12 s per verify. A [`Budget`] entered for the verification's thread caps the bytes and nodes
//! of every document parsed until its scope ends; past it a parse is an error, which the checks
//! report as an unreadable fact, instead of an allocation that kills the process.

use std::cell::Cell;
use std::marker::PhantomData;

use super::MAX_NODES;

/// The bytes and nodes (aliases expanded) of all the YAML documents read under one scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub bytes: usize,
    pub nodes: usize,
}

impl Budget {
    /// One sign-off verification. The real repository's policy files, read by every check at
    /// base and head, use a small fraction of it (decision H4 has the measurement).
    pub const PER_VERIFICATION: Budget = Budget { bytes: 32 * 1024 * 1024, nodes: 2_000_000 };

    /// Charges every parse on this thread to this budget until the scope is dropped; the
    /// budget in force before (if any) is restored then.
    #[must_use = "the budget applies only while the scope lives"]
    pub fn enter(self) -> BudgetScope {
        let previous = ACTIVE.replace(Some(Account { limit: self, bytes: 0, nodes: 0 }));
        BudgetScope { previous, _thread_bound: PhantomData }
    }
}

/// The budget of this thread while it lives (not `Send`: the account is per thread).
pub struct BudgetScope {
    previous: Option<Account>,
    _thread_bound: PhantomData<*const ()>,
}

impl BudgetScope {
    /// Bytes and nodes charged so far under this scope.
    pub fn spent(&self) -> Budget {
        ACTIVE.get().map_or(Budget { bytes: 0, nodes: 0 }, |a| Budget { bytes: a.bytes, nodes: a.nodes })
    }
}

impl Drop for BudgetScope {
    fn drop(&mut self) {
        ACTIVE.set(self.previous.take());
    }
}

#[derive(Debug, Clone, Copy)]
struct Account {
    limit: Budget,
    bytes: usize,
    nodes: usize,
}

thread_local! {
    static ACTIVE: Cell<Option<Account>> = const { Cell::new(None) };
}

/// What one document may use: the nodes left (at most [`MAX_NODES`]).
pub(super) struct Allowance {
    pub nodes: usize,
}

/// Charges a document of `bytes` bytes before it is parsed; an error when the bytes are past
/// the budget in force.
pub(super) fn withdraw(bytes: usize) -> Result<Allowance, String> {
    let Some(mut account) = ACTIVE.get() else { return Ok(Allowance { nodes: MAX_NODES }) };
    let total = account.bytes.saturating_add(bytes);
    if total > account.limit.bytes {
        return Err(format!(
            "not read: this {bytes}-byte document would bring the YAML read by this verification to {total} bytes, past its budget of {} bytes",
            account.limit.bytes
        ));
    }
    account.bytes = total;
    ACTIVE.set(Some(account));
    Ok(Allowance { nodes: MAX_NODES.min(account.limit.nodes.saturating_sub(account.nodes)) })
}

/// Charges the nodes a document used (also when its parse failed).
pub(super) fn settle(allowance: &Allowance, used: usize) {
    if let Some(mut account) = ACTIVE.get() {
        account.nodes = account.nodes.saturating_add(used.min(allowance.nodes));
        ACTIVE.set(Some(account));
    }
}

/// The error of a document stopped by the budget rather than by its own size.
pub(super) fn exhausted_message(left: usize) -> String {
    let limit = ACTIVE.get().map_or(MAX_NODES, |a| a.limit.nodes);
    format!(
        "not read: the YAML read by this verification is past its budget of {limit} nodes ({left} were left for this document)"
    )
}
