import Foundation
import Glibc
import ThreadLocks
import UserListPresentation

/// How the sessions stop, the daemon's biggest part: stop accepting, say goodbye (or hand the
/// connections to the next process), finish the saves in flight, save every session, and close
/// or hand over the listening socket. Its outcome (what was saved, what was handed over) is what
/// the daemon's last step needs.
struct SessionShutdown: Sendable {
    let config: DaemonConfig
    let logger: Logger
    let registry: SessionRegistry
    let context: ServerContext
    let sessionStore: SessionStore
    let journal: SessionJournal?
    let listenFD: Int32
    /// A socket this daemon made (not systemd's): unlinked at a plain stop, handed over at a restart.
    let ownsSocketPath: Bool

    struct Outcome: Sendable {
        var savedSessions = 0
        /// Descriptors for the next process (empty at a plain stop, or when the handover failed).
        var handed: [(name: String, fd: Int32)] = []
    }

    func closeListener() {
        close(listenFD)
        if ownsSocketPath { unlink(config.socketPath) }
    }

    /// `route`: nil for a plain stop.
    func run(route: Handover.Route?) async -> Outcome {
        let sessions = registry.allSessions
        // A handover's file is encoded and written on another thread while the sessions are
        // saved below: each is a JSON encode of about a thousand entries on a big restart, and
        // every client waits for both.
        var handoverWritten: Task<[(name: String, fd: Int32)]?, Never>?
        var states: [(session: Session, saved: Session.Saved)]?
        if let route {
            var collected = await Handover.collect(sessions: sessions, handlers: context.allHandlers, logger: logger)
            collected.file.throughStore = route == .descriptorStore
            states = collected.savedStates
            collected.savedStates = []
            handoverWritten = Task.detached { [collected, directory = config.stateDirectory, logger] in
                guard Handover.write(collected.file, directory: directory, logger: logger) else {
                    for (_, fd) in collected.descriptors { close(fd) }
                    return nil
                }
                return collected.descriptors
            }
        } else {
            closeListener()  // at once: a client connecting now is refused rather than left waiting
            for session in sessions { await session.sayGoodbye(reason: "shutting_down") }
            for session in sessions { await session.finishInFlightWork() }
        }  // (a handover finished the work in flight already, and says no goodbye)
        let saved = if let states { Self.saved(states) } else { await Self.saveStates(of: sessions) }
        // The whole save; then the journal goes, without waiting for its thread. If the save
        // failed, the journal's last batch is written instead, so the next start has them all.
        journal?.waitUntilStarted()
        if sessionStore.save(saved, logger: logger) { journal?.abandon() } else { journal?.finish() }
        var outcome = Outcome(savedSessions: saved.count)
        if let written = await handoverWritten?.value {  // awaited: no task outlives the stop
            outcome.handed = written
            // The listening socket too, unless a socket unit holds it (then it comes back by itself).
            if ownsSocketPath { outcome.handed.append((Handover.listenName, listenFD)) }
        }
        if route != nil && !outcome.handed.contains(where: { $0.fd == listenFD }) { closeListener() }
        // Give clients a moment to read their goodbye before the process ends.
        if outcome.handed.isEmpty { try? await Task.sleep(for: .milliseconds(50)) }
        return outcome
    }

    /// Every session's state at once (each is its own actor).
    private static func saveStates(of sessions: [Session]) async -> [SavedSession] {
        let states = await withTaskGroup(of: (session: Session, saved: Session.Saved).self) { group in
            for session in sessions {
                group.addTask { (session, await session.saved) }
            }
            var all: [(session: Session, saved: Session.Saved)] = []
            for await item in group { all.append(item) }
            return all
        }
        return saved(states)
    }

    /// What a restore uses of each state (the list's rows are reloaded: a tenth of the bytes to
    /// write and read back), and since when its session has had no client.
    private static func saved(_ states: [(session: Session, saved: Session.Saved)]) -> [SavedSession] {
        let wallNow = Date()
        let clockNow = ContinuousClock.now
        return states.map { session, saved in
            // Clients still attached now are being told goodbye: their retention starts now.
            let detachedAt = session.activity.withLock { activity in
                activity.clients == 0 ? activity.detachedAt.map { wallNow - seconds(clockNow - $0) } : wallNow
            } ?? wallNow
            return SavedSession(key: session.key, id: session.id, state: SessionJournal.reduced(saved.state),
                                detachedAt: detachedAt, listWindow: saved.listWindow, client: saved.client)
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
