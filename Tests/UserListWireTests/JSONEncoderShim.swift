import Foundation
import UserListWire

/// Foundation's encoder, used only to check `JSONValue: Codable` and as the baseline in benchmarks.
enum JSONEncoderShim {
    static func encode(_ value: JSONValue) throws -> [UInt8] { Array(try JSONEncoder().encode(value)) }
}
