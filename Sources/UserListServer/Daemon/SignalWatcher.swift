import Glibc

/// SIGTERM, SIGINT and SIGHUP, received on a thread of their own with `sigwait`.
///
/// Why not a Dispatch signal source: a source is armed asynchronously after `resume()`, and a
/// signal that arrives before then (a supervisor stopping a daemon that just said READY=1) was
/// lost in 2 of 10 runs. Blocking the signals first thing in `main`, before any other thread
/// exists, makes every thread inherit the mask, so a signal stays pending until the watcher
/// takes it: none is ever lost, and none runs a C handler.
public enum SignalWatcher {
    private static func daemonSignals() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&set, signal) }
        return set
    }

    /// Call first in `main`, before anything starts a thread.
    public static func blockDaemonSignals() {
        var set = daemonSignals()
        pthread_sigmask(SIG_BLOCK, &set, nil)
        signal(SIGPIPE, SIG_IGN)
    }

    /// Starts the watcher thread: `terminate` for SIGTERM and SIGINT, `reload` for SIGHUP.
    public static func start(terminate: @escaping @Sendable () -> Void, reload: @escaping @Sendable () -> Void) {
        let handlers = Handlers(terminate: terminate, reload: reload)
        var thread = pthread_t()
        let context = Unmanaged.passRetained(handlers).toOpaque()
        let rc = pthread_create(&thread, nil, { raw in
            let handlers = Unmanaged<Handlers>.fromOpaque(raw!).takeRetainedValue()
            var set = SignalWatcher.daemonSignals()
            while true {
                var received: Int32 = 0
                guard sigwait(&set, &received) == 0 else { continue }
                if received == SIGHUP { handlers.reload() } else { handlers.terminate() }
            }
        }, context)
        precondition(rc == 0, "pthread_create failed: \(rc)")
        pthread_detach(thread)
    }

    private final class Handlers: Sendable {
        let terminate: @Sendable () -> Void
        let reload: @Sendable () -> Void
        init(terminate: @escaping @Sendable () -> Void, reload: @escaping @Sendable () -> Void) {
            self.terminate = terminate
            self.reload = reload
        }
    }
}
