import UserListWire

/// One fan-out measurement: per round, `save` sent → the last session's patch read.
struct FanOutRun {
    /// Reader threads the receiving sessions were spread over (`--readers`).
    var readers: Int
    var samples = Samples()
    /// The size of an observer's patch frame.
    var patchBytes = 0
    /// CPU time the daemon's threads spent over the rounds (not over opening the sessions).
    var cpu: UInt64?
    /// The warm-up round, kept out of the samples and the CPU.
    var first: UInt64?
}

extension FanOutBench {
    /// Rounds of rename-and-wait, once per entry of `readers` (the same sessions spread over that
    /// many reader threads each time); one run per entry, in order.
    /// The observing sessions are on `observers` when given (another daemon on the same store).
    /// `addingFirst`: before the rounds, the writer adds a user at the top of the first page, which
    /// grows every session's list past its page and so cuts it back (and moves its cursor).
    /// `warmingUp`: one more round first, kept out of the samples and the CPU and returned as
    /// `first` (the daemon's first save, and the change that seats the sessions in shared views).
    static func measure(_ daemon: DaemonProcess, receivers: Int, rounds: Int, tag: String,
                        observers: DaemonProcess? = nil, addingFirst: Bool = false, warmingUp: Bool = false,
                        readers: [Int] = [1]) throws(BenchError) -> [FanOutRun] {
        let writer = try SustainedBench.openWriter(daemon, key: "\(tag)-writer")
        let sessions = try ManySessions.open(socketPath: (observers ?? daemon).socketPath, count: receivers,
                                             keyPrefix: tag)
        if addingFirst { try addFirst(writer, sessions.connections, tag: tag) }
        var runs: [FanOutRun] = []
        for threads in readers {
            let group = try FanOutReaders(sessions.connections, threads: threads)
            var run: FanOutRun
            do throws(BenchError) {
                run = try measureRounds(daemon, writer: writer, group: group, rounds: rounds,
                                        tag: threads == 1 ? tag : "\(tag)R\(threads)", warmingUp: warmingUp)
            } catch {
                try? group.stop()
                throw error
            }
            try group.stop()
            run.readers = threads
            runs.append(run)
        }
        return runs
    }

    /// The writer adds a user that sorts first, and every session gets the patch that adds it.
    static func addFirst(_ writer: WireConnection, _ set: ConnectionSet, tag: String) throws(BenchError) {
        let name = "Aaaa Added \(tag)"
        let add = try writer.intent("session", "add_user",
                                    ["name": .string(name), "email": .string("\(tag)@bench.example")])
        _ = try awaitPatches(set, containing: Array(name.utf8), receivers: set.count, what: "the add")
        try writer.awaitReply(add.id)
    }

    /// The rounds of one run, read by `group`; the CPU is the daemon's (not `observers`').
    static func measureRounds(_ daemon: DaemonProcess, writer: WireConnection, group: FanOutReaders, rounds: Int,
                              tag: String, warmingUp: Bool) throws(BenchError) -> FanOutRun {
        var run = FanOutRun(readers: 0)
        var cpuBefore = ProcessCPU.nanoseconds(pid: daemon.pid)
        for round in (warmingUp ? -1 : 0)..<rounds {
            let marker = "\(tag)r\(round)"
            try writer.awaitReply(writer.intent("detail", "set_draft_name",
                                                ["name": .string("Aaaa Bench \(marker)")]).id)
            try group.drain()  // trailing events of the last round
            group.expect(Array("\(marker)\"".utf8), what: "round \(round)")
            let start = monotonicNanos()
            let save = try writer.intent("detail", "save")
            let (last, bytes) = try group.awaitPatches()
            if run.patchBytes == 0 { run.patchBytes = bytes }
            try writer.awaitReply(save.id)
            if round < 0 {
                run.first = last - start
                cpuBefore = ProcessCPU.nanoseconds(pid: daemon.pid)
            } else {
                run.samples.append(last - start)
            }
        }
        run.cpu = ProcessCPU.nanoseconds(pid: daemon.pid).flatMap { after in cpuBefore.map { after - $0 } }
        return run
    }
}
