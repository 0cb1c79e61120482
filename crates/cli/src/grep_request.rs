//! A parsed `natives grep`: the library's options from the command line,
//! and how the results are to be printed. Both printers (`grep_print`,
//! `grep_json`) and the command read it.

use std::{
    ffi::OsString,
    io::IsTerminal,
    sync::atomic::{AtomicBool, Ordering},
};

use clap::ColorChoice;
use natives_scan::grep::{GrepMode, GrepOptions};
use termcolor::WriteColor;

use crate::{args::GrepArgs, common::Positionals};

/// A parsed `natives grep`: the library's options and how to print.
pub struct Request {
    pub options: GrepOptions,
    pub positionals: Positionals,
    /// PATH names a file, as the search resolved it (before any result):
    /// print it as typed instead of joining.
    single_file: AtomicBool,
    pub json: bool,
    pub line_numbers: bool,
    pub colour: bool,
    pub stats: bool,
    pub files: bool,
}

impl Request {
    /// The path printed for `relative`, a path under the search root.
    pub fn shown_path(&self, relative: &[u8]) -> Vec<u8> {
        match (
            &self.positionals.prefix,
            self.single_file.load(Ordering::Relaxed),
        ) {
            (Some(file), true) => file.as_encoded_bytes().to_vec(),
            _ => self.positionals.display(relative),
        }
    }

    /// Take the library's answer to whether PATH names a file: the search
    /// (or listing) tells it before its first result.
    pub fn resolved(&self, path_is_file: bool) {
        self.single_file.store(path_is_file, Ordering::Relaxed);
    }

    /// The request `args` make; `--files` with both PATTERN and PATH is
    /// refused.
    pub fn from_args(args: GrepArgs) -> Result<Request, String> {
        let (pattern, prefix) = match (args.files, args.pattern, args.path) {
            (true, path, None) => (String::new(), path.map(OsString::from)),
            (true, _, Some(_)) => {
                return Err("grep: --files takes one PATH and no PATTERN".to_owned());
            }
            (false, pattern, path) => (pattern.unwrap_or_default(), path),
        };
        let positionals = Positionals { pattern, prefix };
        let mut options = GrepOptions::new(positionals.pattern.clone(), positionals.path());
        // Results are printed as they are decided; none need keeping.
        options.retain_matches = false;
        args.walk
            .override_policy(&mut options.include_hidden, &mut options.use_gitignore);
        options.ignore_case = args.ignore_case;
        options.smart_case = args.smart_case;
        options.literal = args.fixed_strings;
        options.multiline = args.multiline;
        options.word_regexp = args.word_regexp;
        options.invert_match = args.invert_match;
        options.only_matching = args.only_matching;
        if let Some(lines) = args.context {
            options.context(lines);
        }
        options.context_before = args.before_context.unwrap_or(options.context_before);
        options.context_after = args.after_context.unwrap_or(options.context_after);
        options.globs = args.glob;
        options.file_types = args.file_type;
        options.file_types_not = args.type_not;
        options.max_count_per_file = args.max_count.map(|max| max as u64);
        options.max_count = args.max_results;
        options.mode = match (args.count, args.files_with_matches) {
            (true, _) => GrepMode::Count,
            (_, true) => GrepMode::FilesWithMatches,
            _ => GrepMode::Content,
        };
        Ok(Request {
            options,
            positionals,
            single_file: AtomicBool::new(false),
            json: args.json,
            line_numbers: !args.no_line_number,
            colour: colour(args.color),
            stats: args.stats,
            files: args.files,
        })
    }
}

/// Whether to colour: always, never, or (as ripgrep decides) when standard
/// output is a terminal and `termcolor` finds colours wanted there (`TERM`
/// names a terminal that is not `dumb`, `NO_COLOR` is not set).
fn colour(choice: ColorChoice) -> bool {
    let choice = match choice {
        ColorChoice::Always => termcolor::ColorChoice::Always,
        ColorChoice::Never => termcolor::ColorChoice::Never,
        ColorChoice::Auto if std::io::stdout().is_terminal() => termcolor::ColorChoice::Auto,
        ColorChoice::Auto => termcolor::ColorChoice::Never,
    };
    termcolor::BufferWriter::stdout(choice)
        .buffer()
        .supports_color()
}
