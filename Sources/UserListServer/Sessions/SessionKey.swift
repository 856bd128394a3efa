import Synchronization
import Foundation

/// Sessions are keyed by who connects (the kernel's uid, never the client's word) and the key
/// the client names in hello, so one uid can never reach another's session.
public struct SessionKey: Hashable, Sendable, Codable {
    public let uid: UInt32
    public let clientKey: String

    public init(uid: UInt32, clientKey: String) {
        self.uid = uid
        self.clientKey = clientKey
    }
}

/// Epochs are unique across the daemon's life and its restarts: they start from the wall clock
/// in milliseconds at start-up and count up, so a client can never mistake an old epoch for new.
enum EpochSource {
    private static let counter = Atomic<Int>(Int(Date().timeIntervalSince1970 * 1000) % (1 << 50))

    static func next() -> Int { counter.add(1, ordering: .relaxed).newValue }
}
