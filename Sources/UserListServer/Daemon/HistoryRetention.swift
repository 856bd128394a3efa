import Foundation
import UserListDomain

/// Prunes history older than `history-days`, in the background: once shortly after start, then
/// hourly. The setting is read at each round, so SIGHUP's new value applies from the next one.
/// The change feed's log is pruned on its own terms and never decides what history remains.
enum HistoryRetention {
    static let interval: Duration = .seconds(3_600)

    /// Prunes until cancelled (a part of the daemon's `ServiceStack`). `after`: the first
    /// round's delay (after start-up's own work).
    static func run(_ history: any UserHistoryRepository, days: @escaping @Sendable () -> Int,
                    logger: Logger, after delay: Duration = .seconds(10)) async {
        try? await Task.sleep(for: delay)
        while !Task.isCancelled {
            await pruneOnce(history, days: days(), logger: logger)
            try? await Task.sleep(for: interval)
        }
    }

    /// One round: deletes what is older than `days` days now, and logs how many.
    static func pruneOnce(_ history: any UserHistoryRepository, days: Int, logger: Logger) async {
        let cutoff = Date().addingTimeInterval(-Double(days) * 86_400)
        do throws(UserError) {
            let pruned = try await history.pruneHistory(before: cutoff)
            if pruned > 0 {
                logger.info("Pruned \(pruned) history entries older than \(days) days",
                            ["USERLISTD_HISTORY_PRUNED": String(pruned)])
            }
        } catch {
            logger.warning("Could not prune the history: \(error.message)")
        }
    }
}
