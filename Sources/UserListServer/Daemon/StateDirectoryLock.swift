import Foundation
import Glibc

/// One daemon per state directory: an exclusive `flock` on `<state directory>/userlistd.lock`,
/// held for the daemon's whole life and released by the kernel on any exit, kill -9 included.
///
/// The state directory holds the sessions' journal, the saved sessions and the hand-over of an
/// upgrade; a second daemon on it would restore the first one's sessions and, at its stop,
/// delete the journal the first one still writes. So a second daemon exits before it reads or
/// writes anything there, naming the holder (the file holds its pid and socket).
///
/// An upgrade in place (SIGUSR2) re-executes the binary: the lock's descriptor travels with the
/// connections as the named descriptor `descriptorName`, and the new image adopts it, so the
/// directory is never unlocked in between.
public final class StateDirectoryLock: Sendable {
    public static let fileName = "userlistd.lock"
    /// The name the lock's descriptor carries through a re-exec (LISTEN_FDNAMES).
    package static let descriptorName = "ul-state-lock"

    /// The open lock file; the lock lives as long as this descriptor (the process, in practice).
    public let fd: Int32
    public let path: String

    /// Why the directory could not be locked.
    public enum Failure: Error, CustomStringConvertible, Sendable {
        /// Another daemon holds it: its pid and socket as it wrote them (nil when unreadable).
        case held(directory: String, pid: Int32?, socket: String?)
        case system(SystemError)

        public var description: String {
            switch self {
            case .held(let directory, let pid, let socket):
                let holder = [pid.map { "pid \($0)" }, socket.map { "socket \($0)" }].compactMap { $0 }
                let who = holder.isEmpty ? "another userlistd" : "another userlistd (\(holder.joined(separator: ", ")))"
                return "\(who) is using the state directory \(directory); "
                    + "stop it first, or give this daemon a state directory of its own (--state-directory)"
            case .system(let error):
                return "Cannot lock the state directory: \(error)"
            }
        }
    }

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { close(fd) }

    /// Locks `directory` (created 0700 if missing) for this process and records `socket` and the
    /// pid in the lock file, or fails at once when another process holds it.
    public static func acquire(directory: String, socket: String) throws(Failure) -> StateDirectoryLock {
        let path = directory + "/" + fileName
        if let inherited = inheritedDescriptor(path: path) {
            return StateDirectoryLock(fd: inherited, path: path)
        }
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw .system(SystemError("mkdir", detail: directory))
            }
        }
        // O_CLOEXEC: a re-exec passes the descriptor on by name, nothing else may inherit it.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .system(SystemError("open", detail: path)) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let failed = errno
            let holder = readHolder(fd: fd)
            close(fd)
            guard failed == EWOULDBLOCK else { throw .system(SystemError("flock", errno: failed, detail: path)) }
            throw .held(directory: directory, pid: holder.pid, socket: holder.socket)
        }
        let record = "\(getpid())\n\(socket)\n"
        _ = ftruncate(fd, 0)
        _ = record.withCString { pwrite(fd, $0, strlen($0), 0) }
        return StateDirectoryLock(fd: fd, path: path)
    }

    /// The lock a re-exec handed to this image (named `descriptorName` in LISTEN_FDNAMES, for
    /// this pid), if it is this very file. The variables stay for the daemon's own reading.
    private static func inheritedDescriptor(path: String) -> Int32? {
        let environment = ProcessInfo.processInfo.environment
        guard environment["LISTEN_PID"] == String(getpid()),
              let names = environment["LISTEN_FDNAMES"]?.split(separator: ":", omittingEmptySubsequences: false),
              let index = names.firstIndex(of: Substring(descriptorName))
        else { return nil }
        let fd = Int32(3 + index)
        var held = stat(), named = stat()
        guard fstat(fd, &held) == 0, stat(path, &named) == 0,
              held.st_dev == named.st_dev, held.st_ino == named.st_ino
        else { return nil }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return fd
    }

    /// The pid and socket the holder wrote (a holder that has just locked may not have yet).
    private static func readHolder(fd: Int32) -> (pid: Int32?, socket: String?) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = pread(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return (nil, nil) }
        let lines = String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n")
        let pid = lines.first.flatMap { Int32($0) }
        let socket = lines.count > 1 ? String(lines[1]) : nil
        return (pid, socket)
    }
}
