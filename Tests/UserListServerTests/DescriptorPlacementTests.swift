import Testing
@testable import UserListServer

/// LISTEN_FDS wants the handed descriptors at 3, 4, … with no gap; a re-exec gets them there
/// without moving any above the highest in use, and without overwriting one still to move.
@Suite struct DescriptorPlacementTests {
    /// Applies the placement to a table of open descriptors (number → what it is) as the
    /// system calls would, and returns what each number from 3 holds afterwards.
    static func apply(_ placement: DescriptorPlacement, to table: [Int32: String], count: Int) -> [String?] {
        var after = table
        for (from, to) in placement.moves { after[to] = table[from] }
        return (0..<count).map { after[3 + Int32($0)] }
    }

    @Test func everyHandedDescriptorEndsInTheRangeInTheOrderNamed() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let count = Int.random(in: 0...40, using: &generator)
            // Handed descriptors scattered over 3…99, some inside the range and some not,
            // among others that are not handed (the signal pipe, the journal).
            let numbers = Array(Int32(3)...99).shuffled(using: &generator)
            let handed = Array(numbers.prefix(count))
            var table: [Int32: String] = [:]
            for fd in numbers.dropFirst(count).prefix(10) { table[fd] = "other \(fd)" }
            for fd in handed { table[fd] = "handed \(fd)" }
            let placement = DescriptorPlacement(handed)
            #expect(placement.order.sorted() == Array(0..<count), "each handed descriptor named once")
            let result = Self.apply(placement, to: table, count: count)
            #expect(result == placement.order.map { "handed \(handed[$0])" }, "slot i holds the descriptor order[i] names: \(handed)")
            #expect(placement.moves.allSatisfy { !handed.contains($0.to) }, "no copy lands on a handed descriptor")
            #expect(placement.moves.allSatisfy { $0.to < 3 + Int32(count) }, "nothing goes above the range")
            #expect(placement.staying.count + placement.moves.count == count)
        }
    }

    @Test func descriptorsAlreadyInPlaceDoNotMove() {
        let placement = DescriptorPlacement([5, 3, 4, 900])
        #expect(placement.staying == [5, 3, 4])
        #expect(placement.moves.map(\.from) == [900] && placement.moves.map(\.to) == [6])
        #expect(placement.order == [1, 2, 0, 3])
    }
}
