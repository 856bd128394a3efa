import Foundation
import UserListWire

/// The users an import file names, each counted once. The daemon applies each id's last entry,
/// so a file naming a user twice writes it once: without this count the summary would call the
/// earlier entry "already up to date". Ids are compared as the daemon does (a UUID in either
/// case is one id); 16 bytes an id, so a million-user file costs about 32 MiB here.
struct DistinctUserIDs {
    private var uuids = Set<UUID>()
    /// Ids that are not UUIDs (the daemon refuses them; counted by their text meanwhile).
    private var others = Set<String>()

    mutating func insert(_ id: String) {
        if let uuid = UUID(uuidString: id) {
            uuids.insert(uuid)
        } else {
            others.insert(id)
        }
    }

    mutating func insert(entry user: JSONValue) {
        if let id = user["id"]?.stringValue { insert(id) }
    }

    var count: Int { uuids.count + others.count }
}
