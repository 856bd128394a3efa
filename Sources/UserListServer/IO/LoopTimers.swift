/// The event loop's clock: jobs due at a monotonic time, earliest first, that the loop runs once
/// due. The loop sleeps in `epoll_wait` no longer than until the earliest (`timeoutMilliseconds`).
///
/// A binary min-heap on (due, order): jobs due at the same time run in the order they were set.
/// No cancellation: a job that may find its object gone holds it weakly.
struct LoopTimers {
    private struct Entry {
        let due: Int64
        let order: UInt64
        let job: @Sendable () -> Void

        func isBefore(_ other: Entry) -> Bool { (due, order) < (other.due, other.order) }
    }

    private var heap: [Entry] = []
    private var nextOrder: UInt64 = 0
    /// Set once the loop has exited: it keeps no time any more (`EventLoop.execute(after:_:)`).
    var closed = false

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }

    /// Adds `job`, due at `due` (monotonic nanoseconds); returns whether it is now the earliest
    /// (a loop asleep until a later one must be woken).
    mutating func insert(due: Int64, _ job: @escaping @Sendable () -> Void) -> Bool {
        heap.append(Entry(due: due, order: nextOrder, job: job))
        nextOrder &+= 1
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].isBefore(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
        return child == 0
    }

    /// How long `epoll_wait` may sleep: -1 (no timer), else the milliseconds until the earliest
    /// is due, rounded up so the loop never wakes before it (0 when one is due already).
    func timeoutMilliseconds(now: () -> Int64) -> Int32 {
        guard let first = heap.first else { return -1 }
        let left = first.due - now()
        if left <= 0 { return 0 }
        return Int32(clamping: (left + 999_999) / 1_000_000)
    }

    /// Removes and returns the jobs due by `now`, in due order (`now` is read only when a timer
    /// is set).
    mutating func takeDue(now: () -> Int64) -> [@Sendable () -> Void] {
        guard !heap.isEmpty else { return [] }
        let time = now()
        var due: [@Sendable () -> Void] = []
        while let first = heap.first, first.due <= time { due.append(removeFirst().job) }
        return due
    }

    /// Removes and returns every job, due or not, in due order.
    mutating func takeAll() -> [@Sendable () -> Void] {
        var all: [@Sendable () -> Void] = []
        all.reserveCapacity(heap.count)
        while !heap.isEmpty { all.append(removeFirst().job) }
        return all
    }

    private mutating func removeFirst() -> Entry {
        let first = heap[0]
        let last = heap.removeLast()
        guard !heap.isEmpty else { return first }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].isBefore(heap[smallest]) { smallest = left }
            if right < heap.count, heap[right].isBefore(heap[smallest]) { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }
}
