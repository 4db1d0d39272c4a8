//! Workspace integration tests: scenarios that cross crates. One binary of topic modules.

mod placement_to_model;
