import CCurlLoader
import Dispatch
import Foundation

/// One HTTP request of the REST source, through libcurl loaded on first use (`CCurlLoader`)
/// instead of URLSession: FoundationNetworking would link libcurl and its twenty-odd libraries
/// into every start of the daemon, REST source configured or not.
enum CurlHTTP {
    struct Response: Sendable {
        var status: Int
        var body: Data
    }

    /// What went wrong before any response: libcurl's code (`ULCURL_*`) and its words.
    struct Failure: Error, Sendable {
        var code: Int32
        var message: String
    }

    /// libcurl blocks until the answer or the timeout: each request waits on a queue of its
    /// own kind, never on the cooperative pool or an event loop. A cancelled caller's request
    /// runs to its end (at most `timeout`); its answer is dropped.
    private static let queue = DispatchQueue(label: "userlistd.rest-requests", attributes: .concurrent)

    static func perform(_ method: String, _ url: URL, headers: [String: String], body: Data?,
                        timeout: Duration) async -> Result<Response, Failure> {
        let lines = headers.map { "\($0.key): \($0.value)" }
        let milliseconds = max(1, Int(timeout.components.seconds * 1000
                                      + timeout.components.attoseconds / 1_000_000_000_000_000))
        return await withCheckedContinuation { (done: CheckedContinuation<Result<Response, Failure>, Never>) in
            queue.async {
                done.resume(returning: performNow(method, url.absoluteString, lines, body, milliseconds))
            }
        }
    }

    private static func performNow(_ method: String, _ url: String, _ lines: [String], _ body: Data?,
                                   _ timeoutMS: Int) -> Result<Response, Failure> {
        var response = ulcurl_response()
        defer { ulcurl_response_free(&response) }
        let pointers = lines.map { strdup($0) }
        defer { pointers.forEach { free($0) } }
        let headers = pointers.map { UnsafePointer<CChar>($0) }
        let outcome: Int32 = headers.withUnsafeBufferPointer { headerBuffer in
            func run(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
                ulcurl_perform(method, url, headerBuffer.baseAddress, headerBuffer.count, bytes, count, timeoutMS,
                               &response)
            }
            guard let body else { return run(nil, 0) }
            guard !body.isEmpty else {
                var none: UInt8 = 0  // a body of no bytes is still a body (a PUT with an empty one)
                return withUnsafePointer(to: &none) { run($0, 0) }
            }
            return body.withUnsafeBytes { run($0.bindMemory(to: UInt8.self).baseAddress, body.count) }
        }
        guard outcome == 0 else {
            let message = withUnsafeBytes(of: &response.error) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            return .failure(Failure(code: response.curl_code, message: message))
        }
        let bytes = response.body.map { Data(bytes: $0, count: response.body_length) } ?? Data()
        return .success(Response(status: Int(response.status), body: bytes))
    }

    /// The reason phrase for the statuses REST.md names (HTTPURLResponse's, without Foundation's networking).
    static func phrase(_ status: Int) -> String {
        switch status {
        case 400: "bad request"
        case 401: "unauthorized"
        case 403: "forbidden"
        case 404: "not found"
        case 409: "conflict"
        case 412: "precondition failed"
        case 422: "unprocessable entity"
        case 429: "too many requests"
        case 500: "internal server error"
        case 502: "bad gateway"
        case 503: "service unavailable"
        case 504: "gateway timeout"
        default: "HTTP status"
        }
    }
}
