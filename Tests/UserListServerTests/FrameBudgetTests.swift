import Foundation
import Testing
import UserListDomain
import UserListPresentation
@testable import UserListServer
import UserListWire

/// The worst state a session can be in still fits one server frame: every user field is bounded in
/// bytes by the Domain, and the strings a client sets (the three drafts, search) by the client frame.
@Suite struct FrameBudgetTests {
    /// A name at every limit at once: 200 characters, 800 bytes, and as many bytes as possible that
    /// JSON must escape (one backslash per character, padded with combining accents).
    static let worstName: String = {
        var name = ""
        for index in 0..<200 { name += index < 100 ? "\\\u{301}\u{301}" : "\\\u{301}" }  // 100×5 + 100×3 = 800 bytes
        return name
    }()
    static let worstEmail = String(repeating: "\\", count: 240) + "@example.io"
    static let worstAvatar = "https://example.com/" + String(repeating: "a", count: UserValidation.maximumAvatarURLBytes - 20)

    static func worstUser(_ index: Int) -> User {
        User(id: UUID(), name: worstName, email: worstEmail, avatarURL: worstAvatar, version: Int.max - index)
    }

    @Test func theWorstUserIsValid() throws {
        #expect(try UserValidation.validName(Self.worstName) == Self.worstName)
        #expect(Self.worstName.utf8.count == UserValidation.maximumNameBytes)
        #expect(try UserValidation.validEmail(Self.worstEmail) == Self.worstEmail)
        #expect(try UserValidation.validAvatarURL(Self.worstAvatar) == Self.worstAvatar)
    }

    /// JSON escaping at most doubles a field (control characters, the only 6-byte escapes, are
    /// refused), so a user's encoding is bounded by the Domain's byte limits.
    static let userBound = 2 * (UserValidation.maximumNameBytes + UserValidation.maximumEmailBytes + UserValidation.maximumAvatarURLBytes) + 200

    @Test func aUserEncodesWithinItsBound() {
        let encoded = StateDocument.user(Self.worstUser(0)).serialized().count
        #expect(encoded <= Self.userBound, "\(encoded) > \(Self.userBound)")
    }

    @Test func theWorstSessionStateFitsOneFrame() throws {
        // The largest page a request may ask for, every user at the limits...
        var list = UserListState()
        list.users = (0..<1_000).map(Self.worstUser)
        list.totalCount = Int.max
        list.hasMore = true
        // ...strings a client sets, as large as a client frame can carry...
        let clientString = String(repeating: "\\", count: FrameLimits.clientToServer / 2)
        list.search = clientString
        list.errorMessage = UserError.conflict(stored: Self.worstUser(1)).message
        // ...and a detail screen with a draft in every field, a stored user, a conflict on every
        // field (their values are stored values) and an error.
        var detail = UserDetailState(userID: UUID())
        detail.user = Self.worstUser(2)
        let theirs = UserFields(Self.worstUser(3))
        detail.conflicts = UserField.allCases.map { FieldConflict(field: $0, theirs: theirs[$0], author: Self.worstName, version: 3) }
        detail.draftName = clientString
        detail.draftEmail = clientString
        detail.draftAvatarURL = clientString
        detail.errorMessage = UserError.duplicateEmail(email: Self.worstEmail, other: Self.worstUser(4)).message
        let state = NavigationState(screens: [.list(list), .detail(detail)])

        let document = StateDocument.make(state)
        let frame = try FrameEncoder(maximumFrameSize: FrameLimits.serverToClient)
            .encode(ServerMessage.snapshot(.init(epoch: Int.max, seq: 0, state: document)))
        #expect(frame.count <= FrameLimits.serverToClient)
        // By construction: users, plus four client-sized strings, plus slack for the rest.
        let bound = 1_005 * Self.userBound + 4 * FrameLimits.clientToServer + 16 * 1024
        #expect(frame.count <= bound)
        #expect(bound <= FrameLimits.serverToClient)
    }
}
