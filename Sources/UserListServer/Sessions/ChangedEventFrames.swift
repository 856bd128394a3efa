import Foundation
import Synchronization
import UserListDomain
import UserListWire

/// The `changed` event frame for a committed change, encoded once and shared: every session
/// sends the same bytes for the same change, and a fan-out to a thousand sessions should not
/// encode it a thousand times.
enum ChangedEventFrames {
    private static let last = Mutex<(change: UserChange, frame: [UInt8])?>(nil)
    private static let encoder = FrameEncoder(maximumFrameSize: FrameLimits.serverToClient)

    static func frame(for change: UserChange) -> [UInt8]? {
        if let cached = last.withLock({ $0 }), cached.change == change { return cached.frame }
        guard let frame = try? encoder.encode(ServerMessage.event(event(for: change))) else { return nil }
        last.withLock { $0 = (change, frame) }
        return frame
    }

    static func event(for change: UserChange) -> ServerMessage.Event {
        var payload: [String: JSONValue] = ["id": .string(change.userID.uuidString.lowercased())]
        switch change {
        case .saved(let user): payload["kind"] = "saved"; payload["user"] = StateDocument.user(user)
        case .added(let user): payload["kind"] = "added"; payload["user"] = StateDocument.user(user)
        case .removed: payload["kind"] = "removed"
        }
        return .init(screen: "session", name: "changed", payload: .object(payload))
    }
}
