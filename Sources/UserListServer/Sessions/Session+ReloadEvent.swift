import UserListWire

/// `session` `reloaded` (PROTOCOL.md §4.2): the users changed in a way the change feed gives as
/// one `.resync` and not change by change (a committed import, or a gap in the change log), so
/// a client that reports changes (`userctl watch`) learns that something happened at all; the
/// screens' reload itself reaches it as an ordinary patch. A client that wants to know who
/// changed what reads the history.
extension Session {
    static let reloadedEvent = ServerMessage.Event(screen: "session", name: "reloaded", payload: .object([:]))

    /// Queues the event for the next flush, after the patch of what the screens show now.
    func announceReload() {
        // An empty payload is far below any frame limit: encoding it cannot fail.
        guard let frame = try? frameEncoder.encode(ServerMessage.event(Self.reloadedEvent)) else { return }
        pendingEvents.append(frame)
        stateChanged()
    }
}
