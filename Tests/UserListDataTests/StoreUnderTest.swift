import Foundation
import Testing
@testable import UserListData
import UserListDomain
import UserListTestSupport

/// The stores the repository contract suite runs against.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// A fresh, empty store of this kind: a SQLite file in a temporary directory, or a new
    /// database on the test process's shared PostgreSQL server.
    func makeFixture() throws -> StoreFixture {
        switch self {
        case .sqlite:
            let directory = try TemporaryDirectory()
            return StoreFixture(kind: self, location: directory.file("users.sqlite"), directory: directory)
        case .postgres:
            if let reason = PostgresTestServer.skipReason { throw RealDaemon.Failure(reason) }
            let server = try PostgresTestServer.shared()
            return StoreFixture(kind: self, location: server.conninfo(try server.makeDatabase()), directory: nil)
        }
    }
}


/// One store's storage; `open()` gives another repository instance on it (as a second process
/// or a restart would have).
final class StoreFixture {
    let kind: StoreKind
    /// The SQLite path or the PostgreSQL conninfo.
    let location: String
    private let directory: TemporaryDirectory?

    init(kind: StoreKind, location: String, directory: TemporaryDirectory?) {
        self.kind = kind
        self.location = location
        self.directory = directory
    }

    func open() throws -> any UserRepository {
        switch kind {
        case .sqlite: try SQLiteUserRepository(path: location)
        case .postgres: try PostgresUserRepository(connection: try PGConnectionString(location))
        }
    }
}
