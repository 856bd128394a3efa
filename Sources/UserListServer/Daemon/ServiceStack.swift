import ThreadLocks

/// The running daemon's parts, in the order they started, each with how it stops: stopped in
/// reverse, one at a time, each awaited (as swift-service-lifecycle's `ServiceGroup` does). A
/// background task of the daemon is started here, so none outlives the daemon unseen: stopping
/// it cancels it and waits for it to end.
final class ServiceStack: Sendable {
    enum State: Equatable {
        case starting
        case running
        case stopping
        case stopped
    }

    private struct Service {
        let name: String
        let stop: @Sendable () async -> Void
    }

    private let services = Lock<(state: State, started: [Service])>((.starting, []))
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    var state: State { services.withLock { $0.state } }

    /// Records a part that has started; `stop` ends it (and returns once it has).
    func started(_ name: String, stop: @escaping @Sendable () async -> Void) {
        services.withLock { services in
            precondition(services.state == .starting || services.state == .running,
                         "\(name) started after the daemon began to stop")
            services.started.append(Service(name: name, stop: stop))
        }
    }

    /// Starts a background task as a part: stopping it cancels the task and waits for its end.
    func task(_ name: String, _ operation: @escaping @Sendable () async -> Void) {
        let task = Task.detached(operation: operation)
        started(name) {
            task.cancel()
            await task.value
        }
    }

    /// Every part has started: the daemon is serving.
    func allStarted() {
        services.withLock { services in
            precondition(services.state == .starting, "the daemon was already \(services.state)")
            services.state = .running
        }
    }

    /// Stops every part, last started first. Called once.
    func stopAll() async {
        let started = services.withLock { services -> [Service] in
            precondition(services.state == .starting || services.state == .running,
                         "the daemon was already \(services.state)")
            services.state = .stopping
            return services.started
        }
        for service in started.reversed() {
            logger.debug("Stopping \(service.name)")
            await service.stop()
        }
        services.withLock { $0.state = .stopped }
    }
}
