//! Evidence: the immutable snapshot every check reads, and bundles on disk.
