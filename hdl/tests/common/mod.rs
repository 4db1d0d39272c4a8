//! Shared by the native rust-hdl tests.

use fanin_hdl::CoreConfig;

/// The tiny configuration the native whole-core and session-unit runs use: 2 ports × 64 bit,
/// 128-bit rows, 4 slots × 4 lanes, 2 jobs, 4 children, 1 route.
pub fn tiny() -> CoreConfig {
    CoreConfig {
        name: "tiny".into(),
        ports: 2,
        data_w: 64,
        engine_w: 128,
        slots: 4,
        lanes: 4,
        max_jobs: 2,
        max_children: 4,
        max_routes: 1,
        max_frame: 1088,
        rx_frames: 2,
        clock_mhz: 100,
        slot_ram: fanin_hdl::RamStyle::Block,
    }
}
