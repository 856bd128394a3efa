// userlistd-bench-store: how fast the SQLite store imports and serves pages.
//
//   swift run -c release userlistd-bench-store [--quick]
//
// Imports 10,000,000 sample users (1,000,000 with --quick) into a fresh file with the daemon's
// settings (WAL, synchronous=FULL) from memory, exports them to a JSON file (streamed), imports
// a 1,000,000-user JSON export into another fresh file, then measures page fetches (50 users,
// through the public async `fetchPage`) at several store sizes: the first page, a deep page
// (cursor at 90% of the list) and the first page of substring searches (a 2-letter term, a broad
// 3-letter term, a narrow email fragment), medians over 200 fetches taken in interleaved rounds.
// A benchmark, not a test: it prints a table and asserts nothing.
//
// With `--postgres CONNINFO` (an empty scratch database), the same for the PostgreSQL store, at
// `--postgres-users N` users (default: as many as the SQLite import). `--history-only`: the
// history's import cost and first pages (HistorySection.swift); `--staged-history-only`: its
// cost on staged imports (StagedImportHistoryCost.swift).
import Foundation
import UserListData
import UserListDomain

let quick = CommandLine.arguments.contains("--quick")
let importCount = quick ? 1_000_000 : 10_000_000
let jsonCount = 1_000_000
let sizes = quick ? [1_000, 1_000_000] : [1_000, 1_000_000, 10_000_000]
let fetches = 200
let pageSize = 50

/// Writes a line at once, also into a file or a pipe (print buffers those until exit).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let clock = ContinuousClock()
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
func microseconds(_ duration: Duration) -> Double { seconds(duration) * 1e6 }
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count.isMultiple(of: 2)
        ? (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2 : sorted[sorted.count / 2]
}
func fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
}
func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
}
let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("userlistd-bench-store-\(ProcessInfo.processInfo.processIdentifier)")

/// Removes the scratch directory (a full run leaves gigabytes there) and exits: `exit` skips
/// `defer`, so every way out goes through here.
func finish(_ status: Int32) -> Never {
    try? FileManager.default.removeItem(at: directory)
    exit(status)
}

func fail(_ error: any Error) -> Never {
    FileHandle.standardError.write(Data("userlistd-bench-store: \(error)\n".utf8))
    finish(1)
}

try? FileManager.default.removeItem(at: directory)
do { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) } catch { fail(error) }
defer { try? FileManager.default.removeItem(at: directory) }

/// `--postgres-only`: the PostgreSQL section alone (a quick look; a full run has both).
if CommandLine.arguments.contains("--postgres-only") {
    guard let flag = CommandLine.arguments.firstIndex(of: "--postgres"), flag + 1 < CommandLine.arguments.count else {
        fail(BenchStoreUsage("--postgres-only needs --postgres CONNINFO"))
    }
    let count = CommandLine.arguments.firstIndex(of: "--postgres-users").flatMap { index in
        index + 1 < CommandLine.arguments.count ? Int(CommandLine.arguments[index + 1]) : nil
    } ?? importCount
    say("userlistd-bench-store --postgres-only: \(ProcessInfo.processInfo.activeProcessorCount) cores")
    await runPostgresSection(CommandLine.arguments[flag + 1], count: count)
    finish(0)
}

/// `--chunked-only`: the daemon's import path alone: 1M users (100k with --quick) written as
/// `userctl import` sends them, `--chunk N` users a transaction (default 1,000), into an empty
/// file; `--whole` writes them in one transaction instead.
if CommandLine.arguments.contains("--chunked-only") {
    say("userlistd-bench-store --chunked-only: \(ProcessInfo.processInfo.activeProcessorCount) cores")
    let count = quick ? 100_000 : 1_000_000
    let chunkFlag = CommandLine.arguments.firstIndex(of: "--chunk").flatMap { index in
        index + 1 < CommandLine.arguments.count ? Int(CommandLine.arguments[index + 1]) : nil
    }
    let chunk = CommandLine.arguments.contains("--whole") ? count : chunkFlag ?? 1_000
    await runChunkedImport(directory: directory, count: count, chunk: max(1, chunk))
    finish(0)
}

/// `--history-only`: recording history's cost on imports, and its first pages (1M users' entries,
/// 100k with --quick); see `runHistorySection`.
if CommandLine.arguments.contains("--history-only") {
    say("userlistd-bench-store --history-only: \(ProcessInfo.processInfo.activeProcessorCount) cores")
    await runHistorySection(directory: directory, count: quick ? 100_000 : 1_000_000)
    finish(0)
}

/// `--staged-history-only`: what recording history costs `userctl import`'s staged imports on
/// each store (with `--postgres CONNINFO`, PostgreSQL too); see `runStagedImportHistoryCost`.
if CommandLine.arguments.contains("--staged-history-only") {
    say("userlistd-bench-store --staged-history-only: \(ProcessInfo.processInfo.activeProcessorCount) cores")
    await runStagedImportHistoryCost(directory: directory, base: 100_000, added: quick ? 9_000 : 90_000,
                                     updated: quick ? 1_000 : 10_000, rounds: 3)
    finish(0)
}

struct BenchStoreUsage: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

say("userlistd-bench-store\(quick ? " --quick" : ""): SQLite store, WAL, synchronous=FULL, "
    + "\(ProcessInfo.processInfo.activeProcessorCount) cores")
say("")

// MARK: import

/// A bulk load leaves the search index to catch up in the background: how long after the import
/// returned it was whole (the figures below are taken on whole indexes).
func caughtUp(_ store: SQLiteUserRepository, importedAt: ContinuousClock.Instant) async {
    await store.searchIndexCaughtUp()
    say("  search index caught up \(String(format: "%.2f", seconds(clock.now - importedAt))) s "
        + "after the import returned")
}

var stores: [Int: SQLiteUserRepository] = [:]
do {
    var start = clock.now
    let users = SampleUsers.generate(count: importCount, seed: 2024)
    let generated = clock.now - start
    say("generated \(importCount) sample users in \(String(format: "%.2f", seconds(generated))) s")

    let path = directory.appendingPathComponent("import.sqlite").path
    let store = try SQLiteUserRepository(path: path)
    start = clock.now
    let written = try await store.importUsers(users)
    let imported = clock.now - start
    precondition(written == importCount)
    let bytes = fileSize(path) + fileSize(path + "-wal")
    say("import from memory: \(importCount) users in \(String(format: "%.2f", seconds(imported))) s"
          + " = \(Int(Double(importCount) / seconds(imported))) users/s"
          + " (file \(fileSize(path) / 1_048_576) MiB + WAL \(fileSize(path + "-wal") / 1_048_576) MiB"
          + " = \(bytes / importCount) bytes/user)")
    await caughtUp(store, importedAt: start + imported)

    let exportPath = directory.appendingPathComponent("export.json").path
    start = clock.now
    try store.exportJSON(to: exportPath)
    let exported = clock.now - start
    say("export to a JSON file (streamed): \(importCount) users in \(String(format: "%.2f", seconds(exported))) s"
          + " = \(Int(Double(importCount) / seconds(exported))) users/s (\(fileSize(exportPath) / 1_048_576) MiB)")
    try? FileManager.default.removeItem(atPath: exportPath)
    stores[importCount] = store

    // JSON import at 1M users (an export of a 1M store), into an empty file.
    let small: SQLiteUserRepository
    if importCount == jsonCount {
        small = store
    } else {
        small = try SQLiteUserRepository(path: directory.appendingPathComponent("size-\(jsonCount).sqlite").path)
        _ = try await small.importUsers(SampleUsers.generate(count: jsonCount, seed: 2024))
        await small.searchIndexCaughtUp()
        stores[jsonCount] = small
    }
    let json = try small.exportJSON()
    let jsonPath = directory.appendingPathComponent("from-json.sqlite").path
    let fromJSON = try SQLiteUserRepository(path: jsonPath)
    start = clock.now
    _ = try await fromJSON.importJSON(json)
    let jsonImported = clock.now - start
    say("import from JSON:   \(jsonCount) users in \(String(format: "%.2f", seconds(jsonImported))) s"
          + " = \(Int(Double(jsonCount) / seconds(jsonImported))) users/s"
          + " (decode + validation + insert, \(json.count / 1_048_576) MiB)")
    await caughtUp(fromJSON, importedAt: start + jsonImported)
    start = clock.now
    let again = try await fromJSON.importJSON(json)
    say("re-import of the same JSON: \(again) rows changed, \(String(format: "%.2f", seconds(clock.now - start))) s")
} catch {
    fail(error)
}

// MARK: pages

for size in sizes where stores[size] == nil {
    do {
        let store = try SQLiteUserRepository(path: directory.appendingPathComponent("size-\(size).sqlite").path)
        _ = try await store.importUsers(SampleUsers.generate(count: size, seed: 2024))
        await store.searchIndexCaughtUp()
        stores[size] = store
    } catch {
        fail(error)
    }
}

say("")
say("page fetch, \(pageSize) users, median of \(fetches) (µs):")
say("    users | first page | deep page (90%) | deep/first | search \"ma\" | search \"son\" | search narrow | (count)")
say("----------|------------|-----------------|------------|-------------|--------------|---------------|--------")
for size in sizes {
    guard let store = stores[size] else { continue }
    do {
        let deepCursor = try store.cursor(afterIndex: size * 9 / 10)
        let first = PageRequest(limit: pageSize)
        let deep = PageRequest(after: deepCursor, limit: pageSize)
        let search = PageRequest(limit: pageSize, search: "ma")
        let broad = PageRequest(limit: pageSize, search: "son")
        // A narrow term: the middle of one user's email (its index part is unique).
        let someone = try await store.fetchPage(deep).users[0]
        let narrowTerm = String(someone.email.split(separator: "@")[0].suffix(6))
        let narrow = PageRequest(limit: pageSize, search: narrowTerm)
        for _ in 0..<20 {  // warm the page cache and the statement cache
            _ = try await store.fetchPage(first)
            _ = try await store.fetchPage(deep)
            _ = try await store.fetchPage(search)
            _ = try await store.fetchPage(broad)
            _ = try await store.fetchPage(narrow)
        }
        var firstTimes: [Double] = [], deepTimes: [Double] = [], searchTimes: [Double] = []
        var broadTimes: [Double] = [], narrowTimes: [Double] = []
        var narrowCount: Int? = nil
        for _ in 0..<fetches {
            var start = clock.now
            let a = try await store.fetchPage(first)
            firstTimes.append(microseconds(clock.now - start))
            start = clock.now
            let b = try await store.fetchPage(deep)
            deepTimes.append(microseconds(clock.now - start))
            start = clock.now
            _ = try await store.fetchPage(search)
            searchTimes.append(microseconds(clock.now - start))
            start = clock.now
            _ = try await store.fetchPage(broad)
            broadTimes.append(microseconds(clock.now - start))
            start = clock.now
            narrowCount = try await store.fetchPage(narrow).totalCount
            narrowTimes.append(microseconds(clock.now - start))
            precondition(a.users.count == pageSize && b.users.count == pageSize && a.totalCount == size)
        }
        let f = median(firstTimes), d = median(deepTimes)
        say("\(pad(String(size), 9)) | \(pad(String(format: "%.0f", f), 10)) | \(pad(String(format: "%.0f", d), 15))"
              + " | \(pad(String(format: "%.2f", d / f), 10)) | \(pad(String(format: "%.0f", median(searchTimes)), 11))"
              + " | \(pad(String(format: "%.0f", median(broadTimes)), 12))"
              + " | \(pad(String(format: "%.0f", median(narrowTimes)), 13))"
              + " | \(narrowTerm): \(narrowCount.map(String.init) ?? "-")")
    } catch {
        fail(error)
    }
}

if let flag = CommandLine.arguments.firstIndex(of: "--postgres"), flag + 1 < CommandLine.arguments.count {
    let count = CommandLine.arguments.firstIndex(of: "--postgres-users").flatMap { index in
        index + 1 < CommandLine.arguments.count ? Int(CommandLine.arguments[index + 1]) : nil
    } ?? importCount
    await runPostgresSection(CommandLine.arguments[flag + 1], count: count)
}
