import UserListWire

extension SessionJournal {
    /// One line of the journal: a session's latest state, or the end of one. Written and read
    /// by `SessionStateJSON` in this shape; `Codable` is the reader's fallback.
    struct Line: Codable {
        var session: SavedSession?
        var ended: SessionKey?

        /// The line's JSON and its newline.
        func bytes() -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(512)
            if let session {
                out.append(contentsOf: #"{"session":"#.utf8)
                SessionStateJSON.write(session, into: &out)
            } else if let ended {
                out.append(contentsOf: #"{"ended":"#.utf8)
                SessionStateJSON.write(ended, into: &out)
            } else {
                out.append(UInt8(ascii: "{"))
            }
            out.append(contentsOf: "}\n".utf8)
            return out
        }

        init(session: SavedSession? = nil, ended: SessionKey? = nil) {
            self.session = session
            self.ended = ended
        }

        /// nil when the line is not JSON of this shape (a torn tail, or an unknown shape for
        /// `JSONDecoder` to try).
        init?(fast bytes: some Collection<UInt8>) {
            guard case .object(let object)? = try? JSONValue(parsing: bytes) else { return nil }
            if let session = object["session"], session != .null {
                guard let saved = SessionStateJSON.savedSession(session) else { return nil }
                self.init(session: saved)
            } else if let ended = object["ended"], ended != .null {
                guard let key = SessionStateJSON.sessionKey(ended) else { return nil }
                self.init(ended: key)
            } else {
                self.init()
            }
        }
    }
}
