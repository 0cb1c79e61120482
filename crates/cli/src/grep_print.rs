//! Printing grep results as ripgrep does: `path:line:text` for matching
//! lines, `path-line-text` for context, `--` between groups that do not
//! touch, `path:count` and bare paths in the count and files modes, and
//! with colour the path in magenta, line numbers in green and matches in
//! bold red: ripgrep's default colours, written through `termcolor` as
//! ripgrep writes them, so the bytes are the same. `--json` is
//! `grep_json`'s.

use std::{io, io::Write, ops::Range};

use natives_scan::{
    Error,
    grep::{GrepMatch, GrepMode, Highlighter},
};

use termcolor::{Ansi, Color, ColorSpec, NoColor, WriteColor};

use crate::grep_request::Request;

/// Prints results in order, remembering where the last group ended.
pub struct Printer<'a> {
    request: &'a Request,
    /// Finds the matches to colour inside a printed line.
    highlighter: Option<Highlighter>,
    /// The file and line last printed, to place group separators.
    last: Option<(Vec<u8>, u64)>,
    /// ripgrep's default colours.
    colours: Colours,
}

/// How paths, line numbers and matches are coloured.
struct Colours {
    path: ColorSpec,
    number: ColorSpec,
    matched: ColorSpec,
}

impl Colours {
    /// ripgrep's defaults.
    fn ripgrep() -> Colours {
        let mut path = ColorSpec::new();
        path.set_fg(Some(Color::Magenta));
        let mut number = ColorSpec::new();
        number.set_fg(Some(Color::Green));
        let mut matched = ColorSpec::new();
        matched.set_fg(Some(Color::Red)).set_bold(true);
        Colours {
            path,
            number,
            matched,
        }
    }
}

/// How one line is printed: `:` for a result, `-` for context, and the
/// parts of its text to colour as matches.
struct Line<'t> {
    number: u64,
    separator: char,
    text: &'t str,
    matches: &'t [Range<usize>],
}

impl Printer<'_> {
    /// A printer for `request`; with colour, the pattern is compiled once
    /// more to find the matches inside each printed line.
    pub fn new(request: &Request) -> Result<Printer<'_>, Error> {
        let highlights = request.colour
            && request.options.mode == GrepMode::Content
            && !request.options.invert_match
            && !request.options.only_matching;
        let highlighter = match highlights {
            true => Some(Highlighter::new(&request.options)?),
            false => None,
        };
        Ok(Printer {
            request,
            highlighter,
            last: None,
            colours: Colours::ripgrep(),
        })
    }

    /// Print one result, coloured when the request says so.
    pub fn print(&mut self, out: &mut dyn Write, found: &GrepMatch) -> io::Result<()> {
        let (mut ansi, mut plain);
        let out: &mut dyn WriteColor = match self.request.colour {
            true => {
                ansi = Ansi::new(out);
                &mut ansi
            }
            false => {
                plain = NoColor::new(out);
                &mut plain
            }
        };
        let path = self.request.shown_path(&found.path);
        match self.request.options.mode {
            GrepMode::Content => self.content(out, &path, found),
            GrepMode::Count => {
                self.path(out, &path)?;
                writeln!(out, ":{}", found.match_count)
            }
            GrepMode::FilesWithMatches => {
                self.path(out, &path)?;
                out.write_all(b"\n")
            }
        }
    }

    fn content(
        &mut self,
        out: &mut dyn WriteColor,
        path: &[u8],
        found: &GrepMatch,
    ) -> io::Result<()> {
        let options = &self.request.options;
        let first = found
            .context_before
            .first()
            .map_or(found.line_number, |(n, _)| *n);
        let has_context = options.context_before + options.context_after > 0;
        let joins = self
            .last
            .as_ref()
            .is_some_and(|(p, n)| p == path && first <= n + 1);
        if has_context && self.last.is_some() && !joins {
            out.write_all(b"--\n")?;
        }
        for (number, text) in &found.context_before {
            self.line(out, path, &context(*number, text))?;
        }
        let last = self.result_lines(out, path, found)?;
        for (number, text) in &found.context_after {
            self.line(out, path, &context(*number, text))?;
        }
        let end = found.context_after.last().map_or(last, |(n, _)| *n);
        self.last = Some((path.to_vec(), end));
        Ok(())
    }

    /// The result's own lines (several for a multi-line match); the number
    /// of the last one.
    fn result_lines(
        &self,
        out: &mut dyn WriteColor,
        path: &[u8],
        found: &GrepMatch,
    ) -> io::Result<u64> {
        let matches = self.matches(&found.line);
        let mut offset = 0;
        let mut number = found.line_number;
        for (index, text) in found.line.split('\n').enumerate() {
            number = found.line_number + index as u64;
            let shifted: Vec<Range<usize>> = matches
                .iter()
                .filter_map(|m| within(m, offset, text))
                .collect();
            let line = Line {
                number,
                separator: ':',
                text,
                matches: &shifted,
            };
            self.line(out, path, &line)?;
            offset += text.len() + 1;
        }
        Ok(number)
    }

    /// The parts of a result's text to colour: all of it for a match printed
    /// alone (`-o`), none for an inverted line.
    fn matches(&self, text: &str) -> Vec<Range<usize>> {
        let options = &self.request.options;
        match &self.highlighter {
            Some(highlighter) => highlighter.ranges(text),
            None if self.request.colour && options.only_matching && !options.invert_match => {
                std::iter::once(0..text.len()).collect()
            }
            None => Vec::new(),
        }
    }

    fn line(&self, out: &mut dyn WriteColor, path: &[u8], line: &Line<'_>) -> io::Result<()> {
        self.path(out, path)?;
        let separator = line.separator;
        if self.request.line_numbers {
            write!(out, "{separator}")?;
            coloured(
                out,
                &self.colours.number,
                line.number.to_string().as_bytes(),
            )?;
        }
        write!(out, "{separator}")?;
        let mut at = 0;
        for range in line.matches {
            out.write_all(&line.text.as_bytes()[at..range.start])?;
            coloured(
                out,
                &self.colours.matched,
                line.text[range.clone()].as_bytes(),
            )?;
            at = range.end;
        }
        writeln!(out, "{}", &line.text[at..])
    }

    fn path(&self, out: &mut dyn WriteColor, path: &[u8]) -> io::Result<()> {
        coloured(out, &self.colours.path, path)
    }
}

/// `text` in `colour` (nothing is coloured when `out` does not colour).
fn coloured(out: &mut dyn WriteColor, colour: &ColorSpec, text: &[u8]) -> io::Result<()> {
    out.set_color(colour)?;
    out.write_all(text)?;
    out.reset()
}

/// A context line: printed with `-`, nothing coloured.
fn context(number: u64, text: &str) -> Line<'_> {
    Line {
        number,
        separator: '-',
        text,
        matches: &[],
    }
}

/// The part of `range` (in the whole text) inside `line`, which starts at
/// `offset`, relative to the line; `None` when it lies outside the line or
/// would split a character.
fn within(range: &Range<usize>, offset: usize, line: &str) -> Option<Range<usize>> {
    let clip = |at: usize| at.clamp(offset, offset + line.len()) - offset;
    let (start, end) = (clip(range.start), clip(range.end));
    let whole = line.is_char_boundary(start) && line.is_char_boundary(end);
    (start < end && whole).then_some(start..end)
}
