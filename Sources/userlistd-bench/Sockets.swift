import CLinuxIO
import Glibc

/// Plain Glibc socket calls shared by the daemon clients and the raw baselines.
enum Sockets {
    /// `SOCK_STREAM` as the socket calls take it (one spelling for the whole bench).
    static let stream = Int32(SOCK_STREAM.rawValue)
    static func address(_ path: String) -> (sockaddr_un, socklen_t)? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return (address, socklen_t(MemoryLayout<sockaddr_un>.size))
    }

    /// A blocking stream socket connected to `path`.
    static func connect(_ path: String, type: Int32 = Int32(SOCK_STREAM.rawValue)) throws(BenchError) -> Int32 {
        let fd = socket(AF_UNIX, type | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket") }
        guard case (var address, let length)? = address(path) else {
            close(fd)
            throw BenchError("socket path too long: \(path)")
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
        }
        guard rc == 0 else {
            let error = BenchError.system("connect", path)
            close(fd)
            throw error
        }
        return fd
    }

    /// A socket bound to `path` (stream: listening; datagram: ready to receive).
    static func bind(_ path: String, type: Int32, backlog: Int32 = 4096) throws(BenchError) -> Int32 {
        unlink(path)
        let fd = socket(AF_UNIX, type | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket") }
        guard case (var address, let length)? = address(path) else {
            close(fd)
            throw BenchError("socket path too long: \(path)")
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, length) }
        }
        guard rc == 0 else { let e = BenchError.system("bind", path); close(fd); throw e }
        if type == Int32(SOCK_STREAM.rawValue) {
            guard listen(fd, backlog) == 0 else { let e = BenchError.system("listen", path); close(fd); throw e }
        }
        return fd
    }

    /// Makes blocking reads give up after `seconds` (EAGAIN), so no wait is unbounded.
    static func setReceiveTimeout(_ fd: Int32, seconds: Double) {
        var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    static func setSendTimeout(_ fd: Int32, seconds: Double) {
        var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    static func setNonBlocking(_ fd: Int32, _ on: Bool = true) {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK)
    }

    /// Writes every byte (blocking socket; a send timeout bounds it).
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(BenchError) {
        var offset = 0
        while offset < bytes.count {
            let written = send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if written < 0 {
                if errno == EINTR { continue }
                throw .system("send")
            }
            offset += written
        }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(BenchError) {
        let result: Result<Void, BenchError> = bytes.withUnsafeBytes { raw in
            do throws(BenchError) { try writeAll(fd, raw); return .success(()) } catch { return .failure(error) }
        }
        try result.get()
    }

    /// Reads exactly `count` bytes into `buffer` (blocking; false on EOF, error or timeout).
    static func readExactly(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Bool {
        var offset = 0
        while offset < count {
            let got = recv(fd, buffer + offset, count - offset, 0)
            if got > 0 { offset += got; continue }
            if got < 0 && errno == EINTR { continue }
            return false
        }
        return true
    }

    /// A 4-byte big-endian length prefix followed by `bodySize` bytes of filler JSON-ish text.
    static func rawFrame(bodySize: Int) -> [UInt8] {
        var frame: [UInt8] = [UInt8(truncatingIfNeeded: bodySize >> 24), UInt8(truncatingIfNeeded: bodySize >> 16),
                              UInt8(truncatingIfNeeded: bodySize >> 8), UInt8(truncatingIfNeeded: bodySize)]
        frame.append(contentsOf: repeatElement(UInt8(ascii: "x"), count: bodySize))
        return frame
    }
}
