//! Parse errors in natives' own voice: `natives: COMMAND: what went wrong`
//! on one line, as every other error prints, with clap's "did you mean"
//! suggestion kept and a pointer to the command's `--help`. Scripts and
//! people read one format whether the parser or the library refused.
//!
//! Help and version requests are not errors: they print to standard output
//! and exit 0.

use std::{ffi::OsString, io::Write, process::ExitCode};

use clap::{
    CommandFactory,
    error::{ContextKind, ContextValue, Error, ErrorKind},
};

use crate::args::Cli;

/// Print what clap answered for `args` and give the exit code.
pub fn report(err: &Error, args: &[OsString]) -> ExitCode {
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) {
        let _ = err.print();
        return ExitCode::SUCCESS;
    }
    let path = command_path(args);
    let _ = writeln!(std::io::stderr(), "natives: {}", message(err, &path));
    ExitCode::from(2)
}

/// The subcommands named in `args` (`["cache", "prune"]`), as far as they
/// name real ones.
fn command_path(args: &[OsString]) -> Vec<String> {
    let mut command = Cli::command();
    let mut path = Vec::new();
    for arg in args.iter().skip(1).filter_map(|a| a.to_str()) {
        if command.get_subcommands().next().is_none() {
            break;
        }
        if arg.starts_with('-') {
            continue;
        }
        let Some(sub) = command.find_subcommand(arg) else {
            break;
        };
        path.push(sub.get_name().to_owned());
        command = sub.clone();
    }
    path
}

/// The one-line message for `err`, prefixed with the command it concerns.
fn message(err: &Error, path: &[String]) -> String {
    let prefix = match path {
        [] => String::new(),
        names => format!("{}: ", names.join(" ")),
    };
    let mut line = format!("{prefix}{}", what(err, path));
    if let Some(suggestion) = suggestion(err) {
        line.push_str(&format!(" (did you mean `{suggestion}`?)"));
    }
    if matches!(
        err.kind(),
        ErrorKind::UnknownArgument
            | ErrorKind::InvalidSubcommand
            | ErrorKind::MissingRequiredArgument
            | ErrorKind::MissingSubcommand
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let command = ["natives"]
            .into_iter()
            .chain(path.iter().map(String::as_str));
        line.push_str(&format!(
            "\nsee `{} --help`",
            command.collect::<Vec<_>>().join(" ")
        ));
    }
    line
}

/// What went wrong, in natives' words where the kind is a common one.
fn what(err: &Error, path: &[String]) -> String {
    let arg = text(err, ContextKind::InvalidArg).map(|a| spelled(&a));
    let value = text(err, ContextKind::InvalidValue).unwrap_or_default();
    let command = text(err, ContextKind::InvalidSubcommand).unwrap_or_default();
    let flag = arg
        .as_deref()
        .map_or("", |a| a.split(' ').next().unwrap_or(a));
    match err.kind() {
        ErrorKind::UnknownArgument if flag.starts_with('-') => format!("unknown option {flag}"),
        ErrorKind::UnknownArgument => format!("unexpected argument `{flag}`"),
        ErrorKind::InvalidSubcommand if path.is_empty() => format!("unknown command `{command}`"),
        ErrorKind::InvalidSubcommand => format!("unknown subcommand `{command}`"),
        ErrorKind::MissingRequiredArgument => {
            format!("missing {}", list(err, ContextKind::InvalidArg))
        }
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let noun = if path.is_empty() {
                "command"
            } else {
                "subcommand"
            };
            format!("missing {noun} ({})", subcommands(path))
        }
        ErrorKind::InvalidValue if value.is_empty() => format!("missing argument for {flag}"),
        ErrorKind::InvalidValue => format!(
            "{flag} takes {}, got `{value}`",
            list(err, ContextKind::ValidValue)
        ),
        ErrorKind::ValueValidation => match std::error::Error::source(err) {
            Some(why) => format!("{flag} {why}"),
            None => format!("{flag}: invalid value `{value}`"),
        },
        _ => clap_words(err),
    }
}

/// The subcommands of the command at `path`, as `a, b or c`.
fn subcommands(path: &[String]) -> String {
    let mut command = Cli::command();
    for name in path {
        if let Some(sub) = command.find_subcommand(name) {
            command = sub.clone();
        }
    }
    let names: Vec<String> = command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set())
        .map(|sub| sub.get_name().to_owned())
        .collect();
    joined(&names)
}

/// A context value as text.
fn text(err: &Error, kind: ContextKind) -> Option<String> {
    match err.get(kind)? {
        ContextValue::String(text) => Some(text.clone()),
        ContextValue::Strings(texts) => texts.first().cloned(),
        ContextValue::StyledStr(text) => Some(text.to_string()),
        _ => None,
    }
}

/// A context list (missing arguments, valid values) as `a, b or c`.
fn list(err: &Error, kind: ContextKind) -> String {
    let items: Vec<String> = match err.get(kind) {
        Some(ContextValue::Strings(texts)) => texts.iter().map(|t| spelled(t)).collect(),
        Some(ContextValue::String(text)) => vec![spelled(text)],
        _ => Vec::new(),
    };
    joined(&items)
}

/// `a`, `a or b`, `a, b or c`.
fn joined(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// An argument as the help spells it, without clap's angle brackets:
/// `--limit SIZE`, `DIR`.
fn spelled(arg: &str) -> String {
    arg.replace(['<', '>'], "")
}

/// clap's suggestion for a misspelled flag, subcommand or value.
fn suggestion(err: &Error) -> Option<String> {
    [
        ContextKind::SuggestedArg,
        ContextKind::SuggestedSubcommand,
        ContextKind::SuggestedValue,
    ]
    .into_iter()
    .find_map(|kind| text(err, kind))
}

/// clap's own first line for the rarer kinds, without its `error: `.
fn clap_words(err: &Error) -> String {
    let rendered = err.render().to_string();
    let first = rendered.lines().next().unwrap_or_default();
    first.strip_prefix("error: ").unwrap_or(first).to_owned()
}
