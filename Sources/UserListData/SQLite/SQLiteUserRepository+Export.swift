import Foundation
import UserListDomain

/// `export_page` on SQLite: the screens' keyset page, ended at the byte budget as well as the
/// limit. The session keeps about 1 MiB of each page (~5,100 sample users of the 10,000 asked
/// for), and every row read costs a lookup in the table (which is not in name order), so
/// reading the whole limit was twice the rows an export needs.
///
/// The store reads these pages itself (`readsExportPages`), so the shared page cache passes
/// them through: an export's pages are read once, and kept they held the whole store in the
/// daemon's memory until the next write.
extension SQLiteUserRepository {
    public var readsExportPages: Bool { true }

    public func exportPage(_ request: PageRequest, byteBudget: Int) async throws(UserError) -> UserPage {
        try readPage(cursor: request.after, backward: false, limit: request.limit, search: request.search,
                     byteBudget: max(0, byteBudget))
    }
}
