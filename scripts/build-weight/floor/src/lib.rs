//! The crate under test (empty: the floor is its test target).
