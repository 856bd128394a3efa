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

        public init(repository: any UserRepository, feed: any UserChangeFeed, description: String,
                    health: StoreHealth = StoreHealth(), history: (any UserHistoryRepository)? = nil,
                    close: @escaping @Sendable () -> Void) {
            self.history = history
            self.repository = repository
            self.feed = feed
            self.description = description
            self.health = health
            self.close = close
        }
    }

    private let config: Lock<DaemonConfig>
    private let logger: Logger
    private let notifier: SystemdNotifier
    private let store: Store
    private let reloadConfig: @Sendable () -> DaemonConfig?
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
    private let reloadSignal = AsyncStream<Void>.makeStream()

    /// - Parameter reloadConfig: reads the configuration again on SIGHUP (nil: keep the old one).
    public init(config: DaemonConfig, logger: Logger, notifier: SystemdNotifier, store: Store,
                reloadConfig: @escaping @Sendable () -> DaemonConfig?) {
        self.config = Lock(config)
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
    public func run() async -> Int32 {
        let config = self.config.withLock { $0 }
        let started = ContinuousClock.now
        signal(SIGPIPE, SIG_IGN)  // a peer that vanished must not kill the daemon mid-write
        Self.raiseFileLimit(logger: logger)

        // Listening socket: systemd's, or our own.
        // From the socket unit, the descriptor store, or a re-exec: the listening socket, and
        // client connections a previous process handed over (`Handover`).
        let passed = SystemdNotifier.listenFDsWithNames()
        let handedConnections = passed.filter { $0.name.hasPrefix(Handover.connectionPrefix) }
        let passedListener = passed.first { $0.name == Handover.listenName } ?? passed.first { !$0.name.hasPrefix(Handover.connectionPrefix) }
        let listenFD: Int32
        let ownsSocketPath: Bool
        do throws(SystemError) {
            if let passedListener {
                listenFD = passedListener.fd
                // A socket this daemon made itself, handed over: still ours to unlink at the end.
                ownsSocketPath = passedListener.name == Handover.listenName
                if ownsSocketPath { notifier.removeStoredFD(name: Handover.listenName) }
            } else {
                try RuntimeDirectory.prepare(forSocket: config.socketPath)
                // The kernel's largest backlog: a connect storm from one uid must not fill the queue others wait in.
                listenFD = try UnixSocket.listen(at: config.socketPath, mode: config.effectiveSocketMode,
                                                 group: try GroupMembership.socketGroup(config.socketGroup), backlog: 4096)
                ownsSocketPath = true
            }
        } catch {
            logger.error("Cannot listen: \(error)", ["ERRNO": String(error.errno)])
            notifier.failed(status: "Cannot listen: \(error)", errno: error.errno)
            return 1
        }

        let policy = AccessPolicy(adminGroup: config.adminGroup)
        let journal = config.sessionJournalMilliseconds > 0
            ? SessionJournal(directory: config.stateDirectory, interval: .milliseconds(config.sessionJournalMilliseconds), logger: logger)
            : nil
        let loops: EventLoopGroup
        do throws(SystemError) {
            loops = try EventLoopGroup(count: ProcessInfo.processInfo.activeProcessorCount)
        } catch {
            logger.error("Cannot start the event loop: \(error)")
            notifier.failed(status: "Cannot start: \(error)", errno: error.errno)
            return 1
        }
        let registry = SessionRegistry(
            useCases: store.useCases(config, logger: logger), feed: store.feed, loops: loops, logger: logger,
            config: config, isWriter: { policy.canWrite(uid: $0) }, journal: journal)
        // A handover's file is read on another thread while the sessions are (about a thousand
        // entries each on a big restart, and the clients wait for both).
        let handoverRead = Task.detached { [directory = config.stateDirectory, logger] in Handover.load(directory: directory, logger: logger) }
        let sessionStore = SessionStore(directory: config.stateDirectory)
        let savedBefore = sessionStore.load(logger: logger)
        let restored = registry.restore(savedBefore)
        if restored < savedBefore.count {
            logger.info("Did not restore \(savedBefore.count - restored) saved sessions past their retention")
        }
        // The restored sessions are durable again (in a fresh journal) before the old files go.
        if let journal {
            journal.setLiveKeys { Set(registry.allSessions.map(\.key)) }
            journal.start(with: savedBefore, then: { sessionStore.removeSaved() })
        } else {
            unlink(config.stateDirectory + "/" + SessionJournal.fileName)
            sessionStore.removeSaved()
        }
        let handover = await handoverRead.value

        runningRegistry.withLock { $0 = registry }
        let health = store.health
        let statusLine: @Sendable () -> String = {
            let sessions = registry.sessionCount
            let serving = "Serving \(sessions) session\(sessions == 1 ? "" : "s"), \(registry.connectionCount) client connection\(registry.connectionCount == 1 ? "" : "s")"
            guard case .unavailable(let reason) = health.current else { return serving }
            return serving + "; the store is unavailable, reconnecting: " + reason
        }
        let notifier = self.notifier
        let context = ServerContext(
            config: config, registry: registry, logger: logger,
            serverInfo: PeerInfo(name: "userlistd", build: Self.version),
            introspection: Introspection(startedAt: started, storeDescription: store.description, version: Self.version,
                                         storeHealth: store.health),
            isWriter: { policy.canWrite(uid: $0) },
            liveObjects: liveObjects,
            onConnectionsChanged: { notifier.status(statusLine()) })

        let acceptor: Acceptor
        do throws(SystemError) {
            acceptor = try Acceptor(listenFD: listenFD, loops: loops, context: context)
        } catch {
            logger.error("Cannot start the event loop: \(error)")
            notifier.failed(status: "Cannot start: \(error)", errno: error.errno)
            return 1
        }
        loops.start()
        if !handedConnections.isEmpty || handover != nil {
            let adopted = Handover.adopt(handover, descriptors: handedConnections, context: context, loops: loops, notifier: notifier)
            logger.notice("Took over \(adopted) client connection\(adopted == 1 ? "" : "s") from the previous process; their streams go on",
                          ["USERLISTD_ADOPTED": String(adopted)])
        }

        // The watchdog's probe runs on the first loop: its answer vouches for that loop too.
        let probe = Session(key: SessionKey(uid: UInt32.max, clientKey: "watchdog-probe"), loop: loops.first, canWrite: { false },
                            useCases: store.useCases(config, logger: logger), changes: registry.changeBroadcaster, logger: logger)
        let background = startBackgroundWork(registry: registry, context: context, probe: probe, statusLine: statusLine)
        let healthWatch = watchStoreHealth(statusLine: statusLine)
        let retention = HistoryRetention.start(store.history, days: { context.config.historyDays }, logger: logger)
        let reloads = Task { [reloadSignal] in
            for await _ in reloadSignal.stream { self.reload(registry: registry, context: context, policy: policy, statusLine: statusLine) }
        }

        notifier.ready(status: statusLine())
        logger.notice("userlistd \(Self.version) ready", [
            "USERLISTD_SOCKET": ownsSocketPath ? config.socketPath : "fd \(listenFD) from systemd",
            "USERLISTD_STORE": store.description,
            "USERLISTD_STARTUP_MS": String(format: "%.1f", Self.milliseconds(ContinuousClock.now - started)),
        ])

        for await _ in stopSignal.stream { break }
        let route = stopRoute.withLock { $0 } ?? (storeOnStop ? .descriptorStore : nil)

        // Shutdown: stop accepting, say goodbye (or hand the connections over), finish saves,
        // save sessions, close the store.
        if route == .reexec { notifier.reloading() } else { notifier.stopping() }
        logger.notice(route == nil ? "Stopping: saving sessions" : "Restarting: handing \(registry.connectionCount) client connections to the next process")
        background.cancel()
        healthWatch.cancel()
        retention?.cancel()
        reloads.cancel()
        acceptor.stop()
        func closeListener() {
            close(listenFD)
            if ownsSocketPath { unlink(config.socketPath) }
        }
        let sessions = registry.allSessions
        // A handover's file is encoded and written on another thread while the sessions are
        // saved below: each is a JSON encode of about a thousand entries on a big restart, and
        // every client waits for both.
        var handoverWritten: Task<[(name: String, fd: Int32)]?, Never>?
        if route != nil {
            var collected = await Handover.collect(sessions: sessions, handlers: context.allHandlers, logger: logger)
            collected.file.throughStore = route == .descriptorStore
            handoverWritten = Task.detached { [collected, directory = config.stateDirectory, logger] in
                guard Handover.write(collected.file, directory: directory, logger: logger) else {
                    for (_, fd) in collected.descriptors { close(fd) }
                    return nil
                }
                return collected.descriptors
            }
        }
        if route == nil {
            closeListener()  // at once: a client connecting now is refused rather than left waiting
            for session in sessions { await session.sayGoodbye(reason: "shutting_down") }
            for session in sessions { await session.finishInFlightWork() }
        }  // (a handover finished the work in flight already, and says no goodbye)
        let wallNow = Date()
        let clockNow = ContinuousClock.now
        // Every session at once (each is its own actor).
        let saved = await withTaskGroup(of: SavedSession.self) { group in
            for session in sessions {
                group.addTask {
                    // Clients still attached now are being told goodbye: their retention starts now.
                    let detachedAt = session.activity.withLock { activity in
                        activity.clients == 0 ? activity.detachedAt.map { wallNow - Self.seconds(clockNow - $0) } : wallNow
                    } ?? wallNow
                    // What a restore uses (the list's rows are reloaded): a tenth of the bytes to write and read back.
                    return SavedSession(key: session.key, id: session.id, fullState: await session.savedState, detachedAt: detachedAt)
                }
            }
            var all: [SavedSession] = []
            for await item in group { all.append(item) }
            return all
        }
        // The whole save; then the journal goes, without waiting for its thread. If the save
        // failed, the journal's last batch is written instead, so the next start has them all.
        journal?.waitUntilStarted()
        if sessionStore.save(saved, logger: logger) { journal?.abandon() } else { journal?.finish() }
        var handed: [(name: String, fd: Int32)] = []
        if let written = await handoverWritten?.value {
            handed = written
            // The listening socket too, unless a socket unit holds it (then it comes back by itself).
            if ownsSocketPath { handed.append((Handover.listenName, listenFD)) }
        }
        if route != nil && !handed.contains(where: { $0.fd == listenFD }) { closeListener() }
        // Give clients a moment to read their goodbye before the process ends.
        if handed.isEmpty { try? await Task.sleep(for: .milliseconds(50)) }
        loops.stop()
        store.close()
        switch route {
        case .descriptorStore?:
            let stored = Handover.store(handed, notifier: notifier, logger: logger)
            logger.notice("Handed \(stored) descriptors to the service manager's store", ["USERLISTD_SESSIONS_SAVED": String(saved.count)])
            return 0
        case .reexec?:
            logger.notice("Upgrading: re-executing with \(handed.count) descriptors", ["USERLISTD_SESSIONS_SAVED": String(saved.count)])
            Handover.reexec(handed, logger: logger)
            return 1  // exec failed; the clients see the connection close and reconnect
        case nil:
            break
        }
        logger.notice("Stopped", ["USERLISTD_SESSIONS_SAVED": String(saved.count)])
        return 0
    }

    // MARK: parts

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

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

    /// Each store transition once: in the journal, and in `STATUS=` at once (not rate-limited).
    private func watchStoreHealth(statusLine: @escaping @Sendable () -> String) -> Task<Void, Never> {
        let notifier = self.notifier
        let logger = self.logger
        let store = self.store
        return Task.detached {
            for await state in store.health.transitions {
                switch state {
                case .available:
                    logger.notice("The store is available again", ["USERLISTD_STORE": store.description])
                case .unavailable(let reason):
                    logger.warning("The store is unavailable; sessions are kept, writes are refused, reconnecting with backoff: \(reason)",
                                   ["USERLISTD_STORE": store.description])
                }
                notifier.status(statusLine(), force: true)
            }
        }
    }

    /// Retention sweeps, rate-limited status updates, and the watchdog.
    private func startBackgroundWork(registry: SessionRegistry, context: ServerContext, probe: Session,
                                     statusLine: @escaping @Sendable () -> String) -> Task<Void, Never> {
        let notifier = self.notifier
        let logger = self.logger
        let watchdog = SystemdNotifier.watchdogInterval()
        return Task.detached {
            var lastSweep = ContinuousClock.now
            var lastLiveness = ContinuousClock.now
            var lastWatchdog = ContinuousClock.now
            while !Task.isCancelled {
                // Reloaded settings apply from the next tick.
                let ping = context.config.pingIntervalSeconds
                let frameTimeout = context.config.frameTimeoutSeconds
                var tick = min(watchdog ?? .seconds(1), .seconds(1), .seconds(max(0.05, frameTimeout / 4)))
                if ping > 0 { tick = min(tick, .seconds(max(0.1, ping / 4))) }
                try? await Task.sleep(for: tick)
                let now = ContinuousClock.now
                // Frame deadlines every tick; liveness a quarter of the ping interval between looks.
                let livenessEvery = Duration.seconds(max(0.25, ping / 4))
                let checkPings = now - lastLiveness >= livenessEvery
                if checkPings { lastLiveness = now }
                context.checkConnections(pings: checkPings)
                if now - lastSweep >= .seconds(5) {
                    lastSweep = now
                    let dropped = registry.sweep()
                    if dropped > 0 { logger.info("Dropped \(dropped) detached sessions past their retention") }
                    notifier.status(statusLine())
                }
                if let watchdog, now - lastWatchdog >= watchdog {
                    // Only vouch for the machinery after it answered: a session actor ran a job.
                    await probe.flush()
                    lastWatchdog = now
                    notifier.watchdog()
                }
            }
        }
    }

    /// SIGHUP: RELOADING=1, the new settings that can change at run time, then READY=1.
    private func reload(registry: SessionRegistry, context: ServerContext, policy: AccessPolicy, statusLine: () -> String) {
        notifier.reloading()
        if let fresh = reloadConfig() {
            config.withLock { $0 = fresh }
            logger.setLevel(fresh.logLevel)
            registry.reload(fresh)
            context.reload(fresh)
            policy.reload(adminGroup: fresh.adminGroup)
            logger.notice("Reloaded configuration", ["USERLISTD_LOG_LEVEL": fresh.logLevel.rawValue])
        } else {
            logger.warning("Reload failed; keeping the running configuration")
        }
        notifier.ready(status: statusLine())
    }
}
