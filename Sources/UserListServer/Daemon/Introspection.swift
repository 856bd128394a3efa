import Foundation
import Glibc
import Synchronization
import UserListDomain
import UserListWire
import ThreadLocks

/// Answers `status` and `sessions` for root and the admin group: what an operator checks first.
package struct Introspection: Sendable {
    package let startedAt: ContinuousClock.Instant
    package let storeDescription: String
    package let version: String
    package let storeHealth: StoreHealth
    /// Session keys are shown at most this long (as a hello bounds them).
    static let keyBytes = ClientMessage.Hello.maximumSessionKeyBytes

    package init(startedAt: ContinuousClock.Instant, storeDescription: String, version: String,
                 storeHealth: StoreHealth = StoreHealth()) {
        self.startedAt = startedAt
        self.storeDescription = storeDescription
        self.version = version
        self.storeHealth = storeHealth
    }

    package func status(registry: SessionRegistry) -> JSONValue {
        let sessions = registry.allSessions
        let clients = sessions.reduce(0) { $0 + $1.activity.withLock { $0.clients } }
        let problem: JSONValue
        if case .unavailable(let reason) = storeHealth.current { problem = .string(reason) } else { problem = .null }
        return .object([
            "version": .string(version),
            "pid": .int(Int64(getpid())),
            "uptime_seconds": .double(Self.seconds(ContinuousClock.now - startedAt)),
            "sessions": .int(Int64(sessions.count)),
            "clients": .int(Int64(clients)),
            "connections": .int(Int64(registry.connectionCount)),
            "store": .string(storeDescription),
            "store_available": .bool(problem == .null),
            "store_problem": problem,
            "rss_bytes": .int(Int64(Self.residentBytes())),
        ])
    }

    /// Rows in one `sessions` reply at most. A row is at most ~500 bytes (session keys are at most
    /// 128 bytes of printable ASCII, see `ClientMessage.Hello`), so a full reply stays far below
    /// the 16 MiB frame limit however many sessions there are.
    package static let maximumSessionRows = 10_000

    /// One page of sessions, ordered by session id. When more remain, the last element is not a
    /// session but `{"truncated": true, "next": "<last id shown>", "omitted": n}`; `after` (the
    /// `next` of the previous page) continues from there.
    package func sessions(registry: SessionRegistry, after: String? = nil,
                          limit: Int = maximumSessionRows) -> JSONValue {
        let now = ContinuousClock.now
        let limit = max(1, min(limit, Self.maximumSessionRows))
        var all = registry.allSessions
        if let after { all = all.filter { $0.id > after } }
        all.sort { $0.id < $1.id }
        let shown = all.prefix(limit)
        var names: [UInt32: JSONValue] = [:]  // one passwd lookup per uid, not per session
        var rows: [JSONValue] = shown.map { session in
            let activity = session.activity.withLock { $0 }
            let uid = session.key.uid
            if names[uid] == nil { names[uid] = GroupMembership.user(uid).map { .string($0.name) } ?? .null }
            return .object([
                "id": .string(session.id),
                "uid": .int(Int64(uid)),
                "user": names[uid]!,
                // Bounded even for a key saved by an older daemon that did not bound them.
                "key": .string(String(decoding: session.key.clientKey.utf8.prefix(Self.keyBytes), as: UTF8.self)),
                "clients": .int(Int64(activity.clients)),
                "screens": .int(Int64(activity.screens)),
                "screen": .string(Self.screen(activity.screens)),
                "user_open": activity.open.map { .string(UUIDText.lowercase($0.user)) } ?? .null,
                // Attached or not: a detached session's draft is the one being kept for its person.
                "draft": .bool(activity.open?.draft ?? false),
                "idle_seconds": .double(Self.seconds(now - activity.lastActive)),
                "read_only": .bool(session.readOnly),
            ])
        }
        if all.count > shown.count, let last = shown.last {
            rows.append(.object([
                "truncated": .bool(true),
                "next": .string(last.id),
                "omitted": .int(Int64(all.count - shown.count)),
            ]))
        }
        return .array(rows)
    }

    /// The screen on top of a stack of `count` (PROTOCOL.md §5: the list, at most one user's
    /// detail above it, and at most that user's history above that).
    static func screen(_ count: Int) -> String {
        switch count {
        case ...1: "list"
        case 2: "user"
        default: "history"
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        let (s, atto) = duration.components
        return (Double(s) + Double(atto) / 1e18).rounded(toPlaces: 3)
    }

    /// VmRSS from /proc/self/status.
    package static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let digits = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            return digits * 1024
        }
        return 0
    }
}

extension Double {
    fileprivate func rounded(toPlaces places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (self * scale).rounded() / scale
    }
}
