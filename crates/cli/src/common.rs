//! What every command shares: positional PATTERN [PATH], the printed path,
//! `--json` lines, short ages and sizes, and an output that ends quietly on a closed
//! pipe.

use std::{
    ffi::OsString,
    io::{self, BufRead, BufWriter, StdoutLock, Write},
    path::PathBuf,
};

use natives_scan::Unreadable;
use serde::Serialize;

/// The `PATTERN [PATH]` (or `QUERY [PATH]`) positionals of a command.
pub struct Positionals {
    /// The first positional.
    pub pattern: String,
    /// PATH as typed, prefixed to every printed path.
    pub prefix: Option<OsString>,
}

impl Positionals {
    /// The path to search: PATH, or the current directory.
    pub fn path(&self) -> PathBuf {
        self.prefix
            .as_ref()
            .map_or_else(|| PathBuf::from("."), PathBuf::from)
    }

    /// `PATH/relative`, or `relative` when no PATH was given.
    pub fn display(&self, relative: &[u8]) -> Vec<u8> {
        let Some(prefix) = &self.prefix else {
            return relative.to_vec();
        };
        let mut path = prefix.as_encoded_bytes().to_vec();
        if !path.ends_with(b"/") {
            path.push(b'/');
        }
        path.extend_from_slice(relative);
        path
    }
}

/// Name every path a search could not enter or read on standard error, as
/// `rg` does (`natives: PATH: why`, PATH printed as results are); `true`
/// when there was any.
pub fn report_unreadable(positionals: &Positionals, unreadable: &[Unreadable]) -> bool {
    let mut err = io::stderr().lock();
    for record in unreadable {
        let path = match record.path.is_empty() {
            true => positionals.path().into_os_string().into_encoded_bytes(),
            false => positionals.display(&record.path),
        };
        let _ = err.write_all(b"natives: ");
        let _ = err.write_all(&path);
        let _ = writeln!(err, ": {}", record.message);
    }
    !unreadable.is_empty()
}

/// One `--json` line: a result, or the closing summary, tagged with its
/// `type`; the fields are the library's view of it.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum JsonLine<M, S> {
    /// A result.
    Match(M),
    /// What was found besides the results.
    Summary(S),
}

/// Write `line` as one line of JSON.
pub fn write_json(out: &mut dyn Write, line: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, line)?;
    out.write_all(b"\n")
}

/// Buffered standard output that remembers its first write error.
pub struct Output {
    out: BufWriter<StdoutLock<'static>>,
    error: Option<io::Error>,
}

impl Output {
    /// Standard output, locked for the command's lifetime.
    pub fn stdout() -> Output {
        Output {
            out: BufWriter::new(io::stdout().lock()),
            error: None,
        }
    }

    /// Write one record, unless an earlier write already failed.
    pub fn write(&mut self, record: impl FnOnce(&mut dyn Write) -> io::Result<()>) {
        if self.error.is_none()
            && let Err(err) = record(&mut self.out)
        {
            self.error = Some(err);
        }
    }

    /// Send what is buffered on now, unless an earlier write failed.
    pub fn flush(&mut self) {
        self.write(|w| w.flush());
    }

    /// Flush; a closed pipe (`| head`) is not an error.
    pub fn finish(mut self) -> Result<(), String> {
        let result = match self.error.take() {
            Some(err) => Err(err),
            None => self.out.flush(),
        };
        match result {
            Err(err) if err.kind() != io::ErrorKind::BrokenPipe => {
                Err(format!("writing output: {err}"))
            }
            _ => Ok(()),
        }
    }
}

/// Ask `question` on standard error and read the answer from standard
/// input: only `y` or `yes` (any case) agrees.
pub fn ask(question: &str) -> Result<bool, String> {
    eprint!("{question} [y/N] ");
    let mut answer = String::new();
    io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|err| format!("reading the answer: {err}"))?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// A duration in milliseconds as a short human age: `42s`, `5m`, `3h`, `2d`.
pub fn age(ms: u64) -> String {
    let seconds = ms / 1000;
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3600 => format!("{}m", seconds / 60),
        3600..86400 => format!("{}h", seconds / 3600),
        _ => format!("{}d", seconds / 86400),
    }
}

/// Bytes in the largest 1024-based unit that keeps the number at least 1.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let (mut size, mut unit) = (bytes as f64, 0);
    while size >= 1024.0 && unit + 1 < UNITS.len() {
        size /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{size:.1} {}", UNITS[unit])
    }
}

/// Aligned columns: `headings`, then `rows`, each row followed by whatever
/// `after` writes for it (a note under it, say); the last column is never
/// padded.
pub fn write_table<const N: usize>(
    out: &mut dyn Write,
    headings: [&str; N],
    rows: &[[String; N]],
    after: &dyn Fn(usize, &mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut widths = headings.map(str::len);
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    write_row(out, &headings.map(str::to_owned), &widths)?;
    for (i, row) in rows.iter().enumerate() {
        write_row(out, row, &widths)?;
        after(i, out)?;
    }
    Ok(())
}

fn write_row<const N: usize>(
    out: &mut dyn Write,
    cells: &[String; N],
    widths: &[usize; N],
) -> io::Result<()> {
    let mut line = String::new();
    for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
        if i + 1 == cells.len() {
            line.push_str(cell);
        } else {
            line.push_str(&format!("{cell:<width$}  "));
        }
    }
    writeln!(out, "{}", line.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_path_table() {
        let table: &[(Option<&str>, &str, &str)] = &[
            (None, "a/b.rs", "a/b.rs"),
            (Some("src"), "a.rs", "src/a.rs"),
            (Some("src/"), "a.rs", "src/a.rs"),
            (Some("/abs"), "x", "/abs/x"),
        ];
        for &(prefix, relative, expected) in table {
            let positionals = Positionals {
                pattern: String::new(),
                prefix: prefix.map(OsString::from),
            };
            assert_eq!(
                positionals.display(relative.as_bytes()),
                expected.as_bytes()
            );
        }
    }

    #[test]
    fn human_sizes_table() {
        let table = [
            (0, "0 B"),
            (1023, "1023 B"),
            (1024, "1.0 KiB"),
            (1536, "1.5 KiB"),
            (5 << 30, "5.0 GiB"),
            (u64::MAX, "16777216.0 TiB"),
        ];
        for (bytes, expected) in table {
            assert_eq!(human_size(bytes), expected, "{bytes}");
        }
    }

    #[test]
    fn ages_are_short_and_human() {
        let table = [
            (0, "0s"),
            (59_999, "59s"),
            (60_000, "1m"),
            (3_599_999, "59m"),
            (3_600_000, "1h"),
            (86_400_000, "1d"),
        ];
        for (ms, expected) in table {
            assert_eq!(age(ms), expected, "{ms}");
        }
    }
}
