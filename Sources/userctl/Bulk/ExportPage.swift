import UserListClient
import UserListWire

/// One `export_page` result read from its bytes: the users left unbuilt (`JSONSlice`), the
/// cursor and the total read as values.
struct ExportPage {
    var users: [JSONSlice] = []
    /// The cursor of the page after this one; `nil` on the last page.
    var next: String?
    var totalCount: Int?

    init(_ result: JSONSlice?) throws {
        guard let result else { return }
        guard let members = try result.members() else {
            throw ClientError(.protocolViolation, "userlistd answered export_page with something other than an object")
        }
        for (key, value) in members {
            switch key {
            case "users": users = try value.elements() ?? []
            case "next": next = try value.parsed().stringValue
            case "total_count": totalCount = try value.parsed().int64Value.flatMap { Int(exactly: $0) }
            default: continue
            }
        }
    }
}
