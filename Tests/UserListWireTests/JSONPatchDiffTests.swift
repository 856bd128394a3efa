import Testing
import UserListTestSupport
import UserListWire

@Suite struct JSONPatchDiffTests {
    typealias F = StateFixtures

    func roundTrip(_ a: JSONValue, _ b: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) throws -> [PatchOperation] {
        let ops = JSONPatch.diff(from: a, to: b)
        let applied = try JSONPatch.apply(ops, to: a)
        #expect(applied == b, "apply(diff(a,b), a) != b with ops \(ops.map(\.json))", sourceLocation: sourceLocation)
        return ops
    }

    func users(_ state: JSONValue) -> [JSONValue] { state["screens"]!.arrayValue![0]["state"]!["users"]!.arrayValue! }

    @Test func renameInThousandRowsIsOneReplace() throws {
        var rows = F.users(count: 1000)
        let a = F.state(F.listScreen(users: rows))
        guard case .object(var row) = rows[417] else {
            Issue.record("row 417 of the fixture is not an object: \(rows[417])")
            return
        }
        row["name"] = "Renamed Person"
        rows[417] = .object(row)
        let ops = try roundTrip(a, F.state(F.listScreen(users: rows)))
        #expect(ops == [.replace(path: "/screens/0/state/users/417/name", value: "Renamed Person")])
    }

    @Test func appendingAPageIsOnlyAdds() throws {
        let rows = F.users(count: 100)
        let page = F.users(count: 50, seed: 99)
        let a = F.state(F.listScreen(users: rows))
        var screen = F.listScreen(users: rows + page)
        // total_count stays as in `a` so only the rows change.
        if case .object(var s) = screen, case .object(var st) = s["state"]! {
            st["total_count"] = .int(100); s["state"] = .object(st); screen = .object(s)
        }
        let ops = try roundTrip(a, F.state(screen))
        #expect(ops.count == 50)
        for (i, op) in ops.enumerated() {
            guard case .add(let path, let value) = op else { Issue.record("not an add: \(op)"); continue }
            #expect(path == JSONPointer(parsing: "/screens/0/state/users/\(100 + i)"))
            #expect(value == page[i])
        }
    }

    @Test func oneRemovalIsOneRemove() throws {
        var rows = F.users(count: 300)
        let a = F.state(F.listScreen(users: rows))
        rows.remove(at: 123)
        var b = F.listScreen(users: rows)
        if case .object(var s) = b, case .object(var st) = s["state"]! {
            st["total_count"] = .int(300); s["state"] = .object(st); b = .object(s)
        }
        let ops = try roundTrip(a, F.state(b))
        #expect(ops == [.remove(path: "/screens/0/state/users/123")])
    }

    @Test func rowMovedByResortIsOneMovePlusTheChange() throws {
        var rows = F.users(count: 500)
        let a = F.state(F.listScreen(users: rows))
        // Row 10 is renamed and re-sorts to position 400, and row 450 to position 3.
        var moved = rows.remove(at: 10)
        if case .object(var o) = moved { o["name"] = "Zed"; moved = .object(o) }
        rows.insert(moved, at: 400)
        let other = rows.remove(at: 450)
        rows.insert(other, at: 3)
        let ops = try roundTrip(a, F.state(F.listScreen(users: rows)))
        #expect(ops.filter { $0.name == "move" }.count == 2)
        #expect(ops.count == 3, "\(ops.map(\.json))")
    }

    @Test func pushAndPopScreens() throws {
        let rows = F.users(count: 20)
        let list = F.listScreen(users: rows)
        let a = F.state(list)
        let b = F.state(list, F.detailScreen(user: rows[4]))
        let push = try roundTrip(a, b)
        #expect(push.count == 1)
        #expect(push.first?.path == "/screens/1")
        let pop = try roundTrip(b, a)
        #expect(pop == [.remove(path: "/screens/1")])
    }

    @Test func arraysWithoutIdsAndScalars() throws {
        _ = try roundTrip([1, 2, 3, 4, 5], [1, 2, 9, 4, 5, 6])
        _ = try roundTrip([1, 2, 3], [])
        _ = try roundTrip([], ["a", nil, true])
        _ = try roundTrip(["a": 1], ["b": 1])
        _ = try roundTrip(1, "x")
        _ = try roundTrip(["a/b": ["~c": 1]], ["a/b": ["~c": 2]])
        #expect(JSONPatch.diff(from: 1, to: 1.0).isEmpty)
        #expect(JSONPatch.diff(from: [1, 2, 3], to: [1, 2, 3]).isEmpty)
    }

    @Test func manyMovesFallBackToOneReplace() throws {
        let rows = F.users(count: 400)
        let ops = try roundTrip(.array(rows), .array(rows.reversed()))
        #expect(ops.count == 1)
    }

    /// Moving k rows costs exactly k `move` ops (the longest increasing run stays put), whichever
    /// direction they move in.
    @Test func movesAreMinimal() throws {
        var rng = SplitMix64(seed: 77)
        for _ in 0..<200 {
            var rows = F.users(count: Int(rng.next() % 200) + 10, seed: rng.next())
            let a = JSONValue.array(rows)
            let k = Int(rng.next() % 3) + 1
            var movedIDs = Set<String>()
            for _ in 0..<k {
                let from = Int(rng.next() % UInt64(rows.count))
                let row = rows.remove(at: from)
                rows.insert(row, at: Int(rng.next() % UInt64(rows.count + 1)))
                movedIDs.insert(row["id"]!.stringValue!)
            }
            let ops = try roundTrip(a, .array(rows))
            #expect(ops.allSatisfy { $0.name == "move" }, "\(ops.map(\.json))")
            #expect(ops.count <= movedIDs.count)
        }
    }

    @Test func identicalDocumentsGiveNoOps() {
        let doc = F.state(F.listScreen(users: F.users(count: 1000)))
        #expect(JSONPatch.diff(from: doc, to: doc).isEmpty)
    }

    /// Random edits of random documents; the invariant is apply(diff(a, b), a) == b.
    @Test func randomEditsRoundTrip() throws {
        var rng = SplitMix64(seed: 0x5EED)
        for iteration in 0..<400 {
            let count = Int(rng.next() % 301)
            var rows = F.users(count: count, seed: rng.next())
            _ = iteration
            let detailA: JSONValue? = rng.next() % 2 == 0 && !rows.isEmpty ? rows[Int(rng.next() % UInt64(rows.count))] : Optional.none
            let a = detailA.map { F.state(F.listScreen(users: rows), F.detailScreen(user: $0)) }
                ?? F.state(F.listScreen(users: rows))

            for _ in 0..<Int(rng.next() % 12) {
                switch rng.next() % 6 {
                case 0 where !rows.isEmpty:  // rename or bump version
                    let i = Int(rng.next() % UInt64(rows.count))
                    if case .object(var o) = rows[i] {
                        o["name"] = .string("Renamed \(rng.next() % 100)")
                        o["version"] = .int(Int64(rng.next() % 50))
                        rows[i] = .object(o)
                    }
                case 1:  // insert
                    var r = SplitMix64(seed: rng.next())
                    rows.insert(F.user(&r), at: Int(rng.next() % UInt64(rows.count + 1)))
                case 2 where !rows.isEmpty:  // remove
                    rows.remove(at: Int(rng.next() % UInt64(rows.count)))
                case 3 where rows.count > 1:  // move
                    let row = rows.remove(at: Int(rng.next() % UInt64(rows.count)))
                    rows.insert(row, at: Int(rng.next() % UInt64(rows.count + 1)))
                case 4 where rows.count > 1:  // re-sort by name
                    if rng.next() % 4 == 0 { rows.sort { ($0["name"]?.stringValue ?? "") < ($1["name"]?.stringValue ?? "") } }
                case 5:  // append a page
                    rows += F.users(count: Int(rng.next() % 30), seed: rng.next())
                default:
                    break
                }
            }
            var screens = [F.listScreen(users: rows, search: rng.next() % 3 == 0 ? "q\(iteration)" : nil)]
            if rng.next() % 2 == 0, !rows.isEmpty {
                screens.append(F.detailScreen(user: rows[Int(rng.next() % UInt64(rows.count))]))
            }
            let b: JSONValue = ["screens": .array(screens)]
            _ = try roundTrip(a, b)
            _ = try roundTrip(b, a)
        }
    }
}
