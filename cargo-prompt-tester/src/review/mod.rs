//! `cargo prompt-tester review`: one screen per pending sample, in the terminal's alternate screen
//! and raw mode; each key that accepts or rejects writes at once (a review quit halfway keeps what was
//! decided). What was decided is printed after the terminal is restored.

pub mod compare;
mod screen;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Stdout, Write};

use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::style::{Attribute, ContentStyle, PrintStyledContent, Stylize};
use crossterm::terminal::{self, Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen};
use crossterm::{cursor, execute, queue};
use prompt_tester::_cargo_prompt_tester_support::{
    Label, PendingFile, PendingSample, SampleId, add_labels, judge_key_of, judge_of,
    question_type_of,
};

use crate::locate::Place;
use crate::settle::Verdict;
use screen::{Line, Position, Tone};

/// The keys, on the screen's last row.
const KEYS: &str = " a accept  r reject  s skip  A/R/S all left  d request diff  y/n judge right/wrong  ↑↓ scroll  q quit ";

/// `cargo prompt-tester review`.
pub fn run(place: &Place) -> anyhow::Result<()> {
    let files = place.layout.pending()?;
    let items: Vec<(usize, PendingSample)> = files
        .iter()
        .enumerate()
        .flat_map(|(i, f)| f.samples.iter().cloned().map(move |s| (i, s)))
        .collect();
    if items.is_empty() {
        println!(
            "no pending recordings (in {})",
            place.shown(&place.layout.pending_dir)
        );
        return Ok(());
    }
    let mut review = Review {
        place,
        files: &files,
        items,
        at: 0,
        request_diff: false,
        scroll: 0,
        log: Vec::new(),
        counts: [0; 3],
        labelled: Vec::new(),
    };
    let outcome = match Terminal::enter() {
        Ok(terminal) => {
            let outcome = review.run(&terminal);
            drop(terminal);
            outcome
        }
        Err(e) => Err(e.into()),
    };
    for line in &review.log {
        println!("{line}");
    }
    let [accepted, rejected, skipped] = review.counts;
    let left = review.items.len() - review.at + skipped;
    println!("accepted {accepted}, rejected {rejected}, skipped {skipped}");
    if left > 0 {
        println!("{left} still pending: `cargo prompt-tester review` shows them again");
    }
    outcome
}

/// What a key asks for.
#[derive(Debug, PartialEq, Eq)]
enum Flow {
    Stay,
    Quit,
}

/// The review's state: the samples, where it is, what it showed and did.
struct Review<'a> {
    place: &'a Place,
    files: &'a [PendingFile],
    /// Each sample with the index of its pending file.
    items: Vec<(usize, PendingSample)>,
    /// The sample on screen; `items.len()` when every one is decided.
    at: usize,
    request_diff: bool,
    /// The first row shown.
    scroll: usize,
    /// A line per decision, printed after the review.
    log: Vec<String>,
    /// Accepted, rejected, skipped.
    counts: [usize; 3],
    /// The judge answers of the sample on screen labelled so far: question, right.
    labelled: Vec<(String, bool)>,
}

impl Review<'_> {
    fn run(&mut self, terminal: &Terminal) -> anyhow::Result<()> {
        let mut out = std::io::stdout();
        while self.at < self.items.len() {
            self.draw(&mut out, terminal)?;
            if let Event::Key(key) = event::read()?
                && key.kind == KeyEventKind::Press
                && self.key(key)? == Flow::Quit
            {
                break;
            }
        }
        Ok(())
    }

    /// Does what `key` says.
    fn key(&mut self, key: KeyEvent) -> anyhow::Result<Flow> {
        let page = terminal::size().map_or(10, |(_, h)| usize::from(h.saturating_sub(2)).max(1));
        match key.code {
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                return Ok(Flow::Quit);
            }
            KeyCode::Char('q') | KeyCode::Esc => return Ok(Flow::Quit),
            KeyCode::Char('a') => self.decide(Some(Verdict::Accept), false)?,
            KeyCode::Char('r') => self.decide(Some(Verdict::Reject), false)?,
            KeyCode::Char('s') => self.decide(None, false)?,
            KeyCode::Char('A') => self.decide(Some(Verdict::Accept), true)?,
            KeyCode::Char('R') => self.decide(Some(Verdict::Reject), true)?,
            KeyCode::Char('S') => self.decide(None, true)?,
            KeyCode::Char('d') => self.request_diff = !self.request_diff,
            KeyCode::Char('y') => self.label(true)?,
            KeyCode::Char('n') => self.label(false)?,
            KeyCode::Down | KeyCode::Char('j') => self.scroll += 1,
            KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll += page,
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(page),
            KeyCode::Home => self.scroll = 0,
            KeyCode::End => self.scroll = usize::MAX,
            _ => {}
        }
        Ok(Flow::Stay)
    }

    /// Accepts, rejects or (`None`) skips the sample on screen, or with `all` every one left, writing
    /// at once: one rewrite per pending file.
    fn decide(&mut self, verdict: Option<Verdict>, all: bool) -> anyhow::Result<()> {
        let end = if all { self.items.len() } else { self.at + 1 };
        let mut by_file: BTreeMap<usize, BTreeSet<SampleId>> = BTreeMap::new();
        for (file, sample) in &self.items[self.at..end] {
            by_file.entry(*file).or_default().insert(sample.id.clone());
        }
        for (file, ids) in by_file {
            let file = &self.files[file];
            let chosen = |id: &SampleId| ids.contains(id);
            let (settled, done, slot) = match verdict {
                Some(Verdict::Accept) => (file.accept(chosen)?.samples, "accepted", 0),
                Some(Verdict::Reject) => (file.reject(chosen)?.samples, "rejected", 1),
                None => (ids.iter().cloned().collect(), "skipped", 2),
            };
            self.counts[slot] += settled.len();
            let cassette = self.place.shown(&file.cassette);
            self.log
                .extend(settled.iter().map(|s| format!("{done} {s} ({cassette})")));
        }
        self.at = end;
        self.scroll = 0;
        self.labelled.clear();
        Ok(())
    }

    /// Labels the next judge answer of the sample on screen (its new answers, in question order) right or
    /// wrong, written at once into its labels file (beside its suite, else beside its cassette).
    fn label(&mut self, right: bool) -> anyhow::Result<()> {
        let (file, sample) = &self.items[self.at];
        let next = screen::judged(sample)
            .into_iter()
            .find(|(q, _)| !self.labelled.iter().any(|(l, _)| l == q));
        let Some((question, judged)) = next else {
            return Ok(());
        };
        let path = self
            .place
            .layout
            .labels_path(&sample.id.test, &self.files[*file].cassette);
        let shown = self.place.shown(&path);
        let Some(judge_key) = judge_key_of(sample.new_verdict.as_ref(), &sample.new, &question)
        else {
            self.log.push(format!(
                "cannot label \"{question}\" of {}: no judge call of it is recorded, and a label names the \
                 judge call it judges; record it again to label it",
                sample.id
            ));
            return Ok(());
        };
        let label = Label {
            trial: sample.id.test.clone(),
            sample: sample.id.run,
            question: question.clone(),
            judged,
            right,
            random: false,
            question_type: question_type_of(sample.new_verdict.as_ref(), &question),
            judge: judge_of(&sample.new),
            judge_settings: sample
                .new_verdict
                .as_ref()
                .and_then(|v| v.judge_settings.clone()),
            judge_key,
        };
        add_labels(&path, &shown, &[label])?;
        let said = if right { "right" } else { "wrong" };
        self.log.push(format!(
            "labelled the judge {said} on \"{question}\" of {} ({shown})",
            sample.id
        ));
        self.labelled.push((question, right));
        Ok(())
    }

    /// Draws the sample on screen, from row `scroll`, and the keys on the last row.
    fn draw(&mut self, out: &mut Stdout, terminal: &Terminal) -> std::io::Result<()> {
        let (width, height) = terminal.size();
        let (file, sample) = &self.items[self.at];
        let file = &self.files[*file];
        let at = Position {
            index: self.at + 1,
            total: self.items.len(),
            request_diff: self.request_diff,
        };
        let paths = (
            self.place.shown(&file.cassette),
            self.place.shown(&file.pending),
        );
        let prices = &self.place.layout.prices;
        let mut lines = screen::lines(sample, (&paths.0, &paths.1), at, &|e, r| prices.cost(e, r));
        screen::labels(&mut lines, sample, &self.labelled);
        let rows = wrap(&lines, width);
        let body = usize::from(height.saturating_sub(1));
        self.scroll = self.scroll.min(rows.len().saturating_sub(body));
        queue!(out, Clear(ClearType::All))?;
        for (r, row) in rows.iter().skip(self.scroll).take(body).enumerate() {
            queue!(out, cursor::MoveTo(0, r as u16))?;
            for (tone, text) in &row.0 {
                queue!(out, PrintStyledContent(styled(*tone).apply(text.as_str())))?;
            }
        }
        // First, so a narrow terminal cuts the keys rather than the sign that there is more.
        let more = if self.scroll + body < rows.len() {
            " ↓ more "
        } else {
            ""
        };
        let footer: String = format!("{more}{KEYS}")
            .chars()
            .take(usize::from(width))
            .collect();
        queue!(
            out,
            cursor::MoveTo(0, height.saturating_sub(1)),
            PrintStyledContent(footer.reverse())
        )?;
        out.flush()
    }
}

/// How a tone looks.
fn styled(tone: Tone) -> ContentStyle {
    let style = ContentStyle::new();
    match tone {
        Tone::Plain => style,
        Tone::Title => style.attribute(Attribute::Bold),
        Tone::Heading => style.attribute(Attribute::Bold).cyan(),
        Tone::Dim => style.dark_grey(),
        Tone::Added => style.green(),
        Tone::Removed => style.red(),
    }
}

/// `lines` cut into rows of at most `width` characters, so nothing is lost off the right edge.
fn wrap(lines: &[Line], width: u16) -> Vec<Line> {
    let width = usize::from(width.max(1));
    let mut rows = Vec::new();
    for line in lines {
        let mut row = Line::default();
        let mut used = 0;
        for (tone, text) in &line.0 {
            let mut piece = String::new();
            for c in text.chars() {
                if used == width {
                    if !piece.is_empty() {
                        row.0.push((*tone, std::mem::take(&mut piece)));
                    }
                    rows.push(std::mem::take(&mut row));
                    used = 0;
                }
                piece.push(c);
                used += 1;
            }
            row.0.push((*tone, piece));
        }
        rows.push(row);
    }
    rows
}

/// The terminal in raw mode on the alternate screen, restored when dropped, and on a panic.
struct Terminal;

impl Terminal {
    fn enter() -> std::io::Result<Self> {
        terminal::enable_raw_mode()?;
        execute!(std::io::stdout(), EnterAlternateScreen, cursor::Hide)?;
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
        Ok(Self)
    }

    /// Columns and rows (80 x 24 when the terminal does not say).
    fn size(&self) -> (u16, u16) {
        terminal::size().unwrap_or((80, 24))
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        restore();
    }
}

fn restore() {
    let _ = execute!(std::io::stdout(), LeaveAlternateScreen, cursor::Show);
    let _ = terminal::disable_raw_mode();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_every_character_and_its_tone() {
        let line = Line(vec![
            (Tone::Plain, "abcd".into()),
            (Tone::Added, "efg".into()),
        ]);
        let rows = wrap(&[line, Line::default()], 3);
        let texts: Vec<String> = rows.iter().map(Line::text).collect();
        assert_eq!(texts, ["abc", "def", "g", ""]);
        assert_eq!(
            rows[1].0,
            [(Tone::Plain, "d".into()), (Tone::Added, "ef".into())]
        );
    }
}
