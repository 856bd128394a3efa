import Dispatch
import Foundation
import ThreadLocks

/// Bulk work done ahead of the one who needs it: `transform` of every element, computed in
/// chunks on all cores, handed out chunk by chunk in order as each is ready.
///
/// A JSON import validates and keys a million users (about 4 µs each) and the writer then
/// inserts them (about 5 µs each, on one core). Done one after the other, the writer waits
/// seconds for the last user to be checked; with this it starts on the first chunk while the
/// others are checked on the other cores.
final class OrderedChunks<Element: Sendable, Mapped: Sendable, Failure: Error>: Sendable {
    let count: Int
    let chunkSize: Int
    private let slots: Lock<[Result<[Mapped], Failure>?]>
    private let ready: [DispatchSemaphore]

    init(_ elements: [Element], chunkSize: Int = 4_096,
         _ transform: @escaping @Sendable (Int, Element) throws(Failure) -> Mapped) {
        count = elements.count
        self.chunkSize = chunkSize
        let chunks = (elements.count + chunkSize - 1) / chunkSize
        slots = Lock(Array(repeating: nil, count: chunks))
        ready = (0..<chunks).map { _ in DispatchSemaphore(value: 0) }
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                let range = (chunk * chunkSize)..<min(elements.count, (chunk + 1) * chunkSize)
                let result = ParallelMap.mapChunk(elements, range, transform)
                slots.withLock { $0[chunk] = result }
                ready[chunk].signal()
            }
        }
    }

    var chunkCount: Int { ready.count }

    /// Chunk `index` (elements `index * chunkSize` on), waiting until it is done, or the first
    /// error in it. Each chunk is handed out once: its memory goes with it.
    func take(_ index: Int) -> Result<[Mapped], Failure> {
        ready[index].wait()
        return slots.withLock { slots in
            defer { slots[index] = nil }
            return slots[index]!
        }
    }
}
