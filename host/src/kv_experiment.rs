//! `fanin experiment ask-prioritisation` and `ask-goodput`: ASK's Figs. 9 and 8 on fanin's
//! reference model and software switch. Each writes a CSV, an SVG and the checks it made.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Context};
use fanin_placement::plot::{line_chart, Series};
use fanin_proto::kv::host::{packetize, Slots};
use fanin_proto::kv::switch::{KvMemory, Offer};
use fanin_proto::kv::wire::TUPLE_BYTES;
use fanin_proto::wire::{HEADER_LEN, L2L4_LEN};

use crate::kv::{allreduce, synthetic, Dist, JobArgs, KvRun, ZIPF_S};
use crate::link::Faults;

/// Distinct keys of the prioritisation experiment (ASK §5.4: 2^16).
pub const KEYS: u32 = 1 << 16;
/// Tuples per packet (aggregator arrays) in the prioritisation experiment.
pub const ARRAYS: u8 = 8;
/// The receiver swaps copies after this many forwarded packets.
pub const SWAP_AFTER: u64 = 16;
/// Ethernet preamble + SFD (8) + inter-packet gap (12) + FCS (4): bytes on the wire that
/// are not in the frame fanin builds.
pub const FRAMING: usize = 24;
/// fanin's per-packet overhead of a key-value packet: framing + Ethernet/IPv4/UDP + header.
pub const OVERHEAD: usize = FRAMING + L2L4_LEN + HEADER_LEN;

/// Share of tuples absorbed in the switch for one stream, `aggregators` in total (both
/// copies when swapping), swapping after [`SWAP_AFTER`] forwarded packets or never.
pub fn in_switch_share(packets: &[Slots], arrays: u8, aggregators: u32, swap: bool) -> f64 {
    let copies = if swap { 2 } else { 1 };
    let size = (aggregators / (copies * arrays as u32)).max(1);
    let mut mem = KvMemory::new(arrays as usize, size);
    let (mut active, mut forwarded, mut absorbed, mut total) = (0usize, 0u64, 0u64, 0u64);
    for (bitmap, tuples) in packets {
        let mut left = false;
        for (i, &(k, v)) in tuples.iter().enumerate() {
            if bitmap >> i & 1 == 0 {
                continue;
            }
            total += 1;
            match mem.offer(i, active, k, v) {
                Offer::Collision => left = true,
                Offer::Added | Offer::Claimed => absorbed += 1,
            }
        }
        if left {
            forwarded += 1;
            if swap && forwarded >= SWAP_AFTER {
                forwarded = 0;
                active ^= 1;
                // The receiver fetches and clears the old copy (instantly here).
                mem.drain_copy(active ^ 1);
            }
        }
    }
    absorbed as f64 / total.max(1) as f64
}

fn dist_name(d: Dist) -> &'static str {
    match d {
        Dist::Uniform => "uniform",
        Dist::Zipf => "zipf",
        Dist::ZipfReverse => "zipf-reverse",
    }
}

/// ASK Fig. 9: share of tuples aggregated in the switch against aggregators / keys.
pub fn prioritisation(out: &Path, seed: u64, quick: bool) -> anyhow::Result<String> {
    let tuples = if quick { 1 << 18 } else { 1 << 22 };
    let dists = [Dist::Uniform, Dist::Zipf, Dist::ZipfReverse];
    let aggs: Vec<u32> = (4..=16).map(|e| 1u32 << e).collect();
    let mut csv = String::from("dist,swap,aggregators,ratio,in_switch\n");
    let mut table = BTreeMapF::default();
    for d in dists {
        let packets = packetize(&synthetic(d, KEYS, tuples, seed), ARRAYS);
        for swap in [false, true] {
            for &a in &aggs {
                let share = in_switch_share(&packets, ARRAYS, a, swap);
                let ratio = a as f64 / KEYS as f64;
                writeln!(csv, "{},{swap},{a},{ratio},{share:.6}", dist_name(d))?;
                table.0.push((d, swap, a, share));
            }
        }
    }
    std::fs::write(out.join("ask_prioritisation.csv"), &csv)?;
    for swap in [false, true] {
        let series: Vec<Series> = dists
            .iter()
            .map(|&d| Series {
                label: dist_name(d).into(),
                points: table
                    .0
                    .iter()
                    .filter(|r| r.0 == d && r.1 == swap)
                    .map(|r| (r.2 as f64 / KEYS as f64, 100.0 * r.3))
                    .collect(),
            })
            .collect();
        let (file, title) = if swap {
            (
                "ask_prioritisation_swap.svg",
                "ASK Fig. 9(b): with swapping",
            )
        } else {
            (
                "ask_prioritisation_noswap.svg",
                "ASK Fig. 9(a): without swapping",
            )
        };
        line_chart(
            &out.join(file),
            title,
            "aggregators / distinct keys",
            "tuples aggregated in the switch (%)",
            &series,
            true,
        )?;
    }
    let get = |d, swap, a| table.get(d, swap, a);
    let sixteenth = KEYS / 16;
    let zipf_swap = get(Dist::Zipf, true, sixteenth);
    let mut checks = Vec::new();
    checks.push((
        format!(
            "with swapping at aggregators:keys = 1/16, Zipf aggregates {:.1}% in the switch (need >= 90%)",
            100.0 * zipf_swap
        ),
        zipf_swap >= 0.90,
    ));
    let gaps: Vec<f64> = aggs
        .iter()
        .filter(|&&a| a < KEYS)
        .map(|&a| get(Dist::Zipf, false, a) - get(Dist::ZipfReverse, false, a))
        .collect();
    let min_gap = gaps.iter().cloned().fold(f64::MAX, f64::min);
    let at16 = get(Dist::Zipf, false, sixteenth) - get(Dist::ZipfReverse, false, sixteenth);
    checks.push((
        format!(
            "without swapping, Zipf-reverse is below Zipf at every ratio < 1 (smallest gap {:.1} points; at 1/16: {:.1} points, need >= 20)",
            100.0 * min_gap,
            100.0 * at16
        ),
        min_gap > 0.0 && at16 >= 0.20,
    ));
    let gain = get(Dist::ZipfReverse, true, sixteenth) - get(Dist::ZipfReverse, false, sixteenth);
    checks.push((
        format!(
            "swapping lifts Zipf-reverse at 1/16 by {:.1} points (need > 0)",
            100.0 * gain
        ),
        gain > 0.0,
    ));
    report(
        out,
        "ask_prioritisation",
        &format!(
            "ask-prioritisation: {KEYS} distinct keys, {tuples} tuples per stream, {ARRAYS} tuples per packet, Zipf exponent {ZIPF_S}, swap after {SWAP_AFTER} forwarded packets; aggregators count both copies when swapping"
        ),
        &checks,
    )
}

#[derive(Default)]
struct BTreeMapF(Vec<(Dist, bool, u32, f64)>);

impl BTreeMapF {
    fn get(&self, d: Dist, swap: bool, a: u32) -> f64 {
        self.0
            .iter()
            .find(|r| r.0 == d && r.1 == swap && r.2 == a)
            .map(|r| r.3)
            .expect("every point was computed")
    }
}

fn report(out: &Path, stem: &str, head: &str, checks: &[(String, bool)]) -> anyhow::Result<String> {
    let mut s = format!("{head}\n");
    for (c, ok) in checks {
        writeln!(s, "  [{}] {c}", if *ok { "ok" } else { "FAILED" })?;
    }
    std::fs::write(out.join(format!("{stem}_checks.txt")), &s)?;
    if checks.iter().any(|c| !c.1) {
        bail!("{stem}: a check failed\n{s}");
    }
    Ok(s)
}

/// Ideal goodput share at `x` tuples per packet: 8x / (8x + overhead).
pub fn ideal_share(x: usize) -> f64 {
    let p = (x * TUPLE_BYTES) as f64;
    p / (p + OVERHEAD as f64)
}

/// ASK Fig. 8: ideal goodput against tuples per packet, and end-to-end tuples/s through
/// the software switch against the receiver aggregating everything itself.
pub fn goodput(out: &Path, seed: u64, quick: bool) -> anyhow::Result<String> {
    let mut csv =
        String::from("tuples_per_packet,payload_bytes,wire_bytes,ideal_share,ideal_gbps_100g\n");
    for x in 1..=64usize {
        let p = x * TUPLE_BYTES;
        writeln!(
            csv,
            "{x},{p},{},{:.6},{:.3}",
            p + OVERHEAD,
            ideal_share(x),
            100.0 * ideal_share(x)
        )?;
    }
    std::fs::write(out.join("ask_goodput_ideal.csv"), &csv)?;
    let keys = 4096u32;
    let tuples = if quick { 40_000 } else { 400_000 };
    let xs: &[u8] = if quick { &[8, 64] } else { &[1, 4, 16, 32, 64] };
    let mut e2e = String::from(
        "tuples_per_packet,mode,tuples,seconds,tuples_per_sec,in_switch,receiver_local_tuples,retransmits,exact\n",
    );
    let mut checks = Vec::new();
    let (mut sw_pts, mut direct_pts) = (Vec::new(), Vec::new());
    for &x in xs {
        let stream = synthetic(Dist::Uniform, keys, tuples, seed);
        // Ample aggregators: at most 1/8 of an array's aggregators hold keys.
        let size = ((keys / x as u32).next_power_of_two() * 8).min(fanin_proto::kv::MAX_SIZE);
        for direct in [false, true] {
            let run = KvRun {
                streams: vec![stream.clone()],
                channels_per_sender: 1,
                job: JobArgs {
                    job: 1,
                    arrays: x,
                    size,
                    window: 64,
                    rto_us: 5000,
                    timeout_s: 20,
                },
                swap_after: 0,
                faults: Faults::default(),
                verify: true,
                direct,
            };
            let rep = allreduce(&run, None)
                .with_context(|| format!("end-to-end run, {x} tuples per packet"))?;
            let mode = if direct { "receiver-only" } else { "switch" };
            writeln!(
                e2e,
                "{x},{mode},{},{:.6},{:.0},{:.4},{},{},{}",
                rep.tuples,
                rep.elapsed.as_secs_f64(),
                rep.tuples_per_sec(),
                rep.in_switch(),
                rep.receiver.local_tuples,
                rep.retransmits,
                rep.mismatches == 0
            )?;
            checks.push((
                format!(
                    "{x} tuples/packet, {mode}: {} keys exact ({} wrong), {:.0} tuples/s, receiver aggregated {} of {} tuples itself",
                    rep.keys, rep.mismatches, rep.tuples_per_sec(), rep.receiver.local_tuples, rep.tuples
                ),
                rep.mismatches == 0
                    && if direct {
                        rep.receiver.local_tuples == rep.tuples
                    } else {
                        rep.in_switch() >= 0.75
                    },
            ));
            let pts = if direct { &mut direct_pts } else { &mut sw_pts };
            pts.push((x as f64, rep.tuples_per_sec()));
        }
    }
    std::fs::write(out.join("ask_goodput_e2e.csv"), &e2e)?;
    line_chart(
        &out.join("ask_goodput_ideal.svg"),
        &format!("ASK Fig. 8(a): ideal goodput, 8x / (8x + {OVERHEAD})"),
        "key-value tuples per packet",
        "goodput share of line rate (%)",
        &[Series {
            label: format!("ideal, {OVERHEAD} B overhead"),
            points: (1..=64)
                .map(|x| (x as f64, 100.0 * ideal_share(x)))
                .collect(),
        }],
        false,
    )?;
    line_chart(
        &out.join("ask_goodput_e2e.svg"),
        "end to end on loopback: tuples/s",
        "key-value tuples per packet",
        "tuples per second",
        &[
            Series {
                label: "through fanin switchd (in-switch aggregation)".into(),
                points: sw_pts,
            },
            Series {
                label: "receiver aggregates everything".into(),
                points: direct_pts,
            },
        ],
        false,
    )?;
    let mono = (1..64).all(|x| ideal_share(x + 1) > ideal_share(x));
    checks.insert(
        0,
        (
            format!(
                "ideal share rises with tuples per packet: {:.1}% at 1, {:.1}% at 32, {:.1}% at 64 ({OVERHEAD} B overhead = {FRAMING} framing + {L2L4_LEN} Ethernet/IPv4/UDP + {HEADER_LEN} header)",
                100.0 * ideal_share(1),
                100.0 * ideal_share(32),
                100.0 * ideal_share(64)
            ),
            mono,
        ),
    );
    report(
        out,
        "ask_goodput",
        &format!(
            "ask-goodput: {TUPLE_BYTES}-byte tuples; end to end: one sender, {tuples} uniform tuples over {keys} keys, window 64, same run for both modes"
        ),
        &checks,
    )
}

/// Runs `fanin experiment ask-prioritisation` or `ask-goodput` and prints the checks.
pub fn run(args: &fanin_placement::cli::ExperimentArgs) -> anyhow::Result<()> {
    use fanin_placement::experiment::Name;
    let out = &args.out;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let s = match args.name {
        Name::AskPrioritisation => prioritisation(out, args.seed, args.quick)?,
        Name::AskGoodput => goodput(out, args.seed, args.quick)?,
        other => bail!("{other:?} is not an ASK experiment"),
    };
    println!("{s}");
    Ok(())
}
