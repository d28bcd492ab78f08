//! How far a judge's verdict can be trusted: the judge's measurement on the question's type (a share
//! with its 95% Wilson interval and counts, [`Rate`]), and when that leaves the verdict advisory
//! (`Advisory::of`: no measurement, or the lower end of the accuracy's interval below a minimum).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::agreement::{Agreement, FigureInterval};
use super::interval::wilson;
use super::percent;

/// A share measured on a calibration set: the point value, its 95% Wilson interval and its counts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// `successes / trials`.
    pub value: f64,
    /// The 95% interval's lower end.
    pub ci_low: f64,
    /// The 95% interval's upper end.
    pub ci_high: f64,
    /// Verdicts that were right.
    pub successes: u32,
    /// Verdicts counted.
    pub trials: u32,
}

impl Rate {
    /// `successes` of `trials` with its Wilson interval; `None` without trials.
    pub(crate) fn of(successes: u32, trials: u32) -> Option<Rate> {
        let interval = wilson(successes, trials)?;
        Some(Rate {
            value: f64::from(successes) / f64::from(trials),
            ci_low: interval.low,
            ci_high: interval.high,
            successes,
            trials,
        })
    }
}

impl fmt::Display for Rate {
    /// `95% (19/20, 95% CI 76–99%)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = FigureInterval {
            value: self.value,
            ci_low: self.ci_low,
            ci_high: self.ci_high,
        };
        let text = e.percent();
        // `95% (95% CI 76–99%)` with the counts put in front of the interval.
        let (head, interval) = text.split_once(" (").unwrap_or((&text, ")"));
        write!(f, "{head} ({}/{}, {interval}", self.successes, self.trials)
    }
}

/// The judge's measurement on one question type: what its calibration sets say of its verdicts on
/// questions of that type (the sets measured with the judge in use, edited sets left out).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// The question type measured.
    pub question_type: String,
    /// The share of verdicts that agree with their label.
    pub accuracy: Rate,
    /// Of the items labelled yes, the share the judge said yes to; `None` when none is labelled yes.
    pub tpr: Option<Rate>,
    /// Of the items labelled no, the share the judge said no to; `None` when none is labelled no.
    pub tnr: Option<Rate>,
}

impl Measurement {
    /// The measurement of `question_type` from its agreement figures; `None` when nothing was counted.
    pub(crate) fn of(question_type: &str, agreement: &Agreement) -> Option<Measurement> {
        let c = &agreement.counts;
        Some(Measurement {
            question_type: question_type.to_string(),
            accuracy: Rate::of(c.agreed(), c.total())?,
            tpr: Rate::of(c.true_yes, c.labelled_yes()),
            tnr: Rate::of(c.true_no, c.labelled_no()),
        })
    }
}

impl fmt::Display for Measurement {
    /// `on factual_presence questions: accuracy 95% (19/20, 95% CI 76–99%), TPR ..., TNR ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let or_na = |r: &Option<Rate>| r.map_or_else(|| "n/a".to_string(), |r| r.to_string());
        write!(
            f,
            "on {} questions: accuracy {}, TPR {}, TNR {}",
            self.question_type,
            self.accuracy,
            or_na(&self.tpr),
            or_na(&self.tnr)
        )
    }
}

/// How the judge's answers to one question asked several times (`judge_samples`) split: the verdict is
/// the majority's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Votes {
    /// Answers that agree with the verdict.
    pub agreeing: u32,
    /// Times the question was asked.
    pub asked: u32,
}

impl Votes {
    /// The majority of `answers` (`true` for "yes"; an odd number of them) and how many agree with it.
    pub(crate) fn of(answers: &[bool]) -> (bool, Votes) {
        let yes = answers.iter().filter(|&&a| a).count() as u32;
        let asked = answers.len() as u32;
        let majority = 2 * yes > asked;
        let agreeing = if majority { yes } else { asked - yes };
        (majority, Votes { agreeing, asked })
    }

    /// The share of answers that agree with the verdict.
    pub fn agreement(&self) -> f64 {
        f64::from(self.agreeing) / f64::from(self.asked.max(1))
    }
}

impl fmt::Display for Votes {
    /// `4/5`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.agreeing, self.asked)
    }
}

/// Why a verdict is advisory: nothing says its judge gets such questions right often enough.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Advisory {
    /// No calibration result of the judge in use measures this type of question.
    Unmeasured {
        /// The question's type as the judge gave it (`None` when it gave none).
        question_type: Option<String>,
    },
    /// The lower end of the accuracy's 95% interval is below `[judge] min_accuracy`.
    BelowMinimum {
        /// The question type.
        question_type: String,
        /// The lower end of the accuracy's interval.
        accuracy_low: f64,
        /// `[judge] min_accuracy`.
        min_accuracy: f64,
    },
    /// Asked several times, the judge's answers agreed less than `[judge] min_agreement`.
    LowAgreement {
        /// How the answers split.
        votes: Votes,
        /// `[judge] min_agreement`.
        min_agreement: f64,
    },
}

impl Advisory {
    /// Whether a verdict measured as `measurement` (on `question_type`) is advisory at `min_accuracy`.
    pub(crate) fn of(
        question_type: Option<&str>,
        measurement: Option<&Measurement>,
        min_accuracy: f64,
    ) -> Option<Advisory> {
        match measurement {
            None => Some(Advisory::Unmeasured {
                question_type: question_type.map(str::to_string),
            }),
            // The tolerance keeps 19/20 (lower end 0.7639...) and a minimum written 0.7 apart from
            // rounding.
            Some(m) if m.accuracy.ci_low + 1e-12 < min_accuracy => Some(Advisory::BelowMinimum {
                question_type: m.question_type.clone(),
                accuracy_low: m.accuracy.ci_low,
                min_accuracy,
            }),
            Some(_) => None,
        }
    }

    /// Whether answers that split as `votes` leave a verdict advisory at `min_agreement`.
    pub(crate) fn of_votes(votes: Votes, min_agreement: f64) -> Option<Advisory> {
        (votes.agreement() + 1e-12 < min_agreement).then_some(Advisory::LowAgreement {
            votes,
            min_agreement,
        })
    }
}

impl fmt::Display for Advisory {
    /// `advisory: this judge is not measured on avoidance questions`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Advisory::Unmeasured {
                question_type: Some(kind),
            } => write!(
                f,
                "advisory: this judge is not measured on {kind} questions"
            ),
            Advisory::Unmeasured {
                question_type: None,
            } => write!(
                f,
                "advisory: the judge gave no question type, and no measurement applies"
            ),
            Advisory::LowAgreement {
                votes,
                min_agreement,
            } => write!(
                f,
                "advisory: the judge agreed with itself on {votes} answers, below [judge] min_agreement {}",
                percent(*min_agreement)
            ),
            Advisory::BelowMinimum {
                question_type,
                accuracy_low,
                min_accuracy,
            } => write!(
                f,
                "advisory: this judge's accuracy on {question_type} questions may be as low as {} (95% CI), below \
                 [judge] min_accuracy {}",
                percent((accuracy_low * 1000.0).round() / 1000.0),
                percent(*min_accuracy)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::agreement::{Confusion, agreement};

    #[test]
    fn the_majority_decides_and_its_agreement_is_counted() {
        assert_eq!(
            Votes::of(&[true, false, true]),
            (
                true,
                Votes {
                    agreeing: 2,
                    asked: 3
                }
            )
        );
        let (no, votes) = Votes::of(&[false, false, true, false, false]);
        assert!(!no);
        assert_eq!(votes.to_string(), "4/5");
        // 4/5 = 0.8 clears 0.8; 2/3 does not.
        assert_eq!(Advisory::of_votes(votes, 0.8), None);
        let split = Votes::of(&[true, false, true]).1;
        assert_eq!(
            Advisory::of_votes(split, 0.8).unwrap().to_string(),
            "advisory: the judge agreed with itself on 2/3 answers, below [judge] min_agreement 80%"
        );
    }

    #[test]
    fn nineteen_of_twenty_clears_seventy_percent_and_eighteen_does_not() {
        // Hand-computed Wilson lower ends (z = 1.96): 10/10 -> 0.7225, 19/20 -> 0.7639, 18/20 ->
        // 0.6990, 9/10 -> 0.5958.
        for (right, of, low) in [
            (10, 10, 0.7225),
            (19, 20, 0.7639),
            (18, 20, 0.6990),
            (9, 10, 0.5958),
        ] {
            let r = Rate::of(right, of).unwrap();
            assert!((r.ci_low - low).abs() < 5e-4, "{right}/{of}: {r:?}");
        }
        let measured = |yes_right, yes_wrong, no_wrong, no_right| {
            Measurement::of(
                "avoidance",
                &agreement(&Confusion::of(yes_right, yes_wrong, no_wrong, no_right)),
            )
            .unwrap()
        };
        let ten = measured(5, 0, 0, 5);
        let nineteen = measured(10, 1, 0, 9);
        let eighteen = measured(9, 1, 1, 9);
        assert_eq!(Advisory::of(Some("avoidance"), Some(&ten), 0.7), None);
        assert_eq!(Advisory::of(Some("avoidance"), Some(&nineteen), 0.7), None);
        assert!(matches!(
            Advisory::of(Some("avoidance"), Some(&eighteen), 0.7),
            Some(Advisory::BelowMinimum { .. })
        ));
        assert_eq!(
            Advisory::of(Some("tone_style"), None, 0.7),
            Some(Advisory::Unmeasured {
                question_type: Some("tone_style".into())
            })
        );
        assert_eq!(
            nineteen.to_string(),
            "on avoidance questions: accuracy 95% (19/20, 95% CI 76–99%), TPR 91% (10/11, 95% CI 62–98%), \
             TNR 100% (9/9, 95% CI 70–100%)"
        );
        assert_eq!(
            Advisory::of(Some("avoidance"), Some(&eighteen), 0.7)
                .unwrap()
                .to_string(),
            "advisory: this judge's accuracy on avoidance questions may be as low as 69.9% (95% CI), below \
             [judge] min_accuracy 70%"
        );
    }
}
