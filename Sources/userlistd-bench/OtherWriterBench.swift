import Glibc
import UserListWire

/// A save made through a second daemon on the same store file: how long until a session of the
/// first daemon shows it (the first daemon learns of another process's commit from inotify and
/// `data_version`), beside the same save reaching a session of the daemon that made it.
/// Rounds alternate between the two observers, so each round times one of them alone.
enum OtherWriterBench {
    static let section = "other writer"

    static func run(_ context: BenchContext) {
        let rounds = context.quick ? 20 : 200
        print("== other writer (\(rounds) rounds: two daemons on one SQLite file)")
        context.withDaemon(section) { watching throws(BenchError) in
            let writing = try context.startDaemon()
            defer { if let problem = writing.stop() { context.report.note("\(section): \(problem)") } }
            let (other, same) = try measure(writer: writing, watching: watching, rounds: rounds)
            context.report.latency(section, "save through daemon B → patch on a session of daemon A (another process's commit)",
                                   other, baseline: same)
            context.report.note("other writer: the baseline column is the same save → patch on a session of daemon B itself")
        }
    }

    static func measure(writer daemon: DaemonProcess, watching: DaemonProcess, rounds: Int) throws(BenchError) -> (Samples, Samples) {
        let writer = try WireConnection.connect(daemon.socketPath)
        writer.trackDocument = true
        try writer.attach(sessionKey: "ow-writer")
        try writer.awaitReply(writer.intent("list", "on_appear").id)
        guard let user = JSONValueBox(value: writer.document).firstUser else { throw BenchError("the list is empty") }
        try writer.awaitReply(writer.intent("session", "open_user", ["id": .string(user.id)]).id)
        writer.trackDocument = false

        let observers = [try ManySessions.open(socketPath: watching.socketPath, count: 1, keyPrefix: "ow-a").connections,
                         try ManySessions.open(socketPath: daemon.socketPath, count: 1, keyPrefix: "ow-b").connections]
        var samples = [Samples(), Samples()]
        for round in 0..<rounds {
            let marker = "ow\(round)"
            try writer.awaitReply(writer.intent("detail", "set_draft_name", ["name": .string("Aaaa Other \(marker)")]).id)
            for set in observers { while set.pump(timeoutMillis: 0, { _, _, _ in }) > 0 {} }
            let timed = round % 2
            let needle = Array("\(marker)\"".utf8)
            var arrived: UInt64 = 0
            let start = monotonicNanos()
            let save = try writer.intent("detail", "save")
            let until = deadline(seconds: 10)
            while arrived == 0 && monotonicNanos() < until {
                observers[timed].pump(timeoutMillis: 50) { _, frame, at in
                    if arrived == 0, frameType(frame) == "patch", contains(frame, needle) { arrived = at }
                }
            }
            guard arrived != 0 else { throw BenchError("round \(round): no patch within 10 s") }
            samples[timed].append(arrived - start)
            try writer.awaitReply(save.id)
        }
        return (samples[0], samples[1])
    }
}
