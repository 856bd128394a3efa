import Foundation
import UserListWire

/// Finds Protocol/ by walking up from this source file, so tests read the same files a client
/// author reads (no copies in test resources to drift).
enum ProtocolFiles {
    static let directory: URL = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" {
            let candidate = url.appendingPathComponent("Protocol/PROTOCOL.md")
            if FileManager.default.fileExists(atPath: candidate.path) { return url.appendingPathComponent("Protocol") }
            url.deleteLastPathComponent()
        }
        fatalError("Protocol/ not found above \(#filePath)")
    }()

    static func files(in subdirectory: String, suffix: String) -> [URL] {
        let dir = directory.appendingPathComponent(subdirectory)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { $0.hasSuffix(suffix) }.sorted().map { dir.appendingPathComponent($0) }
    }

    struct Line: Sendable {
        var file: String
        var number: Int
        var direction: String
        /// Which connection of the transcript ("a" when the transcript has one).
        var connection: String
        var frame: JSONValue
        var expectedError: ErrorCode?
    }

    static func exampleLines() throws -> [String: [Line]] {
        var result: [String: [Line]] = [:]
        for url in files(in: "examples", suffix: ".jsonl") {
            let text = try String(contentsOf: url, encoding: .utf8)
            var lines: [Line] = []
            for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: true).enumerated() {
                let value = try JSONValue(parsing: Array(raw.utf8))
                lines.append(Line(
                    file: url.lastPathComponent, number: index + 1,
                    direction: value["dir"]?.stringValue ?? "?", connection: value["conn"]?.stringValue ?? "a",
                    frame: value["frame"] ?? .null,
                    expectedError: value["expect_error"]?.stringValue.flatMap(ErrorCode.init(rawValue:))))
            }
            result[url.lastPathComponent] = lines
        }
        return result
    }

    /// Frames of `examples/<kind>/frames.jsonl` (`invalid` or `valid`), each with why it is there.
    static func edgeFrames(_ kind: String) throws -> [(why: String, frame: JSONValue)] {
        try files(in: "examples/\(kind)", suffix: ".jsonl").flatMap { url in
            try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map { raw in
                let value = try JSONValue(parsing: Array(raw.utf8))
                return (value["why"]?.stringValue ?? "?", value["frame"] ?? .null)
            }
        }
    }

    static func schemas() throws -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for url in files(in: "schema", suffix: ".schema.json") {
            result[url.lastPathComponent] = try JSONValue(parsing: Array(try Data(contentsOf: url)))
        }
        return result
    }
}
