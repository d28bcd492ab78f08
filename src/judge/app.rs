//! The judge of an application test ([`AppRun`]): any text judged, the task it is told being the first
//! user message the recording endpoint saw for the sample.

use super::{JudgeVerdict, Judged};
use crate::run::{AppRun, RunError};

impl AppRun {
    /// The text as the judge sees it: the output, with the sample's task (noted by the endpoint) as
    /// the prompt; noted as the sample's output for the reports.
    fn judged<'a>(&'a self, text: &'a str, task: &'a str) -> Judged<'a> {
        self.scope.state().note_judged(text);
        Judged {
            scope: &self.scope,
            prompt: task,
            output: text,
            steps: None,
            inputs: None,
        }
    }

    /// Asks the judge one yes/no question about `text` (the application's answer), told as the task
    /// the first user message the endpoint saw for this sample. The same judge, options and failures
    /// as [`PromptRun::ask`](crate::PromptRun::ask).
    pub async fn ask(&self, text: &str, question: &str) -> Result<JudgeVerdict, RunError> {
        let task = self.scope.state().task().unwrap_or_default();
        self.judged(text, &task).ask(question).await
    }

    /// Asks the judge one yes/no question about this sample's trajectory so far: it reads, as the task,
    /// the first user message the endpoint saw, each step of [`AppRun::trajectory`] and the last model
    /// call's answer as the final answer, and quotes a step. The same judge, options and failures as
    /// [`PromptRun::ask_trajectory`](crate::PromptRun::ask_trajectory).
    pub async fn ask_trajectory(&self, question: &str) -> Result<JudgeVerdict, RunError> {
        let task = self.scope.state().task().unwrap_or_default();
        let trajectory = self.trajectory();
        let steps = trajectory.steps().join("\n");
        let answer = trajectory.calls().last().map_or("", |c| c.answer.as_str());
        Judged {
            scope: &self.scope,
            prompt: &task,
            output: answer,
            steps: Some(&steps),
            inputs: None,
        }
        .ask(question)
        .await
    }

    /// Asks every question about `text` in one judge call, as
    /// [`PromptRun::ask_all`](crate::PromptRun::ask_all) does.
    pub async fn ask_all(
        &self,
        text: &str,
        questions: &[&str],
    ) -> Result<Vec<JudgeVerdict>, RunError> {
        let task = self.scope.state().task().unwrap_or_default();
        self.judged(text, &task).ask_all(questions).await
    }

    /// Asks each question about `text` in its own judge call, concurrently, as
    /// [`PromptRun::ask_parallel`](crate::PromptRun::ask_parallel) does.
    pub async fn ask_parallel(
        &self,
        text: &str,
        questions: &[&str],
    ) -> Result<Vec<JudgeVerdict>, RunError> {
        let task = self.scope.state().task().unwrap_or_default();
        self.judged(text, &task).ask_parallel(questions).await
    }
}
