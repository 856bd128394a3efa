// userlistd's composition root: the one place that sees every layer. It reads the
// configuration, opens the store, and hands the Domain protocols to the daemon.
import CDaemonSignals
import CLinuxIO
import Foundation
import Glibc
import UserListData
import UserListDomain
import UserListServer

// Everything the daemon creates (database, WAL, SHM, sessions.json, directories) is its own
// alone, whoever runs it: files 0600, directories 0700. The socket is the one exception: its
// mode and group follow `socket-mode` and `socket-group` (see SECURITY.md).
umask(0o077)

// SIGTERM, SIGINT and SIGHUP were caught from before the first thread (CDaemonSignals) into
// this pipe; the watcher started below acts on them.
let signalPipe = userlistd_signal_pipe()

let defaults = DaemonConfig.defaults()
let arguments = Array(CommandLine.arguments.dropFirst())

func parseConfig() -> Result<DaemonCommand, ConfigError> {
    do throws(ConfigError) {
        return .success(try ConfigParser.parse(arguments: arguments, defaults: defaults))
    } catch {
        return .failure(error)
    }
}

let command: DaemonCommand
switch parseConfig() {
case .success(let parsed): command = parsed
case .failure(let error):
    FileHandle.standardError.write(Data("userlistd: \(error.description)\n".utf8))
    exit(64)
}

switch command {
case .help:
    print(ConfigParser.helpText(defaults: defaults), terminator: "")
    exit(0)
case .version:
    print("userlistd \(Daemon.version)")
    exit(0)
case .run(let config):
    let logger = Logger(sink: Logger.detectSink(), level: config.logLevel)
    let notifier = SystemdNotifier()
    // Before anything reads or writes the state directory (or the store fills it with samples).
    let stateLock: StateDirectoryLock
    do throws(StateDirectoryLock.Failure) {
        stateLock = try StateDirectoryLock.acquire(directory: config.stateDirectory, socket: config.socketPath)
    } catch {
        logger.error(error.description)
        notifier.failed(status: error.description, errno: EBUSY)
        FileHandle.standardError.write(Data("userlistd: \(error.description)\n".utf8))
        exit(75)  // EX_TEMPFAIL: try again once the other daemon has stopped
    }
    let store: Daemon.Store
    do throws(UserError) {
        store = try await openStore(config, logger: logger)
    } catch {
        logger.error("Cannot open the store: \(error.message)")
        notifier.failed(status: "Cannot open the store: \(error.message)", errno: EIO)
        exit(1)
    }
    let daemon = Daemon(config: config, logger: logger, notifier: notifier, store: store, stateLock: stateLock,
                        reloadConfig: {
        guard case .success(.run(let fresh)) = parseConfig() else { return nil }
        return fresh
    })
    SignalWatcher.start(pipe: signalPipe, terminate: { daemon.requestStop() }, reload: { daemon.requestReload() },
                        upgrade: { daemon.requestUpgrade() })
    let status = await daemon.run()
    exit(status)
}

/// The embedded SQLite store, filled with sample users when asked and empty; or, with
/// `upstream`, the REST service with the SQLite file as its cache; or, when `database` is a
/// PostgreSQL URI or conninfo, the database several daemons share.
/// `--sample-data N`: fills an empty store (either kind) with N generated users.
func fillWithSampleData(_ repository: some UserRepository, _ config: DaemonConfig,
                        logger: Logger) async throws(UserError) {
    guard config.sampleData > 0, try await repository.fetchPage(PageRequest(limit: 1)).users.isEmpty else { return }
    let imported = try await repository.importUsers(SampleUsers.generate(count: config.sampleData),
                                                    by: SessionAuthor.sampleData(socketPath: config.socketPath))
    logger.info("Filled the empty store with \(imported) sample users")
    // The generated users are gone; give their memory back rather than keep it for good.
    _ = ulio_release_free_memory()
}

func openStore(_ config: DaemonConfig, logger: Logger) async throws(UserError) -> Daemon.Store {
    if PGConnectionString.isPostgres(config.databasePath) {
        return try await openPostgresStore(config, logger: logger)
    }
    return try await openSQLiteStore(config, logger: logger)
}

/// The PostgreSQL connection `--database` names. The password comes from libpq's own sources
/// (PGPASSFILE, ~/.pgpass, PG* variables) or the systemd credential `pgpass`
/// (LoadCredential=pgpass:...), never from the string.
func postgresConnection(_ config: DaemonConfig) throws(UserError) -> PGConnectionString {
    if getenv("PGPASSFILE") == nil,
       let credentials = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"],
       FileManager.default.fileExists(atPath: credentials + "/pgpass") {
        setenv("PGPASSFILE", credentials + "/pgpass", 1)
    }
    let connection: PGConnectionString
    do throws(PGConnectionStringError) {
        connection = try PGConnectionString(config.databasePath)
    } catch {
        throw .unavailable(reason: error.description)
    }
    if config.upstreamURL != nil {
        throw .unavailable(reason: "upstream caching works with the SQLite store only; "
                           + "drop upstream or the PostgreSQL database")
    }
    return connection
}

func openPostgresStore(_ config: DaemonConfig, logger: Logger) async throws(UserError) -> Daemon.Store {
    let connection = try postgresConnection(config)
    logger.info("Opening the PostgreSQL store at \(connection.redacted)")
    let database = try PostgresUserRepository(connection: connection)
    try await fillWithSampleData(database, config, logger: logger)
    // Observing the repository: our own commits reach our sessions without the NOTIFY round trip.
    let feed = try PostgresChangeFeed(observing: database)
    let repository = SharedPageRepository(base: database)
    // The feed's connection is the store's pulse: the daemon shows and logs each transition.
    let health = StoreHealth()
    let events = feed.events()
    Task.detached {
        for await event in events {
            repository.invalidate()
            switch event {
            case .disconnected(let reason):
                health.report(.unavailable(reason: reason))
            case .reconnected:
                health.report(.available)
                // An import the outage cut short is applied now, before people edit its users.
                Task {
                    do throws(UserError) {
                        try await database.finishCommittedImports()
                    } catch {
                        logger.warning("Could not finish an import the outage cut short: \(error.message)")
                    }
                }
            case .resync:
                logger.warning("The PostgreSQL change log was pruned past what this daemon had seen; "
                               + "cached pages dropped and every screen reads its rows again")
            }
        }
    }
    return Daemon.Store(repository: repository, feed: PageInvalidatingFeed(base: feed, pages: repository),
                        description: "postgresql:\(connection.redacted)", health: health, history: database,
                        // Who has which user open, shared with the other daemons on the database.
                        presence: PostgresPresenceRelay(connection: connection), close: {
        _ = feed
        _ = database
    })
}

func openSQLiteStore(_ config: DaemonConfig, logger: Logger) async throws(UserError) -> Daemon.Store {
    let directory = (config.databasePath as NSString).deletingLastPathComponent
    if !directory.isEmpty {
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }
    let database = try SQLiteUserRepository(path: config.databasePath)
    try await fillWithSampleData(database, config, logger: logger)
    // Observing the repository: our own commits reach every session at once, not at the next poll.
    let feed = try SQLiteChangeFeed(observing: database)
    let source: any UserRepository
    let description: String
    if let upstream = config.upstreamURL {
        guard let url = URL(string: upstream), url.scheme == "http" || url.scheme == "https" else {
            throw .unavailable(reason: "upstream '\(upstream)' is not an http(s) URL")
        }
        source = CachedUserRepository(upstream: RemoteUserRepository(configuration: .init(baseURL: url)),
                                      cache: database)
        description = "\(upstream) cached in sqlite:\(config.databasePath)"
    } else {
        source = database
        description = "sqlite:\(config.databasePath)"
    }
    // Sessions showing the same page share one copy of it; any commit, ours or another
    // process's (seen through the feed), clears it before sessions hear of it.
    let repository = SharedPageRepository(base: source)
    // History is the store of record's: an upstream (REST) source keeps none.
    let history: (any UserHistoryRepository)? = config.upstreamURL == nil ? database : nil
    return Daemon.Store(repository: repository, feed: PageInvalidatingFeed(base: feed, pages: repository),
                        description: description, history: history, close: {
        _ = feed
        // A clean stop leaves the newest commits in the database file itself, not in its WAL.
        do {
            let left = try database.checkpointForShutdown()
            if left > 0 {
                logger.warning("\(left) WAL pages could not be copied at shutdown; the next start copies them")
            }
        } catch {
            logger.warning("Could not checkpoint the store at shutdown: \(error)")
        }
    })
}
