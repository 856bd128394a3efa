import CLinuxIO
import Dispatch
import Glibc
import Synchronization

/// The raw floor under fan-out: one frame of the patch's size written to N sockets (socketpairs)
/// by a writer thread, read by a reader thread with epoll; the time from the first write to the
/// last socket's frame read whole. Same shape as the daemon measurement, minus the daemon; its
/// first round warms up and is not a sample, as the daemon's and Redis's are not.
enum FanOutFloor {
    static func run(receivers: Int, frameSize: Int, rounds: Int) throws(BenchError) -> Samples {
        var writeEnds: [Int32] = []
        var readEnds: [Int32] = []
        defer { for fd in writeEnds + readEnds { close(fd) } }
        for _ in 0..<receivers {
            var pair: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
                throw .system("socketpair")
            }
            writeEnds.append(pair[0])
            readEnds.append(pair[1])
            Sockets.setNonBlocking(pair[1])
            Sockets.setSendTimeout(pair[0], seconds: 5)
        }
        let epollFD = epoll_create1(ULIO_EPOLL_CLOEXEC)
        guard epollFD >= 0 else { throw .system("epoll_create1") }
        defer { close(epollFD) }
        for fd in readEnds { _ = ulio_epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, ULIO_EPOLLIN) }

        let frame = Sockets.rawFrame(bodySize: max(1, frameSize - 4))
        let round = RoundSignal()
        let reader = startReader(epollFD: epollFD, readEnds: readEnds, frameBytes: frame.count, rounds: rounds,
                                 round)
        var samples = Samples()
        var failure: BenchError?
        for index in -1..<rounds {
            let start = monotonicNanos()
            for fd in writeEnds {
                do throws(BenchError) { try Sockets.writeAll(fd, frame) } catch { failure = error }
            }
            guard round.done.wait(timeout: .now() + 15) == .success else {
                failure = BenchError("fan-out floor: reader stuck")
                break
            }
            let end = round.lastRead.load(ordering: .acquiring)
            guard end > 0 else { failure = BenchError("fan-out floor: a receiver missed its frame"); break }
            if index >= 0 { samples.append(end - start) }
            sleepMillis(1)
        }
        reader.join(timeout: 15)
        if let failure { throw failure }
        return samples
    }

    /// A round's end, from the reader thread to the writer: when the last frame was read whole
    /// (0: a socket missed it), then a signal.
    final class RoundSignal: Sendable {
        let lastRead = Atomic<UInt64>(0)
        let done = DispatchSemaphore(value: 0)
    }

    /// The reader thread: per round (one more for the warm-up), reads until every socket has
    /// `frameBytes` (10 s at most), then tells `round`.
    static func startReader(epollFD: Int32, readEnds readerFDs: [Int32], frameBytes: Int, rounds totalRounds: Int,
                            _ round: RoundSignal) -> BenchThread {
        BenchThread(name: "fanout-floor-reader") {
            var received = [Int](repeating: 0, count: 65536)
            var fds = [Int32](repeating: 0, count: 256)
            var events = [UInt32](repeating: 0, count: 256)
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            for _ in 0...totalRounds {
                for fd in readerFDs { received[Int(fd)] = 0 }
                var complete = 0
                let until = deadline(seconds: 10)
                while complete < readerFDs.count && monotonicNanos() < until {
                    let ready = ulio_epoll_wait(epollFD, &fds, &events, 256, 100)
                    for slot in 0..<max(0, Int(ready)) {
                        let fd = fds[slot]
                        while true {
                            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                            guard count > 0 else { break }
                            let before = received[Int(fd)]
                            received[Int(fd)] += count
                            if before < frameBytes && received[Int(fd)] >= frameBytes { complete += 1 }
                        }
                    }
                }
                round.lastRead.store(complete == readerFDs.count ? monotonicNanos() : 0, ordering: .releasing)
                round.done.signal()
            }
        }
    }
}
