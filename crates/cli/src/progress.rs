//! A progress line for long passes (a prune, a search with `--stats`), on
//! standard error and only when standard error is a terminal: a pipe or a
//! log file never receives it, so scripts read the same bytes as before.
//!
//! When standard output is that terminal too, results are printed with the
//! line cleared first and drawn again after, so the two never mix.

use std::{
    borrow::Cow,
    io::{IsTerminal, stderr, stdout},
    time::Duration,
};

use indicatif::{ProgressBar, ProgressStyle};

/// How often the spinner turns while the work gives no news.
const TICK: Duration = Duration::from_millis(100);

/// A spinner with a message, or nothing when it would not be seen.
pub struct Progress {
    bar: Option<ProgressBar>,
    /// Standard output is the same terminal: printing clears the line first.
    shares_screen: bool,
}

impl Progress {
    /// A spinner saying `message`, drawn at once, when `wanted` and standard
    /// error is a terminal.
    pub fn spinner(wanted: bool, message: impl Into<Cow<'static, str>>) -> Progress {
        let shown = wanted && stderr().is_terminal();
        let bar = shown.then(|| {
            let bar = ProgressBar::new_spinner().with_message(message);
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.tick();
            bar.enable_steady_tick(TICK);
            bar
        });
        Progress {
            bar,
            shares_screen: shown && stdout().is_terminal(),
        }
    }

    /// Run `work` with a spinner saying `message` (at a terminal), cleared
    /// when it returns.
    pub fn around<R>(message: String, work: impl FnOnce() -> R) -> R {
        let progress = Progress::spinner(true, message);
        let result = work();
        progress.finish();
        result
    }

    /// Say what `message` writes from now on (written only when shown).
    pub fn say(&self, message: impl FnOnce() -> String) {
        if let Some(bar) = &self.bar {
            bar.set_message(message());
        }
    }

    /// Whether printing to standard output must go through [`Progress::print`].
    pub fn shares_screen(&self) -> bool {
        self.shares_screen
    }

    /// Run `print` (which writes to standard output and flushes) with the
    /// progress line out of its way.
    pub fn print<R>(&self, print: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) if self.shares_screen => bar.suspend(print),
            _ => print(),
        }
    }

    /// Remove the line: the work is done.
    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}
