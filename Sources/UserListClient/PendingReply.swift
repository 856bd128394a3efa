import UserListWire

/// What waits for an intent's reply: its result as a value, or, for a bulk read that passes the
/// result through (`sendForSlice`), as the bytes it came in.
enum PendingReply: Sendable {
    case value(@Sendable (Result<JSONValue?, ClientError>) -> Void)
    case slice(@Sendable (Result<JSONSlice?, ClientError>) -> Void)

    var wantsSlice: Bool {
        if case .slice = self { true } else { false }
    }

    func fail(_ error: ClientError) {
        switch self {
        case .value(let completion): completion(.failure(error))
        case .slice(let completion): completion(.failure(error))
        }
    }

    /// A result that was parsed after all (a reply the slice path could not read as one): a
    /// slice waiter gets it serialized back, as the same JSON.
    func succeed(_ result: JSONValue?) {
        switch self {
        case .value(let completion):
            completion(.success(result))
        case .slice(let completion):
            completion(Result { () throws(JSONParseError) -> JSONSlice? in
                guard let result else { return nil }
                var bytes: [UInt8] = []
                result.serialize(into: &bytes)
                return try JSONSlice(validating: bytes)
            }.mapError { ClientError(.protocolViolation, "unreadable reply: \($0)") })
        }
    }
}

/// A successful reply read without building its result: the intent's id and the result's bytes.
struct SliceReply {
    let id: Int
    /// `nil` when the reply has no result or a `null` one.
    let result: JSONSlice?

    /// `nil` when `frame` is not a successful reply, or not readable JSON (`ServerMessage` then
    /// reads it and says what is wrong with it).
    init?(frame: [UInt8]) {
        guard let members = try? JSONSlice(validating: frame).members() else { return nil }
        func member(_ key: String) -> JSONSlice? { members.last(where: { $0.key == key })?.value }
        func value(_ key: String) -> JSONValue? { try? member(key)?.parsed() }
        guard value("type") == .string("reply"), value("ok") == .bool(true),
              let id = value("id")?.int64Value.flatMap({ Int(exactly: $0) }) else { return nil }
        self.id = id
        let result = member("result")
        self.result = result.flatMap { $0.bytes.elementsEqual("null".utf8) ? nil : $0 }
    }
}
