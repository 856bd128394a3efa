import Foundation
import UserListData
import UserListDomain

/// The PostgreSQL store beside SQLite: import rate, then first page, deep page (90%) and
/// substring searches (two terms, pg_trgm-indexed from three characters), medians over
/// `fetches`, at `count` users. The database must be empty (the
/// bench fills it and leaves it filled; point it at a scratch database).
func runPostgresSection(_ text: String, count: Int) async {
    let connection: PGConnectionString
    do { connection = try PGConnectionString(text) } catch { fail(error) }
    say("")
    say("PostgreSQL store at \(connection.redacted), \(count) users:")
    do {
        let store = try PostgresUserRepository(connection: connection)
        guard try await store.fetchPage(PageRequest(limit: 1)).users.isEmpty else {
            say("  skipped: the database is not empty (the bench needs a scratch database)")
            return
        }
        let users = SampleUsers.generate(count: count, seed: 2024)
        var start = clock.now
        let written = try await store.importUsers(users)
        let imported = clock.now - start
        precondition(written == count)
        say("import from memory: \(count) users in \(String(format: "%.2f", seconds(imported))) s"
              + " = \(Int(Double(count) / seconds(imported))) users/s"
              + " (one transaction, \(PostgresUserRepository.importBatch) rows a statement)")
        start = clock.now
        let exported = try await store.exportUsers()
        say("export (keyset batches): \(exported.count) users in "
              + "\(String(format: "%.2f", seconds(clock.now - start))) s")

        let deepCursor = try await store.cursor(afterIndex: count * 9 / 10)
        let first = PageRequest(limit: pageSize)
        let deep = PageRequest(after: deepCursor, limit: pageSize)
        let search = PageRequest(limit: pageSize, search: "ma")
        let broad = PageRequest(limit: pageSize, search: "son")
        for _ in 0..<20 {
            _ = try await store.fetchPage(first)
            _ = try await store.fetchPage(deep)
            _ = try await store.fetchPage(search)
            _ = try await store.fetchPage(broad)
        }
        var firstTimes: [Double] = [], deepTimes: [Double] = [], searchTimes: [Double] = [], broadTimes: [Double] = []
        for _ in 0..<fetches {
            start = clock.now
            _ = try await store.fetchPage(first)
            firstTimes.append(microseconds(clock.now - start))
            start = clock.now
            _ = try await store.fetchPage(deep)
            deepTimes.append(microseconds(clock.now - start))
            start = clock.now
            _ = try await store.fetchPage(search)
            searchTimes.append(microseconds(clock.now - start))
            start = clock.now
            _ = try await store.fetchPage(broad)
            broadTimes.append(microseconds(clock.now - start))
        }
        say("page fetch, \(pageSize) users, median of \(fetches) (µs): "
              + "first \(String(format: "%.0f", median(firstTimes)))"
              + ", deep (90%) \(String(format: "%.0f", median(deepTimes)))"
              + ", search \"ma\" first page \(String(format: "%.0f", median(searchTimes)))"
              + ", search \"son\" first page \(String(format: "%.0f", median(broadTimes)))")
    } catch {
        fail(error)
    }
}
