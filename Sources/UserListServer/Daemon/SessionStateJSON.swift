import Foundation
import UserListDomain
import UserListPresentation
import UserListWire

/// The saved sessions' JSON (`sessions.json`, the journal's lines, `handover.json`) written and
/// read by the wire's byte-level writer and parser instead of Foundation's `Codable` coders.
///
/// Why: a restart saves and restores a thousand sessions while their clients wait, and the
/// journal writes states all the time; Foundation's generic coders spent most of that time on
/// metadata lookups and boxes. The bytes keep the shapes `Codable` gives these types (keys,
/// `{"list":{"_0":…}}` for a screen, dates as seconds since 2001, `Data` as base64), so files
/// written by older versions read here and files written here read in older versions. A value
/// whose shape this reader does not know returns nil, and the caller falls back to
/// `JSONDecoder` (which then names what is wrong). A history screen, which a restore does not
/// use, goes through Foundation whole.
enum SessionStateJSON {
    // MARK: writing

    static func write(_ saved: SavedSession, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"key":"#.utf8)
        write(saved.key, into: &out)
        out.append(contentsOf: #","id":"#.utf8)
        JSONWriter.writeString(saved.id, into: &out)
        out.append(contentsOf: #","state":"#.utf8)
        write(saved.state, into: &out)
        if let detachedAt = saved.detachedAt {
            out.append(contentsOf: #","detachedAt":"#.utf8)
            JSONWriter.writeDouble(detachedAt.timeIntervalSinceReferenceDate, into: &out)
        }
        if let window = saved.listWindow {
            out.append(contentsOf: #","listWindow":{"rows":"#.utf8)
            JSONWriter.writeInt(Int64(window.rows), into: &out)
            out.append(contentsOf: #","fromEnd":"#.utf8)
            writeBool(window.fromEnd, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        if let client = saved.client {
            out.append(contentsOf: #","client":"#.utf8)
            JSONWriter.writeString(client, into: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    static func write(_ key: SessionKey, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"uid":"#.utf8)
        JSONWriter.writeInt(Int64(key.uid), into: &out)
        out.append(contentsOf: #","clientKey":"#.utf8)
        JSONWriter.writeString(key.clientKey, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    static func write(_ state: NavigationState, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"screens":"#.utf8)
        writeArray(state.screens, into: &out) { screen, out in
            switch screen {
            case .list(let list):
                out.append(contentsOf: #"{"list":{"_0":"#.utf8)
                write(list, into: &out)
            case .detail(let detail):
                out.append(contentsOf: #"{"detail":{"_0":"#.utf8)
                write(detail, into: &out)
            case .history(let history):
                out.append(contentsOf: #"{"history":{"_0":"#.utf8)
                out.append(contentsOf: (try? JSONEncoder().encode(history)) ?? Data("null".utf8))
            }
            out.append(contentsOf: "}}".utf8)
        }
        out.append(UInt8(ascii: "}"))
    }

    static func write(_ list: UserListState, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"users":"#.utf8)
        writeArray(list.users, into: &out) { write($0, into: &$1) }
        out.append(contentsOf: #","loading":"#.utf8)
        JSONWriter.writeString(list.loading.rawValue, into: &out)
        writeMember("errorMessage", list.errorMessage, into: &out)
        out.append(contentsOf: #","hasMore":"#.utf8)
        writeBool(list.hasMore, into: &out)
        out.append(contentsOf: #","hasPrevious":"#.utf8)
        writeBool(list.hasPrevious, into: &out)
        if let total = list.totalCount {
            out.append(contentsOf: #","totalCount":"#.utf8)
            JSONWriter.writeInt(Int64(total), into: &out)
        }
        writeMember("search", list.search, into: &out)
        out.append(contentsOf: #","isStale":"#.utf8)
        writeBool(list.isStale, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// With its derived flags and explicit nulls, as `UserDetailState.encode(to:)` writes it.
    static func write(_ detail: UserDetailState, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"userID":"#.utf8)
        JSONWriter.writeString(detail.userID.uuidString, into: &out)
        out.append(contentsOf: #","user":"#.utf8)
        writeOptional(detail.user, into: &out)
        out.append(contentsOf: #","draftName":"#.utf8)
        JSONWriter.writeString(detail.draftName, into: &out)
        out.append(contentsOf: #","draftEmail":"#.utf8)
        JSONWriter.writeString(detail.draftEmail, into: &out)
        out.append(contentsOf: #","draftAvatarURL":"#.utf8)
        JSONWriter.writeString(detail.draftAvatarURL, into: &out)
        out.append(contentsOf: #","isSaving":"#.utf8)
        writeBool(detail.isSaving, into: &out)
        out.append(contentsOf: #","errorMessage":"#.utf8)
        if let message = detail.errorMessage {
            JSONWriter.writeString(message, into: &out)
        } else {
            out.append(contentsOf: "null".utf8)
        }
        if detail.isNew { out.append(contentsOf: #","isNew":true"#.utf8) }
        writeMerge(detail, into: &out)
        out.append(contentsOf: #","isDirty":"#.utf8)
        writeBool(detail.isDirty, into: &out)
        out.append(contentsOf: #","canSave":"#.utf8)
        writeBool(detail.canSave, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    static func write(_ user: User, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"id":"#.utf8)
        JSONWriter.writeString(user.id.uuidString, into: &out)
        out.append(contentsOf: #","name":"#.utf8)
        JSONWriter.writeString(user.name, into: &out)
        out.append(contentsOf: #","email":"#.utf8)
        JSONWriter.writeString(user.email, into: &out)
        writeMember("avatarURL", user.avatarURL, into: &out)
        out.append(contentsOf: #","version":"#.utf8)
        JSONWriter.writeInt(Int64(user.version), into: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// What a merge left on the screen (conflicts, followed fields, a removal), only when any:
    /// rare, and a screen without them journals as before.
    private static func writeMerge(_ detail: UserDetailState, into out: inout [UInt8]) {
        if !detail.conflicts.isEmpty {
            out.append(contentsOf: #","conflicts":"#.utf8)
            writeArray(detail.conflicts, into: &out) { conflict, out in
                out.append(contentsOf: #"{"field":"#.utf8)
                JSONWriter.writeString(conflict.field.rawValue, into: &out)
                out.append(contentsOf: #","theirs":"#.utf8)
                JSONWriter.writeString(conflict.theirs, into: &out)
                writeMember("author", conflict.author, into: &out)
                out.append(contentsOf: #","version":"#.utf8)
                JSONWriter.writeInt(Int64(conflict.version), into: &out)
                out.append(UInt8(ascii: "}"))
            }
        }
        if !detail.followed.isEmpty {
            out.append(contentsOf: #","followed":"#.utf8)
            writeArray(detail.followed, into: &out) { followed, out in
                out.append(contentsOf: #"{"field":"#.utf8)
                JSONWriter.writeString(followed.field.rawValue, into: &out)
                writeMember("author", followed.author, into: &out)
                out.append(contentsOf: #","version":"#.utf8)
                JSONWriter.writeInt(Int64(followed.version), into: &out)
                out.append(UInt8(ascii: "}"))
            }
        }
        if let removal = detail.removal {
            out.append(contentsOf: #","removal":{"#.utf8)
            if let author = removal.author {
                out.append(contentsOf: #""author":"#.utf8)
                JSONWriter.writeString(author, into: &out)
            }
            if let base = removal.base {
                out.append(contentsOf: (removal.author == nil ? #""base":"# : #","base":"#).utf8)
                write(base, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func writeOptional(_ user: User?, into out: inout [UInt8]) {
        if let user { write(user, into: &out) } else { out.append(contentsOf: "null".utf8) }
    }

    /// `,"name":"value"`, or nothing for nil (as synthesized `Codable` leaves a nil out).
    private static func writeMember(_ name: StaticString, _ value: String?, into out: inout [UInt8]) {
        guard let value else { return }
        out.append(contentsOf: #",""#.utf8)
        out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        out.append(contentsOf: #"":"#.utf8)
        JSONWriter.writeString(value, into: &out)
    }

    /// `[a,b,…]`, each element written by `element`.
    static func writeArray<Element>(_ items: [Element], into out: inout [UInt8],
                                    _ element: (Element, inout [UInt8]) -> Void) {
        out.append(UInt8(ascii: "["))
        for (index, item) in items.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            element(item, &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    static func writeBool(_ value: Bool, into out: inout [UInt8]) {
        out.append(contentsOf: (value ? "true" : "false").utf8)
    }

    // MARK: reading (nil: not the shape this reader knows)

    static func savedSession(_ value: JSONValue) -> SavedSession? {
        guard case .object(let object) = value, let key = object["key"].flatMap(sessionKey),
              case .string(let id)? = object["id"], let state = object["state"].flatMap(navigationState)
        else { return nil }
        var detachedAt: Date?
        if let seconds = object["detachedAt"], seconds != .null {
            guard let interval = seconds.doubleValue else { return nil }
            detachedAt = Date(timeIntervalSinceReferenceDate: interval)
        }
        var window: UserListWindow?
        if let member = object["listWindow"], member != .null {
            guard let rows = member["rows"]?.int64Value.flatMap(Int.init(exactly:)),
                  case .bool(let fromEnd)? = member["fromEnd"] else {
                return nil
            }
            window = UserListWindow(rows: rows, fromEnd: fromEnd)
        }
        guard let client = optionalString(object["client"]) else { return nil }  // absent in older files
        return SavedSession(key: key, id: id, state: state, detachedAt: detachedAt, listWindow: window, client: client)
    }

    static func sessionKey(_ value: JSONValue) -> SessionKey? {
        guard let uid = value["uid"]?.int64Value.flatMap(UInt32.init(exactly:)),
              case .string(let clientKey)? = value["clientKey"] else {
            return nil
        }
        return SessionKey(uid: uid, clientKey: clientKey)
    }

    static func navigationState(_ value: JSONValue) -> NavigationState? {
        guard case .array(let items)? = value["screens"] else { return nil }
        var screens: [NavigationState.ScreenState] = []
        screens.reserveCapacity(items.count)
        for item in items {
            guard case .object(let object) = item, object.count == 1, let (kind, wrapped) = object.first,
                  let inner = wrapped["_0"] else { return nil }
            switch kind {
            case "list": guard let list = listState(inner) else { return nil }; screens.append(.list(list))
            case "detail": guard let detail = detailState(inner) else { return nil }; screens.append(.detail(detail))
            case "history":
                guard let history = try? JSONDecoder().decode(UserHistoryState.self,
                                                              from: Data(inner.serialized())) else { return nil }
                screens.append(.history(history))
            default: return nil
            }
        }
        return NavigationState(screens: screens)
    }

    /// Every member optional, as `UserListState.init(from:)` reads it.
    static func listState(_ value: JSONValue) -> UserListState? {
        guard case .object(let object) = value else { return nil }
        var list = UserListState()
        if let users = present(object["users"]) {
            guard case .array(let items) = users else { return nil }
            list.users.reserveCapacity(items.count)
            for item in items {
                guard let user = user(item) else { return nil }
                list.users.append(user)
            }
        }
        if let loading = present(object["loading"]) {
            guard let raw = loading.stringValue, let known = UserListState.Loading(rawValue: raw) else { return nil }
            list.loading = known
        }
        guard let errorMessage = optionalString(object["errorMessage"]),
              let hasMore = optionalBool(object["hasMore"]), let hasPrevious = optionalBool(object["hasPrevious"]),
              let search = optionalString(object["search"]), let isStale = optionalBool(object["isStale"])
        else { return nil }
        list.errorMessage = errorMessage
        list.hasMore = hasMore ?? false
        list.hasPrevious = hasPrevious ?? false
        list.search = search
        list.isStale = isStale ?? false
        if let total = present(object["totalCount"]) {
            guard let count = total.int64Value.flatMap(Int.init(exactly:)) else { return nil }
            list.totalCount = count
        }
        return list
    }

    static func detailState(_ value: JSONValue) -> UserDetailState? {
        guard case .object(let object) = value, let id = object["userID"]?.stringValue.flatMap(UUID.init(uuidString:)),
              case .string(let draft)? = object["draftName"],
              let isSaving = optionalBool(object["isSaving"]), let errorMessage = optionalString(object["errorMessage"])
        else { return nil }
        var detail = UserDetailState(userID: id)
        detail.draftName = draft
        detail.isSaving = isSaving ?? false
        detail.errorMessage = errorMessage
        if let member = present(object["user"]) {
            guard let stored = user(member) else { return nil }
            detail.user = stored
        }
        // Journals written before per-field drafts have the name only: the rest starts as stored.
        detail.draftEmail = object["draftEmail"]?.stringValue ?? detail.user?.email ?? ""
        detail.draftAvatarURL = object["draftAvatarURL"]?.stringValue ?? detail.user?.avatarURL ?? ""
        detail.isNew = object["isNew"]?.boolValue ?? false
        guard let merge = mergeState(object) else { return nil }
        (detail.conflicts, detail.followed, detail.removal) = merge
        return detail
    }

    private static func mergeState(_ object: [String: JSONValue]) -> ([FieldConflict], [FollowedChange], Removal?)? {
        var conflicts: [FieldConflict] = [], followed: [FollowedChange] = []
        for item in present(object["conflicts"])?.arrayValue ?? [] {
            guard let field = item["field"]?.stringValue.flatMap(UserField.init(rawValue:)),
                  let theirs = item["theirs"]?.stringValue,
                  let version = item["version"]?.int64Value.flatMap(Int.init(exactly:)) else { return nil }
            conflicts.append(FieldConflict(field: field, theirs: theirs, author: item["author"]?.stringValue,
                                           version: version))
        }
        for item in present(object["followed"])?.arrayValue ?? [] {
            guard let field = item["field"]?.stringValue.flatMap(UserField.init(rawValue:)),
                  let version = item["version"]?.int64Value.flatMap(Int.init(exactly:)) else { return nil }
            followed.append(FollowedChange(field: field, author: item["author"]?.stringValue, version: version))
        }
        var removal: Removal?
        if let removed = present(object["removal"]) {
            let base = present(removed["base"]).map(user)
            if base == .some(nil) { return nil }
            removal = Removal(author: removed["author"]?.stringValue, base: base ?? nil)
        }
        return (conflicts, followed, removal)
    }

    static func user(_ value: JSONValue) -> User? {
        guard case .object(let object) = value, let id = object["id"]?.stringValue.flatMap(UUID.init(uuidString:)),
              case .string(let name)? = object["name"], case .string(let email)? = object["email"],
              let version = object["version"]?.int64Value.flatMap(Int.init(exactly:)),
              let avatar = optionalString(object["avatarURL"]) else { return nil }
        return User(id: id, name: name, email: email, avatarURL: avatar, version: version)
    }

    /// The member, or nil when it is absent or null (`decodeIfPresent`'s view).
    private static func present(_ value: JSONValue?) -> JSONValue? {
        guard let value, value != .null else { return nil }
        return value
    }

    /// `.some(nil)` for absent or null, `.some(text)` for a string, nil for anything else.
    private static func optionalString(_ value: JSONValue?) -> String?? {
        guard let member = present(value) else { return .some(nil) }
        guard case .string(let text) = member else { return nil }
        return .some(text)
    }

    private static func optionalBool(_ value: JSONValue?) -> Bool?? {
        guard let member = present(value) else { return .some(nil) }
        guard case .bool(let flag) = member else { return nil }
        return .some(flag)
    }
}
