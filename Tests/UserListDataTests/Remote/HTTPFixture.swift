import Foundation
#if canImport(Glibc)
import Glibc
#endif
import UserListData
import UserListDomain

/// scripts/http-fixture-server.py running as a child process on a loopback port, seeded with
/// `users`; killed by `stop()` or when the fixture goes away.
final class HTTPFixture {
    let process = Process()
    let port: Int
    let usersFile: TemporaryDirectory

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/")! }

    /// A base URL that makes the fixture misbehave (`slow`, `500`, `malformed`, `bare412`).
    func baseURL(mode: String) -> URL { URL(string: "http://127.0.0.1:\(port)/_fixture/\(mode)/")! }

    init(users: [User]) throws {
        let script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/http-fixture-server.py")
        usersFile = try TemporaryDirectory()
        let seed = usersFile.file("users.json")
        try JSONEncoder().encode(users.map(UserDTO.init)).write(to: URL(fileURLWithPath: seed))

        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, seed]
        process.standardOutput = output
        // Not the test process's own output: a server holding it open past a crashed test
        // process kept `swift test` waiting for the end of that output forever.
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }  // the server died before printing its port
            line += chunk
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "the fixture server did not print a port"])
        }
        self.port = port
    }

    /// Kills the server and waits for it (SIGKILL: nothing to clean up, and it cannot be
    /// blocked by a signal mask inherited from the test process).
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { stop() }
}
