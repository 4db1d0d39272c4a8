//! fanin host library.
