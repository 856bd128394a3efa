/// The receiving sessions of a fan-out measurement spread over R reader threads (`--readers R`),
/// as clients are: each thread reads its own connections through its own epoll set and times its
/// own sessions' patches, and a round's figure is the last patch any of them read. With R = 1
/// the calling thread reads, as the bench always did, so R = 1 figures compare with earlier runs.
final class FanOutReaders {
    private let source: ConnectionSet
    private let readers: [FanOutReader]
    private var pending: (needle: [UInt8], what: String)?

    /// Deals `set`'s connections out to `threads` threads (none for 1) until `stop`.
    init(_ set: ConnectionSet, threads: Int) throws(BenchError) {
        source = set
        guard threads > 1 else {
            readers = []
            return
        }
        let parts = try set.split(into: threads)
        readers = parts.enumerated().map { index, part in FanOutReader(part, name: "fanout-reader-\(index)") }
    }

    /// Reads whatever is left of the last round on every connection, before the next is timed.
    func drain() throws(BenchError) {
        guard !readers.isEmpty else {
            while source.pump(timeoutMillis: 0, { _, _, _ in }) > 0 {}
            return
        }
        for reader in readers { reader.post(.drain) }
        _ = try collect()
    }

    /// Sets the readers waiting for every session's patch containing `needle` (before the save
    /// that makes it is sent, so that they are reading when it comes).
    func expect(_ needle: [UInt8], what: String) {
        guard !readers.isEmpty else {
            pending = (needle, what)
            return
        }
        for reader in readers { reader.post(.await(needle: needle, what: what)) }
    }

    /// Waits for the patches `expect` named: when the last of them was read, and a frame's size.
    func awaitPatches() throws(BenchError) -> (last: UInt64, frameBytes: Int) {
        guard !readers.isEmpty else {
            guard let pending else { throw BenchError("fan-out readers: no patches expected") }
            self.pending = nil
            return try FanOutBench.awaitPatches(source, containing: pending.needle, receivers: source.count,
                                                what: pending.what)
        }
        return try collect()
    }

    /// Every reader's answer to its job: the latest read among them, and the frame size.
    private func collect() throws(BenchError) -> (last: UInt64, frameBytes: Int) {
        var last: UInt64 = 0
        var frameBytes = 0
        for reader in readers {
            let answer = try reader.result()
            last = max(last, answer.last)
            frameBytes = max(frameBytes, answer.frameBytes)
        }
        return (last, frameBytes)
    }

    /// Ends the threads and gives their connections back to the set they came from.
    func stop() throws(BenchError) {
        guard !readers.isEmpty else { return }
        let stuck = readers.filter { !$0.join() }.count
        guard stuck == 0 else { throw BenchError("fan-out readers: \(stuck) reader threads did not stop") }
        try source.rejoin(readers.map(\.set))
    }
}
