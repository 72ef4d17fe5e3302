//! Report rendering from `templates/`, escaping of user text, hidden markers.
