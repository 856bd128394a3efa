import CSystemd
import Foundation
import Glibc
import Synchronization
import ThreadLocks

/// Structured logging: to the journal with our own fields when stderr is connected to it
/// (JOURNAL_STREAM matches stderr's device and inode), else readable lines on stderr.
///
/// Fields are upper case and start with `USERLISTD_`, so `journalctl USERLISTD_SESSION=…` finds
/// one session's story. Names and emails must only be passed at `.debug`.
public final class Logger: Sendable {
    public typealias Level = DaemonConfig.LogLevel

    public enum Sink: Sendable {
        case journal
        /// `prefixed`: `<N>` syslog priority prefixes, which systemd and some readers want.
        case stderr(prefixed: Bool)
        /// Kept in memory for tests.
        case memory
        /// Kept in memory, and each entry handed to `observer` as it is logged: a test awaits the
        /// line it expects (the daemon's "ready") instead of polling for its effects.
        case observed(@Sendable (Entry) -> Void)
    }

    public struct Entry: Sendable, Equatable {
        public let level: Level
        public let message: String
        public let fields: [String: String]
    }

    private let sink: Sink
    private let minimum: Atomic<Int>
    private let captured = Lock<[Entry]>([])

    public init(sink: Sink, level: Level) {
        self.sink = sink
        self.minimum = Atomic(level.priority)
    }

    /// Picks the journal when stderr is the journal stream, as systemd.exec(5) describes.
    public static func detectSink(environment: [String: String] = ProcessInfo.processInfo.environment) -> Sink {
        if let stream = environment["JOURNAL_STREAM"] {
            let parts = stream.split(separator: ":")
            var info = stat()
            if parts.count == 2, fstat(2, &info) == 0,
               UInt64(parts[0]) == UInt64(info.st_dev), UInt64(parts[1]) == UInt64(info.st_ino) {
                return .journal
            }
        }
        let prefixed = environment["USERLISTD_LOG_PREFIX"] == "1" || environment["SYSTEMD_EXEC_PID"] != nil
        return .stderr(prefixed: prefixed)
    }

    public func setLevel(_ level: Level) { minimum.store(level.priority, ordering: .relaxed) }

    public func isEnabled(_ level: Level) -> Bool { level.priority <= minimum.load(ordering: .relaxed) }

    public var entries: [Entry] { captured.withLock { $0 } }

    /// The message and its fields are built only when `level` is logged: a debug line on every
    /// intent costs nothing when debug is off.
    public func log(_ level: Level, _ message: @autoclosure () -> String,
                    _ fields: @autoclosure () -> [String: String] = [:],
                    file: String = #fileID, line: Int = #line, function: String = #function) {
        guard isEnabled(level) else { return }
        let text = message()
        let fields = fields()
        switch sink {
        case .memory:
            captured.withLock { $0.append(Entry(level: level, message: text, fields: fields)) }
        case .observed(let observer):
            let entry = Entry(level: level, message: text, fields: fields)
            captured.withLock { $0.append(entry) }
            observer(entry)
        case .stderr(let prefixed):
            // systemd stamps prefixed lines itself; a terminal or a log file needs the time here.
            var out = prefixed ? "<\(level.priority)>" : Self.timestamp() + " " + level.rawValue + ": "
            out += text
            for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
                out += " \(key.lowercased().replacingOccurrences(of: "userlistd_", with: ""))=\(value)"
            }
            out += "\n"
            var bytes = Array(out.utf8)
            _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
        case .journal:
            var lines = [
                "MESSAGE=\(text)",
                "PRIORITY=\(level.priority)",
                "SYSLOG_IDENTIFIER=userlistd",
                "CODE_FILE=\(file)",
                "CODE_LINE=\(line)",
                "CODE_FUNC=\(function)",
            ]
            for (key, value) in fields { lines.append("\(key)=\(value)") }
            Self.sendToJournal(lines)
        }
    }

    public func debug(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [String: String] = [:],
                      file: String = #fileID, line: Int = #line, function: String = #function) {
        log(.debug, message(), fields(), file: file, line: line, function: function)
    }
    public func info(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [String: String] = [:],
                     file: String = #fileID, line: Int = #line, function: String = #function) {
        log(.info, message(), fields(), file: file, line: line, function: function)
    }
    public func notice(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [String: String] = [:],
                       file: String = #fileID, line: Int = #line, function: String = #function) {
        log(.notice, message(), fields(), file: file, line: line, function: function)
    }
    public func warning(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [String: String] = [:],
                        file: String = #fileID, line: Int = #line, function: String = #function) {
        log(.warning, message(), fields(), file: file, line: line, function: function)
    }
    public func error(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [String: String] = [:],
                      file: String = #fileID, line: Int = #line, function: String = #function) {
        log(.error, message(), fields(), file: file, line: line, function: function)
    }

    /// Local time to the millisecond, `2026-12-01 05:30:12.345`, as people read it on a terminal.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        localtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02d %02d:%02d:%02d.%03d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                      Int(parts.tm_mday),
                      Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(now.tv_nsec / 1_000_000))
    }

    /// sd_journal_sendv: one iovec per `FIELD=value` (the variadic sd_journal_send is not callable from Swift).
    private static func sendToJournal(_ lines: [String]) {
        var storage: [UInt8] = []
        var ranges: [Range<Int>] = []
        for line in lines {
            let start = storage.count
            storage.append(contentsOf: line.utf8)
            ranges.append(start..<storage.count)
        }
        storage.withUnsafeMutableBytes { raw in
            var vectors = ranges.map { range in
                iovec(iov_base: raw.baseAddress! + range.lowerBound, iov_len: range.count)
            }
            _ = sd_journal_sendv(&vectors, Int32(vectors.count))
        }
    }
}
