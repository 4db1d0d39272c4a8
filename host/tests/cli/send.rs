//! `fanin send`: input formats, fixed-point mode, faults, outputs.

use super::*;

fn pair(sw: SocketAddrV4, p: &[u16], inputs: [Vec<String>; 2], extra: &[&str]) -> Vec<Output> {
    let kids: Vec<_> = (0..2)
        .map(|r| {
            fanin()
                .args(["send", "--json", "--timeout", "15", "--switch"])
                .arg(sw.to_string())
                .args(["--workers", "2", "--rank", &r.to_string()])
                .args(["--bind", &lo(p[r]).to_string()])
                .args(&inputs[r])
                .args(extra)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    kids.into_iter()
        .map(|k| wait_output(k, 30, "send"))
        .collect()
}

fn switch_for(p: &[u16], extra: &[&str]) -> Switchd {
    let mut args = vec![
        "--listen".to_string(),
        "127.0.0.1:0".into(),
        "--worker".into(),
        lo(p[0]).to_string(),
        "--worker".into(),
        lo(p[1]).to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    Switchd::start(&a)
}

#[test]
fn npy_and_raw_inputs_sum_within_bound() {
    let dir = tmpdir("formats");
    let p = free_ports(2);
    let sw = switch_for(&p, &[]);
    let a: Vec<f32> = fanin::tensor::synthetic(2000, 1)
        .iter()
        .map(|x| x * 100.0)
        .collect();
    let b = fanin::tensor::synthetic(2000, 2);
    let (fa, fb) = (dir.join("a.npy"), dir.join("b.f32"));
    fanin::tensor::write(&fa, &a).unwrap();
    write_raw(&fb, &b);
    let (oa, ob) = (dir.join("oa.f32"), dir.join("ob.npy"));
    let outs = pair(
        sw.addr,
        &p,
        [
            vec![
                "--input".into(),
                fa.display().to_string(),
                "--out".into(),
                oa.display().to_string(),
            ],
            vec![
                "--input".into(),
                fb.display().to_string(),
                "--out".into(),
                ob.display().to_string(),
            ],
        ],
        &["--elements", "2000"],
    );
    let reps: Vec<_> = outs.iter().map(send_report).collect();
    let e = reps[0]["exponent"].as_i64().unwrap() as i8;
    assert_eq!(
        e,
        fanin_proto::quant::exponent_for(fanin::scheme::max_abs(&a), 2)
    );
    let ra = fanin::tensor::read(&oa).unwrap();
    assert_eq!(ra, fanin::tensor::read(&ob).unwrap());
    assert_sum(&[a, b], &ra, e);
    for r in &reps {
        assert!(r["goodput_gbps"].as_f64().unwrap() > 0.0);
        assert!(r["packets_per_sec"].as_f64().unwrap() > 0.0);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn scale_mode_sums_integers_exactly() {
    let dir = tmpdir("scale");
    let p = free_ports(2);
    let sw = switch_for(&p, &[]);
    let a = fanin::tensor::synthetic_int(1500, 3, 100_000);
    let b = fanin::tensor::synthetic_int(1500, 4, 100_000);
    let (fa, fb) = (dir.join("a.f32"), dir.join("b.f32"));
    write_raw(&fa, &a);
    write_raw(&fb, &b);
    let o = dir.join("o.f32");
    let outs = pair(
        sw.addr,
        &p,
        [
            vec![
                "--input".into(),
                fa.display().to_string(),
                "--out".into(),
                o.display().to_string(),
            ],
            vec!["--input".into(), fb.display().to_string()],
        ],
        &["--scale", "0"],
    );
    for out in &outs {
        assert_eq!(send_report(out)["exponent"], 0);
    }
    let got = fanin::tensor::read(&o).unwrap();
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_eq!(got, want);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn lossy_duplicating_reordering_switch_still_completes() {
    let p = free_ports(2);
    let sw = switch_for(
        &p,
        &[
            "--loss",
            "0.1",
            "--dup",
            "0.1",
            "--reorder",
            "0.1",
            "--fault-seed",
            "42",
        ],
    );
    let outs = pair(
        sw.addr,
        &p,
        [
            vec![
                "--synthetic".into(),
                "20000".into(),
                "--seed".into(),
                "1".into(),
            ],
            vec![
                "--synthetic".into(),
                "20000".into(),
                "--seed".into(),
                "2".into(),
            ],
        ],
        &["--retransmit-ms", "5"],
    );
    let reps: Vec<_> = outs.iter().map(send_report).collect();
    let retx: u64 = reps
        .iter()
        .map(|r| r["retransmissions"].as_u64().unwrap())
        .sum();
    assert!(retx > 0);
    let s = sw.stats();
    assert!(s["host"]["faults"]["lost"].as_u64().unwrap() > 0);
    assert!(s["host"]["faults"]["duplicated"].as_u64().unwrap() > 0);
    assert!(s["host"]["faults"]["reordered"].as_u64().unwrap() > 0);
    assert!(counter(&s, "duplicates") > 0);
}
