//! What a finished run of the binary printed, as every test reads it.

/// A finished run's exit code, standard output and standard error, as text.
pub fn outcome(out: std::process::Output) -> (i32, String, String) {
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).expect("the CLI writes UTF-8");
    (
        out.status.code().expect("an exit code"),
        text(out.stdout),
        text(out.stderr),
    )
}
