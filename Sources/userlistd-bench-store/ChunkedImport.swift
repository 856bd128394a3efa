import Foundation
import UserListData
import UserListDomain

/// The import path a daemon runs for `userctl import`: chunks of `chunk` users, each its own
/// transaction (and fsync), into a store that starts empty and grows to `count`; one chunk of
/// `count` is the single-transaction bulk load. Prints the rate overall and for the last tenth
/// (the table's size makes later chunks dearer).
func runChunkedImport(directory: URL, count: Int, chunk: Int = 1_000) async {
    let users = SampleUsers.generate(count: count, seed: 2024)
    let path = directory.appendingPathComponent("chunked.sqlite").path
    do {
        let store = try SQLiteUserRepository(path: path)
        let start = clock.now
        // The chunks from the first one that starts at or past 90% of the users.
        var tail: (start: ContinuousClock.Instant, users: Int)?
        var index = 0
        while index < users.count {
            if tail == nil && index > 0 && index >= count * 9 / 10 { tail = (clock.now, count - index) }
            let end = min(users.count, index + chunk)
            _ = try await store.importUsers(Array(users[index..<end]))
            index = end
        }
        let total = clock.now - start
        let tailRate = tail.map {
            "; the last \($0.users) at \(Int(Double($0.users) / seconds(clock.now - $0.start))) users/s"
        } ?? ""
        say("chunked import (\(chunk) users a transaction): "
              + "\(count) users in \(String(format: "%.2f", seconds(total))) s"
              + " = \(Int(Double(count) / seconds(total))) users/s\(tailRate)"
              + " (file \(fileSize(path) / 1_048_576) MiB + WAL \(fileSize(path + "-wal") / 1_048_576) MiB)")
        await caughtUp(store, importedAt: start + total)
    } catch {
        fail(error)
    }
}

