//! Ctrl-C for `faber run`: the first SIGINT sets the interpreter's interrupt flag
//! (`faber::eval::interrupt`), so the program stops at its next step — after a file
//! write in progress has finished — and `faber run` prints one line and exits 130;
//! a second SIGINT ends the process at once (`_exit(130)`; a half-written temporary
//! file then stays behind, the target keeps its old contents). A SIGINT that was
//! ignored when faber started (`nohup`, a background job of a script) stays ignored.
//! Other platforms keep their default Ctrl-C behaviour.

/// The exit status of an interrupted run: 128 + SIGINT (2), as shells report it.
pub const EXIT_INTERRUPTED: u8 = 130;

/// The line printed on stderr when a run stops at an interrupt.
pub const MESSAGE: &str =
    "faber: interrupted (SIGINT): stopped between two steps; files already written are complete";

/// Installs the SIGINT handler (Unix).
pub fn install() {
    #[cfg(unix)]
    unix::install();
}

#[cfg(unix)]
mod unix {
    extern "C" fn on_sigint(_signal: libc::c_int) {
        if faber::eval::interrupt::request() {
            // SAFETY: `_exit` is async-signal-safe; nothing else runs here.
            unsafe { libc::_exit(super::EXIT_INTERRUPTED as libc::c_int) }
        }
    }

    pub fn install() {
        // SAFETY: a zeroed `sigaction` is a valid empty value; the handler only does
        // an atomic swap and `_exit`, both async-signal-safe.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGINT, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
            {
                return;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
        }
    }
}
