import Foundation
import UserListWire

/// Sessions written to the state directory on shutdown and read back on start, so a client
/// that reconnects finds its screens and drafts as it left them. After a crash there is no
/// `sessions.json`, and the sessions come from the journal (`SessionJournal`) instead.
package struct SessionStore: Sendable {
    package let directory: String

    package var path: String { directory + "/sessions.json" }

    /// Returns whether the file was written.
    @discardableResult
    package func save(_ sessions: [SavedSession], logger: Logger) -> Bool {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            var bytes: [UInt8] = []
            SessionStateJSON.writeArray(sessions, into: &bytes) { SessionStateJSON.write($0, into: &$1) }
            let data = Data(bytes)
            // Written aside and renamed: a crash mid-write leaves the previous file whole.
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
            return true
        } catch {
            logger.error("Could not save sessions to \(path): \(error)")
            return false
        }
    }

    /// The sessions of the last run: the clean shutdown's file when there is one (it is
    /// complete), else the journal a crashed run left, else none. Nothing is removed here: the
    /// caller removes `sessions.json` (`removeSaved`) once the sessions are durable elsewhere.
    package func load(logger: Logger) -> [SavedSession] {
        guard FileManager.default.fileExists(atPath: path) else {
            guard let journaled = SessionJournal.load(directory: directory, logger: logger) else { return [] }
            logger.notice("The last run did not stop cleanly: restoring \(journaled.count) sessions from its journal")
            return journaled
        }
        return loadSaved(logger: logger)
    }

    /// The sessions are live again (and journaled, when the journal is on): the file goes.
    package func removeSaved() {
        try? FileManager.default.removeItem(atPath: path)
    }

    private func loadSaved(logger: Logger) -> [SavedSession] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        do {
            let sessions = try Self.fastRead(data) ?? JSONDecoder().decode([SavedSession].self, from: data)
            logger.info("Restored \(sessions.count) sessions from \(path)")
            return sessions
        } catch {
            logger.warning("Ignoring unreadable saved sessions in \(path): \(error)")
            return []
        }
    }

    /// The file through the wire's parser (`SessionStateJSON`); nil when it is not the shape it knows.
    private static func fastRead(_ data: Data) -> [SavedSession]? {
        guard case .array(let items)? = try? JSONValue(parsing: data) else { return nil }
        var sessions: [SavedSession] = []
        sessions.reserveCapacity(items.count)
        for item in items {
            guard let session = SessionStateJSON.savedSession(item) else { return nil }
            sessions.append(session)
        }
        return sessions
    }
}
