import Foundation
import UserListDomain
import UserListPresentation
import UserListWire

/// The arguments of the session's `export_page`: where to continue (`after`, the `next` of the
/// previous page, absent for the first), how many users (`limit`, 1 to `maximumLimit`,
/// `defaultLimit` when absent) and an optional `search` (the list's substring rule).
struct ExportPageRequest: Equatable {
    static let defaultLimit = 1_000
    static let maximumLimit = 1_000

    var after: String?
    var limit: Int
    var search: String?

    init(_ args: IntentArguments) throws(IntentError) {
        after = try args.optionalString("after")
        limit = try args.optionalInt("limit") ?? Self.defaultLimit
        guard (1...Self.maximumLimit).contains(limit) else {
            throw IntentError(.invalidArgs, "'limit' must be 1 to \(Self.maximumLimit) users per page (got \(limit)).")
        }
        search = try args.optionalString("search")
        if let after, after.isEmpty || after.utf8.count > 4_096 {
            throw IntentError(.invalidArgs, "'after' must be the 'next' of the previous page.")
        }
    }
}

extension Session {
    /// `export_page`: one page of the store in list order, read by keyset straight from the
    /// repository (no screen, no ViewModel, nothing kept between pages but the client's cursor),
    /// so walking a million users costs a million rows read once: linear time, constant memory
    /// on the daemon. The session's screens are untouched.
    func exportPage(_ request: ExportPageRequest) -> Outcome {
        let useCases = useCases
        return .pending { _ in
            do throws(UserError) {
                let page = try await useCases.fetchPage.execute(
                    after: request.after.map(PageCursor.init(token:)), search: request.search, limit: request.limit)
                return .success(.object([
                    "users": .array(page.users.map(StateDocument.user)),
                    "next": page.next.map { .string($0.token) } ?? .null,
                    "total_count": page.totalCount.map { .int(Int64($0)) } ?? .null,
                ]))
            } catch {
                return .failure(IntentError(error))
            }
        }
    }
}
