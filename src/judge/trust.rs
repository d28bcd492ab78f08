//! [`JudgeVerdict::require`], the one-line assertion whose failure shows the verdict and how far its
//! judge is measured on such questions (the measurement itself is `stats::trust`'s).

use std::fmt;

use super::JudgeVerdict;
use crate::config::AdvisoryPolicy;

/// A verdict that did not pass, from [`JudgeVerdict::require`]. It shows the question, the answer, the
/// reasoning, the quoted snippet and the judge's measurement on the question's type (or that there is
/// none: the verdict is advisory).
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeFailed {
    /// The verdict.
    pub verdict: Box<JudgeVerdict>,
}

impl JudgeFailed {
    /// Whether the sample errors rather than fails: an advisory verdict under `[judge] advisory =
    /// "error"`.
    pub(crate) fn errors(&self) -> bool {
        self.verdict.errors_when_required()
    }
}

impl fmt::Display for JudgeFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = &self.verdict;
        if self.errors() {
            write!(
                f,
                "the judge is not measured on this kind of question ([judge] advisory = \"error\"), and it \
                 answered {:?} to {:?}",
                v.answer, v.question
            )?;
        } else {
            write!(f, "the judge answered {:?} to {:?}", v.answer, v.question)?;
        }
        write!(
            f,
            "\n  reasoning: {}",
            v.reasoning.as_deref().unwrap_or("none given")
        )?;
        match &v.snippet {
            Some(s) => write!(f, "\n  snippet: {s:?}")?,
            None => write!(f, "\n  snippet: none")?,
        }
        match &v.measurement {
            Some(m) => write!(f, "\n  judge {}/{} {m}", v.judge_provider, v.judge_model)?,
            None => write!(f, "\n  judge {}/{}", v.judge_provider, v.judge_model)?,
        }
        if let Some(votes) = &v.votes {
            write!(f, "\n  asked {} times, {votes} answers agree", votes.asked)?;
        }
        if let Some(advisory) = &v.advisory {
            write!(f, "\n  {advisory}")?;
        }
        Ok(())
    }
}

impl std::error::Error for JudgeFailed {}

impl JudgeVerdict {
    /// Whether, failing, it errors the sample rather than fails it when required: advisory under
    /// `[judge] advisory = "error"`.
    pub(crate) fn errors_when_required(&self) -> bool {
        self.advisory.is_some() && self.on_advisory == AdvisoryPolicy::Error
    }

    /// The verdict when it passed, else a [`JudgeFailed`] that shows the question, the answer, the
    /// reasoning, the snippet and how far the judge is measured on such questions: the common case in
    /// one line.
    ///
    /// ```no_run
    /// # async fn body(run: prompt_tester::PromptRun) -> anyhow::Result<()> {
    /// run.ask("Is Alice mentioned?").await?.require()?;
    /// # Ok(()) }
    /// ```
    ///
    /// A failing advisory verdict (see [`JudgeVerdict::advisory`]) fails the sample, marked advisory
    /// (`[judge] advisory = "fail"`, the default); with `"warn"` it is returned as it is (its `passed`
    /// false): the sample does not fail on it, and the reports show the "no"; with `"error"` it errors
    /// the sample.
    pub fn require(self) -> Result<JudgeVerdict, JudgeFailed> {
        let reported = self.advisory.is_some() && self.on_advisory == AdvisoryPolicy::Warn;
        if self.passed || reported {
            Ok(self)
        } else {
            Err(JudgeFailed {
                verdict: Box::new(self),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::agreement::{Confusion, agreement};
    use crate::stats::trust::{Advisory, Measurement};

    fn no(measurement: Option<Measurement>, min_accuracy: f64) -> JudgeVerdict {
        let advisory = Advisory::of(Some("factual_presence"), measurement.as_ref(), min_accuracy);
        JudgeVerdict {
            question: "Is Alice mentioned?".into(),
            answer: "no".into(),
            passed: false,
            snippet: None,
            reasoning: Some("Only Bob is named.".into()),
            judge_model: "m".into(),
            judge_provider: "p".into(),
            judge_input_tokens: 1,
            judge_output_tokens: 1,
            judge_cost_usd: None,
            question_type: Some("factual_presence".into()),
            measurement,
            advisory,
            votes: None,
            on_advisory: AdvisoryPolicy::Fail,
        }
    }

    #[test]
    fn a_measured_no_shows_the_measurement_and_is_not_advisory() {
        // 19 of 20 right: 10 of 11 yes items, 9 of 9 no items.
        let measured = Measurement::of("factual_presence", &agreement(&Confusion::of(10, 1, 0, 9)));
        let failed = no(measured, 0.7).require().unwrap_err();
        assert!(!failed.errors());
        assert_eq!(
            failed.to_string(),
            "the judge answered \"no\" to \"Is Alice mentioned?\"\n  reasoning: Only Bob is named.\n  snippet: \
             none\n  judge p/m on factual_presence questions: accuracy 95% (19/20, 95% CI 76–99%), TPR 91% \
             (10/11, 95% CI 62–98%), TNR 100% (9/9, 95% CI 70–100%)"
        );
        // The same measurement under a stricter minimum leaves the verdict advisory.
        let measured = Measurement::of("factual_presence", &agreement(&Confusion::of(10, 1, 0, 9)));
        let text = no(measured, 0.8).require().unwrap_err().to_string();
        assert!(
            text.ends_with(
                "\n  advisory: this judge's accuracy on factual_presence questions may be as low as \
                 76.4% (95% CI), below [judge] min_accuracy 80%"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_split_majority_shows_its_votes_and_is_advisory_below_the_minimum_agreement() {
        use crate::stats::trust::Votes;
        let measured = Measurement::of("factual_presence", &agreement(&Confusion::of(10, 1, 0, 9)));
        let mut verdict = no(measured, 0.7);
        let (_, votes) = Votes::of(&[false, true, false]);
        verdict.votes = Some(votes);
        verdict.advisory = Advisory::of_votes(votes, 0.8);
        let text = verdict.require().unwrap_err().to_string();
        assert!(
            text.ends_with(
                "TNR 100% (9/9, 95% CI 70–100%)\n  asked 3 times, 2/3 answers agree\n  advisory: the judge \
                 agreed with itself on 2/3 answers, below [judge] min_agreement 80%"
            ),
            "{text}"
        );
    }

    #[test]
    fn an_advisory_no_fails_by_default_passes_through_under_warn_and_errors_under_error() {
        let mut verdict = no(None, 0.7);
        assert!(!verdict.clone().require().unwrap_err().errors());
        // "warn": returned as it is, still a "no"; a measured "no" fails whatever the policy.
        verdict.on_advisory = AdvisoryPolicy::Warn;
        assert!(!verdict.clone().require().unwrap().passed);
        let measured = Measurement::of("factual_presence", &agreement(&Confusion::of(10, 1, 0, 9)));
        let mut plain = no(measured, 0.7);
        plain.on_advisory = AdvisoryPolicy::Warn;
        assert!(plain.require().is_err());
        verdict.on_advisory = AdvisoryPolicy::Error;
        let failed = verdict.require().unwrap_err();
        assert!(failed.errors());
        // The judge noted it in the sample's state; the body failed with it.
        let ended = crate::engine::state::Ended {
            erroring_verdicts: vec![failed.to_string()],
            ..Default::default()
        };
        let body = crate::outcome::of_body(Err(anyhow::Error::new(failed)));
        let outcome = crate::outcome::classify(&ended, body);
        assert!(
            outcome.status() == crate::checks::SampleStatus::Errored
                && outcome
                    .message()
                    .is_some_and(|m| m.contains("not measured on factual_presence")),
            "{outcome:?}"
        );
        let mut yes = no(None, 0.7);
        yes.passed = true;
        assert!(yes.require().is_ok());
    }
}
