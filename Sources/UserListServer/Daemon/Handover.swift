import Foundation
import Glibc
import UserListPresentation
import UserListWire

/// Carries a state through `ClientHandler`, which does not see the Presentation layer's types.
package struct NavigationStateBox: Sendable {
    package let state: NavigationState
    package init(_ state: NavigationState) { self.state = state }
}

/// A restart or upgrade that no client notices.
///
/// The stopping process stops reading, lets queued intents and saves finish, and takes every
/// attached client's connection out of its event loop without closing it (`Connection.handOver`).
/// It writes `handover.json` to the state directory: for each connection a name, its session
/// key, its stream position (epoch, seq), the bytes queued for it but not yet written and those
/// read from it but not yet handled (an unfinished frame, frames its uid's budget held back); for
/// each session the state its clients hold. Then the descriptors go to the next process: to the
/// service manager's descriptor store (`FDSTORE=1`, `FDNAME=ul-c-N`; systemd passes them to the
/// next start in LISTEN_FDS with LISTEN_FDNAMES), or, for `SIGUSR2`, straight into a re-exec of
/// the binary (same pid, LISTEN_FDS set by the daemon itself, as nginx and HAProxy upgrade).
///
/// The next process restores the sessions, adopts each connection (`ClientHandler.resumeAttached`)
/// and continues its stream: the next frame the client reads is a patch in the same epoch with
/// the next seq (or, if the session changed in between, one snapshot). The client never sees the
/// connection drop, so it never reconnects. What a client sent before the restart began is
/// read and answered by the stopping process; what it sends after waits in the socket.
package enum Handover {
    package static let fileName = "handover.json"
    /// The name of the listening socket the daemon made itself (a socket unit's keeps its own).
    package static let listenName = "ul-listen"
    package static let connectionPrefix = "ul-c-"

    struct Stream: Codable {
        var name: String
        var key: SessionKey
        var epoch: Int
        var seq: Int
        var awaitingSnapshot: Bool
        var unsent: Data
        /// Bytes read from the client and not yet handled (nil in files of older versions).
        var unhandled: Data?
    }

    /// The state a session's clients hold, its list kept apart: sessions showing the same
    /// page share one copy in `File.lists` (a thousand terminals on the first page write it once).
    struct HeldState: Codable {
        var key: SessionKey
        var list: Int
        /// The stack with an empty list in place of `File.lists[list]`.
        var state: NavigationState
    }

    struct File: Codable {
        var streams: [Stream] = []
        var states: [HeldState] = []
        var lists: [UserListState] = []
        /// Whether the descriptors go through the service manager's store (false: a re-exec),
        /// so the next process asks the store to let go of them; nil in a file of an older
        /// version, which always asked. The ask is a message per connection, a dozen
        /// milliseconds for a thousand that a re-exec's clients need not wait.
        var throughStore: Bool?

        mutating func hold(_ state: NavigationState, for key: SessionKey) {
            guard case .list(let list) = state.screens.first else {
                return states.append(HeldState(key: key, list: -1, state: state))
            }
            // Few distinct pages in practice; past 64 the search is not worth it.
            let index = lists.count <= 64 ? lists.firstIndex(of: list) : nil
            if index == nil { lists.append(list) }
            var rest = state
            rest.screens[0] = .list(UserListState())
            states.append(HeldState(key: key, list: index ?? lists.count - 1, state: rest))
        }

        func held(_ entry: HeldState) -> NavigationState {
            guard lists.indices.contains(entry.list), !entry.state.screens.isEmpty else { return entry.state }
            var state = entry.state
            state.screens[0] = .list(lists[entry.list])
            return state
        }
    }

    /// How the descriptors travel.
    package enum Route: Sendable {
        /// To the service manager's store (`systemctl restart`, or a stop and a later start).
        case descriptorStore
        /// Into a new image of the binary, same pid (`SIGUSR2`).
        case reexec
    }

    /// The connections taken out of this process, named, and what the next one needs to know.
    struct Collected {
        var file = File()
        var descriptors: [(name: String, fd: Int32)] = []
        /// Every session's state to save, read in the same visit.
        var savedStates: [(session: Session, saved: Session.Saved)] = []
    }

    // MARK: the stopping process

    /// Reads what each connection's client sent so far, then stops reading every connection
    /// (a save sent just before a restart is not left to wait for the next process), waits (up
    /// to 2 s) for what they sent to be handled and for saves in flight, then takes each
    /// attached connection out of the loop. Connections that never attached are closed (their
    /// clients simply connect again).
    static func collect(sessions: [Session], handlers: [ClientHandler], logger: Logger) async -> Collected {
        let started = ContinuousClock.now
        for handler in handlers { handler.connection.pauseReadingAfterDraining(because: .handover) }
        // Each pause is a job on its connection's loop: only once a job queued after them has
        // run on every loop is no more read, so that "idle" below means every intent read is
        // answered. Judged earlier, an intent read meanwhile lost its reply with the connection
        // taken out (its client waited for it forever).
        var loops: [ObjectIdentifier: EventLoop] = [:]
        for handler in handlers { loops[ObjectIdentifier(handler.connection.loop)] = handler.connection.loop }
        for loop in loops.values {
            await withCheckedContinuation { (ran: CheckedContinuation<Void, Never>) in loop.execute { ran.resume() } }
        }
        let deadline = ContinuousClock.now + .seconds(2)
        while handlers.contains(where: { !$0.isIdle }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(2))
        }
        let idle = ContinuousClock.now
        // Every session at once (each is its own actor), each in one visit to its loop.
        let handedSessions = await withTaskGroup(of: (Session, TakenOver).self) { group in
            for session in sessions {
                group.addTask { (session, await takeOver(session)) }
            }
            var all: [(Session, TakenOver)] = []
            all.reserveCapacity(sessions.count)
            for await item in group { all.append(item) }
            return all
        }
        defer {
            logger.notice("Handover: \(handlers.count) connections idle after \(idle - started), "
                          + "collected after \(ContinuousClock.now - started)")
        }
        var collected = Collected()
        var handed = Set<ObjectIdentifier>()
        for (session, takenOver) in handedSessions {
            collected.savedStates.append((session, takenOver.saved))
            guard !takenOver.taken.isEmpty else { continue }
            for (stream, handler, connection) in takenOver.taken {
                handed.insert(ObjectIdentifier(handler))
                let name = connectionPrefix + String(collected.descriptors.count)
                collected.descriptors.append((name, connection.fd))
                collected.file.streams.append(Stream(
                    name: name, key: session.key, epoch: stream.epoch, seq: stream.seq,
                    awaitingSnapshot: stream.awaitingSnapshot, unsent: Data(connection.unsent),
                    unhandled: connection.unhandled.isEmpty ? nil : Data(connection.unhandled)))
            }
            collected.file.hold(takenOver.held, for: session.key)
        }
        // Each handed descriptor left its loop when `handOver` returned.
        for handler in handlers where !handed.contains(ObjectIdentifier(handler)) { handler.connection.close() }
        return collected
    }

    typealias Taken = (stream: Session.HandedStream, handler: ClientHandler, connection: Connection.HandedOver)

    /// What one session gave up: the state its clients hold, the state to save, its connections.
    struct TakenOver: Sendable {
        var held: NavigationState
        var saved: Session.Saved
        var taken: [Taken]
    }

    /// On `session`'s loop, in one visit: its saves finished, its streams, and its connections
    /// taken out of their loop (there and then for those on the session's own loop, the usual
    /// case). A visit is a hop to a loop and back; a thousand sessions taken one hop each
    /// instead of three (and not a thousand connections one after another) shortens a restart.
    private static func takeOver(_ session: isolated Session) async -> TakenOver {
        await session.finishInFlightWork()
        let (held, streams) = session.handOver()
        var taken: [Taken] = []
        for stream in streams {
            guard let handler = stream.client as? ClientHandler else { continue }
            let connection = handler.connection
            let handed = connection.loop.isLoopThread ? connection.handOverOnLoop() : await connection.handOver()
            guard let handed else { continue }
            taken.append((stream, handler, handed))
        }
        return TakenOver(held: held, saved: session.saved, taken: taken)
    }

    /// Writes `handover.json` (aside, synced, renamed). Returns whether it is in place.
    static func write(_ file: File, directory: String, logger: Logger) -> Bool {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data(file.jsonBytes()).write(to: URL(fileURLWithPath: directory + "/" + fileName), options: .atomic)
            return true
        } catch {
            logger.error("Cannot write \(directory)/\(fileName): \(error); clients will reconnect instead")
            return false
        }
    }

    /// Hands every descriptor to the service manager's store. Our own copies are closed after;
    /// the store keeps the connections open until the next process takes them.
    static func store(_ descriptors: [(name: String, fd: Int32)], notifier: SystemdNotifier, logger: Logger) -> Int {
        var stored = 0
        for (name, fd) in descriptors {
            if notifier.storeFD(fd, name: name) { stored += 1 }
            close(fd)
        }
        if stored < descriptors.count {
            logger.error("The service manager took \(stored) of \(descriptors.count) descriptors; "
                         + "is FileDescriptorStoreMax= set in the unit?")
        }
        return stored
    }

    // MARK: the starting process

    /// Reads and removes `handover.json`.
    static func load(directory: String, logger: Logger) -> File? {
        let path = directory + "/" + fileName
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        defer { unlink(path) }
        if let parsed = try? JSONValue(parsing: data), let file = File(json: parsed) { return file }
        do {
            return try JSONDecoder().decode(File.self, from: data)
        } catch {
            logger.warning("Ignoring an unreadable \(path): \(error)")
            return nil
        }
    }

    /// Takes back the connections the previous process handed over: each is attached to its
    /// session (restored already) and its stream goes on. Descriptors not named in the file are
    /// closed. Returns how many connections were adopted.
    static func adopt(_ file: File?, descriptors: [(fd: Int32, name: String)], context: ServerContext,
                      loops: EventLoopGroup,
                      notifier: SystemdNotifier) -> Int {
        var adopted = 0
        let streams = Dictionary((file?.streams ?? []).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let states = Dictionary((file?.states ?? []).map { ($0.key, file!.held($0)) },
                                uniquingKeysWith: { first, _ in first })
        for (fd, name) in descriptors {
            // Ours now; the store's copy would keep the socket open.
            if file?.throughStore != false { notifier.removeStoredFD(name: name) }
            guard let stream = streams[name], let peer = UnixSocket.peerCredentials(fd) else {
                close(fd)
                continue
            }
            context.registry.forceConnectionOpened(uid: peer.uid)
            let found: (session: Session, resumed: Bool)
            do throws(SessionRegistry.AttachError) {
                found = try context.registry.session(for: stream.key, on: loops.next())
            } catch {
                context.registry.connectionClosed(uid: peer.uid)
                close(fd)
                continue
            }
            // On its session's loop: its intents and patches then stay on one thread.
            let connection = Connection(
                fd: fd, peer: peer, loop: found.session.loop,
                limits: .init(softLimit: context.config.clientBufferBytes,
                              hardLimit: max(context.config.clientBufferBytes * 16, 4 << 20)),
                liveObjects: context.liveObjects)
            let handler = ClientHandler(connection: connection, context: context)
            let held = states[stream.key]
            handler.resumeAttached(to: found.session, epoch: stream.epoch, seq: stream.seq,
                                   holding: NavigationStateBox(held ?? NavigationState(screens: [])),
                                   awaitingSnapshot: stream.awaitingSnapshot || held == nil)
            context.registry.attachFinished(stream.key)
            if !stream.unsent.isEmpty { connection.send([UInt8](stream.unsent), droppable: false) }
            connection.start(delegate: handler, farewell: farewell,
                             replaying: [UInt8](stream.unhandled ?? Data())) { [logger = context.logger] error in
                logger.error("Could not watch a connection handed over: \(error)")
            }
            adopted += 1
        }
        return adopted
    }

    private static let farewell: [UInt8]? =
        try? FrameEncoder(maximumFrameSize: FrameLimits.serverToClient)
            .encode(ServerMessage.goodbye(reason: "slow_client"))
}
