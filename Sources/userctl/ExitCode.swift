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

extension ExitCode {
    /// The status as a word, for `--json` errors when the daemon gave no code of its own.
    var word: String {
        switch self {
        case .ok: "ok"
        case .usage: "usage"
        case .dataError: "invalid_data"
        case .noInput: "no_input"
        case .unavailable: "unavailable"
        case .software: "internal"
        case .ioError: "output_error"
        case .tempFailure: "try_again"
        case .permission: "permission_denied"
        case .interrupted: "interrupted"
        }
    }
}

/// A failure that ends the command: its message goes to stderr, its code is the exit status.
struct CommandFailure: Error {
    let code: ExitCode
    let message: String
    /// The daemon's error code (PROTOCOL.md §8: `read_only`, `conflict`, …) when it refused.
    var reason: String?
    /// The daemon keeps the request and finishes it itself (an import it took whole).
    var kept = false

    init(_ code: ExitCode, _ message: String, reason: String? = nil) {
        self.code = code
        self.message = message
        self.reason = reason
    }

    init(_ error: ClientError) {
        self.init(error, error.message)
    }

    /// `error`'s status and code, in words of the command's own (`message`). Every refusal by
    /// the daemon goes through here, so `--json` names its code the same way in every command.
    init(_ error: ClientError, _ message: String) {
        self.init(ExitCode.for(error), message, reason: error.serverCode?.rawValue)
        kept = error.kept
    }

    /// What `--json` writes to stderr: `{"error": {"code", "status", "message"}}`, and
    /// `"kept": true` when the daemon finishes the request itself.
    var json: JSONValue {
        var error: [String: JSONValue] = ["code": .string(reason ?? code.word), "status": .int(Int64(code.rawValue)),
                                          "message": .string(message)]
        if kept { error["kept"] = true }
        return .object(["error": .object(error)])
    }
}
