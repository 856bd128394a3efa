import Foundation

/// Sessions written to the state directory on shutdown and read back on start, so a client
/// that reconnects finds its screens and drafts as it left them.
package struct SessionStore: Sendable {
    package let directory: String

    package var path: String { directory + "/sessions.json" }

    package func save(_ sessions: [SavedSession], logger: Logger) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let data = try JSONEncoder().encode(sessions)
            // Written aside and renamed: a crash mid-write leaves the previous file whole.
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            logger.error("Could not save sessions to \(path): \(error)")
        }
    }

    /// Reads and removes the saved sessions (they are live again once loaded).
    package func load(logger: Logger) -> [SavedSession] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let sessions = try JSONDecoder().decode([SavedSession].self, from: data)
            logger.info("Restored \(sessions.count) sessions from \(path)")
            return sessions
        } catch {
            logger.warning("Ignoring unreadable saved sessions in \(path): \(error)")
            return []
        }
    }
}
