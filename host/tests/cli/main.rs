//! Integration tests of the `fanin` binary: one test binary, one module per topic.
//! Every process is bounded in time and killed on drop; all traffic stays on loopback
//! (or inside network namespaces the netns test creates).

mod allreduce;
mod bad_input;
mod canary;
mod dynamic;
mod hw;
mod kv;
mod netns;
mod send;
mod switchd;
mod trust;
mod vs_gloo;
mod wireshark;

use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A `fanin` command.
pub fn fanin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fanin"))
}

/// A fresh temporary directory for one test.
pub fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fanin-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `n` loopback UDP ports that were free a moment ago.
pub fn free_ports(n: usize) -> Vec<u16> {
    let socks: Vec<UdpSocket> = (0..n)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    socks
        .iter()
        .map(|s| s.local_addr().unwrap().port())
        .collect()
}

/// A loopback address.
pub fn lo(port: u16) -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)
}

/// Waits for `child` at most `secs` (draining its pipes meanwhile), killing it and
/// panicking on timeout.
pub fn wait_output(mut child: Child, secs: u64, what: &str) -> Output {
    let drain = |r: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut v);
            }
            v
        })
    };
    let out = drain(child.stdout.take().map(|s| Box::new(s) as _));
    let err = drain(child.stderr.take().map(|s| Box::new(s) as _));
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            let e = err.join().unwrap();
            panic!(
                "{what} did not finish in {secs}s; stderr: {}",
                String::from_utf8_lossy(&e)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// Runs `cmd` to completion within `secs`.
pub fn run(cmd: &mut Command, secs: u64) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_output(child, secs, &format!("{cmd:?}"))
}

/// Text of stdout and stderr.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A running `fanin switchd`, killed on drop.
pub struct Switchd {
    child: Option<Child>,
    /// Its UDP (and stats) address.
    pub addr: SocketAddrV4,
    lines: mpsc::Receiver<String>,
}

impl Switchd {
    /// Starts `fanin switchd ARGS` (prefixed by `wrap`, e.g. `ip netns exec NS`) and waits
    /// for its "listening on" line.
    pub fn start_with(wrap: &[&str], args: &[&str]) -> Self {
        let mut cmd = if wrap.is_empty() {
            fanin()
        } else {
            let mut c = Command::new(wrap[0]);
            c.args(&wrap[1..]).arg(env!("CARGO_BIN_EXE_fanin"));
            c
        };
        let mut child = cmd
            .arg("switchd")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let first = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("switchd printed its address");
        let addr = first
            .split("listening on ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no address in {first:?}"));
        Self {
            child: Some(child),
            addr,
            lines: rx,
        }
    }

    /// Starts `fanin switchd ARGS` on loopback.
    pub fn start(args: &[&str]) -> Self {
        Self::start_with(&[], args)
    }

    /// The counters served by `fanin stats --json`.
    pub fn stats(&self) -> serde_json::Value {
        let o = run(
            fanin().args(["stats", "--json", &self.addr.to_string()]),
            10,
        );
        assert!(o.status.success(), "stats failed: {:?}", text(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    }

    /// Sends SIGINT and returns the exit status and everything printed after startup.
    pub fn interrupt(mut self) -> (std::process::ExitStatus, String) {
        let mut child = self.child.take().unwrap();
        // SAFETY: kill(2) on the pid of a child this test started.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let t = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if t.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                panic!("switchd ignored SIGINT");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let mut rest = String::new();
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(2)) {
            rest += &l;
            rest.push('\n');
        }
        (status, rest)
    }
}

impl Drop for Switchd {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Counter `name` from a stats JSON document.
pub fn counter(stats: &serde_json::Value, name: &str) -> u64 {
    stats["counters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p[0] == name)
        .and_then(|p| p[1].as_u64())
        .unwrap_or_else(|| panic!("no counter {name}"))
}

/// Writes a raw f32 tensor.
pub fn write_raw(path: &Path, v: &[f32]) {
    fanin::tensor::write(path, v).unwrap();
}

/// Checks that `got` is the sum of `parts` within the documented bound.
pub fn assert_sum(parts: &[Vec<f32>], got: &[f32], exponent: i8) {
    assert_eq!(got.len(), parts[0].len());
    for i in 0..got.len() {
        let exact: f64 = parts.iter().map(|p| p[i] as f64).sum();
        let bound = fanin::scheme::result_bound(parts.len() as u32, exponent, got[i]);
        assert!(
            (got[i] as f64 - exact).abs() <= bound,
            "element {i}: {} vs {exact} (bound {bound})",
            got[i]
        );
    }
}

/// Parses the JSON report `fanin send --json` prints.
pub fn send_report(o: &Output) -> serde_json::Value {
    let (out, err) = text(o);
    assert!(o.status.success(), "send failed: {err}");
    serde_json::from_str(out.lines().last().unwrap_or("")).unwrap_or_else(|_| panic!("{out}"))
}
