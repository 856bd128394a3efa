import Testing
@testable import UserListData
import UserListDomain

/// What a PostgreSQL failure says on a screen and in `userctl status`: one line, libpq's
/// own line breaks and tabs folded (they showed as `\x09` on a terminal).
@Test func aPostgreSQLFailureReadsAsOneLine() {
    let error = PGError(sqlState: nil, detail: "connection to server on socket \"/tmp/pg/.s.PGSQL.5439\" failed: "
                            + "No such file or directory\n\tIs the server running locally?\n",
                        server: "host=/tmp/pg port=5439", operation: "saving a user")
    #expect(error.description == "PostgreSQL at host=/tmp/pg port=5439 cannot be reached (saving a user: "
            + "connection to server on socket \"/tmp/pg/.s.PGSQL.5439\" failed: No such file or directory "
            + "Is the server running locally?); the request was not confirmed, try again")
    #expect(!error.userError.message.contains { $0 == "\t" || $0 == "\n" })
}

/// A read that failed says to try again; only a write says it may or may not have happened.
@Test func aFailedReadDoesNotSpeakOfARequestNotConfirmed() {
    let error = PGError(sqlState: nil, detail: "server closed the connection unexpectedly",
                        server: "host=/tmp/pg port=5439", operation: "reading a user")
    #expect(error.description.hasSuffix("; try again") && !error.description.contains("not confirmed"))
}
