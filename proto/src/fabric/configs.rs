//! The switch configurations of a fabric run: every switch's forwarding table and the job
//! entries its scheme needs (Canary's dynamic entry everywhere, or static trees rooted at
//! spines).

use super::{host_ip, host_mac, switch_ip, switch_mac, Run, RunError, Scheme};
use crate::config::{Child, Endpoint, JobEntry, Mode, Params, Role, Route, SwitchConfig, Trust};
use crate::wire::FANIN_UDP_PORT;

/// Every switch's configuration for `run`: forwarding tables and the job entries the scheme
/// needs (switches `0..leaves` are leaves, then the spines).
#[allow(clippy::needless_range_loop)]
pub(super) fn configs(run: &Run) -> Result<Vec<SwitchConfig>, RunError> {
    let f = run.fabric;
    let n = f.leaves + f.spines;
    let ports = (f.hosts_per_leaf + f.spines).max(f.leaves) as u8;
    let slot_count = run.window.max(4);
    let trees = match run.scheme {
        Scheme::Static { trees } => trees.clamp(1, f.spines),
        _ => 1,
    };
    let jobs_per_switch = run.jobs.len() * trees;
    let params = Params {
        slots: (slot_count as usize * jobs_per_switch.max(1)) as u32,
        elements: run.packet_elements,
        max_jobs: jobs_per_switch.max(1) as u16,
        max_children: 64,
        max_routes: (f.hosts() + n + 1) as u16,
        ports,
    };
    let mut cfgs: Vec<SwitchConfig> = (0..n)
        .map(|sw| {
            let mut c = SwitchConfig::new(&format!("sw{sw}"), switch_mac(sw), switch_ip(sw));
            c.params = params;
            c
        })
        .collect();
    for (sw, c) in cfgs.iter_mut().enumerate() {
        for h in 0..f.hosts() {
            let l = h / f.hosts_per_leaf;
            let port = if sw < f.leaves {
                if l == sw {
                    h % f.hosts_per_leaf
                } else {
                    f.hosts_per_leaf + h % f.spines
                }
            } else {
                l
            };
            c.routes.push(Route {
                ip: host_ip(&f, h),
                port: port as u8,
            });
        }
        for other in 0..n {
            if other == sw {
                continue;
            }
            let port = match (sw < f.leaves, other < f.leaves) {
                (true, true) => f.hosts_per_leaf + other % f.spines,
                (true, false) => f.hosts_per_leaf + (other - f.leaves),
                (false, true) => other,
                (false, false) => continue,
            };
            c.routes.push(Route {
                ip: switch_ip(other),
                port: port as u8,
            });
        }
    }
    let leaf_ep = |l: usize, port: usize| Endpoint {
        mac: switch_mac(l),
        ip: switch_ip(l),
        udp_port: FANIN_UDP_PORT,
        port: port as u8,
    };
    for (ji, job) in run.jobs.iter().enumerate() {
        let all = crate::wire::RankSet::first(job.hosts.len() as u32);
        let ranks = all.0[0];
        let last = all.0.iter().rposition(|&w| w != 0).unwrap_or(0);
        let ranks_hi = all.0[1..=last].to_vec();
        match run.scheme {
            Scheme::Ring => {}
            Scheme::Canary { flush_ns } => {
                let e = JobEntry {
                    job: job.job,
                    role: Role::Root,
                    mode: Mode::Dynamic {
                        flush_after: flush_ns,
                        reclaim_after: run.rto_ns * 4,
                    },
                    degree_limit: 1,
                    children: vec![],
                    ranks,
                    ranks_hi: ranks_hi.clone(),
                    slot_base: ji as u32 * slot_count,
                    slot_count,
                    quota: 0,
                    trust: Trust::OFF,
                };
                for c in cfgs.iter_mut() {
                    c.jobs.push(e.clone());
                }
            }
            Scheme::Static { .. } => {
                for t in 0..trees {
                    let id = job.job + t as u16;
                    let spine = (job.root_spine + t) % f.spines;
                    let base = ((ji * trees + t) as u32) * slot_count;
                    let mut leaf_children = Vec::new();
                    for l in 0..f.leaves {
                        let mine: Vec<(usize, usize)> = job
                            .hosts
                            .iter()
                            .enumerate()
                            .filter(|(_, &h)| h / f.hosts_per_leaf == l)
                            .map(|(r, &h)| (r, h))
                            .collect();
                        if mine.is_empty() {
                            continue;
                        }
                        let children: Vec<Child> = mine
                            .iter()
                            .map(|&(r, h)| Child {
                                endpoint: Endpoint {
                                    mac: host_mac(h),
                                    ip: host_ip(&f, h),
                                    udp_port: FANIN_UDP_PORT,
                                    port: (h % f.hosts_per_leaf) as u8,
                                },
                                ranks: 1 << r,
                                below: 0,
                            })
                            .collect();
                        let lranks = children.iter().fold(0, |m, c| m | c.ranks);
                        cfgs[l].jobs.push(JobEntry {
                            job: id,
                            role: Role::Inner {
                                parent: Endpoint {
                                    mac: switch_mac(f.leaves + spine),
                                    ip: switch_ip(f.leaves + spine),
                                    udp_port: FANIN_UDP_PORT,
                                    port: (f.hosts_per_leaf + spine) as u8,
                                },
                                index_at_parent: leaf_children.len() as u8,
                            },
                            mode: Mode::Static,
                            degree_limit: children.len() as u8,
                            children,
                            ranks: lranks,
                            ranks_hi: vec![],
                            slot_base: base,
                            slot_count,
                            quota: 0,
                            trust: Trust::OFF,
                        });
                        leaf_children.push(Child {
                            endpoint: leaf_ep(l, l),
                            ranks: lranks,
                            below: 0,
                        });
                    }
                    cfgs[f.leaves + spine].jobs.push(JobEntry {
                        job: id,
                        role: Role::Root,
                        mode: Mode::Static,
                        degree_limit: leaf_children.len() as u8,
                        children: leaf_children,
                        ranks,
                        ranks_hi: vec![],
                        slot_base: base,
                        slot_count,
                        quota: 0,
                        trust: Trust::OFF,
                    });
                }
            }
        }
    }
    for c in &cfgs {
        c.validate().map_err(|e| RunError::Bad(e.to_string()))?;
    }
    Ok(cfgs)
}
