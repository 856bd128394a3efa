import Foundation
import UserListDomain
import UserListPresentation
import UserListWire

/// The arguments of the session's `find_users`: `id_prefix` (1 to 32 hex digits, hyphens
/// ignored, either case) and an optional `limit` (1 to 100, `defaultLimit` when absent).
struct FindUsersRequest: Equatable {
    static let defaultLimit = 10

    var prefix: UserIDPrefix
    var limit: Int

    init(_ args: IntentArguments) throws(IntentError) {
        let text = try args.string("id_prefix")
        guard let prefix = UserIDPrefix(text) else {
            throw IntentError(.invalidArgs,
                              "'id_prefix' must be the start of a user id: 1 to 32 hex digits (hyphens are ignored).")
        }
        self.prefix = prefix
        limit = try args.optionalInt("limit") ?? Self.defaultLimit
        guard (1...FindUsersByIDPrefixUseCase.maximumLimit).contains(limit) else {
            throw IntentError(.invalidArgs,
                              "'limit' must be 1 to \(FindUsersByIDPrefixUseCase.maximumLimit) users (got \(limit)).")
        }
    }
}

extension Session {
    /// `find_users`: the users whose id starts with the prefix, in id order, read straight from
    /// the repository (an index range); the session's screens are untouched. Lets a person name
    /// a user by the start of the id, as git and docker do, and be told who matches when the
    /// prefix is ambiguous.
    func findUsers(_ request: FindUsersRequest) -> Outcome {
        let useCases = useCases
        return .pending { _ in
            do throws(UserError) {
                let users = try await useCases.findByIDPrefix.execute(request.prefix, limit: request.limit)
                return .success(.object(["users": .array(users.map(StateDocument.user))]))
            } catch {
                return .failure(IntentError(error))
            }
        }
    }
}
