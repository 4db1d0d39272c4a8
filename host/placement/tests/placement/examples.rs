//! The papers' worked examples with their exact numbers (papers.md).

use fanin_placement::metrics::Scale;
use fanin_placement::rational::int;
use fanin_placement::{place, TreeAlgo};

use crate::common::{ids, seven};

const SOAR: [&str; 7] = ["r", "a", "b", "l1", "l2", "l3", "l4"];

#[test]
fn soar_figs_2_3_5_optimum_for_every_k() {
    let t = seven(SOAR, [2, 6, 5, 4]);
    let s = Scale::new(&t).unwrap();
    let (l, av) = (t.loads(), vec![true; 7]);
    let u = |a, k| place(a, &t, &s, &l, &av, k, 0).unwrap();
    assert_eq!(u(TreeAlgo::AllRed, 0).metrics.utilization, int(51));
    assert_eq!(u(TreeAlgo::AllBlue, 0).metrics.utilization, int(7));
    for (k, want) in [(1, 35), (2, 20), (3, 15), (4, 11), (5, 9), (6, 8), (7, 7)] {
        assert_eq!(
            u(TreeAlgo::Soar, k).metrics.utilization,
            int(want),
            "k = {k}"
        );
    }
    assert_eq!(ids(&t, &u(TreeAlgo::Soar, 2).blue), ["b", "l2"]);
}

#[test]
fn soar_fig_2_baselines_at_k_2() {
    let t = seven(SOAR, [2, 6, 5, 4]);
    let s = Scale::new(&t).unwrap();
    let (l, av) = (t.loads(), vec![true; 7]);
    let top = place(TreeAlgo::Top, &t, &s, &l, &av, 2, 0).unwrap();
    assert_eq!(ids(&t, &top.blue), ["b", "r"]);
    assert_eq!(top.metrics.utilization, int(27));
    assert_eq!(
        place(TreeAlgo::Max, &t, &s, &l, &av, 2, 0)
            .unwrap()
            .metrics
            .utilization,
        int(24)
    );
    assert_eq!(
        place(TreeAlgo::Level, &t, &s, &l, &av, 2, 0)
            .unwrap()
            .metrics
            .utilization,
        int(21)
    );
}

#[test]
fn smc_fig_1_optimum_and_baselines_at_k_2() {
    let t = seven(["r", "A", "B", "a", "b", "c", "d4"], [2, 6, 5, 5]);
    let s = Scale::new(&t).unwrap();
    let (l, av) = (t.loads(), vec![true; 7]);
    let c = |a| place(a, &t, &s, &l, &av, 2, 0).unwrap();
    assert_eq!(c(TreeAlgo::AllRed).metrics.congestion, int(18));
    let top = c(TreeAlgo::Top);
    assert_eq!(
        (ids(&t, &top.blue), top.metrics.congestion),
        (vec!["B".to_string(), "r".into()], int(8))
    );
    let max = c(TreeAlgo::Max);
    assert_eq!(
        (ids(&t, &max.blue), max.metrics.congestion),
        (vec!["b".to_string(), "c".into()], int(9))
    );
    assert_eq!(c(TreeAlgo::Level).metrics.congestion, int(6));
    let smc = c(TreeAlgo::Smc);
    assert_eq!(
        (ids(&t, &smc.blue), smc.metrics.congestion),
        (vec!["B".to_string(), "b".into()], int(5))
    );
}

/// Regression for the printed Eq. 7 (i−1−j): it makes Fig. 1's optimum 9, not 5.
#[test]
fn smc_eq7_off_by_one_regression() {
    let t = seven(["r", "A", "B", "a", "b", "c", "d4"], [2, 6, 5, 5]);
    let s = Scale::new(&t).unwrap();
    let smc = place(TreeAlgo::Smc, &t, &s, &t.loads(), &[true; 7], 2, 0).unwrap();
    assert_ne!(smc.metrics.congestion, int(9));
}

#[test]
fn decimal_rates_are_exact() {
    // Rate 0.1 = 1/10 exactly: 3 messages cost 30, not 29.999999999999996.
    let text = r#"{"destination":"d","nodes":[{"id":"r","parent":"d","rate":"0.1"},{"id":"x","parent":"r","rate":0.3,"load":3}]}"#;
    let t = fanin_placement::topology::Tree::from_json(text).unwrap();
    let s = Scale::new(&t).unwrap();
    let p = place(TreeAlgo::AllRed, &t, &s, &t.loads(), &[true; 2], 0, 0).unwrap();
    assert_eq!(p.metrics.utilization, int(40));
    assert_eq!(p.metrics.congestion, int(30));
}
