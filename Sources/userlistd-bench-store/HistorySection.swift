import Foundation
import UserListData
import UserListDomain

/// `--history-only`: what recording history costs and how fast it reads.
///
/// - Import cost: `count` users imported into fresh files with and without recording history
///   in one transaction, and `chunkedCount` in chunks of 250 (`userctl import`'s, each chunk a
///   transaction and an fsync), alternating, best of `rounds` each.
/// - Reads: a store holding `count` imported users' entries plus one user with 10,000 saves;
///   the first page (50) of that user's history, of everyone's, of one actor's, and of
///   everyone's since an hour ago: medians over `fetches`.
/// With `--postgres CONNINFO` (an empty scratch database) the reads also on PostgreSQL.
func runHistorySection(directory: URL, count: Int, chunkedCount: Int = 100_000, rounds: Int = 2) async {
    let alice = ChangeAuthor(uid: 1001, userName: "alice", client: "bench", via: .command, daemon: "bench")
    let users = SampleUsers.generate(count: count, seed: 2024)
    func importTime(recording: Bool, chunk: Int, round: Int) async throws -> Double {
        let users = chunk == count ? users : Array(users.prefix(chunkedCount))
        var options = SQLiteUserRepository.Options()
        options.recordsImportHistory = recording
        let path = directory.appendingPathComponent("history-\(recording)-\(chunk)-\(round).sqlite").path
        let store = try SQLiteUserRepository(path: path, options: options)
        let start = clock.now
        var index = 0
        while index < users.count {
            let end = min(users.count, index + chunk)
            _ = try await store.importUsers(Array(users[index..<end]), by: alice)
            index = end
        }
        let elapsed = seconds(clock.now - start)
        await store.searchIndexCaughtUp()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        return elapsed
    }
    do {
        // `--skip-import-cost`: the reads alone.
        for chunk in CommandLine.arguments.contains("--skip-import-cost") ? [] : [count, 250] {
            var with: [Double] = [], without: [Double] = []
            for round in 0..<rounds {
                without.append(try await importTime(recording: false, chunk: chunk, round: round))
                with.append(try await importTime(recording: true, chunk: chunk, round: round))
            }
            let (a, b) = (without.min() ?? 0, with.min() ?? 0)
            let transactions = chunk == count ? "one transaction" : "\(chunk) a transaction"
            say("import of \(chunk == count ? count : chunkedCount) users, \(transactions): "
                  + "\(String(format: "%.2f", a)) s without history, \(String(format: "%.2f", b)) s with "
                  + "(+\(String(format: "%.1f", (b - a) / a * 100)) %), best of \(rounds)")
        }
        let path = directory.appendingPathComponent("history-reads.sqlite").path
        let store = try SQLiteUserRepository(path: path, options: .init(synchronous: .normal))
        try await historyReads(store, users: users, author: alice, label: "SQLite")
    } catch {
        fail(error)
    }
    if let flag = CommandLine.arguments.firstIndex(of: "--postgres"), flag + 1 < CommandLine.arguments.count {
        do {
            let store = try PostgresUserRepository(connection: try PGConnectionString(CommandLine.arguments[flag + 1]))
            try await historyReads(store, users: users, author: alice, label: "PostgreSQL")
        } catch {
            fail(error)
        }
    }
}

/// Fills `store` (empty) with the users' entries and one user's 10,000 saves, then times pages.
func historyReads(_ store: some UserRepository & UserHistoryRepository, users: [User], author: ChangeAuthor,
                  label: String) async throws {
    _ = try await store.importUsers(users, by: author)
    var busy = try await store.add(NewUser(name: "Busy 0", email: "busy@example.com"), by: author)
    guard let busyAdded = try await store.history(HistoryQuery(limit: 1)).entries.first?.id else {
        fail(BenchStoreUsage("the busy user's entry was not recorded"))
    }
    let bob = ChangeAuthor(uid: 1002, userName: "bob", client: "bench", via: .intent, daemon: "bench")
    for index in 1...10_000 {
        busy.name = "Busy \(index)"
        busy = try await store.update(busy, by: index.isMultiple(of: 100) ? bob : author)
    }
    let queries: [(String, HistoryQuery)] = [
        ("one user's (10,001 entries)", HistoryQuery(userID: busy.id)),
        ("everyone's (\(users.count + 10_001) entries)", HistoryQuery()),
        ("one actor's (100 of them)", HistoryQuery(actorUID: 1002)),
        ("everyone's since an hour ago", HistoryQuery(since: Date().addingTimeInterval(-3_600))),
        // Below the busy user's entries: 50 of the import's (SQLite fills their fields in on read).
        ("everyone's, a page of import entries", HistoryQuery(before: busyAdded)),
    ]
    var samples = Array(repeating: [Double](), count: queries.count)
    for round in 0..<(fetches + 20) {
        for (index, query) in queries.enumerated() {
            let start = clock.now
            let page = try await store.history(query.1)
            let elapsed = microseconds(clock.now - start)
            precondition(page.entries.count == 50 || query.1.actorUID != nil)
            precondition(page.entries.allSatisfy { $0.after != nil }, "an import entry without its fields after")
            if round >= 20 { samples[index].append(elapsed) }
        }
    }
    say("\(label): first page (50 entries) of the history, median of \(fetches):")
    for (index, query) in queries.enumerated() {
        say("  \(query.0): \(String(format: "%.0f", median(samples[index]))) µs")
    }
}
