import Glibc

/// What the disk alone costs a save: the writes of one rename's commit and its `fdatasync`, in
/// the store's directory, with nothing else around them. A save reaches no session before
/// these are done, so they are the part of a fan-out that Redis PUBLISH (which writes nothing
/// to disk) never pays.
///
/// The shape is one rename's commit on the SQLite store (the row, its indexes, the search index,
/// the change log and the history) as `perf trace -p <daemon>` showed it during the sustained
/// section: 14 WAL frames (the median of 30 commits; they ranged from 10 to 21), each a 24-byte
/// frame header then a 4,096-byte page, then one `fdatasync`.
enum CommitFloor {
    static let frames = 14
    static let frameHeader = 24
    static let page = 4096

    static func run(directory: String, rounds: Int) throws(BenchError) -> Samples {
        let path = "\(directory)/commit-floor.wal"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system("open \(path)") }
        defer {
            close(fd)
            unlink(path)
        }
        let header = [UInt8](repeating: 1, count: frameHeader)
        let content = [UInt8](repeating: 2, count: page)
        let commitBytes = frames * (frameHeader + page)
        var samples = Samples()
        for round in 0..<rounds {
            // Successive commits append, as a WAL does until a checkpoint resets it.
            var offset = off_t(round % 64 * commitBytes)
            let start = monotonicNanos()
            for _ in 0..<frames {
                guard pwrite(fd, header, frameHeader, offset) == frameHeader,
                      pwrite(fd, content, page, offset + off_t(frameHeader)) == page else {
                    throw .system("pwrite \(path)")
                }
                offset += off_t(frameHeader + page)
            }
            guard fdatasync(fd) == 0 else { throw .system("fdatasync \(path)") }
            samples.append(monotonicNanos() - start)
            sleepMillis(1)
        }
        return samples
    }
}
