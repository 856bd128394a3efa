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
        if case .object(let marked)? = state["open_elsewhere"] {
            openElsewhere = Set(marked.keys)
        } else {
            openElsewhere = []
        }
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

/// A field of the user screen, by its wire name (`dirty_fields`, `field_errors`, `conflicts`...).
public enum DetailField: String, Sendable, CaseIterable, Equatable {
    case name, email
    case avatarURL = "avatar_url"

    /// "name", "email", "avatar URL": as a sentence says it.
    public var label: String {
        switch self {
        case .name: "name"
        case .email: "email"
        case .avatarURL: "avatar URL"
        }
    }

    /// The detail intent that sets this field's draft, and its argument's name.
    public var draftAction: (action: String, argument: String) {
        switch self {
        case .name: ("set_draft_name", "name")
        case .email: ("set_draft_email", "email")
        case .avatarURL: ("set_draft_avatar_url", "avatar_url")
        }
    }
}

public struct DetailScreen: Sendable, Equatable {
    /// A field both this draft and someone else's save changed: their value, and who saved it.
    public struct Conflict: Sendable, Equatable {
        public var field: DetailField
        public var theirs: String
        public var author: String?
    }

    /// The user was removed while the screen was open: by whom, once known.
    public struct Removal: Sendable, Equatable {
        public var author: String?
    }

    /// A field that took someone else's saved value while this person had a draft.
    public struct Followed: Sendable, Equatable {
        public var field: DetailField
        public var author: String?
    }

    public var userID: String
    /// The stored user the draft is based on; nil while loading, for a new user, or once removed.
    public var user: UserRow?
    public var draftName: String
    public var draftEmail: String
    /// The avatar URL as typed; empty means no avatar.
    public var draftAvatarURL: String
    /// The fields whose draft differs from what is stored, in screen order.
    public var dirtyFields: [DetailField]
    /// Why a changed field could not be saved as typed, by field.
    public var fieldErrors: [DetailField: String]
    public var isDirty: Bool
    public var canSave: Bool
    public var isSaving: Bool
    /// A user not stored yet (a new user, or one removed to create again): the save adds it.
    public var isNew: Bool
    /// The session may look but not change: the screen takes no edits.
    public var readOnly: Bool
    public var errorMessage: String?
    public var conflicts: [Conflict]
    public var followed: [Followed]
    /// Set when the user was removed while the screen was open: who removed it (`author`, nil
    /// while unknown).
    public var removal: Removal?
    /// The other people who have this user open, and whether each is editing it (names only).
    public var present: [(user: String, editing: Bool)]

    public static func == (a: DetailScreen, b: DetailScreen) -> Bool {
        a.userID == b.userID && a.user == b.user && a.draftName == b.draftName && a.draftEmail == b.draftEmail
            && a.draftAvatarURL == b.draftAvatarURL && a.dirtyFields == b.dirtyFields && a.fieldErrors == b.fieldErrors
            && a.isDirty == b.isDirty && a.canSave == b.canSave && a.isSaving == b.isSaving && a.isNew == b.isNew
            && a.readOnly == b.readOnly && a.errorMessage == b.errorMessage && a.conflicts == b.conflicts
            && a.followed == b.followed && a.removal == b.removal
            && a.present.elementsEqual(b.present) { $0 == $1 }
    }

    public init(_ state: JSONValue) {
        present = (state["present"]?.arrayValue ?? []).compactMap { person in
            person["user"]?.stringValue.map { ($0, person["editing"]?.boolValue ?? false) }
        }
        userID = state["user_id"]?.stringValue ?? ""
        user = UserRow(state["user"])
        draftName = state["draft_name"]?.stringValue ?? ""
        // A daemon from before per-field drafts sends only the name: the others are as stored.
        draftEmail = state["draft_email"]?.stringValue ?? user?.email ?? ""
        draftAvatarURL = state["draft_avatar_url"]?.stringValue ?? user?.avatarURL ?? ""
        dirtyFields = (state["dirty_fields"]?.arrayValue ?? [])
            .compactMap { $0.stringValue.flatMap(DetailField.init(rawValue:)) }
        var errors: [DetailField: String] = [:]
        if case .object(let byField)? = state["field_errors"] {
            for (key, value) in byField {
                if let field = DetailField(rawValue: key), let message = value.stringValue { errors[field] = message }
            }
        }
        fieldErrors = errors
        isDirty = state["is_dirty"]?.boolValue ?? false
        canSave = state["can_save"]?.boolValue ?? false
        isSaving = state["is_saving"]?.boolValue ?? false
        isNew = state["is_new"]?.boolValue ?? false
        readOnly = state["read_only"]?.boolValue ?? false
        errorMessage = state["error_message"]?.stringValue
        conflicts = (state["conflicts"]?.arrayValue ?? []).compactMap { item in
            guard let field = item["field"]?.stringValue.flatMap(DetailField.init(rawValue:)) else { return nil }
            return Conflict(field: field, theirs: item["theirs"]?.stringValue ?? "",
                            author: item["author"]?.stringValue)
        }
        followed = (state["followed"]?.arrayValue ?? []).compactMap { item in
            guard let field = item["field"]?.stringValue.flatMap(DetailField.init(rawValue:)) else { return nil }
            return Followed(field: field, author: item["author"]?.stringValue)
        }
        if case .object(let removed)? = state["removal"] {
            removal = Removal(author: removed["author"]?.stringValue)
        } else {
            removal = nil
        }
    }

    /// The draft of `field` as the daemon has it.
    public func draft(_ field: DetailField) -> String {
        switch field {
        case .name: draftName
        case .email: draftEmail
        case .avatarURL: draftAvatarURL
        }
    }

    /// The stored value of `field` (the avatar's absence is the empty text); empty for a user
    /// not stored yet.
    public func stored(_ field: DetailField) -> String {
        guard let user else { return "" }
        switch field {
        case .name: return user.name
        case .email: return user.email
        case .avatarURL: return user.avatarURL ?? ""
        }
    }

    /// The conflict on `field`, if any.
    public func conflict(on field: DetailField) -> Conflict? { conflicts.first { $0.field == field } }
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
