//! Vendor IP as Tcl (`ip/*.tcl`) and the non-project Vivado script `build.tcl`.

use super::{core_period_ns, dbg_ports, header, Board, Options, ILA_STATE_REGS, INIT_CLK_MHZ};
use fanin_hdl::CoreConfig;
use std::fmt::Write as _;

/// The one Vivado release the build is made for: build.tcl refuses another (exit 4) unless
/// `FANIN_VIVADO_ANY_VERSION=1`. Every IP of [`PINNED_IP`] exists at that version in it.
pub const VIVADO_VERSION: &str = "2023.2";

/// The version of every vendor IP, pinned in its `create_ip -version` (all of them exist in
/// Vivado [`VIVADO_VERSION`]).
pub const PINNED_IP: &[(&str, &str)] = &[
    ("clk_wiz", "6.0"),
    ("jtag_axi", "1.2"),
    ("axis_data_fifo", "2.0"),
    ("axi_10g_ethernet", "3.1"),
    ("cmac_usplus", "3.1"),
    ("xdma", "4.1"),
    ("axi_clock_converter", "2.1"),
    ("ila", "6.2"),
];

/// The pinned version of vendor IP `name`.
pub fn pinned_version(name: &str) -> &'static str {
    PINNED_IP
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| panic!("IP {name} has no pinned version in PINNED_IP"))
}

/// Sample depth of the `--ila` ILAs.
pub const ILA_DEPTH: u32 = 4096;

/// Vendor IP as Tcl: `(file name, script)`. Each script creates one IP into `$fanin_ip_dir`.
pub fn ip_tcl(board: Board, cfg: &CoreConfig) -> Vec<(String, String)> {
    ip_tcl_with(board, cfg, &Options::default())
}

/// Vendor IP as Tcl with the build options (`--ila` adds `ila_core`).
pub fn ip_tcl_with(board: Board, cfg: &CoreConfig, opts: &Options) -> Vec<(String, String)> {
    let h = header(board, cfg, "#");
    let ip = |name: &str, module: &str, props: &[(&str, String)]| -> (String, String) {
        let mut t = h.clone();
        // Every IP at its pinned version (PINNED_IP), that of Vivado VIVADO_VERSION.
        let version = pinned_version(name);
        let _ = writeln!(
            t,
            "create_ip -name {name} -vendor xilinx.com -library ip -version {version} -module_name {module} -dir $fanin_ip_dir"
        );
        let _ = writeln!(t, "set_property -dict [list \\");
        for (k, v) in props {
            let _ = writeln!(t, "    CONFIG.{k} {{{v}}} \\");
        }
        let _ = writeln!(t, "] [get_ips {module}]");
        (format!("{module}.tcl"), t)
    };
    let mut v = vec![
        ip(
            "clk_wiz",
            "clk_core",
            &[
                ("PRIM_SOURCE", "Differential_clock_capable_pin".into()),
                ("PRIM_IN_FREQ", format!("{:.3}", board.sysclk_mhz())),
                ("CLKOUT2_USED", "true".into()),
                (
                    "CLKOUT1_REQUESTED_OUT_FREQ",
                    format!("{:.3}", cfg.clock_mhz as f64),
                ),
                (
                    "CLKOUT2_REQUESTED_OUT_FREQ",
                    format!("{:.3}", INIT_CLK_MHZ as f64),
                ),
                ("USE_RESET", "false".into()),
                ("USE_LOCKED", "true".into()),
            ],
        ),
        ip(
            "jtag_axi",
            "jtag_axil",
            &[
                // 2 = AXI4-Lite.
                ("PROTOCOL", "2".into()),
                ("M_AXI_ADDR_WIDTH", "32".into()),
                ("M_AXI_DATA_WIDTH", "32".into()),
            ],
        ),
        ip(
            "axis_data_fifo",
            "axis_cdc_fifo",
            &[
                ("TDATA_NUM_BYTES", (cfg.data_w / 8).to_string()),
                ("TUSER_WIDTH", "1".into()),
                ("HAS_TKEEP", "1".into()),
                ("HAS_TLAST", "1".into()),
                ("IS_ACLK_ASYNC", "1".into()),
                // 2 = packet mode: a frame leaves only once complete, so a MAC never underruns.
                ("FIFO_MODE", "2".into()),
                ("FIFO_DEPTH", "512".into()),
            ],
        ),
    ];
    match board {
        Board::Sume => {
            for (module, level) in [("eth10g_shared", "1"), ("eth10g_nonshared", "0")] {
                v.push(ip(
                    "axi_10g_ethernet",
                    module,
                    &[
                        ("Management_Interface", "false".into()),
                        ("base_kr", "BASE-R".into()),
                        // 1 = shared logic (QPLL, clocking) in the core.
                        ("SupportLevel", level.into()),
                        ("autonegotiation", "false".into()),
                        ("Statistics_Gathering", "false".into()),
                        ("DClkRate", "100".into()),
                    ],
                ));
            }
        }
        Board::Au250 | Board::Au280 => {
            // (CMAC site, first GT channel) per QSFP cage, from the boards' GT quad placement.
            let sites = if board == Board::Au250 {
                [("CMACE4_X0Y8", "X1Y44"), ("CMACE4_X0Y7", "X1Y40")]
            } else {
                [("CMACE4_X0Y6", "X0Y40"), ("CMACE4_X0Y7", "X0Y44")]
            };
            for (p, (cmac, gt0)) in sites.iter().enumerate() {
                let (col, y) = gt0.split_once('Y').unwrap();
                let y: u32 = y.parse().unwrap();
                let mut props: Vec<(&str, String)> = vec![
                    ("CMAC_CAUI4_MODE", "1".into()),
                    ("NUM_LANES", "4x25".into()),
                    ("GT_REF_CLK_FREQ", "161.1328125".into()),
                    ("USER_INTERFACE", "AXIS".into()),
                    ("GT_DRP_CLK", "100".into()),
                    ("TX_FLOW_CONTROL", "0".into()),
                    ("RX_FLOW_CONTROL", "0".into()),
                    ("INCLUDE_RS_FEC", "1".into()),
                    ("CMAC_CORE_SELECT", cmac.to_string()),
                    ("GT_GROUP_SELECT", format!("{gt0}~{col}Y{}", y + 3)),
                ];
                let lanes: Vec<(String, String)> = (0..4)
                    .map(|l| (format!("LANE{}_GT_LOC", l + 1), format!("{col}Y{}", y + l)))
                    .collect();
                let lane_refs: Vec<(&str, String)> =
                    lanes.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
                props.extend(lane_refs);
                props.push(("ENABLE_PIPELINE_REG", "1".into()));
                v.push(ip("cmac_usplus", &format!("cmac_qsfp{p}"), &props));
            }
            v.push(ip(
                "xdma",
                "xdma_pcie",
                &[
                    ("mode_selection", "Advanced".into()),
                    ("pl_link_cap_max_link_width", "X16".into()),
                    ("pl_link_cap_max_link_speed", "8.0_GT/s".into()),
                    ("axi_data_width", "512_bit".into()),
                    ("axisten_freq", "250".into()),
                    ("ref_clk_freq", "100_MHz".into()),
                    // DMA as one AXI-Stream channel each way, left unused.
                    ("xdma_axi_intf_mm", "AXI_Stream".into()),
                    ("xdma_rnum_chnl", "1".into()),
                    ("xdma_wnum_chnl", "1".into()),
                    // BAR0: the AXI-Lite master, 1 MiB (the core and the board window).
                    ("axilite_master_en", "true".into()),
                    ("axilite_master_scale", "Megabytes".into()),
                    ("axilite_master_size", "1".into()),
                    ("pf0_device_id", "903f".into()),
                ],
            ));
        }
    }
    // AXI-Lite clock converter: JTAG-to-AXI (init_clk) and, on Alveo, XDMA's BAR (axi_aclk)
    // into core_clk.
    v.push(ip(
        "axi_clock_converter",
        "axil_cdc",
        &[
            ("PROTOCOL", "AXI4LITE".into()),
            ("ADDR_WIDTH", "32".into()),
            ("DATA_WIDTH", "32".into()),
            ("ACLK_ASYNC", "1".into()),
        ],
    ));
    if opts.ila {
        // The core's monitor port: one probe per dbg_* output, at core_clk.
        let dbg = dbg_ports(cfg);
        let mut props: Vec<(String, String)> = vec![
            ("C_NUM_OF_PROBES".into(), dbg.len().to_string()),
            ("C_DATA_DEPTH".into(), ILA_DEPTH.to_string()),
            ("C_INPUT_PIPE_STAGES".into(), "1".into()),
        ];
        for (i, (_, w)) in dbg.iter().enumerate() {
            props.push((format!("C_PROBE{i}_WIDTH"), w.to_string()));
        }
        let refs: Vec<(&str, String)> =
            props.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        v.push(ip("ila", "ila_core", &refs));
    }
    v
}

/// check_timing checks that fail the build when their count is not 0 (build.tcl, exit 3).
/// `no_input_delay` / `no_output_delay` are not among them: the wrapper's pins are
/// constants, LEDs and asynchronous status pins (false paths), and the MAC/PCIe pins are GT
/// pins without I/O timing; `pulse_width_clock` is informational.
pub const CHECK_TIMING_GATED: &[&str] = &[
    "no_clock",
    "constant_clock",
    "unconstrained_internal_endpoints",
    "multiple_clock",
    "generated_clocks",
    "loops",
    "partial_input_delay",
    "partial_output_delay",
    "latch_loops",
];

/// `--ila`: build.tcl's netlist insertion of a second ILA (`u_ila_state`) on the engine's
/// state registers ([`ILA_STATE_REGS`]), after synthesis; exit 5 if one is not found.
fn ila_insertion() -> String {
    let mut t = format!(
        r#"
# ---- --ila: a second ILA, inserted into the synthesised netlist, on the engine's state
# registers (the q outputs of core_inst/core/{{{regs}}}), at core_clk; the first
# ILA (ila_core_inst, on the core's dbg_* port) is in the wrapper.
set ila_probes {{}}
foreach r {{{regs}}} {{
    set nets [get_nets -quiet -of_objects [get_pins -quiet "core_inst/core/$r/q\[*\]"]]
    if {{[llength $nets] == 0}} {{
        puts "ERROR: fanin: --ila: no state register core_inst/core/$r/q after synthesis (renamed or optimised away?)"
        exit 5
    }}
    lappend ila_probes $nets
}}
create_debug_core u_ila_state ila
set_property C_DATA_DEPTH {depth} [get_debug_cores u_ila_state]
set_property C_INPUT_PIPE_STAGES 1 [get_debug_cores u_ila_state]
set_property PORT_WIDTH 1 [get_debug_ports u_ila_state/clk]
connect_debug_port u_ila_state/clk [get_nets core_clk]
set i 0
foreach nets $ila_probes {{
    if {{$i > 0}} {{ create_debug_port u_ila_state probe }}
    set_property PORT_WIDTH [llength $nets] [get_debug_ports u_ila_state/probe$i]
    connect_debug_port u_ila_state/probe$i $nets
    incr i
}}
"#,
        regs = ILA_STATE_REGS.join(" "),
        depth = ILA_DEPTH,
    );
    t.push_str(
        "write_debug_probes -force out/debug_probes.ltx
",
    );
    t
}

/// The non-project Vivado script.
pub fn build_tcl(board: Board, cfg: &CoreConfig) -> String {
    build_tcl_with(board, cfg, &Options::default())
}

/// The non-project Vivado script with the build options (`--ila` inserts the state ILA).
pub fn build_tcl_with(board: Board, cfg: &CoreConfig, opts: &Options) -> String {
    let mut t = header(board, cfg, "#");
    let flash = board.flash();
    let _ = write!(
        t,
        r#"# Non-project flow: vivado -mode batch -source build.tcl
# Creates the IP from ip/*.tcl, reads fanin_core.v, fanin_board.v, {top}.v and constraints/*.xdc, runs
# synthesis, place and route, writes reports into out/, and the bitstream out/{top}.bit and its
# flash image out/{top}.mcs only when timing is met and the design checks pass.
# Exit status: 1 timing not met, 2 clock set-up error, 3 design checks failed
# (check_timing, report_cdc, report_methodology; see below), 4 another Vivado release.

# One Vivado release for the whole build: every create_ip in ip/*.tcl pins its IP version to
# this release's. Another release is refused; FANIN_VIVADO_ANY_VERSION=1 proceeds anyway
# (create_ip then fails if the release lacks a pinned IP version).
set fanin_vivado {vivado}
set vivado_now [version -short]
if {{$vivado_now ne $fanin_vivado && ![string match "$fanin_vivado.*" $vivado_now]}} {{
    if {{[info exists ::env(FANIN_VIVADO_ANY_VERSION)] && $::env(FANIN_VIVADO_ANY_VERSION) eq "1"}} {{
        puts "WARNING: fanin: Vivado $vivado_now, the build is pinned to $fanin_vivado; going on (FANIN_VIVADO_ANY_VERSION=1)"
    }} else {{
        puts "ERROR: fanin: this build is pinned to Vivado $fanin_vivado (its IP versions), this is Vivado $vivado_now; use $fanin_vivado, or set FANIN_VIVADO_ANY_VERSION=1 to try anyway"
        exit 4
    }}
}}

set part {part}
set top {top}
# core_clk target: {mhz} MHz (configuration '{cfg}').
set core_period {period:.3}
# Configuration flash: {fif}, {fsize} MB, the bitstream at {faddr:#010x}.
set flash_interface {fif}
set flash_size {fsize}
set flash_address {faddr:#010x}

set here [file dirname [file normalize [info script]]]
cd $here
file mkdir out
set fanin_ip_dir [file join $here out ip]
file mkdir $fanin_ip_dir

create_project -in_memory -part $part
set_property target_language Verilog [current_project]
foreach f [lsort [glob -directory [file join $here ip] *.tcl]] {{
    source $f
}}
generate_target all [get_ips]
synth_ip [get_ips]

read_verilog [list [file join $here fanin_core.v] [file join $here fanin_board.v] [file join $here $top.v]]
foreach f [lsort [glob -directory [file join $here constraints] *.xdc]] {{
    read_xdc $f
}}
# The debug hub's clock (init_clk): for implementation only, Vivado inserts the hub in opt_design.
set_property USED_IN_SYNTHESIS false [get_files [file join $here constraints fanin_debug.xdc]]

synth_design -top $top -part $part
set clk [get_clocks core_clk]
if {{[llength $clk] != 1}} {{
    puts "ERROR: fanin: no clock named core_clk after synthesis (see constraints/clocks.xdc)"
    exit 2
}}
set period [get_property PERIOD $clk]
if {{abs($period - $core_period) > 0.01 * $core_period}} {{
    puts "ERROR: fanin: core_clk period $period ns, the configuration needs $core_period ns (ip/clk_core.tcl)"
    exit 2
}}
{ila}write_checkpoint -force out/post_synth.dcp
report_utilization -file out/utilization_synth.rpt

opt_design
place_design
phys_opt_design
route_design
write_checkpoint -force out/post_route.dcp
report_timing_summary -max_paths 20 -report_unconstrained -file out/timing_summary.rpt
report_utilization -file out/utilization.rpt
report_utilization -hierarchical -file out/utilization_hier.rpt

# ---- Design checks on the routed design. Each failure is one line; any fails the build (exit 3).
# * check_timing: a non-zero count in any of
#     {gated}
#   A timing summary is only as good as its constraints: these are registers or paths the
#   timer does not time at all. (no_input_delay / no_output_delay are not gated: fanin's pins are
#   constants, LEDs, asynchronous status pins and GT pins.)
# * report_cdc: any crossing of severity Critical (unknown or unsafe circuitry: no
#   synchroniser Vivado recognises). Warnings (e.g. CDC-15, an enable-controlled crossing, as
#   the RX FIFO's and MAC statistics' handshakes are) and Info are in out/cdc.rpt only.
# * report_methodology: any rule of severity Critical Warning (e.g. TIMING-6/7, related clocks
#   without a common primary clock or node: their paths are timed wrongly). Warnings and
#   advisories are in out/methodology.rpt only.
check_timing -file out/check_timing.rpt
report_cdc -details -file out/cdc.rpt
report_methodology -file out/methodology.rpt
proc fanin_read {{path}} {{
    if {{![file exists $path]}} {{ return "" }}
    set f [open $path r]
    set text [read $f]
    close $f
    return $text
}}
set checks_failed {{}}
set text [fanin_read out/check_timing.rpt]
foreach check {{{gated}}} {{
    if {{[regexp "checking $check \\((\[0-9\]+)\\)" $text -> n]}} {{
        if {{$n > 0}} {{ lappend checks_failed "check_timing: $check ($n), out/check_timing.rpt" }}
    }} elseif {{$check in {{no_clock unconstrained_internal_endpoints loops}}}} {{
        lappend checks_failed "check_timing: no 'checking $check (N)' line in out/check_timing.rpt: cannot tell whether the design is fully timed"
    }}
}}
foreach line [split [fanin_read out/cdc.rpt] "\n"] {{
    if {{[regexp {{\mCritical\M}} $line] && [regexp {{\m(CDC-[0-9]+)\M}} $line -> id]}} {{
        lappend checks_failed "report_cdc: $id Critical: [string trim $line] (out/cdc.rpt)"
    }}
}}
foreach line [split [fanin_read out/methodology.rpt] "\n"] {{
    if {{[regexp {{^\|\s*([A-Z]+-[0-9]+)\s*\|\s*Critical Warning\s*\|([^|]*)\|\s*([0-9]+)}} $line -> id what n]}} {{
        lappend checks_failed "report_methodology: $id Critical Warning, [string trim $what] ($n), out/methodology.rpt"
    }}
}}
foreach c $checks_failed {{
    puts "ERROR: fanin: $c"
}}

set wns [get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -setup]]
set whs [get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -hold]]
if {{$wns eq "" || $whs eq "" || $wns < 0 || $whs < 0}} {{
    puts "ERROR: fanin: timing not met: WNS=$wns ns WHS=$whs ns (out/timing_summary.rpt)"
    exit 1
}}
if {{[llength $checks_failed] > 0}} {{
    puts "ERROR: fanin: [llength $checks_failed] design check(s) failed (above); no bitstream written"
    exit 3
}}
write_bitstream -force out/$top.bit
# The flash image: out/$top.mcs (and its .prm), for the hardware manager's configuration memory.
write_cfgmem -force -format mcs -interface $flash_interface -size $flash_size -loadbit "up $flash_address out/$top.bit" -checksum -file out/$top.mcs
puts "fanin: timing met (WNS=$wns ns, WHS=$whs ns), design checks passed; wrote out/$top.bit and out/$top.mcs"
exit 0
"#,
        part = board.part(),
        top = board.top(),
        mhz = cfg.clock_mhz,
        cfg = cfg.name,
        period = core_period_ns(cfg),
        fif = flash.interface,
        fsize = flash.size_mb,
        faddr = flash.address,
        gated = CHECK_TIMING_GATED.join(" "),
        vivado = VIVADO_VERSION,
        ila = if opts.ila {
            ila_insertion()
        } else {
            String::new()
        },
    );
    t
}
