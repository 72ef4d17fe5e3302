//! GitHub: App auth, webhook signatures, the narrow client trait and its octocrab implementation.
