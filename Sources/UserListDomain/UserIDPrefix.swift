import Foundation

/// The start of a user id, as a person types it to name a user the way git and docker take a
/// commit or a container (`userctl show 4f1c`): 1 to 32 hex digits, either case, hyphens
/// anywhere ignored. The ids it matches form one range of UUIDs, so a store answers with an
/// index range, never a scan.
public struct UserIDPrefix: Sendable, Equatable, CustomStringConvertible {
    /// The hex digits, lower case, without hyphens.
    public let digits: String

    /// `nil` when `text` holds anything but hex digits and hyphens, no digit, or more than 32.
    public init?(_ text: String) {
        var digits = ""
        for character in text.lowercased() where character != "-" {
            guard character.isHexDigit, character.isASCII else { return nil }
            digits.append(character)
        }
        guard (1...32).contains(digits.count) else { return nil }
        self.digits = digits
    }

    /// The lowest id with this prefix (the rest zeros).
    public var lowest: UUID { Self.uuid(digits + String(repeating: "0", count: 32 - digits.count)) }
    /// The highest id with this prefix (the rest `f`s).
    public var highest: UUID { Self.uuid(digits + String(repeating: "f", count: 32 - digits.count)) }

    public func matches(_ id: UUID) -> Bool {
        UUIDText.lowercase(id).replacingOccurrences(of: "-", with: "").hasPrefix(digits)
    }

    public var description: String { digits }

    private static func uuid(_ hex: String) -> UUID {
        let h = Array(hex)
        let text = String(h[0..<8]) + "-" + String(h[8..<12]) + "-" + String(h[12..<16]) + "-" + String(h[16..<20])
            + "-" + String(h[20..<32])
        return UUID(uuidString: text)!  // 32 hex digits in 8-4-4-4-12: always a UUID
    }
}
