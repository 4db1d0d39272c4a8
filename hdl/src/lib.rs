//! rust-hdl designs of the fanin switch (filled in by the RTL issue).
