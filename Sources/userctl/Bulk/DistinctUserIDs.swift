import Foundation
import UserListWire

/// The users an import file names, each counted once. The daemon applies each id's last entry,
/// so a file naming a user twice writes it once: without this count the summary would call the
/// earlier entry "already up to date". Ids are compared as the daemon does (a UUID in either
/// case is one id); 16 bytes an id, so a million-user file costs about 32 MiB here.
struct DistinctUserIDs {
    private var uuids = Set<UInt128>()
    /// Ids that are not UUIDs (the daemon refuses them; counted by their text meanwhile).
    private var others = Set<String>()

    mutating func insert(_ id: String) {
        if let bits = Self.bits(id) {
            uuids.insert(bits)
        } else {
            others.insert(id)
        }
    }

    /// The 128 bits of a UUID's text (8-4-4-4-12 hex digits, either case, as the daemon reads
    /// ids), or nil. Not `UUID(uuidString:)`: its `sscanf` was an eighth of userctl's CPU in an
    /// import, and takes signs, spaces and "0x" the daemon refuses. (The daemon's own parser,
    /// `UUIDText.parse`, lives in the Domain, which userctl does not depend on.)
    static func bits(_ id: String) -> UInt128? {
        guard id.utf8.count == 36 else { return nil }
        var value: UInt128 = 0
        for (offset, byte) in id.utf8.enumerated() {
            if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt128(digit)
        }
        return value
    }

    mutating func insert(entry user: JSONValue) {
        if let id = user["id"]?.stringValue { insert(id) }
    }

    var count: Int { uuids.count + others.count }
}
