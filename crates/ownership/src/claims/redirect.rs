//! Memory redirected away from the per-project folder.
//!
//! The CLI can be told to keep memory somewhere else: `autoMemoryDirectory`
//! in the user's, the project's local or the managed policy settings, or the
//! `CLAUDE_COWORK_MEMORY_PATH_OVERRIDE` environment variable. A redirected
//! folder is no longer keyed by the working directory, so any number of
//! agents may land in it: it is shared. The caller passes which settings
//! files to read and the variable's value (nothing is read from this
//! process's environment), and [`documented_settings_files`] lists where the
//! CLI documents them.

use std::path::{Path, PathBuf};

use natives_core::{CancelToken, Error, ErrorKind, Result};
use serde_json::Value;

use natives_system::durable;

/// The environment variable that overrides the memory path.
pub const PATH_OVERRIDE_ENV: &str = "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE";

/// The settings key that moves the memory folder.
pub const SETTING: &str = "autoMemoryDirectory";

/// The largest settings file read; a larger one (or a FIFO or device in
/// its place) is an error, so the folder stays unproven.
const SETTINGS_LIMIT: u64 = 4 << 20;

/// Where the managed policy settings live on Linux.
pub const POLICY_SETTINGS: &str = "/etc/claude-code/managed-settings.json";

/// What may redirect an agent's memory, as its caller knows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryRedirects {
    /// Settings files that may set [`SETTING`]; a missing file sets nothing.
    pub settings_files: Vec<PathBuf>,
    /// The agent's value of [`PATH_OVERRIDE_ENV`], if set.
    pub path_override: Option<String>,
}

/// The settings files that may redirect memory for an agent whose CLI
/// configuration directory is `config_dir` (usually `~/.claude`), working in
/// `project_dir`: user, local project and managed policy settings. Shared
/// project settings (`.claude/settings.json`) are left out: the CLI does not
/// let a checked-in file move memory.
pub fn documented_settings_files(config_dir: &Path, project_dir: &Path) -> Vec<PathBuf> {
    vec![
        config_dir.join("settings.json"),
        project_dir.join(".claude").join("settings.local.json"),
        PathBuf::from(POLICY_SETTINGS),
    ]
}

/// What redirects the memory, described for a human, or `None`. A settings
/// file that exists but cannot be read or parsed is an error: it might
/// redirect, so the caller cannot call the folder exclusive.
pub fn find_redirect(
    redirects: &MemoryRedirects,
    deadline: &CancelToken,
) -> Result<Option<String>> {
    if let Some(value) = redirects
        .path_override
        .as_deref()
        .filter(|v| !v.trim().is_empty())
    {
        return Ok(Some(format!("{PATH_OVERRIDE_ENV}={value}")));
    }
    for file in &redirects.settings_files {
        if let Some(value) = redirect_in(file, deadline)? {
            return Ok(Some(format!("{}: {SETTING} = {value}", file.display())));
        }
    }
    Ok(None)
}

/// The redirect one settings file makes, if any.
fn redirect_in(file: &Path, deadline: &CancelToken) -> Result<Option<String>> {
    deadline.check()?;
    let Some(bytes) = durable::read_bounded(file, SETTINGS_LIMIT)? else {
        return Ok(None);
    };
    deadline.check()?;
    let settings: Value = serde_json::from_slice(&bytes).map_err(|err| {
        Error::new(
            ErrorKind::Io,
            format!(
                "{}: unreadable settings ({err}); it may redirect memory",
                file.display()
            ),
        )
    })?;
    Ok(match settings.get(SETTING) {
        None | Some(Value::Null) => None,
        Some(Value::String(dir)) if dir.trim().is_empty() => None,
        Some(value) => Some(value.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use std::{fs, time::Duration};

    use super::*;

    #[test]
    fn redirects_come_from_the_override_or_any_settings_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, text: &str| {
            let path = dir.path().join(name);
            fs::write(&path, text).unwrap();
            path
        };
        let plain = file("plain.json", r#"{"model": "x", "autoMemoryDirectory": ""}"#);
        let moved = file("moved.json", r#"{"autoMemoryDirectory": "~/notes"}"#);
        let broken = file("broken.json", "{not json");
        let missing = dir.path().join("missing.json");
        let none = CancelToken::new();
        let check = |files: Vec<PathBuf>, path_override: Option<&str>| {
            let redirects = MemoryRedirects {
                settings_files: files,
                path_override: path_override.map(str::to_owned),
            };
            find_redirect(&redirects, &none)
        };

        assert_eq!(
            check(vec![plain.clone(), missing.clone()], None).unwrap(),
            None
        );
        assert_eq!(check(vec![plain.clone()], Some("  ")).unwrap(), None);
        let found = check(vec![plain.clone(), moved.clone()], None)
            .unwrap()
            .unwrap();
        assert!(
            found.contains("moved.json") && found.contains("~/notes"),
            "{found}"
        );
        let found = check(vec![], Some("/srv/shared-memory")).unwrap().unwrap();
        assert_eq!(
            found,
            "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE=/srv/shared-memory"
        );
        let err = check(vec![broken], None).unwrap_err();
        assert!(err.message().contains("broken.json"), "{err}");

        let past = CancelToken::new().with_timeout(Some(Duration::ZERO));
        let redirects = MemoryRedirects {
            settings_files: vec![plain],
            path_override: None,
        };
        assert_eq!(
            find_redirect(&redirects, &past).unwrap_err().code(),
            "ETIMEDOUT"
        );
    }

    /// A FIFO where a settings file should be might redirect memory, and
    /// reading it would wait for a writer forever: an error at once.
    #[test]
    fn a_settings_file_that_is_not_a_regular_file_is_an_error_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("settings.local.json");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let redirects = MemoryRedirects {
            settings_files: vec![fifo.clone()],
            path_override: None,
        };
        let err =
            natives_testkit::within("a FIFO settings file", Duration::from_secs(10), move || {
                find_redirect(&redirects, &CancelToken::new()).unwrap_err()
            });
        assert_eq!(err.code(), "EFTYPE", "{err}");
        assert!(err.message().contains(&fifo.display().to_string()), "{err}");
    }

    #[test]
    fn documented_files_are_user_local_and_policy() {
        let files = documented_settings_files(Path::new("/h/.claude"), Path::new("/p"));
        assert_eq!(
            files,
            [
                PathBuf::from("/h/.claude/settings.json"),
                PathBuf::from("/p/.claude/settings.local.json"),
                PathBuf::from(POLICY_SETTINGS),
            ]
        );
    }
}
