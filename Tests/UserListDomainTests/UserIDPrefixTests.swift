import Foundation
import Testing
import UserListDomain

/// The start of an id as people type it (issue 27 item 5): what it accepts, and the range of
/// ids it stands for.
@Suite struct UserIDPrefixTests {
    @Test func acceptsHexDigitsInEitherCaseWithHyphensAnywhere() {
        #expect(UserIDPrefix("4F1c")?.digits == "4f1c")
        #expect(UserIDPrefix("4f1c2a9e-7")?.digits == "4f1c2a9e7")
        #expect(UserIDPrefix("-4-f-")?.digits == "4f")
        for refused in ["", "-", "xyz", "4f1c 2a", "é", "٣", String(repeating: "a", count: 33)] {
            #expect(UserIDPrefix(refused) == nil, "\(refused)")
        }
    }

    @Test func itsRangeHoldsExactlyTheIDsThatStartWithIt() throws {
        let prefix = try #require(UserIDPrefix("4f1c2"))
        #expect(UUIDText.lowercase(prefix.lowest) == "4f1c2000-0000-0000-0000-000000000000")
        #expect(UUIDText.lowercase(prefix.highest) == "4f1c2fff-ffff-ffff-ffff-ffffffffffff")
        #expect(prefix.matches(try #require(UUID(uuidString: "4F1C2A9E-0000-4000-8000-000000000000"))))
        #expect(!prefix.matches(try #require(UUID(uuidString: "4f1c3000-0000-4000-8000-000000000000"))))
        let whole = try #require(UserIDPrefix("4f1c2a9e-0000-4000-8000-000000000001"))
        #expect(whole.lowest == whole.highest)
    }
}
