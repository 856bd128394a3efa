import Foundation
import UserListDomain

/// `PresenceMessage`s as `NOTIFY` payloads: small JSON objects, each far below PostgreSQL's
/// 8,000-byte limit. A user held by so many people on one daemon that their names would not fit
/// is announced in parts (`p` of `n`), sent in order on one connection, which PostgreSQL
/// delivers in order; the receiver puts them together before passing the message on.
///
/// `{"d": daemon, "k": "h" | "g" | "a", "u": user, "h": [{"n": name, "e": editing}], "p": 0, "n": 1}`
enum PresencePayload {
    /// Bytes a payload may take, with room to spare under PostgreSQL's 8,000.
    static let budget = 7_000

    private struct Wire: Codable {
        var d: String
        var k: String
        var u: String?
        var h: [Holder]?
        var p: Int?
        var n: Int?
    }

    private struct Holder: Codable {
        var n: String
        var e: Bool
    }

    /// The payloads that carry `message`, in order.
    static func encode(_ message: PresenceMessage) -> [String] {
        switch message {
        case .gone(let daemon): return [text(Wire(d: daemon, k: "g"))]
        case .ask(let daemon): return [text(Wire(d: daemon, k: "a"))]
        case .holders(let daemon, let user, let holders):
            let empty = text(Wire(d: daemon, k: "h", u: UUIDText.lowercase(user), h: [], p: 0, n: 0))
            let parts = split(holders.map { Holder(n: $0.name, e: $0.editing) },
                              room: budget - empty.utf8.count - 40)
            return parts.enumerated().map { index, part in
                text(Wire(d: daemon, k: "h", u: UUIDText.lowercase(user), h: part, p: index, n: parts.count))
            }
        }
    }

    /// `holders` in runs whose JSON fits in `room` bytes (at least one run, maybe empty). A
    /// name too long to fit alone is left out: no login name comes near it.
    private static func split(_ holders: [Holder], room: Int) -> [[Holder]] {
        var parts: [[Holder]] = [[]]
        var used = 0
        for holder in holders {
            let size = text(holder).utf8.count + 1
            guard size <= room else { continue }
            if used + size > room {
                parts.append([])
                used = 0
            }
            parts[parts.count - 1].append(holder)
            used += size
        }
        return parts
    }

    private static func text(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// Puts messages back together from payloads in the order they arrived.
    struct Decoder {
        /// The longest name taken (Linux allows 32 bytes; NSS elsewhere may allow more).
        static let longestName = 256

        /// Parts of a `holders` message still coming, by daemon and user.
        private var partial: [String: (next: Int, holders: [PresenceHolder])] = [:]

        /// The message `payload` completes, or nil (a part of one still coming, or not ours).
        mutating func decode(_ payload: String) -> PresenceMessage? {
            guard let wire = try? JSONDecoder().decode(Wire.self, from: Data(payload.utf8)) else { return nil }
            switch wire.k {
            case "g": return .gone(daemon: wire.d)
            case "a": return .ask(daemon: wire.d)
            case "h":
                guard let text = wire.u, let user = UUIDText.parse(text) else { return nil }
                // Login names are short: anything else is not a daemon's word, and is not shown.
                let holders = (wire.h ?? []).filter { $0.n.utf8.count <= Self.longestName }
                    .map { PresenceHolder(name: $0.n, editing: $0.e) }
                let part = wire.p ?? 0, count = wire.n ?? 1
                let key = wire.d + "\n" + text
                // A part out of turn (its start was lost while disconnected) starts nothing.
                let earlier: [PresenceHolder]?
                if part == 0 {
                    earlier = []
                } else if let pending = partial[key], pending.next == part {
                    earlier = pending.holders
                } else {
                    earlier = nil
                }
                partial[key] = nil
                guard let earlier else { return nil }
                if part + 1 < count {
                    partial[key] = (part + 1, earlier + holders)
                    return nil
                }
                return .holders(daemon: wire.d, user: user, earlier + holders)
            default:
                return nil
            }
        }
    }
}
