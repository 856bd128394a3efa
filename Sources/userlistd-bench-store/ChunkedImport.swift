import Foundation
import UserListData
import UserListDomain

/// The import path a daemon runs for `userctl import`: chunks of 1,000 users, each its own
/// transaction (and fsync), into a store that starts empty and grows to `count`. Prints the
/// rate overall and for the last tenth (the table's size makes later chunks dearer).
func runChunkedImport(directory: URL, count: Int, chunk: Int = 1_000) async {
    let users = SampleUsers.generate(count: count, seed: 2024)
    let path = directory.appendingPathComponent("chunked.sqlite").path
    do {
        let store = try SQLiteUserRepository(path: path)
        let start = clock.now
        var lastTenth = start
        var index = 0
        while index < users.count {
            if index == count * 9 / 10 { lastTenth = clock.now }
            let end = min(users.count, index + chunk)
            _ = try await store.importUsers(Array(users[index..<end]))
            index = end
        }
        let total = clock.now - start
        let tail = clock.now - lastTenth
        say("chunked import (\(chunk) users a transaction): \(count) users in \(String(format: "%.2f", seconds(total))) s"
              + " = \(Int(Double(count) / seconds(total))) users/s; last tenth \(Int(Double(count / 10) / seconds(tail))) users/s"
              + " (file \(fileSize(path) / 1_048_576) MiB)")
    } catch {
        fail(error)
    }
}

/// One transaction for all `count` users into an empty file (indexes built after the load).
func runWholeImport(directory: URL, count: Int) async {
    let users = SampleUsers.generate(count: count, seed: 2024)
    let path = directory.appendingPathComponent("whole.sqlite").path
    do {
        let store = try SQLiteUserRepository(path: path)
        let start = clock.now
        _ = try await store.importUsers(users)
        let total = clock.now - start
        say("whole import (one transaction): \(count) users in \(String(format: "%.2f", seconds(total))) s"
              + " = \(Int(Double(count) / seconds(total))) users/s (file \(fileSize(path) / 1_048_576) MiB)")
    } catch {
        fail(error)
    }
}
