import UserListWire

/// The introspection stage: `status` and `sessions` are the daemon's queries, not a session's,
/// so they are answered on the connection, to root and the admin group only; every other intent
/// is decoded for its session. Stateless: runs wherever the intent is taken (the loop, or the
/// connection's ordered task).
enum DaemonQueries {
    enum Taken {
        /// For the session: its decoding (a failure is the session's to answer, in order).
        case forSession(Result<Intent, IntentError>)
        /// Answered here (`reply`).
        case query(DaemonQuery)
    }

    static func take(_ intent: ClientMessage.Intent) -> Taken {
        let decoded = Result { () throws(IntentError) in try Intent(intent) }
        if case .success(.daemon(let query)) = decoded { return .query(query) }
        return .forSession(decoded)
    }

    /// The reply to `query`: `answer` for an admin, else `forbidden` naming who may ask.
    static func reply(to query: DaemonQuery, id: Int, fromAdmin: Bool, adminGroup: String,
                      answer: (DaemonQuery) -> JSONValue) -> ServerMessage {
        guard fromAdmin else {
            let message = "'\(query.rawValue)' is for root and members of the '\(adminGroup)' group."
            return .reply(.failure(id: id, code: .forbidden, message: message))
        }
        return .reply(.success(id: id, result: answer(query)))
    }
}
