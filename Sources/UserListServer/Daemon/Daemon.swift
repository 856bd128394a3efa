import Dispatch
import Foundation
import Glibc
import UserListDomain
import UserListPresentation
import UserListWire
import ThreadLocks

/// The running daemon: listens, hosts sessions, tells systemd how it is doing, and stops cleanly.
///
/// The composition root (`userlistd`'s main) builds the store and hands it in as Domain
/// protocols; nothing here knows which store it is.
public final class Daemon: Sendable {
    public static let version = "0.1.0"

    public struct Store: Sendable {
        public let repository: any UserRepository
        public let feed: any UserChangeFeed
        public let description: String
        public let close: @Sendable () -> Void
        /// Whether the store answers (a store that cannot tell keeps it `.available`).
        public let health: StoreHealth
        /// Who changed what (nil: a store that keeps no history).
        public let history: (any UserHistoryRepository)?
        /// Presence shared with the other daemons on the store (nil: a store one daemon has to
        /// itself, whose presence stays in the daemon).
        public let presence: (any PresenceRelay)?

        public init(repository: any UserRepository, feed: any UserChangeFeed, description: String,
                    health: StoreHealth = StoreHealth(), history: (any UserHistoryRepository)? = nil,
                    presence: (any PresenceRelay)? = nil, close: @escaping @Sendable () -> Void) {
            self.history = history
            self.presence = presence
            self.repository = repository
            self.feed = feed
            self.description = description
            self.health = health
            self.close = close
        }
    }

    let config: Lock<DaemonConfig>
    let logger: Logger
    let notifier: SystemdNotifier
    let store: Store
    /// This daemon's hold on its state directory (nil in-process, where tests own the directory).
    let stateLock: StateDirectoryLock?
    let reloadConfig: @Sendable () -> DaemonConfig?
    private let stopSignal = AsyncStream<Void>.makeStream()
    /// How the next stop ends: a plain stop, or handing the connections to the next process.
    private let stopRoute = Lock<Handover.Route?>(nil)
    /// SIGTERM hands over to systemd's descriptor store when the unit asks for it
    /// (`Environment=USERLISTD_FDSTORE=1` with `FileDescriptorStoreMax=`) and systemd listens.
    private let storeOnStop: Bool
    /// Connection objects alive now (leak tests).
    package let liveObjects = LiveObjectCounts()
    private let runningRegistry = Lock<SessionRegistry?>(nil)
    /// The running daemon's sessions (tests), nil before `run` builds them.
    package var registry: SessionRegistry? { runningRegistry.withLock { $0 } }
    let reloadSignal = AsyncStream<Void>.makeStream()

    /// - Parameter reloadConfig: reads the configuration again on SIGHUP (nil: keep the old one).
    public init(config: DaemonConfig, logger: Logger, notifier: SystemdNotifier, store: Store,
                stateLock: StateDirectoryLock? = nil,
                reloadConfig: @escaping @Sendable () -> DaemonConfig?) {
        self.config = Lock(config)
        self.stateLock = stateLock
        self.logger = logger
        self.notifier = notifier
        self.store = store
        self.reloadConfig = reloadConfig
        self.storeOnStop = ProcessInfo.processInfo.environment["USERLISTD_FDSTORE"] == "1" && notifier.isEnabled
    }

    /// Asks the running daemon to upgrade in place (SIGUSR2): it re-executes its binary and
    /// hands every connection to the new image, which continues each client's stream.
    public func requestUpgrade() {
        stopRoute.withLock { $0 = .reexec }
        stopSignal.continuation.yield()
    }

    /// Asks the running daemon to stop gracefully (SIGTERM, SIGINT, or a test).
    public func requestStop() { stopSignal.continuation.yield() }

    /// Asks the running daemon to read its configuration again (SIGHUP).
    public func requestReload() { reloadSignal.continuation.yield() }

    /// Runs until SIGTERM or SIGINT; returns the exit status.
    ///
    /// The parts start in order, each recorded in a `ServiceStack` with how it stops: the store,
    /// the event loops, the sessions, the listener, then the background work. A stop runs them
    /// in reverse: background work ends, the listener stops accepting, the sessions say goodbye
    /// (or are handed over) and are saved, the loops stop, and the store is checkpointed and closed.
    public func run() async -> Int32 {
        let config = self.config.withLock { $0 }
        let started = ContinuousClock.now
        signal(SIGPIPE, SIG_IGN)  // a peer that vanished must not kill the daemon mid-write
        Self.raiseFileLimit(logger: logger)
        let services = ServiceStack(logger: logger)
        services.started("the store") { [store] in store.close() }
        func fail(_ what: String, _ error: SystemError) async -> Int32 {
            logger.error("\(what): \(error)", ["ERRNO": String(error.errno)])
            self.notifier.failed(status: "\(what): \(error)", errno: error.errno)
            await services.stopAll()
            return 1
        }

        let passed = SystemdNotifier.listenFDsWithNames()
        let handedConnections = passed.filter { $0.name.hasPrefix(Handover.connectionPrefix) }
        let listener: (fd: Int32, ownsSocketPath: Bool)
        do throws(SystemError) {
            listener = try listen(config, passed: passed)
        } catch { return await fail("Cannot listen", error) }
        let loops: EventLoopGroup
        do throws(SystemError) {
            loops = try EventLoopGroup(count: config.eventLoops ?? ProcessInfo.processInfo.activeProcessorCount)
        } catch { return await fail("Cannot start the event loop", error) }

        let policy = AccessPolicy(adminGroup: config.adminGroup)
        let (registry, journal, sessionStore, handover) = await restoreSessions(config, loops: loops, policy: policy)

        runningRegistry.withLock { $0 = registry }
        let statusLine = Self.statusLine(registry: registry, health: store.health)
        let context = serverContext(config, registry: registry, policy: policy, started: started,
                                    statusLine: statusLine)

        let acceptor: Acceptor
        do throws(SystemError) {
            acceptor = try Acceptor(listenFD: listener.fd, loops: loops, context: context)
        } catch { return await fail("Cannot start the event loop", error) }
        loops.start()
        services.started("the event loops") { loops.stop() }
        let shutdown = SessionShutdown(config: config, logger: logger, registry: registry, context: context,
                                       sessionStore: sessionStore,
                                       journal: journal, listenFD: listener.fd, ownsSocketPath: listener.ownsSocketPath)
        let outcome = Lock(SessionShutdown.Outcome())
        services.started("the sessions") { [stopRoute] in
            let finished = await shutdown.run(route: stopRoute.withLock { $0 })
            outcome.withLock { $0 = finished }
        }
        sharePresence(registry.presence, config: config, services: services)
        services.started("the listener") { acceptor.stop() }
        adopt(handover, descriptors: handedConnections, context: context, loops: loops)

        startBackgroundWork(services, registry: registry, context: context, policy: policy, firstLoop: loops.first,
                            statusLine: statusLine)
        services.allStarted()

        notifier.ready(status: statusLine())
        announceReady(config, listener: listener, loops: loops.loops.count, started: started)
        return await runUntilStopped(services, registry: registry, outcome: outcome)
    }

    private func announceReady(_ config: DaemonConfig, listener: (fd: Int32, ownsSocketPath: Bool), loops: Int,
                               started: ContinuousClock.Instant) {
        logger.notice("userlistd \(Self.version) ready", [
            "USERLISTD_SOCKET": listener.ownsSocketPath ? config.socketPath : "fd \(listener.fd) from systemd",
            "USERLISTD_STORE": store.description,
            "USERLISTD_EVENT_LOOPS": String(loops),
            "USERLISTD_STARTUP_MS": String(format: "%.1f", Self.milliseconds(ContinuousClock.now - started)),
        ])
    }

    /// What every connection's handler shares: the configuration, the registry, the access
    /// policy, what `status` shows.
    private func serverContext(_ config: DaemonConfig, registry: SessionRegistry, policy: AccessPolicy,
                               started: ContinuousClock.Instant,
                               statusLine: @escaping @Sendable () -> String) -> ServerContext {
        let notifier = self.notifier
        return ServerContext(
            config: config, registry: registry, logger: logger,
            serverInfo: PeerInfo(name: "userlistd", build: Self.version),
            introspection: Introspection(startedAt: started, storeDescription: store.description, version: Self.version,
                                         storeHealth: store.health),
            isWriter: { policy.canWrite(uid: $0) },
            liveObjects: liveObjects,
            onConnectionsChanged: { notifier.status(statusLine()) })
    }

    /// Takes over the client connections the previous process handed on (a restart), if any.
    private func adopt(_ handover: Handover.File?, descriptors: [(fd: Int32, name: String)], context: ServerContext,
                       loops: EventLoopGroup) {
        guard !descriptors.isEmpty || handover != nil else { return }
        let adopted = Handover.adopt(handover, descriptors: descriptors, context: context, loops: loops,
                                     notifier: notifier)
        logger.notice("Took over \(adopted) client connection\(adopted == 1 ? "" : "s") from the previous process; "
                      + "their streams go on", ["USERLISTD_ADOPTED": String(adopted)])
    }

    /// The tasks beside the sessions: the store's health, the sweeps and the watchdog, history
    /// retention and configuration reloads.
    private func startBackgroundWork(_ services: ServiceStack, registry: SessionRegistry, context: ServerContext,
                                     policy: AccessPolicy, firstLoop: EventLoop,
                                     statusLine: @escaping @Sendable () -> String) {
        let config = context.config
        // The watchdog's probe runs on the first loop: its answer vouches for that loop too.
        let probe = Session(key: SessionKey(uid: UInt32.max, clientKey: "watchdog-probe"), loop: firstLoop,
                            canWrite: { false }, useCases: store.useCases(config, logger: logger),
                            changes: registry.changeBroadcaster, logger: logger)
        services.task("the store's health watch", watchStoreHealth(statusLine: statusLine))
        services.task("the sweeps and the watchdog",
                      backgroundWork(registry: registry, context: context, probe: probe, statusLine: statusLine))
        if let history = store.history {
            services.task("history retention") { [logger] in
                await HistoryRetention.run(history, days: { context.config.historyDays }, logger: logger)
            }
        }
        services.task("configuration reloads") { [reloadSignal] in
            for await _ in reloadSignal.stream {
                self.reload(registry: registry, context: context, policy: policy, statusLine: statusLine)
            }
        }
    }

    /// Waits for SIGTERM, SIGINT or a restart's request, then stops every part in reverse.
    private func runUntilStopped(_ services: ServiceStack, registry: SessionRegistry,
                                 outcome: Lock<SessionShutdown.Outcome>) async -> Int32 {
        for await _ in stopSignal.stream { break }
        let route = stopRoute.withLock { route in
            route = route ?? (storeOnStop ? .descriptorStore : nil)
            return route
        }
        if route == .reexec { notifier.reloading() } else { notifier.stopping() }
        logger.notice(route == nil ? "Stopping: saving sessions"
                      : "Restarting: handing \(registry.connectionCount) client connections to the next process")
        await services.stopAll()
        return finish(route, outcome.withLock { $0 })
    }

    /// The sessions' registry with what the last run saved (its sessions, its journal), and the
    /// handover a restart left, if any.
    private func restoreSessions(_ config: DaemonConfig, loops: EventLoopGroup, policy: AccessPolicy) async
        -> (SessionRegistry, SessionJournal?, SessionStore, Handover.File?) {
        let journal = config.sessionJournalMilliseconds > 0
            ? SessionJournal(directory: config.stateDirectory,
                             interval: .milliseconds(config.sessionJournalMilliseconds),
                             logger: logger)
            : nil
        let registry = SessionRegistry(
            useCases: store.useCases(config, logger: logger), feed: store.feed, loops: loops, logger: logger,
            config: config, isWriter: { policy.canWrite(uid: $0) }, journal: journal)
        // A handover's file is read on another thread while the sessions are (about a thousand
        // entries each on a big restart, and the clients wait for both).
        let handoverRead = Task.detached { [directory = config.stateDirectory, logger] in
            Handover.load(directory: directory, logger: logger)
        }
        let sessionStore = SessionStore(directory: config.stateDirectory)
        restoreSessions(into: registry, from: sessionStore, journal: journal, config: config)
        return (registry, journal, sessionStore, await handoverRead.value)
    }

    /// After every part has stopped: hand the descriptors on, or say the daemon stopped.
    private func finish(_ route: Handover.Route?, _ outcome: SessionShutdown.Outcome) -> Int32 {
        let saved = ["USERLISTD_SESSIONS_SAVED": String(outcome.savedSessions)]
        switch route {
        case .descriptorStore?:
            let stored = Handover.store(outcome.handed, notifier: notifier, logger: logger)
            logger.notice("Handed \(stored) descriptors to the service manager's store", saved)
            return 0
        case .reexec?:
            logger.notice("Upgrading: re-executing with \(outcome.handed.count) descriptors", saved)
            // The state directory stays locked across the exec: the new image adopts the lock.
            let lock = stateLock.map { [(name: StateDirectoryLock.descriptorName, fd: $0.fd)] } ?? []
            Handover.reexec(outcome.handed + lock, logger: logger)
            return 1  // exec failed; the clients see the connection close and reconnect
        case nil:
            logger.notice("Stopped", saved)
            return 0
        }
    }

    /// The listening socket: systemd's (from the socket unit, the descriptor store, or a
    /// re-exec's hand-over), or our own. `ownsSocketPath`: ours to unlink at the end.
    private func listen(_ config: DaemonConfig, passed: [(fd: Int32, name: String)]) throws(SystemError) -> (fd: Int32,
        ownsSocketPath: Bool) {
        let passedListener = passed.first { $0.name == Handover.listenName }
            ?? passed.first { !$0.name.hasPrefix(Handover.connectionPrefix)
                && $0.name != StateDirectoryLock.descriptorName }
        if let passedListener {
            // A socket this daemon made itself, handed over: still ours to unlink at the end.
            let owns = passedListener.name == Handover.listenName
            if owns { notifier.removeStoredFD(name: Handover.listenName) }
            return (passedListener.fd, owns)
        }
        try RuntimeDirectory.prepare(forSocket: config.socketPath)
        // The kernel's largest backlog: a connect storm from one uid must not fill the queue others wait in.
        let fd = try UnixSocket.listen(at: config.socketPath, mode: config.effectiveSocketMode,
                                       group: try GroupMembership.socketGroup(config.socketGroup), backlog: 4096)
        return (fd, true)
    }

    /// The sessions saved at the last stop, or journaled before a crash, back in `registry`;
    /// durable again (in a fresh journal) before the old files go.
    private func restoreSessions(into registry: SessionRegistry, from sessionStore: SessionStore,
                                 journal: SessionJournal?, config: DaemonConfig) {
        let savedBefore = sessionStore.load(logger: logger)
        let restored = registry.restore(savedBefore)
        if restored < savedBefore.count {
            logger.info("Did not restore \(savedBefore.count - restored) saved sessions past their retention")
        }
        if let journal {
            journal.setLiveKeys { Set(registry.allSessions.map(\.key)) }
            journal.start(with: savedBefore, then: { sessionStore.removeSaved() })
        } else {
            unlink(config.stateDirectory + "/" + SessionJournal.fileName)
            sessionStore.removeSaved()
        }
    }

    private static func statusLine(registry: SessionRegistry, health: StoreHealth) -> @Sendable () -> String {
        return {
            let sessions = registry.sessionCount
            let connections = registry.connectionCount
            let serving = "Serving \(sessions) session\(sessions == 1 ? "" : "s"), "
                + "\(connections) client connection\(connections == 1 ? "" : "s")"
            guard case .unavailable(let reason) = health.current else { return serving }
            return serving + "; the store is unavailable, reconnecting: " + reason
        }
    }

    // MARK: parts

    private static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }

    /// Each client is a descriptor: lift the soft limit (often 1,024) to the hard one, as
    /// daemon(7) suggests, so 10,000 clients fit.
    private static func raiseFileLimit(logger: Logger) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            logger.debug("Raised the open file limit to \(limit.rlim_max)")
        }
    }
}
