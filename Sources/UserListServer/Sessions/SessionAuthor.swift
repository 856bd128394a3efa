import Foundation
import Glibc
import UserListDomain
import UserListPresentation

/// Who a session's writes are recorded as: its uid (the key's, from SO_PEERCRED), that uid's
/// login name, the client's name from the hello that created the session, and this daemon.
/// Built once per session, handed to its use cases (`UserUseCases.authored(by:)`).
package enum SessionAuthor {
    static func make(uid: UInt32, client: String?, daemon: String) -> ChangeAuthor {
        ChangeAuthor(uid: uid, userName: userName(of: uid), client: client, via: .intent, daemon: daemon)
    }

    /// The daemon itself filling an empty store with `--sample-data`: its own user, as an
    /// import whose source says what it is (history: "userlistd import sample data: N added").
    package static func sampleData(socketPath: String) -> ChangeAuthor {
        var author = make(uid: geteuid(), client: "userlistd", daemon: daemonName(socketPath: socketPath)).via(.import)
        author.source = "sample data"
        return author
    }

    /// The login name of `uid`, or nil when the system has none.
    static func userName(of uid: UInt32) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count,
                         &result) == 0, result != nil, let name = entry.pw_name else {
            return nil
        }
        return String(cString: name)
    }

    /// This daemon in the history: host and socket, stable across restarts, different for
    /// every daemon sharing a PostgreSQL database.
    static func daemonName(socketPath: String) -> String {
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, host.count)
        return String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + ":" + socketPath
    }
}
