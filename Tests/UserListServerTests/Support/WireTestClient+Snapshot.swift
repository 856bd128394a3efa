import Testing
import UserListWire

extension WireTestClient {
    /// Expects what this client built from patches to equal a fresh snapshot of its session
    /// (it asks for one with `resync`).
    func expectMirrorsASnapshot() async throws {
        let mirrored = document
        let epoch = self.epoch
        try send(.resync)
        try await waitForState("a fresh snapshot") { _ in self.epoch != epoch }
        #expect(document == mirrored, "the patches built the state a snapshot gives")
    }
}
