//! The prediction-powered estimate of a pass rate: the judge's verdicts on every sample, corrected by
//! the mean error a person's labels find on samples drawn at random (Angelopoulos et al., 2023).
//!
//! With `f` the judge's verdict (1 = pass) on each of the N samples and `y` the label on each of the n
//! labelled ones: θ̂ = mean_N(f) + mean_n(y − f), its variance var_N(f)/N + var_n(y − f)/n (sample
//! variances, divided by N − 1 and n − 1), and a normal 95% interval. Unbiased only when the labelled
//! samples were drawn at random from the N.

use serde::Serialize;

use super::agreement::FigureInterval;

/// The normal quantile of a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// A prediction-powered pass rate and what it is made of.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PredictionPowered {
    /// θ̂ and its 95% interval, each clamped to [0, 1].
    #[serde(flatten)]
    pub estimate: FigureInterval,
    /// The judge's pass rate over the N samples, mean_N(f).
    pub judged: f64,
    /// The labels' mean correction, mean_n(y − f).
    pub rectifier: f64,
    /// N: the samples the judge decided.
    pub samples: u32,
    /// n: the labelled samples.
    pub labelled: u32,
}

/// The estimate from the judge's verdicts `judged` (every sample) and `labelled`, each labelled sample's
/// (judge's verdict, label) pair; `None` with fewer than two of either, as a variance needs two.
pub fn estimate(judged: &[bool], labelled: &[(bool, bool)]) -> Option<PredictionPowered> {
    let (n_all, n_lab) = (judged.len(), labelled.len());
    if n_all < 2 || n_lab < 2 {
        return None;
    }
    let f: Vec<f64> = judged.iter().map(|&p| f64::from(u8::from(p))).collect();
    let d: Vec<f64> = labelled
        .iter()
        .map(|&(f, y)| f64::from(u8::from(y)) - f64::from(u8::from(f)))
        .collect();
    let (mean_f, var_f) = mean_and_variance(&f);
    let (mean_d, var_d) = mean_and_variance(&d);
    let theta = mean_f + mean_d;
    let half = Z95 * (var_f / n_all as f64 + var_d / n_lab as f64).sqrt();
    let clamp = |x: f64| x.clamp(0.0, 1.0);
    Some(PredictionPowered {
        estimate: FigureInterval {
            value: clamp(theta),
            ci_low: clamp(theta - half),
            ci_high: clamp(theta + half),
        },
        judged: mean_f,
        rectifier: mean_d,
        samples: n_all as u32,
        labelled: n_lab as u32,
    })
}

/// The mean and the sample variance (divided by len − 1) of at least two values.
fn mean_and_variance(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let squares = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
    (mean, squares / (n - 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::tests::close;

    #[test]
    fn a_worked_example_computed_by_hand() {
        // N = 20 samples, the judge passed 16: mean_N(f) = 0.8,
        //   var_N(f) = (16 x 0.2^2 + 4 x 0.8^2) / 19 = 3.2 / 19 = 0.168421.
        // n = 10 labelled: 6 passes the label confirms (y - f = 0), 2 passes the label says are
        // failures (-1), 2 failures it confirms (0): mean_n(y - f) = -0.2,
        //   var_n(y - f) = (8 x 0.2^2 + 2 x 0.8^2) / 9 = 1.6 / 9 = 0.177778.
        // theta = 0.8 - 0.2 = 0.6; variance = 0.168421 / 20 + 0.177778 / 10 = 0.0261988,
        // se = 0.161861, half-width 1.96 x se = 0.317241: 95% CI 0.2828 to 0.9172.
        let judged: Vec<bool> = (0..20).map(|i| i < 16).collect();
        let mut labelled = vec![(true, true); 6];
        labelled.extend([(true, false); 2]);
        labelled.extend([(false, false); 2]);
        let e = estimate(&judged, &labelled).unwrap();
        assert!(close(e.estimate.value, 0.6, 1e-12), "{e:?}");
        assert!(close(e.judged, 0.8, 1e-12) && close(e.rectifier, -0.2, 1e-12));
        assert!(close(e.estimate.ci_low, 0.2828, 1e-4), "{e:?}");
        assert!(close(e.estimate.ci_high, 0.9172, 1e-4), "{e:?}");
        assert_eq!((e.samples, e.labelled), (20, 10));
        assert_eq!(e.estimate.percent(), "60% (95% CI 28–92%)");
    }

    #[test]
    fn labels_that_agree_leave_the_judge_s_rate_and_clamp_at_the_ends() {
        let judged = [true, true, true, false];
        let e = estimate(&judged, &[(true, true), (false, false)]).unwrap();
        assert!(close(e.estimate.value, 0.75, 1e-12) && close(e.rectifier, 0.0, 1e-12));
        // Every pass labelled wrong: the estimate falls below 0 and is clamped.
        let e = estimate(&[true, true], &[(true, false), (true, false)]).unwrap();
        assert_eq!(
            (e.estimate.value, e.estimate.ci_low, e.estimate.ci_high),
            (0.0, 0.0, 0.0)
        );
        assert!(estimate(&judged, &[(true, true)]).is_none());
        assert!(estimate(&[true], &[(true, true), (true, true)]).is_none());
    }
}
