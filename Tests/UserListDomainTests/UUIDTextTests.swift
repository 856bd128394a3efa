import Foundation
import Testing
import UserListDomain

/// Ids are written by hand, not by Foundation: the bytes must be `uuidString`'s (the SQLite
/// store matches stored ids by them) and its lower case (the wire's, which clients compare).
struct UUIDTextTests {
    static let ids = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                      UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
                      UUID(uuidString: "0123ABCD-4567-89EF-FEDC-BA9876543210")!]
        + (0..<2_000).map { _ in UUID() }

    @Test func upperCaseIsUUIDString() {
        for id in Self.ids {
            let text = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: UUIDText.count) { buffer in
                UUIDText.write(id, uppercase: true, into: buffer)
                return String(decoding: buffer, as: UTF8.self)
            }
            #expect(text == id.uuidString)
        }
    }

    @Test func lowerCaseIsTheWiresForm() {
        for id in Self.ids {
            #expect(UUIDText.lowercase(id) == id.uuidString.lowercased())
            #expect(UUID(uuidString: UUIDText.lowercase(id)) == id)
        }
    }
}
