import Foundation
import Testing
import UserListData
import UserListDomain
import ThreadLocks
@testable import UserListServer

/// `history-days`: a setting with a default of a year, refused when it makes no sense, and
/// what the background prune asks the store to delete.
@Suite struct HistoryRetentionTests {
    private let defaults = DaemonConfig(socketPath: "/tmp/x.sock", databasePath: "/tmp/x.db", stateDirectory: "/tmp/x")

    private func parse(_ arguments: [String], file: String = "") throws(ConfigError) -> DaemonConfig? {
        guard case .run(let config) = try ConfigParser.parse(arguments: arguments, defaults: defaults, readFile: { _ in file })
        else { return nil }
        return config
    }

    @Test func historyDaysDefaultsToAYearAndIsReadFromFlagsAndTheFile() throws {
        #expect(try parse([])?.historyDays == 365)
        #expect(try parse(["--history-days", "30"])?.historyDays == 30)
        #expect(try parse(["--config", "/etc/u.conf"], file: "history-days = 7\n")?.historyDays == 7)
        #expect(throws: ConfigError.self) { _ = try parse(["--history-days", "0"]) }
        #expect(throws: ConfigError.self) { _ = try parse(["--history-days", "a year"]) }
    }

    /// Records the cutoff each prune asks for.
    final class CutoffRecorder: UserHistoryRepository {
        let cutoffs = Lock<[Date]>([])
        func history(_ query: HistoryQuery) async throws(UserError) -> HistoryPage { HistoryPage(entries: [], next: nil) }
        func historyEntry(_ id: Int64) async throws(UserError) -> HistoryEntry { throw .unavailable(reason: "none") }
        func pruneHistory(before cutoff: Date) async throws(UserError) -> Int {
            cutoffs.withLock { $0.append(cutoff) }
            return 3
        }
    }

    /// A round, awaited in place: no background task whose turn on a busy pool decides the outcome.
    @Test func eachRoundPrunesWhatIsOlderThanTheSettingReadAtThatRound() async throws {
        let store = CutoffRecorder()
        let logger = Logger(sink: .memory, level: .debug)
        let started = Date()
        await HistoryRetention.pruneOnce(store, days: 30, logger: logger)
        let cutoff = try #require(store.cutoffs.withLock { $0.first })
        let thirtyDays = 30.0 * 86_400
        #expect(cutoff <= started.addingTimeInterval(-thirtyDays + 60) && cutoff >= started.addingTimeInterval(-thirtyDays - 60))
        #expect(logger.entries.contains { $0.fields["USERLISTD_HISTORY_PRUNED"] == "3" })
    }

    /// Cancelled (the daemon stopping), the loop ends even in its first wait, as the stop awaits.
    @Test(.timeLimit(.minutes(5))) func theLoopEndsWhenCancelled() async {
        let task = Task { await HistoryRetention.run(CutoffRecorder(), days: { 30 }, logger: Logger(sink: .memory, level: .debug)) }
        task.cancel()
        await task.value
    }
}
