import UserListClient
import UserListWire

/// Exit statuses from sysexits(3), so scripts can tell a typo from a refused save from a
/// daemon that is down.
enum ExitCode: Int32 {
    case ok = 0
    case usage = 64          // EX_USAGE: bad flags or arguments
    case dataError = 65      // EX_DATAERR: validation failed, unknown id, malformed input
    case noInput = 66        // EX_NOINPUT: the import file is missing or unreadable
    case unavailable = 69    // EX_UNAVAILABLE: daemon not reachable, or its store is down
    case software = 70       // EX_SOFTWARE: internal error
    case ioError = 74        // EX_IOERR: stdout refused the output (a full disk)
    case tempFailure = 75    // EX_TEMPFAIL: conflict (someone else saved first) or timeout; retry
    case permission = 77     // EX_NOPERM: read-only session or forbidden
    case interrupted = 130   // 128 + SIGINT: stopped by Ctrl-C; what was done is reported

    /// The status for a failed client call.
    static func `for`(_ error: ClientError) -> ExitCode {
        switch error.kind {
        case .unreachable, .disconnected, .closed: .unavailable
        case .timedOut: .tempFailure
        case .protocolViolation: .software
        case .server(let code): self.for(code)
        }
    }

    static func `for`(_ code: ErrorCode) -> ExitCode {
        switch code {
        case .validation, .notFound, .invalidArgs: .dataError
        case .conflict, .rateLimited: .tempFailure
        case .readOnly, .forbidden: .permission
        case .unavailable, .shuttingDown, .tooManyConnections, .tooManySessions, .unsupportedVersion: .unavailable
        default: .software
        }
    }
}

/// A failure that ends the command: its message goes to stderr, its code is the exit status.
struct CommandFailure: Error {
    let code: ExitCode
    let message: String

    init(_ code: ExitCode, _ message: String) {
        self.code = code
        self.message = message
    }

    init(_ error: ClientError) {
        self.init(ExitCode.for(error), error.message)
    }
}
