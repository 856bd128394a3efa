import Glibc

/// A failed system call, with errno and where it happened, worded for a person reading the journal.
public struct SystemError: Error, CustomStringConvertible, Sendable {
    public let call: String
    public let errno: Int32
    public let detail: String?

    public init(_ call: String, errno: Int32 = Glibc.errno, detail: String? = nil) {
        self.call = call
        self.errno = errno
        self.detail = detail
    }

    public var description: String {
        let reason = String(cString: strerror(errno))
        if let detail { return "\(call) \(detail): \(reason) (errno \(errno))" }
        return "\(call): \(reason) (errno \(errno))"
    }
}
