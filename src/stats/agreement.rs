//! A judge measured against labels: accuracy, true-positive and true-negative rates, Cohen's kappa,
//! each with a 95% interval, and the Rogan–Gladen pass rate corrected for the judge's errors.
//!
//! "Positive" is "yes": the label (or the judge) says the requirement holds, i.e. the sample passes.
//!
//! - Rates (accuracy, TPR, TNR) get the Wilson score interval ([`super::interval`]).
//! - Kappa gets the large-sample interval κ ± z·SE with the standard error of Fleiss, Cohen & Everitt
//!   (1969), "Large sample standard errors of kappa and weighted kappa", Psychological Bulletin 72(5),
//!   eq. 13 (the non-null variance), clamped to [−1, 1].
//! - The corrected pass rate is Rogan & Gladen (1978), "Estimating prevalence from the results of a
//!   screening test", Am. J. Epidemiol. 107(1): (p + TNR − 1) / (TPR + TNR − 1), with the delta-method
//!   variance that counts the sampling error of p, TPR and TNR (their eq. for the estimator's variance
//!   with estimated sensitivity and specificity), clamped to [0, 1].

use serde::{Deserialize, Serialize};

use super::interval::{Interval, Z_95, wilson};

/// The most verdicts one table may count: far more than any calibration set holds, so that a table
/// read from a hand-edited or corrupted result file cannot overflow its sums.
pub const MAX_VERDICTS: u32 = 10_000_000;

/// Judge verdicts against labels, as counts. A table that is read holds at most [`MAX_VERDICTS`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawConfusion")]
pub struct Confusion {
    /// Label yes, judge yes.
    pub true_yes: u32,
    /// Label yes, judge no.
    pub false_no: u32,
    /// Label no, judge yes.
    pub false_yes: u32,
    /// Label no, judge no.
    pub true_no: u32,
}

/// A table as a file holds it, before its counts are checked.
#[derive(Deserialize)]
struct RawConfusion {
    true_yes: u32,
    false_no: u32,
    false_yes: u32,
    true_no: u32,
}

impl TryFrom<RawConfusion> for Confusion {
    type Error = String;

    fn try_from(raw: RawConfusion) -> Result<Self, String> {
        let RawConfusion {
            true_yes,
            false_no,
            false_yes,
            true_no,
        } = raw;
        let total: u64 = [true_yes, false_no, false_yes, true_no]
            .into_iter()
            .map(u64::from)
            .sum();
        if total > u64::from(MAX_VERDICTS) {
            return Err(format!(
                "the counts add up to {total} verdicts, more than {MAX_VERDICTS}: not counts a calibration run \
                 writes"
            ));
        }
        Ok(Confusion {
            true_yes,
            false_no,
            false_yes,
            true_no,
        })
    }
}

impl Confusion {
    /// The four counts in a confusion table's order (label yes: judge yes, judge no; label no: judge
    /// yes, judge no), for tests that write a table out.
    #[cfg(test)]
    pub(crate) fn of(true_yes: u32, false_no: u32, false_yes: u32, true_no: u32) -> Confusion {
        Confusion {
            true_yes,
            false_no,
            false_yes,
            true_no,
        }
    }

    /// Counts one verdict: `label` is the correct answer, `judge` the judge's.
    pub fn add(&mut self, label: bool, judge: bool) {
        match (label, judge) {
            (true, true) => self.true_yes += 1,
            (true, false) => self.false_no += 1,
            (false, true) => self.false_yes += 1,
            (false, false) => self.true_no += 1,
        }
    }

    /// Both tables' counts added. The sums saturate: tables pooled over many sets stay tables, if
    /// wrong ones, rather than a panic after the run.
    pub fn merged(&self, other: &Confusion) -> Confusion {
        Confusion {
            true_yes: self.true_yes.saturating_add(other.true_yes),
            false_no: self.false_no.saturating_add(other.false_no),
            false_yes: self.false_yes.saturating_add(other.false_yes),
            true_no: self.true_no.saturating_add(other.true_no),
        }
    }

    /// Verdicts counted.
    pub fn total(&self) -> u32 {
        self.agreed()
            .saturating_add(self.false_no.saturating_add(self.false_yes))
    }

    /// Verdicts that agree with their label.
    pub fn agreed(&self) -> u32 {
        self.true_yes.saturating_add(self.true_no)
    }

    /// Items labelled yes.
    pub fn labelled_yes(&self) -> u32 {
        self.true_yes.saturating_add(self.false_no)
    }

    /// Items labelled no.
    pub fn labelled_no(&self) -> u32 {
        self.false_yes.saturating_add(self.true_no)
    }
}

/// A figure and its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FigureInterval {
    /// The point estimate.
    pub value: f64,
    /// The interval's lower end.
    pub ci_low: f64,
    /// The interval's upper end.
    pub ci_high: f64,
}

impl FigureInterval {
    fn rate(successes: u32, trials: u32) -> Option<FigureInterval> {
        let Interval { low, high } = wilson(successes, trials)?;
        Some(FigureInterval {
            value: f64::from(successes) / f64::from(trials),
            ci_low: low,
            ci_high: high,
        })
    }

    /// `62% (95% CI 47–75%)`.
    pub fn percent(&self) -> String {
        format!(
            "{:.0}% (95% CI {:.0}–{:.0}%)",
            self.value * 100.0,
            self.ci_low * 100.0,
            self.ci_high * 100.0
        )
    }

    /// `0.25 (95% CI 0.02–0.48)`: for kappa, which is not a share.
    pub fn plain(&self) -> String {
        format!(
            "{:.2} (95% CI {:.2}–{:.2})",
            self.value, self.ci_low, self.ci_high
        )
    }
}

/// How well a judge agrees with the labels. A figure is `None` when nothing measures it (no item
/// labelled yes for TPR, ...; kappa when both sides put every item in one class).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Agreement {
    /// The counts.
    #[serde(flatten)]
    pub counts: Confusion,
    /// Share of verdicts that agree with their label.
    pub accuracy: Option<FigureInterval>,
    /// True-positive rate (sensitivity): share of yes-labelled items the judge said yes to.
    pub tpr: Option<FigureInterval>,
    /// True-negative rate (specificity): share of no-labelled items the judge said no to.
    pub tnr: Option<FigureInterval>,
    /// Cohen's kappa: agreement beyond what chance would give with the same yes rates.
    pub kappa: Option<FigureInterval>,
}

/// Every agreement figure of `c`.
pub fn agreement(c: &Confusion) -> Agreement {
    Agreement {
        counts: *c,
        accuracy: FigureInterval::rate(c.agreed(), c.total()),
        tpr: FigureInterval::rate(c.true_yes, c.labelled_yes()),
        tnr: FigureInterval::rate(c.true_no, c.labelled_no()),
        kappa: kappa(c),
    }
}

/// Cohen's kappa with its large-sample 95% interval (Fleiss, Cohen & Everitt 1969).
pub fn kappa(c: &Confusion) -> Option<FigureInterval> {
    let n = f64::from(c.total());
    if n == 0.0 {
        return None;
    }
    // Cells as shares: rows the label (yes, no), columns the judge (yes, no).
    let (p11, p12, p21, p22) = (
        f64::from(c.true_yes) / n,
        f64::from(c.false_no) / n,
        f64::from(c.false_yes) / n,
        f64::from(c.true_no) / n,
    );
    let (row_yes, row_no) = (p11 + p12, p21 + p22);
    let (col_yes, col_no) = (p11 + p21, p12 + p22);
    let observed = p11 + p22;
    let chance = row_yes * col_yes + row_no * col_no;
    if chance >= 1.0 - 1e-12 {
        // Both sides put every item in the same class: kappa is 0/0.
        return None;
    }
    let k = (observed - chance) / (1.0 - chance);
    // FCE (1969) eq. 13 for two categories: the diagonal term, the off-diagonal term, the correction.
    let diagonal = p11 * (1.0 - (row_yes + col_yes) * (1.0 - k)).powi(2)
        + p22 * (1.0 - (row_no + col_no) * (1.0 - k)).powi(2);
    let off =
        (1.0 - k).powi(2) * (p12 * (col_yes + row_no).powi(2) + p21 * (col_no + row_yes).powi(2));
    let correction = (k - chance * (1.0 - k)).powi(2);
    let variance = ((diagonal + off - correction) / (n * (1.0 - chance).powi(2))).max(0.0);
    let half = Z_95 * variance.sqrt();
    Some(FigureInterval {
        value: k,
        ci_low: (k - half).max(-1.0),
        ci_high: (k + half).min(1.0),
    })
}

/// Below this informedness (TPR + TNR − 1) a judge is too weak to correct a pass rate for: the
/// correction divides by it, so its error would swamp the figure.
pub const MIN_INFORMEDNESS: f64 = 0.2;

/// A pass rate corrected for the judge's measured errors, or why it is not.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Correction {
    /// The Rogan–Gladen estimate of the true pass rate, clamped to [0, 1].
    Corrected {
        /// The corrected rate and its interval.
        #[serde(flatten)]
        estimate: FigureInterval,
        /// TPR + TNR − 1 of the judge.
        informedness: f64,
    },
    /// TPR + TNR − 1 is below [`MIN_INFORMEDNESS`]: no correction.
    TooWeak {
        /// TPR + TNR − 1 of the judge.
        informedness: f64,
    },
}

/// The Rogan–Gladen correction of `passed` of `total` judged samples, for a judge whose calibration
/// counts are `judge`. `None` when there is nothing to correct or no calibration of both classes.
pub fn rogan_gladen(passed: u32, total: u32, judge: &Confusion) -> Option<Correction> {
    let (pos, neg) = (judge.labelled_yes(), judge.labelled_no());
    if total == 0 || pos == 0 || neg == 0 {
        return None;
    }
    let tpr = f64::from(judge.true_yes) / f64::from(pos);
    let tnr = f64::from(judge.true_no) / f64::from(neg);
    let informedness = tpr + tnr - 1.0;
    if informedness < MIN_INFORMEDNESS {
        return Some(Correction::TooWeak { informedness });
    }
    let p = f64::from(passed) / f64::from(total);
    let corrected = (p + tnr - 1.0) / informedness;
    let variance = (p * (1.0 - p) / f64::from(total)
        + corrected.powi(2) * tpr * (1.0 - tpr) / f64::from(pos)
        + (1.0 - corrected).powi(2) * tnr * (1.0 - tnr) / f64::from(neg))
        / informedness.powi(2);
    let half = Z_95 * variance.sqrt();
    Some(Correction::Corrected {
        estimate: FigureInterval {
            value: corrected.clamp(0.0, 1.0),
            ci_low: (corrected - half).clamp(0.0, 1.0),
            ci_high: (corrected + half).clamp(0.0, 1.0),
        },
        informedness,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::tests::close;

    /// How near a reference value (given to 6 places) a computed one must be.
    const TOLERANCE: f64 = 5e-6;

    #[test]
    fn a_table_read_counts_at_most_max_verdicts_and_pooled_tables_saturate() {
        let read = |json: &str| serde_json::from_str::<Confusion>(json).map_err(|e| e.to_string());
        // Once a result file holding this made the end of the run panic on the sum.
        let error =
            read(r#"{"true_yes": 4294967295, "false_no": 15, "false_yes": 4, "true_no": 17}"#)
                .unwrap_err();
        assert!(
            error.contains("the counts add up to 4294967331 verdicts, more than 10000000"),
            "{error}"
        );
        assert_eq!(
            read(r#"{"true_yes": 6, "false_no": 15, "false_yes": 4, "true_no": 17}"#),
            Ok(Confusion::of(6, 15, 4, 17))
        );
        let full = Confusion::of(u32::MAX, u32::MAX, 1, 1);
        assert_eq!(full.total(), u32::MAX);
        assert_eq!(full.merged(&full).true_yes, u32::MAX);
        assert!(agreement(&full.merged(&full)).accuracy.is_some());
    }

    // Kappa values: the worked example in Cohen (1960) as restated in the Wikipedia article "Cohen's
    // kappa" (50 items: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no; p_o = 0.7, p_e = 0.5, kappa 0.4).
    // Standard errors: the FCE (1969) k x k formula, computed here in an independent script (a
    // general-matrix implementation, not this two-category one) and rounded to 6 places.
    #[test]
    fn kappa_matches_published_and_reference_values() {
        let cases = [
            (Confusion::of(20, 5, 10, 15), 0.4, 0.151092, 0.648908),
            (Confusion::of(45, 15, 25, 15), 0.130435, -0.062938, 0.323808),
            (Confusion::of(18, 2, 3, 17), 0.75, 0.545278, 0.954722),
            (Confusion::of(10, 10, 10, 10), 0.0, -0.309898, 0.309898),
        ];
        for (t, k, low, high) in cases {
            let e = kappa(&t).unwrap();
            assert!(
                close(e.value, k, TOLERANCE)
                    && close(e.ci_low, low, TOLERANCE)
                    && close(e.ci_high, high, TOLERANCE),
                "{t:?}: {e:?}"
            );
        }
    }

    #[test]
    fn kappa_is_undefined_when_everything_is_one_class() {
        assert_eq!(kappa(&Confusion::of(0, 0, 0, 0)), None);
        assert_eq!(kappa(&Confusion::of(7, 0, 0, 0)), None);
        // A judge that says yes to everything agrees only by chance.
        let always_yes = kappa(&Confusion::of(10, 0, 10, 0)).unwrap();
        assert!(close(always_yes.value, 0.0, TOLERANCE), "{always_yes:?}");
    }

    #[test]
    fn rates_use_wilson_intervals() {
        let a = agreement(&Confusion::of(20, 5, 10, 15));
        let accuracy = a.accuracy.unwrap();
        assert!(close(accuracy.value, 0.7, TOLERANCE));
        let w = wilson(35, 50).unwrap();
        assert!(
            close(accuracy.ci_low, w.low, TOLERANCE) && close(accuracy.ci_high, w.high, TOLERANCE)
        );
        assert!(close(a.tpr.unwrap().value, 0.8, TOLERANCE));
        assert!(close(a.tnr.unwrap().value, 0.6, TOLERANCE));
        let only_yes = agreement(&Confusion::of(3, 1, 0, 0));
        assert_eq!(only_yes.tnr, None);
        assert!(only_yes.tpr.is_some());
    }

    // Reference values computed here with an independent script of the same published formulas.
    #[test]
    fn rogan_gladen_corrects_and_clamps() {
        let judge = Confusion::of(45, 5, 10, 40); // TPR 0.9, TNR 0.8
        let Some(Correction::Corrected {
            estimate,
            informedness,
        }) = rogan_gladen(50, 100, &judge)
        else {
            panic!("corrected expected")
        };
        assert!(close(informedness, 0.7, TOLERANCE));
        assert!(close(estimate.value, 0.428571, TOLERANCE), "{estimate:?}");
        assert!(
            close(estimate.ci_low, 0.254265, TOLERANCE)
                && close(estimate.ci_high, 0.602878, TOLERANCE),
            "{estimate:?}"
        );
        // 18 of 20 with TPR 0.9, TNR 0.85: the estimate is exactly 1, the upper end clamped.
        let Some(Correction::Corrected { estimate, .. }) =
            rogan_gladen(18, 20, &Confusion::of(18, 2, 3, 17))
        else {
            panic!("corrected expected")
        };
        assert!(
            close(estimate.value, 1.0, TOLERANCE) && close(estimate.ci_low, 0.752082, TOLERANCE)
        );
        assert_eq!(estimate.ci_high, 1.0);
        // Everything passes with a judge that says yes too often: the raw estimate exceeds 1.
        let Some(Correction::Corrected { estimate, .. }) =
            rogan_gladen(20, 20, &Confusion::of(9, 1, 4, 6))
        else {
            panic!("corrected expected")
        };
        assert_eq!(estimate.value, 1.0);
    }

    #[test]
    fn a_weak_judge_is_not_corrected_for() {
        // TPR 0.6, TNR 0.55: informedness 0.15.
        match rogan_gladen(10, 20, &Confusion::of(12, 8, 9, 11)) {
            Some(Correction::TooWeak { informedness }) => {
                assert!(close(informedness, 0.15, TOLERANCE))
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(rogan_gladen(0, 0, &Confusion::of(5, 0, 0, 5)), None);
        assert_eq!(rogan_gladen(3, 5, &Confusion::of(5, 0, 0, 0)), None);
    }
}
