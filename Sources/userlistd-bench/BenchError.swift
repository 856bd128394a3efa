import Glibc

/// Why a bench section could not finish; printed in the table instead of a figure.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }

    /// An error naming the failed call and errno.
    static func system(_ call: String, _ detail: String = "") -> BenchError {
        let code = errno
        let called = "\(call)\(detail.isEmpty ? "" : " (\(detail))")"
        return BenchError("\(called) failed: \(String(cString: strerror(code))) (errno \(code))")
    }
}
