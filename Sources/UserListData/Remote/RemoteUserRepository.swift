import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import UserListDomain

/// The users of a REST service (the shape is in REST.md), over URLSession.
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
    private let session: URLSession

    public init(configuration: Configuration) {
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        let timeout = Double(configuration.requestTimeout.components.seconds)
            + Double(configuration.requestTimeout.components.attoseconds) / 1e18
        sessionConfiguration.timeoutIntervalForRequest = timeout
        sessionConfiguration.timeoutIntervalForResource = timeout
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: sessionConfiguration)
    }

    public convenience init(baseURL: URL, requestTimeout: Duration = .seconds(5)) {
        self.init(configuration: Configuration(baseURL: baseURL, requestTimeout: requestTimeout))
    }

    deinit { session.finishTasksAndInvalidate() }

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

    private func send(_ method: String, _ url: URL, body: UserDTO? = nil, headers: [String: String] = [:]) async throws(UserError) -> Response {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        for (name, value) in configuration.headers.merging(headers, uniquingKeysWith: { $1 }) {
            request.setValue(value, forHTTPHeaderField: name)
        }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            do { request.httpBody = try JSONEncoder().encode(body) } catch {
                throw .unavailable(reason: "cannot encode the user for \(method) \(url): \(error)")
            }
        }
        do {
            let (data, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse else {
                throw UserError.unavailable(reason: "\(method) \(url) did not get an HTTP response")
            }
            return Response(method: method, url: url, status: http.statusCode, body: data)
        } catch let error as UserError {
            throw error
        } catch let error as URLError {
            throw .unavailable(reason: Self.describe(error, method: method, url: url, timeout: configuration.requestTimeout))
        } catch {
            throw .unavailable(reason: "\(method) \(url) failed: \(error.localizedDescription)")
        }
    }

    static func describe(_ error: URLError, method: String, url: URL, timeout: Duration) -> String {
        let host = url.host.map { h in url.port.map { "\(h):\($0)" } ?? h } ?? url.absoluteString
        switch error.code {
        case .timedOut:
            return "the upstream at \(host) did not answer \(method) \(url.path) within \(timeout)"
        case .cannotConnectToHost, .networkConnectionLost, .notConnectedToInternet:
            return "cannot reach the upstream at \(host) (connection refused or lost)"
        case .cannotFindHost, .dnsLookupFailed:
            return "cannot resolve the upstream host \(host)"
        case .cancelled:
            return "\(method) \(url) was cancelled"
        default:
            return "\(method) \(url) failed: \(error.localizedDescription) (URLError \(error.code.rawValue))"
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
        let statusText = "\(status) \(HTTPURLResponse.localizedString(forStatusCode: status))"
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
            return .validation(field: field, message: problem?.message ?? "The server refused the data (\(statusText)).")
        case 401, 403:
            let problem = try? JSONDecoder().decode(ProblemDTO.self, from: response.body)
            return .forbidden(reason: problem?.message ?? "The server refused: \(statusText).")
        case 500...599:
            return .unavailable(reason: "the upstream answered \(response.method) \(response.url) with \(statusText)")
        default:
            return .unavailable(reason: "the upstream answered \(response.method) \(response.url) with an unexpected \(statusText)")
        }
    }
}

/// The body of a 400/401/403/422 answer, when the service sends one (REST.md).
struct ProblemDTO: Decodable {
    var field: String?
    var message: String?
}
