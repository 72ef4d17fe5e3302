//! Checks 0-18: pure functions over Evidence, the catalog in `checks/`, verdict aggregation.
