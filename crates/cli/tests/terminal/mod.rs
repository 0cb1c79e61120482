//! Running the binary with one of its output streams on a terminal (a new
//! pseudo-terminal), as a person at a screen runs it.

use std::{
    fs::File,
    io::Read,
    process::{Command, Stdio},
    thread,
};

/// Which output stream goes to the terminal.
pub enum Stream {
    Stdout,
    Stderr,
}

/// Run `command` with `stream` on a terminal and the other output stream
/// piped: exit code, what reached the terminal (line ends as `\n`), what
/// reached the pipe.
pub fn on_terminal(command: &mut Command, stream: Stream) -> (i32, String, String) {
    let pty = nix::pty::openpty(None, None).unwrap();
    let terminal = Stdio::from(pty.slave);
    match stream {
        Stream::Stdout => command.stdout(terminal).stderr(Stdio::piped()),
        Stream::Stderr => command.stderr(terminal).stdout(Stdio::piped()),
    };
    let child = command.stdin(Stdio::null()).spawn().unwrap();
    // Drop this process's copy of the terminal, so reading ends with the child.
    match stream {
        Stream::Stdout => command.stdout(Stdio::null()),
        Stream::Stderr => command.stderr(Stdio::null()),
    };
    let mut master = File::from(pty.master);
    let reader = thread::spawn(move || {
        let mut shown = Vec::new();
        // A terminal whose other end has closed reads as an error: the end.
        let _ = master.read_to_end(&mut shown);
        String::from_utf8(shown).unwrap().replace("\r\n", "\n")
    });
    let out = child.wait_with_output().unwrap();
    let piped = match stream {
        Stream::Stdout => out.stderr,
        Stream::Stderr => out.stdout,
    };
    (
        out.status.code().unwrap(),
        reader.join().unwrap(),
        String::from_utf8(piped).unwrap(),
    )
}
