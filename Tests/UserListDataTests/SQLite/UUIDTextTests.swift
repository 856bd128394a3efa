import Foundation
import Testing
@testable import UserListData

/// The store binds ids with its own formatter: it must write exactly what `uuidString` writes,
/// or stored ids would stop matching the ones already in the file.
struct UUIDTextTests {
    @Test func writesTheBytesOfUUIDString() {
        let edges = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                     UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
                     UUID(uuidString: "0123ABCD-4567-89EF-FEDC-BA9876543210")!]
        for id in edges + (0..<2_000).map({ _ in UUID() }) {
            let text = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: UUIDText.count) { buffer in
                UUIDText.write(id, into: buffer)
                return String(decoding: buffer, as: UTF8.self)
            }
            #expect(text == id.uuidString)
        }
    }
}
