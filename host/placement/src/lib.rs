//! Placement algorithms (filled in by the placement issue).
