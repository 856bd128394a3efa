import UserListPresentation
import UserListWire

/// Sessions of one loop that show the very same list and nothing else, followed as one (a
/// shared view): a change is applied to the audience's list state once, and each member's
/// clients get the patch with their own sequence number, without entering the sessions.
///
/// A session takes a seat at a change it followed the shared way (`Session.followShared`), and
/// keeps it until anything else touches it: every read of its list, its `sent` state or its
/// clients first takes the audience's state and sequence numbers back (`Session.settle`), so
/// the session stays the one owner of its state and no caller needs to know about seats. The
/// loop's feed gives an audience only the changes each member would have computed alike with
/// no other effect (see `LoopChangeFeed`'s audiences); any other change dissolves it first.
///
/// Belongs to its feed's event loop: every use is checked there (`LoopBound`).
final class ListAudience: Sendable {
    /// One client's stream: where its patches go and the sequence number it is at.
    struct Stream {
        let client: any SessionClient
        let epoch: Int
        var seq: Int
    }

    /// A session's membership, kept by the session.
    struct Seat: Sendable {
        let audience: ListAudience
        let number: Int
    }

    private struct Entry {
        let seat: Int
        var stream: Stream
        var vacated = false
    }

    private struct Member {
        weak var session: Session?
        var entries: [Int]
    }

    private struct Parts {
        var state: UserListState
        /// Every client of every member, contiguous: a change walks this and nothing else.
        var entries: [Entry] = []
        var members: [Int: Member] = [:]
        var vacated = 0
        var nextSeat = 0
    }

    private let parts: LoopBound<Parts>

    init(showing state: UserListState, on loop: EventLoop) {
        parts = LoopBound(Parts(state: state), on: loop)
    }

    /// The list state every member shows (and its clients hold).
    var state: UserListState { parts.value.state }

    var isEmpty: Bool { parts.value.members.isEmpty }

    var memberCount: Int { parts.value.members.count }

    /// Seats `session`, whose list shows `state` and whose clients are at `streams`.
    func seat(_ session: Session, streams: [Stream]) -> Seat {
        parts.withValue { parts in
            let number = parts.nextSeat
            parts.nextSeat += 1
            var member = Member(session: session, entries: [])
            for stream in streams {
                member.entries.append(parts.entries.count)
                parts.entries.append(Entry(seat: number, stream: stream))
            }
            parts.members[number] = member
            return Seat(audience: self, number: number)
        }
    }

    /// Gives a member's seat up: the state its list reached here and where its clients' streams are.
    func leave(_ seat: Seat) -> (state: UserListState, streams: [Stream]) {
        parts.withValue { parts in
            guard let member = parts.members.removeValue(forKey: seat.number) else { return (parts.state, []) }
            var streams: [Stream] = []
            for index in member.entries {
                parts.entries[index].vacated = true
                streams.append(parts.entries[index].stream)
            }
            parts.vacated += member.entries.count
            if parts.vacated > 32 && parts.vacated * 2 > parts.entries.count { Self.compact(&parts) }
            return (parts.state, streams)
        }
    }

    /// The members still alive (for the feed to settle them: a dissolution, or one member to
    /// compute a change for the others).
    func members() -> [Session] {
        parts.withValue { parts in
            parts.members.values.compactMap(\.session)
        }
    }

    /// Moves every member to `after`, and sends each client the patch of `operations` (none
    /// when empty) with its next sequence number, then `event`. The caller checked that the
    /// patch fits in a frame (`fits`).
    func advance(to after: UserListState, operations: [UInt8], event: OutgoingFrame, encoder: FrameEncoder) {
        let entries = parts.withValue { parts -> [Entry] in
            parts.state = after
            if !operations.isEmpty {
                for index in parts.entries.indices where !parts.entries[index].vacated { parts.entries[index].stream.seq += 1 }
            }
            return parts.entries
        }
        // Written from this copy (one reference to the array, not one per client), outside the
        // audience's state: a connection that closes on its write may reach its session, which
        // then leaves (and the audience's entries are copied once, on that write).
        // One array for every client: its patch goes in place of the last one's (a connection
        // that kept the array, to queue it, makes the next write copy it).
        var frames: [(frame: OutgoingFrame, droppable: Bool)] = operations.isEmpty ? [(event, false)] : [(event, true), (event, false)]
        for entry in entries where !entry.vacated {
            if !operations.isEmpty {
                guard let patch = try? encoder.patchFrame(epoch: entry.stream.epoch, seq: entry.stream.seq, serializedOperations: operations) else {
                    preconditionFailure("a patch the feed found to fit did not")
                }
                frames[0] = (patch, true)
            }
            entry.stream.client.sendFrames(frames)
        }
    }

    /// Whether a patch of `operations` fits in a frame whatever its envelope's numbers.
    static func fits(_ operations: [UInt8]) -> Bool {
        operations.count + 128 <= FrameLimits.serverToClient
    }

    /// Drops the vacated entries (and members whose session ended) once they are most of them.
    private static func compact(_ parts: inout Parts) {
        var kept: [Entry] = []
        kept.reserveCapacity(parts.entries.count - parts.vacated)
        for key in Array(parts.members.keys) {
            if parts.members[key]?.session == nil { parts.members[key] = nil } else { parts.members[key]?.entries = [] }
        }
        for entry in parts.entries where !entry.vacated && parts.members[entry.seat] != nil {
            parts.members[entry.seat]?.entries.append(kept.count)
            kept.append(entry)
        }
        parts.entries = kept
        parts.vacated = 0
    }
}
