import UserListWire

/// What a session needs from an attached client: somewhere to send frames. Implemented by the
/// connection's protocol handler, and by tests.
package protocol SessionClient: AnyObject, Sendable {
    /// Sends a message; `droppable` frames may be discarded for a slow client (it gets a fresh
    /// snapshot when it drains).
    func send(_ message: ServerMessage, droppable: Bool)
    /// Sends already-encoded frames in order, in one write when the socket takes them.
    func sendFrames(_ frames: [(frame: OutgoingFrame, droppable: Bool)])
}
