//! Multi-host: switchd and two workers in separate network namespaces joined by veth pairs
//! and a bridge, with private addresses that exist only inside those namespaces.
//! Runs only as root where `ip netns` works; skipped with a printed reason elsewhere.

use fanin_proto::config::Mode;
use fanin_proto::plan::{build, star, Addressing, JobSpec};

use super::*;

/// Network namespaces this test created, deleted on drop.
struct Namespaces(Vec<String>);

impl Drop for Namespaces {
    fn drop(&mut self) {
        for n in &self.0 {
            let _ = Command::new("ip").args(["netns", "del", n]).output();
        }
    }
}

fn ip(args: &[&str]) -> Result<(), String> {
    let o = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run ip: {e}"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

/// Why the test cannot run here, if it cannot.
fn unsupported() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not running as root".into());
    }
    let probe = format!("fanin-probe-{}", std::process::id());
    if let Err(e) = ip(&["netns", "add", &probe]) {
        return Some(format!("`ip netns` does not work here ({e})"));
    }
    let _ = ip(&["netns", "del", &probe]);
    None
}

#[test]
fn allreduce_across_network_namespaces() {
    if let Some(why) = unsupported() {
        eprintln!("netns test skipped: {why}");
        return;
    }
    let id = std::process::id() % 100_000;
    let (s, a, b) = (format!("fsw{id}"), format!("fwa{id}"), format!("fwb{id}"));
    let guard = Namespaces(vec![s.clone(), a.clone(), b.clone()]);
    let plan = build(
        &star(2),
        JobSpec {
            job: 9,
            slot_count: 64,
            elements: 64,
            mode: Mode::Static,
            addressing: Addressing::Network,
            trust: fanin_proto::config::Trust::default(),
        },
    )
    .unwrap();
    let sw_ip = plan.switches[0].ip.to_string();
    let setup = || -> Result<(), String> {
        for n in &guard.0 {
            ip(&["netns", "add", n])?;
            ip(&["-n", n, "link", "set", "lo", "up"])?;
        }
        ip(&["-n", &s, "link", "add", "br0", "type", "bridge"])?;
        ip(&[
            "-n",
            &s,
            "addr",
            "add",
            &format!("{sw_ip}/16"),
            "dev",
            "br0",
        ])?;
        ip(&["-n", &s, "link", "set", "br0", "up"])?;
        for (w, ns) in [(0, &a), (1, &b)] {
            let me = plan.workers[w].me.ip.to_string();
            let port = format!("v{w}");
            ip(&[
                "-n", &s, "link", "add", &port, "type", "veth", "peer", "name", "eth0", "netns", ns,
            ])?;
            ip(&["-n", &s, "link", "set", &port, "master", "br0"])?;
            ip(&["-n", &s, "link", "set", &port, "up"])?;
            ip(&["-n", ns, "addr", "add", &format!("{me}/16"), "dev", "eth0"])?;
            ip(&["-n", ns, "link", "set", "eth0", "up"])?;
        }
        Ok(())
    };
    setup().expect("namespace setup");
    let dir = tmpdir("netns");
    let cfg = dir.join("root.json");
    std::fs::write(&cfg, serde_json::to_string(&plan.switches[0]).unwrap()).unwrap();
    let sw = Switchd::start_with(
        &["ip", "netns", "exec", &s],
        &["--config", cfg.to_str().unwrap()],
    );
    assert_eq!(sw.addr.ip().to_string(), sw_ip);
    let data: Vec<Vec<f32>> = (0..2)
        .map(|r| fanin::tensor::synthetic(20_000, 50 + r))
        .collect();
    let kids: Vec<_> = [(0usize, &a), (1, &b)]
        .iter()
        .map(|(w, ns)| {
            let af = dir.join(format!("a{w}.json"));
            std::fs::write(&af, serde_json::to_string(&plan.workers[*w]).unwrap()).unwrap();
            let inp = dir.join(format!("in{w}.f32"));
            write_raw(&inp, &data[*w]);
            Command::new("ip")
                .args(["netns", "exec", ns, env!("CARGO_BIN_EXE_fanin")])
                .args(["send", "--json", "--timeout", "10"])
                .args(["--assignment", af.to_str().unwrap()])
                .args(["--input", inp.to_str().unwrap()])
                .args(["--out", dir.join(format!("out{w}.f32")).to_str().unwrap()])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let reps: Vec<_> = kids
        .into_iter()
        .map(|k| send_report(&wait_output(k, 40, "send in a namespace")))
        .collect();
    let e = reps[0]["exponent"].as_i64().unwrap() as i8;
    let r0 = fanin::tensor::read(&dir.join("out0.f32")).unwrap();
    assert_eq!(r0, fanin::tensor::read(&dir.join("out1.f32")).unwrap());
    assert_sum(&data, &r0, e);
    let (status, rest) = sw.interrupt();
    assert!(status.success());
    assert!(rest.contains("completions"), "{rest}");
    drop(guard);
    let _ = std::fs::remove_dir_all(&dir);
}
