import Foundation
import UserListDomain

extension SQLiteUserRepository {
    /// An import's users as the writer takes them: all at hand, or still being validated and
    /// keyed on the other cores (`OrderedChunks`), so the writer starts on the first ones while
    /// the last are checked.
    struct ImportRows: Sendable {
        private enum Source: Sendable {
            case ready([KeyedUser])
            case coming(OrderedChunks<UserDTO, KeyedUser, UserError>)
        }

        private let source: Source
        let count: Int
        /// Whether no id comes twice, when known before the users are (see `EmptyTableLoad`).
        let distinctIDs: Bool?

        init(_ users: [KeyedUser]) {
            source = .ready(users)
            count = users.count
            distinctIDs = nil
        }

        init(coming chunks: OrderedChunks<UserDTO, KeyedUser, UserError>, distinctIDs: Bool) {
            source = .coming(chunks)
            count = chunks.count
            self.distinctIDs = distinctIDs
        }

        /// Every user in order. A user still coming that failed validation ends the walk with
        /// that error (`SQLiteError.refused`), which rolls the import back.
        func forEach(_ body: (KeyedUser) throws(SQLiteError) -> Void) throws(SQLiteError) {
            switch source {
            case .ready(let users):
                for user in users { try body(user) }
            case .coming(let chunks):
                for index in 0..<chunks.chunkCount {
                    switch chunks.take(index) {
                    case .success(let users): for user in users { try body(user) }
                    case .failure(let error): throw .refused(error)
                    }
                }
            }
        }

        /// Whether no id comes twice: known ahead, or found from the users at hand.
        func hasDistinctIDs() -> Bool {
            if let distinctIDs { return distinctIDs }
            guard case .ready(let users) = source else { return false }
            return Self.allDistinct(users.lazy.map(\.user.id))
        }

        /// Whether no id in `ids` comes twice.
        static func allDistinct(_ ids: some Collection<UUID>) -> Bool {
            var seen = Set<UUID>(minimumCapacity: ids.count)
            return ids.allSatisfy { seen.insert($0).inserted }
        }
    }
}
