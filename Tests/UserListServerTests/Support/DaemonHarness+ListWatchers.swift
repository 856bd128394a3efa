/// The fan-out tests' cast: an editor and several sessions watching the list's first page.
extension DaemonHarness {
    /// An editor and `count` watchers (session keys `watcher-0`…), each with its first page on
    /// screen (50 rows).
    func editorAndListWatchers(_ count: Int) async throws -> (editor: WireTestClient, watchers: [WireTestClient]) {
        let editor = try client()
        _ = try await editor.hello(key: "editor")
        try await editor.waitForState("the editor's first page") { _ in editor.rows.count == 50 }
        var watchers: [WireTestClient] = []
        for index in 0..<count {
            let watcher = try client()
            _ = try await watcher.hello(key: "watcher-\(index)")
            watchers.append(watcher)
        }
        for watcher in watchers {
            try await watcher.waitForState("a watcher's first page") { _ in watcher.rows.count == 50 }
        }
        return (editor, watchers)
    }
}
