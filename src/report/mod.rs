//! Report rendering from `templates/`, escaping of user text, hidden markers.

pub mod escape;
pub mod verdict;
