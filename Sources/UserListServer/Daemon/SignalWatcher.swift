import Glibc

/// Turns SIGTERM, SIGINT, SIGHUP and SIGUSR2 into calls, on a thread of its own.
///
/// The signals themselves are caught by userlistd's CDaemonSignals (a constructor that runs
/// before any thread exists and writes each signal's number into a pipe; its header says why
/// Dispatch sources and sigwait both lost signals). This reads that pipe, so a signal that came
/// during start-up is acted on as soon as the watcher starts.
public enum SignalWatcher {
    /// Starts the watcher thread on `pipe`: `terminate` for SIGTERM and SIGINT, `reload` for SIGHUP.
    /// `upgrade` for SIGUSR2 (re-exec with the connections handed over); without it SIGUSR2 is ignored.
    public static func start(pipe: Int32, terminate: @escaping @Sendable () -> Void,
                             reload: @escaping @Sendable () -> Void, upgrade: @escaping @Sendable () -> Void = {}) {
        let handlers = Handlers(pipe: pipe, terminate: terminate, reload: reload, upgrade: upgrade)
        var thread = pthread_t()
        let context = Unmanaged.passRetained(handlers).toOpaque()
        let rc = pthread_create(&thread, nil, { raw in
            let handlers = Unmanaged<Handlers>.fromOpaque(raw!).takeRetainedValue()
            var byte: UInt8 = 0
            while true {
                let count = read(handlers.pipe, &byte, 1)
                if count < 0 && errno == EINTR { continue }
                guard count == 1 else { return nil }
                switch Int32(byte) {
                case SIGHUP: handlers.reload()
                case SIGUSR2: handlers.upgrade()
                default: handlers.terminate()
                }
            }
        }, context)
        precondition(rc == 0, "pthread_create failed: \(rc)")
        pthread_detach(thread)
    }

    private final class Handlers: Sendable {
        let pipe: Int32
        let terminate: @Sendable () -> Void
        let reload: @Sendable () -> Void
        let upgrade: @Sendable () -> Void
        init(pipe: Int32, terminate: @escaping @Sendable () -> Void, reload: @escaping @Sendable () -> Void,
             upgrade: @escaping @Sendable () -> Void) {
            self.pipe = pipe
            self.terminate = terminate
            self.reload = reload
            self.upgrade = upgrade
        }
    }
}
