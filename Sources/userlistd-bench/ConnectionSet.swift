import CLinuxIO
import Glibc
import UserListWire

/// Many non-blocking connections read by one thread through one epoll set; each has its own
/// frame decoder. `pump` reads whatever is ready and hands complete frames to a callback with
/// the time of the `recv` that completed them.
///
/// Owned by one thread at a time.
final class ConnectionSet {
    private let epollFD: Int32
    private(set) var fds: [Int32] = []
    private var decoders: [FrameDecoder] = []
    /// fd → index in `fds` (descriptors are small integers).
    private var indexOfFD: [Int32: Int] = [:]
    private var readBuffer = [UInt8](repeating: 0, count: 256 * 1024)
    private var fdBuffer = [Int32](repeating: 0, count: 256)
    private var eventBuffer = [UInt32](repeating: 0, count: 256)
    private(set) var closedCount = 0

    init() throws(BenchError) {
        epollFD = epoll_create1(ULIO_EPOLL_CLOEXEC)
        guard epollFD >= 0 else { throw .system("epoll_create1") }
    }

    deinit {
        for fd in fds where fd >= 0 { close(fd) }
        close(epollFD)
    }

    var count: Int { fds.count }

    /// Adds a connected socket (made non-blocking here); returns its index.
    @discardableResult
    func add(_ fd: Int32) throws(BenchError) -> Int {
        Sockets.setNonBlocking(fd)
        return try adopt(fd, FrameDecoder(maximumFrameSize: FrameLimits.serverToClient))
    }

    /// Takes a connection with the decoder that holds whatever part-frame it has read so far.
    private func adopt(_ fd: Int32, _ decoder: FrameDecoder) throws(BenchError) -> Int {
        guard ulio_epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, ULIO_EPOLLIN | ULIO_EPOLLRDHUP) == 0 else {
            throw .system("epoll_ctl")
        }
        let index = fds.count
        fds.append(fd)
        decoders.append(decoder)
        indexOfFD[fd] = index
        return index
    }

    /// Moves every connection (with its decoder) to `parts` new sets, dealt round-robin, so that
    /// each can be read by a thread of its own; this set is left empty until `rejoin`.
    func split(into parts: Int) throws(BenchError) -> [ConnectionSet] {
        var sets: [ConnectionSet] = []
        for _ in 0..<max(1, parts) { sets.append(try ConnectionSet()) }
        let (movingFDs, movingDecoders) = (fds, decoders)
        for fd in movingFDs { _ = ulio_epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, 0) }
        (fds, decoders, indexOfFD) = ([], [], [:])
        for (index, fd) in movingFDs.enumerated() {
            _ = try sets[index % sets.count].adopt(fd, movingDecoders[index])
        }
        return sets
    }

    /// Takes back the connections `split` dealt out, once nothing reads those sets any more.
    func rejoin(_ parts: [ConnectionSet]) throws(BenchError) {
        for part in parts {
            let (movingFDs, movingDecoders) = (part.fds, part.decoders)
            for fd in movingFDs { _ = ulio_epoll_ctl(part.epollFD, EPOLL_CTL_DEL, fd, 0) }
            (part.fds, part.decoders, part.indexOfFD) = ([], [], [:])
            closedCount += part.closedCount
            for (index, fd) in movingFDs.enumerated() { _ = try adopt(fd, movingDecoders[index]) }
        }
    }

    /// Waits up to `timeoutMillis` for readiness, then reads every ready socket dry.
    /// Returns the number of frames delivered.
    @discardableResult
    func pump(timeoutMillis: Int32, _ onFrame: (_ index: Int, _ frame: [UInt8], _ at: UInt64) -> Void) -> Int {
        let ready = ulio_epoll_wait(epollFD, &fdBuffer, &eventBuffer, 256, timeoutMillis)
        guard ready > 0 else { return 0 }
        var delivered = 0
        for slot in 0..<Int(ready) {
            guard let index = indexOfFD[fdBuffer[slot]] else { continue }
            let fd = fds[index]
            while true {
                let count = readBuffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    let at = monotonicNanos()
                    readBuffer.withUnsafeBufferPointer { decoders[index].feed($0[0..<count]) }
                    while let frame = try? decoders[index].nextFrame() {
                        delivered += 1
                        onFrame(index, frame, at)
                    }
                    if count < readBuffer.count { break }
                } else if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                    _ = ulio_epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, 0)
                    closedCount += 1
                    break
                } else if errno != EINTR {
                    break
                }
            }
        }
        return delivered
    }

    /// Reads every ready socket dry and reports byte counts, without framing.
    func pumpRaw(timeoutMillis: Int32, _ onBytes: (_ index: Int, _ count: Int, _ at: UInt64) -> Void) -> Int {
        let ready = ulio_epoll_wait(epollFD, &fdBuffer, &eventBuffer, 256, timeoutMillis)
        guard ready > 0 else { return 0 }
        var total = 0
        for slot in 0..<Int(ready) {
            guard let index = indexOfFD[fdBuffer[slot]] else { continue }
            while true {
                let count = readBuffer.withUnsafeMutableBytes { recv(fds[index], $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                total += count
                onBytes(index, count, monotonicNanos())
            }
        }
        return total
    }

    /// Writes one frame to connection `index` (blocking briefly if its buffer is full).
    func send(_ index: Int, _ frame: [UInt8]) throws(BenchError) {
        let fd = fds[index]
        var offset = 0
        let until = deadline(seconds: 10)
        while offset < frame.count {
            let written = frame.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, frame.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written > 0 { offset += written; continue }
            if written < 0 && (errno == EAGAIN || errno == EINTR) {
                if monotonicNanos() > until { throw BenchError("send timed out") }
                sleepMillis(0.2)
                continue
            }
            throw .system("send")
        }
    }
}

/// Does `haystack` contain `needle`? (Finds a round's unique name in a frame without parsing it.)
func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return false }
    let first = needle[0]
    let last = haystack.count - needle.count
    var index = 0
    while index <= last {
        if haystack[index] == first {
            var match = true
            for offset in 1..<needle.count where haystack[index + offset] != needle[offset] {
                match = false
                break
            }
            if match { return true }
        }
        index += 1
    }
    return false
}

extension ConnectionSet {
    /// Like `pump`, but for streams that are not length-prefixed frames (Redis): hands over byte counts.
    @discardableResult
    func pumpBytes(timeoutMillis: Int32, _ onBytes: (_ index: Int, _ count: Int, _ at: UInt64) -> Void) -> Int {
        pumpRaw(timeoutMillis: timeoutMillis, onBytes)
    }
}
