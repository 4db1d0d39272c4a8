//! Shared setup: the configuration under test (`FANIN_SIM_CONFIG`, default `default`), a
//! switch config for it, frame builders.

use core::net::Ipv4Addr;
use std::sync::OnceLock;

use fanin_hdl::CoreConfig;
use fanin_proto::config::{Route, SwitchConfig};
use fanin_proto::wire::{Datagram, L4Addr, FANIN_UDP_PORT};
use fanin_sim::scoreboard::{params, program, Scoreboard};
use fanin_sim::tb::{Pacing, Tb};

/// The configuration the tests run against: `FANIN_SIM_CONFIG` (it must be built in:
/// `FANIN_SIM_CONFIGS`), or `default`.
pub fn config() -> &'static str {
    static C: OnceLock<String> = OnceLock::new();
    C.get_or_init(|| {
        std::env::var("FANIN_SIM_CONFIG")
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "default".into())
    })
}

/// Seed of randomised tests: `FANIN_SEED` or a fixed default.
pub fn seed() -> u64 {
    std::env::var("FANIN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed)
}

pub fn core() -> CoreConfig {
    CoreConfig::by_name(config()).unwrap()
}

/// Port `p` of a plan's switch on a core with `ports` ports: ports the core has are kept,
/// the others (children beyond the last port) share ports `1..ports` round robin, as
/// `fanin_sim::allreduce` does. The identity on a core with enough ports.
pub fn fold_port(p: u8, ports: u8) -> u8 {
    if p < ports {
        p
    } else {
        1 + (p - 1) % (ports - 1).max(1)
    }
}

/// `cfg` with every route and child endpoint on a port of `core` ([`fold_port`]).
pub fn fold(cfg: &SwitchConfig, core: &CoreConfig) -> SwitchConfig {
    let mut cfg = cfg.clone();
    for r in &mut cfg.routes {
        r.port = fold_port(r.port, core.ports);
    }
    for j in &mut cfg.jobs {
        for c in &mut j.children {
            c.endpoint.port = fold_port(c.endpoint.port, core.ports);
        }
    }
    cfg
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

/// The switch: hosts 1..=P behind ports 0..P.
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

/// A testbench programmed with `cfg` (table sizes replaced by the core's, ports folded onto
/// the core's by [`fold`]) and its scoreboard.
pub fn setup_with(cfg: &SwitchConfig, pacing: Pacing, seed: u64) -> (Tb, Scoreboard) {
    let core = core();
    let mut cfg = fold(cfg, &core);
    cfg.params = params(&core);
    let mut tb = Tb::new(config(), pacing, seed).unwrap();
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

/// The testbench's AXI4-Lite master as the register bus of `fanin_regs::verify` (what
/// `fanin hw verify` reads through a BAR).
pub struct TbBus<'a>(pub &'a mut Tb);

impl fanin_regs::verify::Bus for TbBus<'_> {
    fn read(&mut self, addr: u32) -> Result<u32, String> {
        self.0.read(addr).map_err(|e| e.to_string())
    }
    fn write(&mut self, addr: u32, value: u32) -> Result<(), String> {
        self.0.write(addr, value).map_err(|e| e.to_string())
    }
}

/// Runs of a randomised test: `FANIN_SIM_RUNS`, else `default`.
pub fn sim_runs(default: u64) -> u64 {
    std::env::var("FANIN_SIM_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// A stranger's frame to `me`: junk with probability `junk`, otherwise a forged fanin packet
/// for `target` from a random source in 10.200.0.0/16 (a UDP checksum half of the time).
pub fn stranger_frame(
    rng: &mut impl rand::Rng,
    target: &fanin_proto::forge::Target,
    me: L4Addr,
    junk: f64,
) -> Vec<u8> {
    use fanin_proto::forge;
    if rng.gen_bool(junk) {
        let mut j = forge::junk(rng, 200);
        j.resize(j.len().max(14), 0);
        return j;
    }
    let payload = forge::forged_payload(rng, target);
    let src = L4Addr {
        mac: [2, 0, 0, 0, 0, 9],
        ip: [10, 200, rng.gen(), rng.gen()].into(),
        port: rng.gen(),
    };
    Datagram {
        src,
        dst: me,
        payload: &payload,
    }
    .to_frame(rng.gen_bool(0.5))
}
