import UserListTestSupport
import UserListWire

/// Builders for session state documents of the shape in Protocol/PROTOCOL.md.
enum StateFixtures {
    static let names = ["Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov",
                        "Donald Knuth", "Frances Allen", "Ken Thompson", "Radia Perlman", "Leslie Lamport",
                        "Zoë Ångström", "名前 テスト", "O'Brien \"Quote\"", "Tab\tSlash/Tilde~"]

    static func uuid<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        let hex = Array("0123456789abcdef")
        var out = ""
        for i in 0..<32 {
            if [8, 12, 16, 20].contains(i) { out.append("-") }
            out.append(hex[Int(rng.next() % 16)])
        }
        return out
    }

    static func user<R: RandomNumberGenerator>(_ rng: inout R) -> JSONValue {
        let name = names[Int(rng.next() % UInt64(names.count))] + " \(rng.next() % 1000)"
        return [
            "id": .string(uuid(&rng)),
            "name": .string(name),
            "email": .string("user\(rng.next() % 100_000)@example.com"),
            "avatar_url": rng.next() % 3 == 0 ? .null : .string("https://avatars.example.com/\(rng.next() % 9999).png"),
            "version": .int(Int64(rng.next() % 20 + 1)),
        ]
    }

    static func users(count: Int, seed: UInt64 = 1) -> [JSONValue] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { _ in user(&rng) }
    }

    static func listScreen(users: [JSONValue], search: String? = nil) -> JSONValue {
        [
            "id": "list", "kind": "list",
            "state": [
                "users": .array(users),
                "loading": "none",
                "error_message": nil,
                "has_more": true,
                "has_previous": false,
                "total_count": .int(Int64(users.count)),
                "search": search.map(JSONValue.string) ?? .null,
                "is_stale": false,
            ],
        ]
    }

    static func detailScreen(user: JSONValue) -> JSONValue {
        [
            "id": "detail", "kind": "detail",
            "state": [
                "user_id": user["id"]!,
                "user": user,
                "draft_name": user["name"]!,
                "draft_email": user["email"]!,
                "draft_avatar_url": "",
                "dirty_fields": [],
                "field_errors": [:],
                "is_dirty": false,
                "can_save": false,
                "is_saving": false,
                "is_new": false,
                "read_only": false,
                "error_message": nil,
                "conflicts": [],
                "followed": [],
                "removal": nil,
            ],
        ]
    }

    static func state(_ screens: JSONValue...) -> JSONValue { ["screens": .array(screens)] }
}
