//! SOAR (and SMC) running time over n ∈ {256..4096} and k ∈ {16..128} on complete binary
//! trees with power-law loads; criterion reports how time grows with n and k.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use fanin_placement::metrics::Scale;
use fanin_placement::topology::binary_tree;
use fanin_placement::workload::{rng, LoadSpec};
use fanin_placement::{place, TreeAlgo};

fn bench(c: &mut Criterion) {
    for algo in [TreeAlgo::Soar, TreeAlgo::Smc] {
        let mut g = c.benchmark_group(algo.name());
        g.sample_size(10)
            .measurement_time(std::time::Duration::from_secs(1))
            .warm_up_time(std::time::Duration::from_millis(200));
        for n in [256usize, 512, 1024, 2048, 4096] {
            let t = binary_tree(n).unwrap();
            let loads = LoadSpec::PowerLaw.generate(&t, &mut rng(1)).unwrap();
            let scale = Scale::new(&t).unwrap();
            let avail = vec![true; t.len()];
            for k in [16usize, 32, 64, 128] {
                g.bench_with_input(BenchmarkId::new(format!("bt{n}"), k), &k, |b, &k| {
                    b.iter(|| place(algo, &t, &scale, &loads, &avail, k, 0).unwrap())
                });
            }
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
