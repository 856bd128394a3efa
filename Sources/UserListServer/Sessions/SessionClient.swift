import UserListWire

/// What a session needs from an attached client: somewhere to send frames. Implemented by the
/// connection's protocol handler, and by tests.
package protocol SessionClient: AnyObject, Sendable {
    /// Sends a message; `droppable` frames may be discarded for a slow client (it gets a fresh
    /// snapshot when it drains).
    func send(_ message: ServerMessage, droppable: Bool)
    /// Sends already-encoded frames in order, in one write when the socket takes them.
    func sendFrames(_ frames: [(frame: OutgoingFrame, droppable: Bool)])
    /// Sends a successful reply whose result is already JSON (`FrameEncoder.replyFrame`).
    func sendReply(id: Int, serializedResult: [UInt8])
}

extension SessionClient {
    /// For clients that only take messages (tests): the result parsed back into one.
    package func sendReply(id: Int, serializedResult: [UInt8]) {
        let result = try? JSONValue(parsing: serializedResult)
        send(.reply(result.map { .success(id: id, result: $0) }
                    ?? .failure(id: id, code: .internal,
                                message: "the daemon wrote a result that is not JSON")), droppable: false)
    }
}
