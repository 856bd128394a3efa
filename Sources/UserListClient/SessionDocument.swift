import UserListWire

/// Typed, read-only views of the state document (Protocol/PROTOCOL.md, "State document"), so
/// front ends do not dig through `JSONValue` by hand. Missing fields read as empty, never trap:
/// a newer daemon may add fields, and a view should render what it can.
public struct UserRow: Sendable, Equatable {
    public var id: String
    public var name: String
    public var email: String
    public var avatarURL: String?
    public var version: Int

    public init(id: String, name: String, email: String, avatarURL: String? = nil, version: Int = 1) {
        self.id = id
        self.name = name
        self.email = email
        self.avatarURL = avatarURL
        self.version = version
    }

    public init?(_ value: JSONValue?) {
        guard let value, let id = value["id"]?.stringValue else { return nil }
        self.id = id
        self.name = value["name"]?.stringValue ?? ""
        self.email = value["email"]?.stringValue ?? ""
        self.avatarURL = value["avatar_url"]?.stringValue
        self.version = value["version"]?.int64Value.map { Int($0) } ?? 0
    }

    /// The wire shape: `{id, name, email, avatar_url, version}`.
    public var json: JSONValue {
        ["id": .string(id), "name": .string(name), "email": .string(email),
         "avatar_url": avatarURL.map(JSONValue.string) ?? .null, "version": .int(Int64(version))]
    }
}

public struct ListScreen: Sendable, Equatable {
    public enum Loading: String, Sendable {
        case none, fullScreen = "full_screen", nextPage = "next_page", previousPage = "previous_page"
    }

    /// The rows as they arrived, decoded only when read: a view that shows 30 of 50,000 users
    /// reads `rowCount` and `user(at:)` and does not decode every row on every change.
    public var rows: [JSONValue]
    public var loading: Loading
    public var errorMessage: String?
    public var hasMore: Bool
    /// Users come before the first row (the list was opened at its end).
    public var hasPrevious: Bool
    public var totalCount: Int?
    public var search: String?
    public var isStale: Bool
    /// Ids of the users someone else in this daemon has open (the rows the list marks).
    public var openElsewhere: Set<String>

    public init(_ state: JSONValue) {
        rows = state["users"]?.arrayValue ?? []
        if case .object(let marked)? = state["open_elsewhere"] { openElsewhere = Set(marked.keys) } else { openElsewhere = [] }
        loading = state["loading"]?.stringValue.flatMap(Loading.init(rawValue:)) ?? .none
        errorMessage = state["error_message"]?.stringValue
        hasMore = state["has_more"]?.boolValue ?? false
        hasPrevious = state["has_previous"]?.boolValue ?? false
        totalCount = state["total_count"]?.int64Value.map { Int($0) }
        search = state["search"]?.stringValue
        isStale = state["is_stale"]?.boolValue ?? false
    }

    /// Every row, decoded (O(rows): prefer `rowCount` and `user(at:)` in a loop).
    public var users: [UserRow] { rows.compactMap { UserRow($0) } }

    public var rowCount: Int { rows.count }

    public func user(at index: Int) -> UserRow? {
        rows.indices.contains(index) ? UserRow(rows[index]) : nil
    }
}

public struct DetailScreen: Sendable, Equatable {
    public var userID: String
    public var user: UserRow?
    public var draftName: String
    public var isDirty: Bool
    public var canSave: Bool
    public var isSaving: Bool
    public var errorMessage: String?
    public var conflict: UserRow?
    /// The other people who have this user open, and whether each is editing it (names only).
    public var present: [(user: String, editing: Bool)]

    public static func == (a: DetailScreen, b: DetailScreen) -> Bool {
        a.userID == b.userID && a.user == b.user && a.draftName == b.draftName && a.isDirty == b.isDirty
            && a.canSave == b.canSave && a.isSaving == b.isSaving && a.errorMessage == b.errorMessage
            && a.conflict == b.conflict && a.present.elementsEqual(b.present) { $0 == $1 }
    }

    public init(_ state: JSONValue) {
        present = (state["present"]?.arrayValue ?? []).compactMap { person in
            person["user"]?.stringValue.map { ($0, person["editing"]?.boolValue ?? false) }
        }
        userID = state["user_id"]?.stringValue ?? ""
        user = UserRow(state["user"])
        draftName = state["draft_name"]?.stringValue ?? ""
        isDirty = state["is_dirty"]?.boolValue ?? false
        canSave = state["can_save"]?.boolValue ?? false
        isSaving = state["is_saving"]?.boolValue ?? false
        errorMessage = state["error_message"]?.stringValue
        conflict = UserRow(state["conflict"])
    }
}

/// The whole document: the screen stack, bottom first.
public struct SessionDocument: Sendable, Equatable {
    public var list: ListScreen?
    /// The topmost detail screen, when one is open.
    public var detail: DetailScreen?
    /// The history screen, when one is open (on top of its user's detail screen).
    public var history: HistoryScreen?
    /// Screen ids bottom to top ("list", "detail").
    public var stack: [String]

    public init(_ document: JSONValue?) {
        list = nil
        detail = nil
        history = nil
        stack = []
        for screen in document?["screens"]?.arrayValue ?? [] {
            let kind = screen["kind"]?.stringValue ?? ""
            stack.append(screen["id"]?.stringValue ?? kind)
            guard let state = screen["state"] else { continue }
            switch kind {
            case "list": list = ListScreen(state)
            case "detail": detail = DetailScreen(state)
            case "history": history = HistoryScreen(state)
            default: break
            }
        }
    }

    /// Whether the top of the stack is a detail screen.
    public var showsDetail: Bool { stack.last == "detail" }

    /// Whether the top of the stack is a history screen.
    public var showsHistory: Bool { stack.last == "history" }
}

/// A user's history, newest first (PROTOCOL.md §5): entries are kept as JSON, as list rows are.
public struct HistoryScreen: Sendable, Equatable {
    public var userID: String
    public var entries: [JSONValue]
    public var loading: String
    public var hasMore: Bool
    public var errorMessage: String?
    public var reverting: Int64?

    public init(_ state: JSONValue) {
        userID = state["user_id"]?.stringValue ?? ""
        entries = state["entries"]?.arrayValue ?? []
        loading = state["loading"]?.stringValue ?? "none"
        hasMore = state["has_more"]?.boolValue ?? false
        errorMessage = state["error_message"]?.stringValue
        reverting = state["reverting"]?.int64Value
    }
}
