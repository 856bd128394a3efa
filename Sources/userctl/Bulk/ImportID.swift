import Foundation

/// The id given to an import entry that has none: derived from its email address, so that a new
/// user is created, and running the same import again finds that user and skips it instead of
/// adding it twice. An address belongs to one user only, so the id is as unique as the address;
/// the daemon refuses an address another user has.
enum ImportID {
    /// A version 8 (custom) UUID from two 64-bit FNV-1a hashes of the trimmed, lower-case email.
    static func derived(fromEmail email: String) -> String {
        let key = Array(("userctl import " + email.trimmingCharacters(in: .whitespaces).lowercased()).utf8)
        var bytes = withUnsafeBytes(of: fnv1a(key, basis: 0xcbf2_9ce4_8422_2325).bigEndian, Array.init)
            + withUnsafeBytes(of: fnv1a(key.reversed(), basis: 0x8422_2325_cbf2_9ce4).bigEndian, Array.init)
        bytes[6] = (bytes[6] & 0x0F) | 0x80  // version 8
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 9562 variant
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let h = Array(hex)
        return [h[0..<8], h[8..<12], h[12..<16], h[16..<20], h[20..<32]].map { String($0) }.joined(separator: "-")
    }

    private static func fnv1a<S: Sequence>(_ bytes: S, basis: UInt64) -> UInt64 where S.Element == UInt8 {
        var hash = basis
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}
