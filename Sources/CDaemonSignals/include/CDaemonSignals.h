#ifndef USERLISTD_CDAEMONSIGNALS_H
#define USERLISTD_CDAEMONSIGNALS_H
/// Linked into userlistd only. Its constructor, which runs before the Swift runtime starts any
/// thread, installs a handler for SIGTERM, SIGINT and SIGHUP that does one async-signal-safe
/// thing: it writes the signal's number as one byte into a pipe. Swift reads the other end.
///
/// Why a C handler, when Dispatch signal sources exist: a source is armed asynchronously, and a
/// signal that arrived before then (a supervisor stopping a daemon that had just said READY=1)
/// killed the daemon in 2 of 10 runs; and blocking the signals for a sigwait thread does not
/// hold, because libdispatch sets its own threads' masks. A byte in a pipe is never lost.
///
/// Returns the read end of the pipe (blocking, close-on-exec), or -1 if set-up failed.
int userlistd_signal_pipe(void);
#endif
