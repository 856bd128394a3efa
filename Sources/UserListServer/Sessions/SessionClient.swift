import UserListWire

/// What a session needs from an attached client: somewhere to send frames. Implemented by the
/// connection's protocol handler, and by tests.
package protocol SessionClient: AnyObject, Sendable {
    /// Sends a message; `droppable` frames may be discarded for a slow client (it gets a fresh
    /// snapshot when it drains).
    func send(_ message: ServerMessage, droppable: Bool)
    /// Sends an already-encoded frame.
    func sendFrame(_ frame: [UInt8], droppable: Bool)
}
