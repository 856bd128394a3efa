import Foundation
import Glibc
import Synchronization
import ThreadLocks
import UserListDomain

/// Presence between the daemons sharing one PostgreSQL database, over `NOTIFY`/`LISTEN` on
/// `PostgresSchema.presenceChannel`: nothing is written to a table, and a message reaches
/// whoever listens at the time (a daemon that was away asks again when it comes back).
///
/// One connection of its own, on one thread of its own, both listens and sends: apart from the
/// change feed's, so a long catch-up of the change log never holds presence up, and so what the
/// daemon hands over is sent in the order it was queued (the thread is the only sender). After
/// a disconnect it reconnects with backoff (0.1 s doubling to 5 s) and tells its daemon, which
/// asks the others to say again what they hold and says again what it holds.
public final class PostgresPresenceRelay: PresenceRelay, Sendable {
    private let core: Core

    /// Does not connect yet: `start` does, on the relay's thread (a failure there is retried).
    public init(connection: PGConnectionString) {
        core = Core(connection: connection)
    }

    public func start(daemon: String, receive: @escaping @Sendable (PresenceMessage) -> Void,
                      outgoing: @escaping @Sendable () -> [PresenceMessage]) {
        let core = self.core
        core.willStart()
        let thread = Thread { core.run(daemon: daemon, receive: receive, outgoing: outgoing) }
        thread.name = "userlistd.postgres.presence"
        thread.start()
    }

    public func wake() { core.wake() }

    public func stop() async {
        await withCheckedContinuation { continuation in core.stop(then: { continuation.resume() }) }
    }
}

extension PostgresPresenceRelay {
    final class Core: Sendable {
        /// Its PGconn: the relay thread's alone (the first to use it).
        private let owned: Confined<PGConnection>
        private var connection: PGConnection { owned.value }
        private let stopping = Atomic<Bool>(false)
        /// Called once the thread has ended (or at once if it never started).
        private let finished = Lock<(ended: Bool, waiters: [@Sendable () -> Void])>((false, []))
        private let started = Atomic<Bool>(false)
        private let wakePipe = WakePipe()

        init(connection: PGConnectionString) {
            owned = Confined(PGConnection(conninfo: connection.value, server: connection.redacted), to: .firstUser)
        }

        func wake() {
            wakePipe.wake()
        }

        func willStart() { started.store(true, ordering: .sequentiallyConsistent) }

        func stop(then done: @escaping @Sendable () -> Void) {
            stopping.store(true, ordering: .sequentiallyConsistent)
            let now = finished.withLock { state -> Bool in
                if state.ended || !started.load(ordering: .sequentiallyConsistent) { return true }
                state.waiters.append(done)
                return false
            }
            if now { done() } else { wake() }
        }

        // MARK: on the relay's thread

        func run(daemon: String, receive: @Sendable (PresenceMessage) -> Void, outgoing: () -> [PresenceMessage]) {
            var decoder = PresencePayload.Decoder()
            var backoff = Duration.milliseconds(100)
            var connected = false
            while true {
                let stop = stopping.load(ordering: .sequentiallyConsistent)
                if !connected {
                    if stop { break }  // nobody hears a goodbye without a connection; the others expire us
                    do {
                        try connection.connect()
                        try connection.execute("LISTEN \(PostgresSchema.presenceChannel)", "listening for presence")
                        connected = true
                        backoff = .milliseconds(100)
                        decoder = PresencePayload.Decoder()
                        receive(.ask(daemon: daemon))
                    } catch {
                        connection.disconnect()
                        wakePipe.sleep(backoff)  // or less, when woken to stop
                        backoff = min(backoff * 2, .seconds(5))
                        continue
                    }
                }
                do {
                    try send(outgoing().flatMap(PresencePayload.encode))
                    if stop { break }
                    let notifications = try connection.waitForNotifications(timeout: .seconds(1),
                                                                            wake: wakePipe.readEnd)
                    for notification in notifications {
                        guard notification.channel == PostgresSchema.presenceChannel,
                              let message = decoder.decode(notification.payload), message.daemon != daemon else {
                            continue
                        }
                        receive(message)
                    }
                } catch {
                    connection.disconnect()
                    connected = false
                }
            }
            connection.disconnect()
            let waiters = finished.withLock { state in
                state.ended = true
                return state.waiters
            }
            for waiter in waiters { waiter() }
        }

        /// Sends `payloads` in one round trip (a renewal is one per held user), in order: one
        /// statement, so one transaction, whose notifications PostgreSQL delivers in order.
        private func send(_ payloads: [String]) throws(PGError) {
            guard !payloads.isEmpty else { return }
            let array = (try? JSONEncoder().encode(payloads)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
            try connection.query("""
                SELECT pg_notify($1, payload)
                FROM json_array_elements_text($2::json) WITH ORDINALITY AS sent(payload, position)
                ORDER BY position
                """, [PostgresSchema.presenceChannel, array], "announcing presence")
        }
    }
}
