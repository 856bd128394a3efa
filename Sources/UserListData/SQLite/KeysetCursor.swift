import Foundation
import UserListDomain

/// The SQLite store's page position: the `(name_key, id)` of the last row shown, plus the
/// total computed for the first page (so later pages do not count again).
///
/// Encoded as base64url of `total|id|name_key` (name last: it may contain anything), so the
/// token stays opaque to every other layer.
struct KeysetCursor: Equatable {
    var nameKey: String
    var id: String
    var total: Int?

    init(nameKey: String, id: String, total: Int?) {
        self.nameKey = nameKey
        self.id = id
        self.total = total
    }

    init?(_ cursor: PageCursor) {
        guard let data = Base64URL.decode(cursor.token) else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        let parts = text.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, UUID(uuidString: String(parts[1])) != nil else { return nil }
        total = Int(parts[0])
        id = String(parts[1])
        nameKey = String(parts[2])
    }

    var pageCursor: PageCursor {
        let text = "\(total.map(String.init) ?? "")|\(id)|\(nameKey)"
        return PageCursor(token: Base64URL.encode(Data(text.utf8)))
    }
}
