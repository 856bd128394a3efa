import Foundation
import UserListDomain
import UserListPresentation
import UserListWire

/// The arguments of the session's `export_page`: where to continue (`after`, the `next` of the
/// previous page, absent for the first), how many users at most (`limit`, 1 to `maximumLimit`,
/// `defaultLimit` when absent) and an optional `search` (the list's substring rule).
struct ExportPageRequest: Equatable {
    static let defaultLimit = 1_000
    static let maximumLimit = FetchUserPageUseCase.maximumPageSize

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
    /// The users of one export page, at most: about a megabyte of JSON (however long the
    /// fields, with every character escaped), so that a page, and the next one asked for while
    /// the client writes it, stay well inside a connection's 4 MiB of queued replies.
    static let exportPageBytes = 1 << 20

    /// `export_page`: one page of the store in list order, read by keyset straight from the
    /// repository (no screen, no ViewModel, nothing kept between pages but the client's cursor),
    /// so walking a million users costs a million rows read once: linear time, constant memory
    /// on the daemon. The session's screens are untouched. A page ends at `limit` users or at
    /// `exportPageBytes`, whichever comes first; `next` says where the following one starts.
    func exportPage(_ request: ExportPageRequest) -> Outcome {
        let useCases = useCases
        return .pendingEncoded { _ in
            do throws(UserError) {
                let page = try await useCases.fetchPage.exportPage(
                    after: request.after.map(PageCursor.init(token:)), search: request.search, limit: request.limit,
                    byteBudget: Self.exportPageBytes)
                var (users, next) = (page.users[...], page.next)
                let (fitting, cut) = Self.withinExportBudget(page.users)
                // A store with no cursor to cut at sends the page whole.
                if cut, let last = fitting.last, let cursor = useCases.fetchPage.cursor(after: last,
                                                                                        totalCount: page.totalCount) {
                    (users, next) = (fitting, cursor)
                }
                return .success(Self.exportResult(users, next: next, totalCount: page.totalCount))
            } catch {
                return .failure(IntentError(error))
            }
        }
    }

    /// The page's result as JSON, in the bytes `JSONValue.serialize` gives
    /// `{"next": ..., "total_count": ..., "users": [StateDocument.user, ...]}` (keys sorted),
    /// written straight from the users: a `JSONValue` object per user, built, key-sorted,
    /// serialized and freed, was half of the daemon's CPU in an export.
    static func exportResult(_ users: ArraySlice<User>, next: PageCursor?, totalCount: Int?) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 + users.count * 200)
        out.append(contentsOf: #"{"next":"#.utf8)
        if let next { JSONWriter.writeString(next.token, into: &out) } else { out.append(contentsOf: "null".utf8) }
        out.append(contentsOf: #","total_count":"#.utf8)
        if let totalCount {
            JSONWriter.writeInt(Int64(totalCount), into: &out)
        } else {
            out.append(contentsOf: "null".utf8)
        }
        out.append(contentsOf: #","users":["#.utf8)
        for (index, user) in users.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            StateDocument.write(user, into: &out)
        }
        out.append(contentsOf: "]}".utf8)
        return out
    }

    /// The first of `users` that fit `exportPageBytes` (at least one), and whether any were
    /// left out. A user's size is bounded from above: its fields as the serializer escapes them
    /// (`"` and `\` take two bytes, other C0 controls six) plus `UserExportSize.perUser` for the
    /// rest of the object: never less than the store's `UserExportSize.lowerBound`.
    static func withinExportBudget(_ users: [User]) -> (users: ArraySlice<User>, cut: Bool) {
        var bytes = 0
        for (index, user) in users.enumerated() {
            bytes += UserExportSize.perUser + escapedLength(user.name) + escapedLength(user.email)
                + (user.avatarURL.map(escapedLength) ?? 0)
            if bytes > exportPageBytes && index > 0 { return (users[..<index], true) }
        }
        return (users[...], false)
    }

    /// Read from the string's contiguous UTF-8 when it has it (a store's strings do): through
    /// `String.UTF8View`'s iterator this was 8 % of the daemon's CPU in a PostgreSQL export.
    private static func escapedLength(_ text: String) -> Int {
        func count(_ bytes: some Sequence<UInt8>) -> Int {
            var length = 0
            for byte in bytes {
                length += byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") ? 2 : byte < 0x20 ? 6 : 1
            }
            return length
        }
        return text.utf8.withContiguousStorageIfAvailable { count($0) } ?? count(text.utf8)
    }
}
