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
        var base64 = cursor.token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64) else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        let parts = text.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, UUID(uuidString: String(parts[1])) != nil else { return nil }
        total = Int(parts[0])
        id = String(parts[1])
        nameKey = String(parts[2])
    }

    var pageCursor: PageCursor {
        let text = "\(total.map(String.init) ?? "")|\(id)|\(nameKey)"
        let token = Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return PageCursor(token: token)
    }
}
