//! `fanin allreduce`: a local switch and N workers.

use super::*;

#[test]
fn verify_within_bound() {
    let o = run(
        fanin().args([
            "allreduce",
            "--workers",
            "4",
            "--elements",
            "100000",
            "--verify",
        ]),
        60,
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(
        out.contains("400000 sums checked, all within the quantisation bound"),
        "{out}"
    );
    assert!(out.contains("Gbps"), "{out}");
}

#[test]
fn int_sums_exact_under_faults() {
    let o = run(
        fanin().args([
            "allreduce",
            "--workers",
            "3",
            "--elements",
            "30000",
            "--int",
            "--loss",
            "0.05",
            "--dup",
            "0.05",
            "--reorder",
            "0.05",
            "--reorder-hold",
            "3",
            "--retransmit-ms",
            "5",
        ]),
        60,
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(out.contains("90000 sums checked, all exact"), "{out}");
    assert!(!out.contains("faults: 0 lost"), "{out}");
}

#[test]
fn odd_sizes_one_worker_and_small_packets() {
    let o = run(
        fanin().args([
            "allreduce",
            "--workers",
            "1",
            "--elements",
            "1",
            "--verify",
            "--packet-elements",
            "7",
        ]),
        30,
    );
    assert!(o.status.success(), "{:?}", text(&o));
    let o = run(
        fanin().args([
            "allreduce",
            "--workers",
            "5",
            "--elements",
            "1001",
            "--int",
            "--packet-elements",
            "256",
            "--slots",
            "4",
            "--window",
            "4",
        ]),
        30,
    );
    assert!(o.status.success(), "{:?}", text(&o));
}
