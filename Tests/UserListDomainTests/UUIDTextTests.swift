import Foundation
import Testing
import UserListDomain
import UserListTestSupport

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

    /// Reading takes the canonical text (8-4-4-4-12 hex digits, either case) to the id
    /// `UUID(uuidString:)` gives, and refuses anything else, including what Foundation's lenient
    /// parser lets through (a space or a dash among the digits).
    @Test func parsingTakesCanonicalTextAsFoundationDoesAndNothingElse() {
        func isCanonical(_ text: String) -> Bool {
            let bytes = Array(text.utf8)
            return bytes.count == 36 && bytes.indices.allSatisfy { index in
                [8, 13, 18, 23].contains(index) ? bytes[index] == UInt8(ascii: "-")
                    : (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index])
                        || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(bytes[index] | 0x20)
            }
        }
        var texts = Self.ids.flatMap { [$0.uuidString, UUIDText.lowercase($0)] }
        var generator = SplitMix64(seed: 12)
        for id in Self.ids.prefix(500) {
            var bytes = Array(id.uuidString.utf8)
            let position = Int.random(in: 0..<bytes.count, using: &generator)
            bytes[position] = Array("-0aFgG{} ".utf8).randomElement(using: &generator)!
            texts.append(String(decoding: bytes, as: UTF8.self))
        }
        texts += ["", "0123ABCD45674-89EF-FEDC-BA9876543210", "{0123ABCD-4567-89EF-FEDC-BA9876543210}",
                  "0123ABCD-4567-89EF-FEDC-BA987654321", "0123ABCD-4567-89EF-FEDC-BA98765432100", "0123abcd-4567-89Ef-fEDC-BA9876543210"]
        var refused = 0
        for text in texts {
            let parsed = Array(text.utf8).withUnsafeBytes { UUIDText.parse($0) }
            #expect(parsed == (isCanonical(text) ? UUID(uuidString: text) : nil), "\(text)")
            if parsed == nil { refused += 1 }
        }
        #expect(refused > 100 && refused < texts.count - 4_000)
    }
}
