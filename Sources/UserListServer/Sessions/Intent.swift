import Foundation
import UserListDomain
import UserListWire

/// An intent decoded once, at the edge, into what the session performs: one enum per screen.
/// Arguments are checked here (type and shape); checks that need the screen's state (a row
/// index in range) are made when the intent runs.
enum Intent: Equatable {
    case list(ListIntent)
    case detail(DetailIntent)
    case session(SessionIntent)
    case history(HistoryIntent)
    /// Daemon-wide figures for admins. Sent to the `session` screen, but answered by the
    /// connection's handler from the registry: a session knows only itself.
    case daemon(DaemonQuery)

    /// Whether the intent changes stored data, or edits a draft toward it: refused on a
    /// read-only connection, with a message instead of an edit the person could never save.
    var writes: Bool {
        switch self {
        case .list(.addUser), .list(.removeUser): true
        case .detail(.save): true
        case .session(.importUsers), .session(.setUser), .session(.addUser),
             .session(.removeUser), .session(.openNewUser): true
        case .detail(.setDraft), .detail(.keepMine), .detail(.takeTheirs), .detail(.recreate): true
        case .session(.revert), .history(.revert): true
        case .session(.stagedImport): true
        default: false
        }
    }

    /// Decodes the wire form. Fails with `unknown_screen`, `unknown_action` or `invalid_args`.
    init(_ intent: ClientMessage.Intent) throws(IntentError) {
        let args = IntentArguments(intent.args ?? [:])
        switch intent.screen {
        case "list": self = .list(try ListIntent(intent.action, args))
        case "detail": self = .detail(try DetailIntent(intent.action, args))
        case "session":
            if let query = DaemonQuery(rawValue: intent.action) {
                self = .daemon(query)
            } else {
                self = .session(try SessionIntent(intent.action, args))
            }
        case "history": self = .history(try HistoryIntent(intent.action, args))
        default:
            throw IntentError(.unknownScreen,
                              "There is no screen '\(intent.screen)' on this session's stack; "
                                + "screens are list, detail (when open), history (when open) and session.")
        }
    }
}

/// The introspection intents (`status`, `sessions`): for root and the admin group only.
enum DaemonQuery: String, Equatable {
    case status
    case sessions
}

/// Intents of the `list` screen.
enum ListIntent: Equatable {
    case onAppear
    case refresh
    case showLastPage
    case didDisplayRow(index: Int)
    case didSelectRow(index: Int)
    case dismissError
    case search(text: String)
    case addUser(NewUser)
    case removeUser(id: UUID)

    init(_ action: String, _ args: IntentArguments) throws(IntentError) {
        switch action {
        case "on_appear": self = .onAppear
        case "refresh": self = .refresh
        case "show_last_page": self = .showLastPage
        case "did_display_row": self = .didDisplayRow(index: try args.int("index"))
        case "did_select_row": self = .didSelectRow(index: try args.int("index"))
        case "dismiss_error": self = .dismissError
        case "search": self = .search(text: try args.string("text"))
        case "add_user": self = .addUser(try args.newUser())
        case "remove_user": self = .removeUser(id: try args.uuid("id"))
        default: throw IntentError(.unknownAction, "The list screen has no action '\(action)'.")
        }
    }
}

/// Intents of the `detail` screen.
enum DetailIntent: Equatable {
    case onAppear
    case setDraft(UserField, String)
    /// Settles a conflict on a field with this person's value, or with the saved one.
    case keepMine(UserField)
    case takeTheirs(UserField)
    /// The user was removed while the screen was open: its next save creates it again.
    case recreate
    case save
    case dismissError
    case back
    /// Pushes this user's history screen.
    case openHistory

    init(_ action: String, _ args: IntentArguments) throws(IntentError) {
        switch action {
        case "on_appear": self = .onAppear
        case "open_history": self = .openHistory
        case "set_draft_name": self = .setDraft(.name, try args.string("name"))
        case "set_draft_email": self = .setDraft(.email, try args.string("email"))
        case "set_draft_avatar_url": self = .setDraft(.avatarURL, try args.string("avatar_url"))
        case "keep_mine": self = .keepMine(try args.field("field"))
        case "take_theirs": self = .takeTheirs(try args.field("field"))
        case "recreate": self = .recreate
        case "save": self = .save
        case "dismiss_error": self = .dismissError
        case "back": self = .back
        default: throw IntentError(.unknownAction, "The detail screen has no action '\(action)'.")
        }
    }
}

/// Intents of the session itself (`screen: "session"`). The one-shot writes (`rename_user`,
/// `add_user`, `remove_user`) change the store without touching the screen stack, so a script
/// sharing a session with a terminal never moves that terminal's screens.
enum SessionIntent: Equatable {
    case openUser(id: UUID)
    case back
    case importUsers([User])
    /// Changes the given fields only (`userctl set`, `rename`); `expectedVersion` nil: over
    /// whatever version is stored now.
    case setUser(id: UUID, edit: UserEdit, expectedVersion: Int?)
    case addUser(NewUser)
    case removeUser(id: UUID)
    /// Opens an empty user screen whose save creates the user (the TUI's `a`).
    case openNewUser
    /// A draft the client still holds that the daemon lost (a crash between journal writes, or
    /// typed while away): its changed fields as typed, against `baseVersion` of the user.
    case offerDraft(userID: UUID, fields: [UserField: String], baseVersion: Int)
    /// One page of the store read by keyset, past every screen (`BulkExport.swift`).
    case exportPage(ExportPageRequest)
    /// The users whose id starts with a prefix, past every screen (`IDPrefixLookup.swift`).
    case findUsers(FindUsersRequest)
    /// A page of history, past every screen (`Session+History.swift`).
    case history(HistoryRequest)
    /// Undo a history entry (`userctl revert`); `skip_changed` for an import (Session+History).
    case revert(entry: Int64, skippingChanged: Bool)
    /// An all-or-nothing import's step (`StagedImportIntent`).
    case stagedImport(StagedImportIntent)

    init(_ action: String, _ args: IntentArguments) throws(IntentError) {
        if let staged = try StagedImportIntent(action, args) {
            self = .stagedImport(staged)
            return
        }
        switch action {
        case "export_page": self = .exportPage(try ExportPageRequest(args))
        case "find_users": self = .findUsers(try FindUsersRequest(args))
        case "history": self = .history(try HistoryRequest(args))
        case "revert":
            let skipping = try HistoryRequest.flag(args, "skip_changed")
            self = .revert(entry: Int64(try args.int("entry")), skippingChanged: skipping)
        case "open_user": self = .openUser(id: try args.uuid("id"))
        case "offer_draft":
            self = .offerDraft(userID: try args.uuid("user_id"), fields: try args.draftFields(),
                               baseVersion: try args.int("base_version"))
        case "back": self = .back
        case "import_users": self = .importUsers(try args.users("users"))
        case "rename_user":  // `set_user` with the name alone
            self = .setUser(id: try args.uuid("id"), edit: UserEdit(name: try args.string("name")),
                            expectedVersion: try Self.expectedVersion(args))
        case "set_user":
            self = .setUser(id: try args.uuid("id"), edit: try args.userEdit(),
                            expectedVersion: try Self.expectedVersion(args))
        case "open_new_user": self = .openNewUser
        case "add_user": self = .addUser(try args.newUser())
        case "remove_user": self = .removeUser(id: try args.uuid("id"))
        default: throw IntentError(.unknownAction, "The session has no action '\(action)'.")
        }
    }

    private static func expectedVersion(_ args: IntentArguments) throws(IntentError) -> Int? {
        let version = try args.optionalInt("expected_version")
        if let version, version < 1 {
            throw IntentError(.invalidArgs, "'expected_version' must be a version (1 or more).")
        }
        return version
    }
}
