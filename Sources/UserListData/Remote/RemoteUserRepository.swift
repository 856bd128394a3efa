import CCurlLoader
import Foundation
import UserListDomain

/// The users of a REST service (the shape is in REST.md), over libcurl (`CurlHTTP`).
///
/// Every outcome is a Domain `UserError`: 404 → `.notFound`, 412 → `.conflict` carrying the
/// stored user, 400/422 → `.validation`, 401/403 → `.forbidden`, 5xx, timeouts, refused
/// connections and malformed bodies → `.unavailable` with a reason naming the URL.
///
/// Cursor tokens are page numbers (1-based); `PageRequest.limit` is the page size, so a listing
/// should keep one limit from its first page to its last.
public final class RemoteUserRepository: UserRepository {
    public struct Configuration: Sendable {
        /// Where the service lives; `users` is appended to it (so it may carry a path prefix).
        public var baseURL: URL
        /// How long one request may take before it fails as unavailable.
        public var requestTimeout: Duration
        /// Sent with every request (e.g. an `Authorization` header).
        public var headers: [String: String]

        public init(baseURL: URL, requestTimeout: Duration = .seconds(5), headers: [String: String] = [:]) {
            self.baseURL = baseURL
            self.requestTimeout = requestTimeout
            self.headers = headers
        }
    }

    public let configuration: Configuration

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    public convenience init(baseURL: URL, requestTimeout: Duration = .seconds(5)) {
        self.init(configuration: Configuration(baseURL: baseURL, requestTimeout: requestTimeout))
    }

    // MARK: UserRepository

    public func fetchPage(_ request: PageRequest) async throws(UserError) -> UserPage {
        let page: Int
        if let cursor = request.after {
            guard let number = Int(cursor.token), number >= 1 else {
                throw .unavailable(reason: "the page cursor “\(cursor.token)” is not a page number of \(usersURL)")
            }
            page = number
        } else {
            page = 1
        }
        let dto = try await fetchNumbered(page, limit: request.limit, search: request.search)
        return UserPage(users: dto.data.map { $0.toDomain() },
                        next: dto.page < dto.totalPages ? PageCursor(token: String(dto.page + 1)) : nil,
                        totalCount: dto.total)
    }

    /// Page numbers run both ways: the last page is `total_pages` (learnt from the first), and a
    /// backward cursor is the number of the page to read. A last page may be short.
    public func fetchPage(_ request: BackwardPageRequest) async throws(UserError) -> UserPage {
        var dto: PageDTO
        if let cursor = request.before {
            guard let number = Int(cursor.token), number >= 1 else {
                throw .unavailable(reason: "the page cursor “\(cursor.token)” is not a page number of \(usersURL)")
            }
            dto = try await fetchNumbered(number, limit: request.limit, search: request.search)
        } else {
            dto = try await fetchNumbered(1, limit: request.limit, search: request.search)
            if dto.totalPages > 1 {
                dto = try await fetchNumbered(dto.totalPages, limit: request.limit, search: request.search)
            }
        }
        return UserPage(users: dto.data.map { $0.toDomain() }, next: nil,
                        previous: dto.page > 1 ? PageCursor(token: String(dto.page - 1)) : nil,
                        totalCount: dto.total)
    }

    private func fetchNumbered(_ page: Int, limit: Int, search: String?) async throws(UserError) -> PageDTO {
        var components = URLComponents(url: usersURL, resolvingAgainstBaseURL: false)
        var query = [URLQueryItem(name: "page", value: String(page)),
                     URLQueryItem(name: "per_page", value: String(max(1, limit)))]
        if let search, !search.isEmpty { query.append(URLQueryItem(name: "search", value: search)) }
        components?.queryItems = query
        guard let url = components?.url else { throw .unavailable(reason: "cannot build a page URL from \(usersURL)") }

        let response = try await send("GET", url)
        guard response.status == 200 else { throw failure(response, id: nil) }
        return try decode(response)
    }

    public func fetchUser(id: UUID) async throws(UserError) -> User {
        let response = try await send("GET", userURL(id))
        guard response.status == 200 else { throw failure(response, id: id) }
        let dto: UserDTO = try decode(response)
        return dto.toDomain()
    }

    public func update(_ user: User) async throws(UserError) -> User {
        let response = try await send("PUT", userURL(user.id), body: UserDTO(user),
                                      headers: ["If-Match": String(user.version)])
        switch response.status {
        case 200:
            let dto: UserDTO = try decode(response)
            return dto.toDomain()
        case 412:
            throw .conflict(stored: try await storedAfterConflict(response, id: user.id))
        default:
            throw failure(response, id: user.id)
        }
    }

    /// A taken id answered 409 becomes `.conflict(stored:)`, as in the SQLite store.
    public func add(_ new: NewUser) async throws(UserError) -> User {
        let dto = UserDTO(id: new.id, fullName: new.name, email: new.email, avatarURL: new.avatarURL, version: 1)
        let response = try await send("POST", usersURL, body: dto)
        switch response.status {
        case 200, 201:
            let created: UserDTO = try decode(response)
            return created.toDomain()
        case 409:
            throw .conflict(stored: try await storedAfterConflict(response, id: new.id))
        default:
            throw failure(response, id: new.id)
        }
    }

    public func remove(id: UUID) async throws(UserError) {
        let response = try await send("DELETE", userURL(id))
        guard response.status == 204 || response.status == 200 else { throw failure(response, id: id) }
    }

    // MARK: HTTP

    private struct Response {
        var method: String
        var url: URL
        var status: Int
        var body: Data
    }

    private var usersURL: URL { configuration.baseURL.appendingPathComponent("users") }

    private func userURL(_ id: UUID) -> URL { usersURL.appendingPathComponent(id.uuidString) }

    private func send(_ method: String, _ url: URL, body: UserDTO? = nil,
                      headers: [String: String] = [:]) async throws(UserError) -> Response {
        var fields = ["Accept": "application/json"]
        var bytes: Data?
        if let body {
            fields["Content-Type"] = "application/json"
            do { bytes = try JSONEncoder().encode(body) } catch {
                throw .unavailable(reason: "cannot encode the user for \(method) \(url): \(error)")
            }
        }
        fields.merge(configuration.headers, uniquingKeysWith: { $1 })
        fields.merge(headers, uniquingKeysWith: { $1 })
        let timeout = configuration.requestTimeout
        switch await CurlHTTP.perform(method, url, headers: fields, body: bytes, timeout: timeout) {
        case .success(let response):
            return Response(method: method, url: url, status: response.status, body: response.body)
        case .failure(let failure):
            throw .unavailable(reason: Self.describe(failure, method: method, url: url, timeout: timeout))
        }
    }

    static func describe(_ failure: CurlHTTP.Failure, method: String, url: URL, timeout: Duration) -> String {
        let host = url.host.map { h in url.port.map { "\(h):\($0)" } ?? h } ?? url.absoluteString
        switch failure.code {
        case Int32(ULCURL_OPERATION_TIMEDOUT):
            return "the upstream at \(host) did not answer \(method) \(url.path) within \(timeout)"
        case Int32(ULCURL_COULDNT_CONNECT):
            return "cannot reach the upstream at \(host) (connection refused or lost)"
        case Int32(ULCURL_COULDNT_RESOLVE_HOST):
            return "cannot resolve the upstream host \(host)"
        case Int32(ULCURL_NOT_LOADED):
            return "the REST source cannot make requests: \(failure.message)"
        default:
            return "\(method) \(url) failed: \(failure.message) (curl error \(failure.code))"
        }
    }

    private func decode<T: Decodable>(_ response: Response) throws(UserError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: response.body)
        } catch {
            let excerpt = String(decoding: response.body.prefix(80), as: UTF8.self)
            throw .unavailable(reason: "upstream sent a malformed response to \(response.method) \(response.url): "
                               + "\(Self.summary(of: error)); body starts “\(excerpt)”")
        }
    }

    private static func summary(of error: any Error) -> String {
        switch error as? DecodingError {
        case .keyNotFound(let key, _)?: "the field “\(key.stringValue)” is missing"
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?:
            "the field “\(context.codingPath.map(\.stringValue).joined(separator: "."))” has the wrong type"
        case .dataCorrupted?: "it is not valid JSON"
        default: "\(error)"
        }
    }

    /// The stored user after a 412/409: from the body when the server sent it, else fetched.
    private func storedAfterConflict(_ response: Response, id: UUID) async throws(UserError) -> User {
        if let dto = try? JSONDecoder().decode(UserDTO.self, from: response.body) { return dto.toDomain() }
        return try await fetchUser(id: id)
    }

    /// The Domain error for a status that is not the success the caller expected.
    private func failure(_ response: Response, id: UUID?) -> UserError {
        let status = response.status
        let statusText = "\(status) \(CurlHTTP.phrase(status))"
        switch status {
        case 404 where id != nil:
            return .notFound(id: id!)
        case 400, 422:
            let problem = try? JSONDecoder().decode(ProblemDTO.self, from: response.body)
            let field: UserError.Field = switch problem?.field {
            case "email": .email
            case "avatar_url": .avatarURL
            default: .name
            }
            return .validation(field: field,
                               message: problem?.message ?? "The server refused the data (\(statusText)).")
        case 401, 403:
            let problem = try? JSONDecoder().decode(ProblemDTO.self, from: response.body)
            return .forbidden(reason: problem?.message ?? "The server refused: \(statusText).")
        case 500...599:
            return .unavailable(reason: "the upstream answered \(response.method) \(response.url) with \(statusText)")
        default:
            return .unavailable(reason: "the upstream answered \(response.method) \(response.url) "
                                + "with an unexpected \(statusText)")
        }
    }
}

/// The body of a 400/401/403/422 answer, when the service sends one (REST.md).
struct ProblemDTO: Decodable {
    var field: String?
    var message: String?
}
