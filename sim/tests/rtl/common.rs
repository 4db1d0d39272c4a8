//! Shared setup: the `default` core, a switch config for it, frame builders.

use core::net::Ipv4Addr;

use fanin_hdl::CoreConfig;
use fanin_proto::config::{Route, SwitchConfig};
use fanin_proto::wire::{Datagram, L4Addr, FANIN_UDP_PORT};
use fanin_sim::scoreboard::{params, program, Scoreboard};
use fanin_sim::tb::{Pacing, Tb};

pub const CONFIG: &str = "default";

/// Seed of randomised tests: `FANIN_SEED` or a fixed default.
pub fn seed() -> u64 {
    std::env::var("FANIN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed)
}

pub fn core() -> CoreConfig {
    CoreConfig::by_name(CONFIG).unwrap()
}

/// Host `i` (1-based) is 10.1.0.(i+1); the switch is 10.1.0.1.
pub fn host(i: u8) -> L4Addr {
    L4Addr {
        mac: [2, 0xfa, 0, 0, 0, i + 1],
        ip: Ipv4Addr::new(10, 1, 0, i + 1),
        port: 5000 + i as u16,
    }
}

pub fn me() -> L4Addr {
    L4Addr {
        mac: [2, 0xfa, 0, 0, 0, 1],
        ip: Ipv4Addr::new(10, 1, 0, 1),
        port: FANIN_UDP_PORT,
    }
}

/// The switch: hosts 1..=4 behind ports 0..=3.
pub fn switch_config(core: &CoreConfig) -> SwitchConfig {
    let mut cfg = SwitchConfig::new("dut", me().mac, me().ip);
    cfg.params = params(core);
    cfg.routes = (0..core.ports)
        .map(|p| Route {
            ip: host(p + 1).ip,
            port: p,
        })
        .collect();
    cfg
}

/// A UDP frame from `src` to `dst` with `len` payload bytes (checksummed).
pub fn udp(src: L4Addr, dst: L4Addr, len: usize, fill: u8) -> Vec<u8> {
    let payload: Vec<u8> = (0..len).map(|i| fill.wrapping_add(i as u8)).collect();
    Datagram {
        src,
        dst,
        payload: &payload,
    }
    .to_frame(true)
}

/// A programmed testbench and its scoreboard.
pub fn setup(pacing: Pacing, seed: u64) -> (Tb, Scoreboard) {
    setup_with(&switch_config(&core()), pacing, seed)
}

/// A testbench programmed with `cfg` (table sizes replaced by the core's) and its scoreboard.
pub fn setup_with(cfg: &SwitchConfig, pacing: Pacing, seed: u64) -> (Tb, Scoreboard) {
    let core = core();
    let mut cfg = cfg.clone();
    cfg.params = params(&core);
    let mut tb = Tb::new(CONFIG, pacing, seed).unwrap();
    let sb = Scoreboard::new(&core, &cfg).unwrap();
    program(&mut tb, &sb.regs, &cfg).unwrap();
    (tb, sb)
}

/// Drains the testbench, replays the engine's decisions into the model, and checks frames
/// and counters; panics with the seed on failure.
pub fn finish(tb: &mut Tb, sb: &mut Scoreboard, what: &str, pacing: Pacing, seed: u64) {
    let fail = |e: fanin_sim::SimError| -> ! { panic!("{what} {pacing:?} seed {seed}: {e}") };
    tb.drain(300, 2_000_000).unwrap_or_else(|e| fail(e));
    sb.replay(tb).unwrap_or_else(|e| fail(e));
    sb.check_frames(tb).unwrap_or_else(|e| fail(e));
    sb.check_counters(tb).unwrap_or_else(|e| fail(e));
}
