import UserListWire

/// A reply as a session sends (or holds, `SessionMode.hold`) it: a message, or a success whose
/// result is already JSON (`export_page`'s users, written straight into bytes).
enum SessionReply: Sendable {
    case message(ServerMessage.Reply)
    case encoded(id: Int, result: [UInt8])

    func send(to client: any SessionClient) {
        switch self {
        case .message(let reply): client.send(.reply(reply), droppable: false)
        case .encoded(let id, let result): client.sendReply(id: id, serializedResult: result)
        }
    }
}
