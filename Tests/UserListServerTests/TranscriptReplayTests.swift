import Foundation
import Testing
import UserListServer
import UserListWire

/// Whether this run rewrites the transcripts with what the daemon sent.
private func recordingExamples() -> Bool {
    ProcessInfo.processInfo.environment["USERLISTD_RECORD_EXAMPLES"] == "1"
}

/// Every transcript of Protocol/examples replayed against a live daemon over its socket: the
/// examples a client author reads are what the daemon does. With USERLISTD_RECORD_EXAMPLES=1
/// the run rewrites each transcript with what the daemon sent (that is how they are made).
@Suite(.serialized) struct TranscriptReplayTests {
    @Test(arguments: Transcripts.replayable)
    func theDaemonPlaysTheTranscript(_ name: String) async throws {
        let lines = try Transcripts.lines(of: name)
        let daemon = try await DaemonHarness(sampleUsers: Transcripts.users.count, seed: 12) { config in
            if name == "liveness.jsonl" { config.pingIntervalSeconds = 1 }
            config.intentsPerSecond = 200  // the default, as a reader sees it announced in the welcome
        }
        let replayer = TranscriptReplayer(daemon: daemon)
        // The replayer blocks on sockets: off the cooperative pool, which runs the daemon.
        let result: Result<Void, any Error> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: Result { try replayer.play(name, lines) })
            }
        }
        replayer.finish()
        await daemon.stop()
        try result.get()
        if recordingExamples() {
            let text = replayer.recorded.map(\.description).joined(separator: "\n") + "\n"
            try text.write(to: Transcripts.directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
            return
        }
        #expect(replayer.mismatches.isEmpty, "\(name):\n\(replayer.mismatches.joined(separator: "\n"))")
    }
}
