import Foundation
import UserListData
import UserListDomain

/// `--staged-history-only`: what recording history costs the import users make (`userctl
/// import`: staged, then committed all at once), on each store. A commit with an author
/// records one history entry per user added or changed; one without records none (the store
/// API's way of importing with no history), so the two sides differ by the history alone.
///
/// One store per kind holds `base` users; each round imports `added` new users and `updated`
/// changes of stored ones (entries in random order, 1,000 a `stage` call as userctl sends
/// them), once with history and once without, alternating which goes first. The store grows
/// by both sides' users alike. Reported: the median time of each side and their ratio.
func runStagedImportHistoryCost(directory: URL, base: Int, added: Int, updated: Int, rounds: Int) async {
    let author = ChangeAuthor(uid: 1001, userName: "alice", client: "bench", via: .command, daemon: "bench")
    let baseUsers = SampleUsers.generate(count: base, seed: 7)
    say("staged import, \(added) new + \(updated) changed users into \(base), \(rounds) rounds a side:")
    do {
        let path = directory.appendingPathComponent("staged-history.sqlite").path
        let sqlite = try SQLiteUserRepository(path: path)
        _ = try await sqlite.importUsers(baseUsers)
        await sqlite.searchIndexCaughtUp()
        try await compareStagedImports("SQLite", sqlite, sqlite.importStaging, baseUsers: baseUsers,
                                       added: added, updated: updated, rounds: rounds, author: author)
    } catch {
        fail(error)
    }
    if let flag = CommandLine.arguments.firstIndex(of: "--postgres"), flag + 1 < CommandLine.arguments.count {
        do {
            let postgres = try PostgresUserRepository(
                connection: try PGConnectionString(CommandLine.arguments[flag + 1]))
            guard try await postgres.fetchPage(PageRequest(limit: 1)).users.isEmpty else {
                say("  PostgreSQL skipped: the database is not empty (the bench needs a scratch database)")
                return
            }
            _ = try await postgres.importUsers(baseUsers)
            try await compareStagedImports("PostgreSQL", postgres, postgres.importStaging, baseUsers: baseUsers,
                                           added: added, updated: updated, rounds: rounds, author: author)
        } catch {
            fail(error)
        }
    }
}

private func compareStagedImports(_ label: String, _ store: some UserRepository, _ staging: (any ImportStaging)?,
                                  baseUsers: [User], added: Int, updated: Int, rounds: Int,
                                  author: ChangeAuthor) async throws {
    guard let staging else { fail(BenchStoreUsage("\(label): the store stages no imports")) }
    var with: [Double] = [], without: [Double] = []
    var batch = 0
    for round in 0..<rounds {
        for recording in round.isMultiple(of: 2) ? [true, false] : [false, true] {
            batch += 1
            let entries = importFile(batch: batch, baseUsers: baseUsers, added: added, updated: updated)
            let start = clock.now
            let token = try await staging.beginImport()
            var index = 0
            while index < entries.count {
                let end = min(entries.count, index + 1_000)
                _ = try await staging.stage(Array(entries[index..<end]), into: token)
                index = end
            }
            let summary = try await staging.commitImport(token, by: recording ? author : nil)
            let elapsed = seconds(clock.now - start)
            precondition(summary.written == entries.count,
                         "\(label): the import wrote \(summary.written) of \(entries.count)")
            if recording { with.append(elapsed) } else { without.append(elapsed) }
        }
    }
    let (a, b) = (median(without), median(with))
    say("  \(label): \(String(format: "%.2f", a)) s without history, \(String(format: "%.2f", b)) s with "
          + "(\(String(format: "%+.1f", (b - a) / a * 100)) %), medians; rounds without "
          + without.map { String(format: "%.2f", $0) }.joined(separator: ", ") + ", with "
          + with.map { String(format: "%.2f", $0) }.joined(separator: ", "))
}

/// Import batch `batch`'s file: new users whose ids and addresses no other batch uses, and
/// renames of stored users that change them (each batch renames a different slice), in random
/// order.
private func importFile(batch: Int, baseUsers: [User], added: Int, updated: Int) -> [ImportEntry] {
    var users = SampleUsers.generate(count: added, seed: UInt64(1_000 + batch)).map { user in
        var user = user
        user.email = "b\(batch)." + user.email
        return user
    }
    for offset in 0..<updated {
        var user = baseUsers[(batch * updated + offset) % baseUsers.count]
        user.name += " \(batch)"
        users.append(user)
    }
    users.shuffle()
    return users.enumerated().map { ImportEntry(position: $0.offset + 1, user: $0.element, expectedVersion: nil) }
}
