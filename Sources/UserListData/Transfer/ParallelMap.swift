import Dispatch
import Foundation
import ThreadLocks

/// Bulk work spread over every core: an import's validation and its keys cost microseconds an
/// entry, a million times over, and the writer need not wait for one core to do them all.
enum ParallelMap {
    /// `transform` of every element (with its index), in order, computed in chunks of at least
    /// `grain` elements on all cores. The first error, in element order, is thrown.
    static func map<Element: Sendable, Mapped: Sendable, Failure: Error>(
        _ elements: [Element], grain: Int = 1_000,
        _ transform: @Sendable (Int, Element) throws(Failure) -> Mapped
    ) throws(Failure) -> [Mapped] {
        let chunkCount = max(1, min(elements.count / max(1, grain), ProcessInfo.processInfo.activeProcessorCount * 4))
        let chunkSize = (elements.count + chunkCount - 1) / chunkCount
        let results = Lock<[Int: Result<[Mapped], Failure>]>([:])
        DispatchQueue.concurrentPerform(iterations: chunkCount) { chunk in
            let range = (chunk * chunkSize)..<min(elements.count, (chunk + 1) * chunkSize)
            let result = mapChunk(elements, range, transform)
            results.withLock { $0[chunk] = result }
        }
        var all: [Mapped] = []
        all.reserveCapacity(elements.count)
        for chunk in 0..<chunkCount {
            guard let result = results.withLock({ $0[chunk] }) else { continue }
            all += try result.get()
        }
        return all
    }

    /// `transform` of the elements in `range`, or the first error among them.
    static func mapChunk<Element, Mapped, Failure: Error>(
        _ elements: [Element], _ range: Range<Int>, _ transform: (Int, Element) throws(Failure) -> Mapped
    ) -> Result<[Mapped], Failure> {
        Result { () throws(Failure) -> [Mapped] in
            var mapped: [Mapped] = []
            mapped.reserveCapacity(range.count)
            for index in range { mapped.append(try transform(index, elements[index])) }
            return mapped
        }
    }
}
