import Glibc
import UserListWire

/// What the crash-safe session journal costs: the same work against a daemon with the journal
/// off (`--session-journal-interval 0`, the baseline) and on (the default, 75 ms), in one run:
/// - round trip: `set_draft_name` → reply on one session (the patch comes first), the journal's
///   worst case (every intent changes the saved draft);
/// - typing: S sessions each typing 10 drafts/s, intent → reply;
/// - sustained: the `sustained` section's fan-out (10 renames/s to every session), which the
///   journal sees as list changes it does not need to write.
/// Target: p50 and p99 with the journal within 10% of without (ratio ≤ 1.10). Each side runs
/// twice, in the order off, on, on, off, and its samples are pooled.
enum JournalBench {
    static let section = "journal"
    static let off = ["--session-journal-interval", "0"]

    static func run(_ context: BenchContext) {
        let samples = context.quick ? 300 : 2000
        let typists = context.quick ? 50 : 200
        let seconds = context.quick ? 5 : 15
        print("== journal cost (round trip \(samples) samples, \(typists) sessions typing 10/s for \(seconds) s; "
              + "off vs on)")
        // Off, on, on, off (ABBA): on a shared machine whose load drifts during the run, each
        // side gets an early and a late turn, and the two turns' samples are pooled.
        var roundTrip = [Samples(), Samples()]
        var typing = [Samples(), Samples()]
        var sustained = [Samples(), Samples()]
        var complete = true
        for (turn, side) in [0, 1, 1, 0].enumerated() {
            let flags = side == 0 ? off : []
            var ran = false
            context.withDaemon(section, extraFlags: flags) { daemon throws(BenchError) in
                roundTrip[side].append(contentsOf: try draftRoundTrips(daemon, samples: samples))
                typing[side].append(contentsOf: try typingLoad(daemon, sessions: typists, seconds: seconds))
                ran = true
            }
            let label = " (journal \(side == 0 ? "off" : "on"), turn \(turn + 1) of 4)"
            if let measured = SustainedBench.run(context, extraFlags: flags, label: label), ran {
                sustained[side].append(contentsOf: measured)
            } else {
                complete = false
            }
        }
        guard complete else { return context.report.note("journal: a turn failed; no comparison") }
        compare("set_draft_name → reply, one session", off: roundTrip[0], on: roundTrip[1], context)
        compare("\(typists) sessions typing 10/s: set_draft_name → reply", off: typing[0], on: typing[1], context)
        compare("sustained fan-out: save → each session's patch", off: sustained[0], on: sustained[1], context)
    }

    /// Reports p50 and p99 with the journal against without.
    static func compare(_ metric: String, off: Samples, on: Samples, _ context: BenchContext) {
        for (label, withJournal, without) in [("p50", on.p50, off.p50), ("p99", on.p99, off.p99)] {
            let ratio = Double(withJournal) / Double(max(1, without))
            context.report.add(section, "\(metric) \(label), journal on", value: formatNanos(withJournal),
                               baseline: "off: \(formatNanos(without))", ratio: fixed(ratio, 2) + "×",
                               target: "≤ 1.10×", met: ratio <= 1.10)
        }
    }

    /// One session on a detail screen: `set_draft_name` with a new name each time, to its reply.
    static func draftRoundTrips(_ daemon: DaemonProcess, samples: Int) throws(BenchError) -> Samples {
        let client = try WireConnection.connect(daemon.socketPath)
        client.trackDocument = true
        try client.attach(sessionKey: "journal-round-trip")
        try client.awaitReply(client.intent("list", "on_appear").id)
        guard let user = JSONValueBox(value: client.document).firstUser else { throw BenchError("the list is empty") }
        try client.awaitReply(client.intent("session", "open_user", ["id": .string(user.id)]).id)
        client.trackDocument = false
        var latencies = Samples()
        for index in 0..<samples {
            let start = monotonicNanos()
            try client.awaitReply(client.intent("detail", "set_draft_name",
                                                ["name": .string("Journal Bench \(index)")]).id)
            latencies.append(monotonicNanos() - start)
        }
        return latencies
    }

    /// `sessions` sessions, each on its own user's detail screen, each sending a new draft every
    /// 100 ms for `seconds`; intent → reply for every draft.
    static func typingLoad(_ daemon: DaemonProcess, sessions: Int, seconds: Int) throws(BenchError) -> Samples {
        let set = try openTypists(daemon, sessions: sessions)
        // Typing: intent ids from 3 up, one round every 100 ms.
        var sentAt = [[UInt64]](repeating: [], count: sessions)
        var latencies = Samples()
        let rounds = seconds * 10
        let start = monotonicNanos()
        let collect = { (index: Int, frame: [UInt8], at: UInt64) in
            guard frameType(frame) == "reply", case .reply(let reply)? = try? ServerMessage(frame: frame) else {
                return
            }
            let round = reply.id - 3
            guard round >= 0, round < sentAt[index].count else { return }
            latencies.append(at - sentAt[index][round])
        }
        for round in 0..<rounds {
            let tick = start + UInt64(round) * 100_000_000
            while monotonicNanos() < tick { set.pump(timeoutMillis: 1, collect) }
            for index in 0..<sessions {
                sentAt[index].append(monotonicNanos())
                try sendIntent(set, index, 3 + round, "detail", "set_draft_name",
                               ["name": .string("Typist \(index) draft \(round)")])
            }
        }
        let until = deadline(seconds: 30)
        while latencies.count < rounds * sessions && monotonicNanos() < until { set.pump(timeoutMillis: 50, collect) }
        guard latencies.count == rounds * sessions else {
            throw BenchError("typing: only \(latencies.count) of \(rounds * sessions) drafts were answered")
        }
        return latencies
    }

    /// `sessions` sessions, each with its own user open (intent id 2) on its detail screen.
    static func openTypists(_ daemon: DaemonProcess, sessions: Int) throws(BenchError) -> ConnectionSet {
        let lister = try WireConnection.connect(daemon.socketPath)
        lister.trackDocument = true
        try lister.attach(sessionKey: "journal-lister")
        try RoundTripBench.loadAllRows(lister)
        let ids = JSONValueBox(value: lister.document).users.compactMap { $0["id"]?.stringValue }
        guard ids.count >= sessions else { throw BenchError("only \(ids.count) users for \(sessions) typists") }

        let many = try ManySessions.open(socketPath: daemon.socketPath, count: sessions, keyPrefix: "journal-typist")
        let set = many.connections
        var opened = 0
        for index in 0..<sessions { try sendIntent(set, index, 2, "session", "open_user", ["id": .string(ids[index])]) }
        let openUntil = deadline(seconds: 60)
        while opened < sessions && monotonicNanos() < openUntil {
            set.pump(timeoutMillis: 50) { _, frame, _ in
                guard frameType(frame) == "reply", case .reply(let reply)? = try? ServerMessage(frame: frame) else {
                    return
                }
                if reply.id == 2 { opened += 1 }
            }
        }
        guard opened == sessions else { throw BenchError("only \(opened) of \(sessions) typists opened their user") }
        return set
    }

    static let encoder = FrameEncoder(maximumFrameSize: FrameLimits.clientToServer)

    /// An intent on session `index`'s connection.
    static func sendIntent(_ set: ConnectionSet, _ index: Int, _ id: Int, _ screen: String, _ action: String,
                           _ args: [String: JSONValue]) throws(BenchError) {
        let frame: [UInt8]
        do throws(FrameError) {
            frame = try encoder.encode(ClientMessage.intent(.init(id: id, screen: screen, action: action, args: args)))
        } catch { throw BenchError("encode: \(error)") }
        try set.send(index, frame)
    }
}
