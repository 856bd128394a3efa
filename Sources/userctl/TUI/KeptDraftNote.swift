import Foundation
import Glibc
import UserListWire

/// What Ctrl-C left unsaved, remembered in this terminal's runtime directory so that coming back
/// after the daemon dropped the session can say what was lost ("Your unsaved changes to NAME
/// expired at 17:42: name “…”"). One small file per session key, mode 0600 in a 0700 directory of
/// this user's; removed when the session is resumed or once the loss is reported.
enum KeptDraftNote {
    struct Note: Equatable {
        var user: String
        var fields: [(field: String, text: String)]
        var expires: Date

        static func == (a: Note, b: Note) -> Bool {
            a.user == b.user && a.expires == b.expires && a.fields.map(\.field) == b.fields.map(\.field)
                && a.fields.map(\.text) == b.fields.map(\.text)
        }

        /// "Your unsaved changes to Ada Lovelace expired at 17:42: name “Ada L”, email “a@x”"; told
        /// `now`, before the time it was given (the daemon was restarted with a shorter retention,
        /// or lost the session), it says they are gone, not that they expired at a time to come.
        func message(now: Date = Date()) -> String {
            let format = DateFormatter()
            format.dateFormat = "HH:mm"
            let what = fields.map { "\($0.field) “\(DisplayWidth.sanitized($0.text))”" }.joined(separator: ", ")
            let lost = expires > now ? "are gone: the daemon no longer had them"
                : "expired at \(format.string(from: expires))"
            return "Your unsaved changes to \(DisplayWidth.sanitized(user)) \(lost)" + (what.isEmpty ? "" : ": " + what)
        }
    }

    /// `$XDG_RUNTIME_DIR/userctl`, else `/tmp/userctl-UID`; created 0700, and used only when it
    /// is a real directory of this user's that no one else can write to.
    static func directory() -> String? {
        let base = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"]
            .flatMap { $0.hasPrefix("/") ? $0 + "/userctl" : nil }
            ?? "/tmp/userctl-\(getuid())"
        mkdir(base, 0o700)
        var info = stat()
        guard lstat(base, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == getuid(),
              info.st_mode & 0o022 == 0 else { return nil }
        return base
    }

    static func path(_ sessionKey: String) -> String? {
        let safe = String(sessionKey.unicodeScalars.map { scalar -> Character in
            let kept = CharacterSet.alphanumerics.contains(scalar) || "-_.".unicodeScalars.contains(scalar)
            return kept ? Character(scalar) : "_"
        })
        guard let directory = directory(), !safe.isEmpty else { return nil }
        return directory + "/draft-" + String(safe.prefix(200)) + ".json"
    }

    static func save(_ note: Note, sessionKey: String) {
        guard let path = path(sessionKey) else { return }
        let object: JSONValue = .object([
            "user": .string(note.user),
            "fields": .array(note.fields.map { .object(["field": .string($0.field), "text": .string($0.text)]) }),
            "expires": .int(Int64(note.expires.timeIntervalSince1970)),
        ])
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(object.description.utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// The note left for `sessionKey`, if any (and removes it: it is said once).
    static func take(_ sessionKey: String) -> Note? {
        guard let path = path(sessionKey) else { return nil }
        defer { unlink(path) }
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_uid == getuid(), info.st_size < 1 << 20 else { return nil }
        var buffer = [UInt8](repeating: 0, count: Int(info.st_size))
        guard read(fd, &buffer, buffer.count) == buffer.count,
              let value = try? JSONValue(parsing: String(decoding: buffer, as: UTF8.self)),
              let user = value["user"]?.stringValue, let expires = value["expires"]?.int64Value else { return nil }
        let fields = (value["fields"]?.arrayValue ?? []).compactMap { field -> (String, String)? in
            guard let name = field["field"]?.stringValue, let text = field["text"]?.stringValue else { return nil }
            return (name, text)
        }
        return Note(user: user, fields: fields, expires: Date(timeIntervalSince1970: TimeInterval(expires)))
    }
}
