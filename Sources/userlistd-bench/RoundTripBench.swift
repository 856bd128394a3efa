import Glibc
import UserListWire

/// Intent → patch round trips on one connection, against an echo of the same frame sizes:
/// - `set_draft_name` → the patch changing `draft_name` (pure ViewModel work, no store);
/// - `save` → the patch renaming the row in the 1,000-row list, and `save` → its reply
///   (both include the SQLite commit);
/// - next page: `did_display_row` at the end of a fresh first page → the patch adding rows.
/// Also the wire size of a one-row rename patch against a 1,000-row snapshot, seen by an observer.
enum RoundTripBench {
    static let section = "round trip"

    /// What the loops gather: the samples, and the frame sizes the echo floors reuse.
    struct Figures {
        var draft = Samples(), saveRow = Samples(), saveReply = Samples(), page = Samples()
        var missedRowPatches = 0
        var sizes = (draftIntent: 0, draftPatch: 0, saveIntent: 0, rowPatch: 0)
        var pageSizes = (intent: 0, patch: 0)
    }

    static func run(_ context: BenchContext) {
        let samples = context.quick ? 200 : 2000
        print("== round trip (\(samples) samples each; nothing pinned: daemon, bench and echo threads float on "
              + "\(sysconfCores()) cores)")
        context.withDaemon(section) { daemon throws(BenchError) in
            let client = try WireConnection.connect(daemon.socketPath)
            client.trackDocument = true
            try client.attach(sessionKey: "bench-round-trip")
            try loadAllRows(client)
            let rows = JSONValueBox(value: client.document).users.count
            guard let target = JSONValueBox(value: client.document).firstUser else {
                throw BenchError("the list is empty")
            }
            context.report.note("round trip: the client holds \(rows) rows (did_display_row until has_more is false); "
                                + "renamed user is row 0")

            // Bytes on the wire, seen by a second session holding the same 1,000 rows.
            var observer: WireConnection? = try WireConnection.connect(daemon.socketPath)
            observer!.trackDocument = true
            try observer!.attach(sessionKey: "bench-observer")
            try loadAllRows(observer!)
            let snapshotBytes = try resyncSnapshotBytes(observer!)

            try client.awaitReply(client.intent("session", "open_user", ["id": .string(target.id)]).id)
            client.trackDocument = false
            var figures = Figures()
            try measureEdits(context, client, samples: samples, observer: &observer, snapshotBytes: snapshotBytes,
                             into: &figures)
            try measurePages(client, samples: samples, into: &figures)
            try reportFigures(context, figures, samples: samples)
        }
    }

    /// `samples` rounds of set_draft_name then save; after the first save, the observer's patch
    /// size (then the observer is closed: it would only pile up 2,000 unread patches).
    static func measureEdits(_ context: BenchContext, _ client: WireConnection, samples: Int,
                             observer: inout WireConnection?, snapshotBytes: Int,
                             into figures: inout Figures) throws(BenchError) {
        for index in 0..<samples {
            let name = "Aaaa Bench \(index)"
            try measureDraft(client, name: name, into: &figures)
            guard try measureSave(context, client, name: name, index: index, into: &figures) else { continue }
            if index == 0, let watcher = observer {
                // The observer's patch for this one-row rename (arrives through the change feed).
                let patchBytes = try observerPatchBytes(watcher)
                observer = nil
                context.report.add("bytes on the wire", "one-row rename patch (observer, 1,000-row list)",
                                   value: "\(grouped(patchBytes)) B", baseline: "snapshot \(grouped(snapshotBytes)) B",
                                   ratio: fixed(100 * Double(patchBytes) / Double(snapshotBytes), 2) + "%",
                                   target: "≤ 1% of snapshot",
                                   met: Double(patchBytes) <= 0.01 * Double(snapshotBytes))
            }
        }
        if figures.missedRowPatches > 0 {
            context.report.note("round trip: \(figures.missedRowPatches) of \(samples) saves had no list-row patch "
                                + "before their reply (left out of the save figures): a daemon problem")
        }
    }

    /// set_draft_name → the patch that changes draft_name.
    static func measureDraft(_ client: WireConnection, name: String, into figures: inout Figures) throws(BenchError) {
        let edit = try client.intent("detail", "set_draft_name", ["name": .string(name)])
        let start = edit.sentAt
        var seen = false
        try client.awaitReply(edit.id) { message, bytes, at throws(BenchError) in
            if !seen && at >= start && message.isPatch(touching: "/screens/1/state/draft_name")
                && message.mentions(name) {
                seen = true
                figures.draft.append(at - start)
                figures.sizes.draftPatch = bytes
            }
        }
        guard seen else { throw BenchError("set_draft_name replied without a draft_name patch") }
        figures.sizes.draftIntent = edit.bytes
    }

    /// save → the patch renaming the list row, and → the reply. False (and a note the first time)
    /// when the reply came with no row patch naming it.
    static func measureSave(_ context: BenchContext, _ client: WireConnection, name: String, index: Int,
                            into figures: inout Figures) throws(BenchError) -> Bool {
        let save = try client.intent("detail", "save")
        let start = save.sentAt
        var seen = false
        var seenTypes: [String] = []
        let saveOutcome = try client.awaitReply(save.id) { message, bytes, at throws(BenchError) in
            seenTypes.append(message.isPatch(touching: "/")
                ? "patch \(message.json["ops"]?.description.prefix(200) ?? "")" : message.type)
            if !seen && at >= start && message.isPatch(touching: "/screens/0/state/users")
                && message.mentions(name) {
                seen = true
                figures.saveRow.append(at - start)
                figures.sizes.rowPatch = bytes
            }
        }
        guard seen else {
            figures.missedRowPatches += 1
            if figures.missedRowPatches == 1 {
                context.report.note("round trip: save #\(index) (\"\(name)\") was answered "
                                    + "\(String(describing: saveOutcome.reply.outcome)) with no list-row patch naming "
                                    + "it before the reply; frames seen: \(seenTypes.joined(separator: ", "))")
            }
            return false
        }
        figures.saveReply.append(saveOutcome.at - start)
        figures.sizes.saveIntent = save.bytes
        return true
    }

    /// Next page: refresh (back to one page), then display its last row.
    static func measurePages(_ client: WireConnection, samples: Int, into figures: inout Figures) throws(BenchError) {
        try client.awaitReply(client.intent("session", "back").id)
        for _ in 0..<samples {
            try client.awaitReply(client.intent("list", "refresh").id)
            let show = try client.intent("list", "did_display_row", ["index": 49])
            let start = show.sentAt
            var seen = false
            try client.awaitReply(show.id) { message, bytes, at throws(BenchError) in
                if !seen, at >= start, case .patch(let patch) = message, patch.ops.contains(where: addsRows) {
                    seen = true
                    figures.page.append(at - start)
                    figures.pageSizes.patch = bytes
                }
            }
            guard seen else { throw BenchError("did_display_row replied without a patch adding rows") }
            figures.pageSizes.intent = show.bytes
        }
    }

    /// A patch operation that adds to the list's rows.
    static func addsRows(_ op: PatchOperation) -> Bool {
        if case .add(let path, _) = op { path.description.hasPrefix("/screens/0/state/users") } else { false }
    }

    /// Every figure against its raw floor with the same frame sizes.
    static func reportFigures(_ context: BenchContext, _ figures: Figures, samples: Int) throws(BenchError) {
        let echo = { (request: Int, response: Int) throws(BenchError) -> Samples in
            try EchoBaseline.run(socketPath: context.temporaryPath("echo.sock"), requestSize: request,
                                 responseSize: response, rounds: samples)
        }
        let (sizes, pageSizes, report) = (figures.sizes, figures.pageSizes, context.report)
        let draftRaw = try echo(sizes.draftIntent, sizes.draftPatch)
        let rowRaw = try echo(sizes.saveIntent, sizes.rowPatch)
        let pageRaw = try echo(pageSizes.intent, pageSizes.patch)
        let pageQuery = try PageQueryBaseline.run(database: context.database, rounds: samples)
        report.latency(section,
                       "set_draft_name → draft_name patch (\(sizes.draftIntent) B → \(sizes.draftPatch) B)",
                       figures.draft, baseline: draftRaw, p50Ratio: 3, p99Limit: 1_000_000)
        report.latency(section, "save → list-row patch, incl. SQLite commit "
                       + "(\(sizes.saveIntent) B → \(sizes.rowPatch) B)",
                       figures.saveRow, baseline: rowRaw, p50Ratio: 3, p99Limit: 1_000_000)
        report.latency(section, "save → reply, incl. SQLite commit (reply after the patch)", figures.saveReply,
                       baseline: nil)
        report.latency(section, "next page: did_display_row → rows-added patch "
                       + "(\(pageSizes.intent) B → \(grouped(pageSizes.patch)) B)",
                       figures.page, baseline: pageRaw, p50Ratio: 3, p50Allowance: (pageQuery.p50, "query"),
                       p99Limit: 1_000_000)
        report.latency(section, "next page: the store's query alone (fetchPage, 50 users, read-only connection)",
                       pageQuery, baseline: nil)
    }

    /// did_display_row at the last row until `has_more` is false (bounded).
    static func loadAllRows(_ client: WireConnection) throws(BenchError) {
        try client.awaitReply(client.intent("list", "on_appear").id)
        for _ in 0..<200 {
            let box = JSONValueBox(value: client.document)
            if !box.hasMore && box.loading == "none" { return }
            let last = Int64(max(0, box.users.count - 1))
            try client.awaitReply(client.intent("list", "did_display_row", ["index": .int(last)]).id)
        }
        throw BenchError("the list did not finish loading after 200 pages")
    }

    /// Asks for a fresh snapshot and returns its frame size.
    static func resyncSnapshotBytes(_ client: WireConnection) throws(BenchError) -> Int {
        try client.send(.resync)
        let until = deadline(seconds: 10)
        while true {
            let (message, bytes, _) = try client.readMessage(until: until)
            if case .snapshot = message { return bytes }
        }
    }

    static func observerPatchBytes(_ observer: WireConnection) throws(BenchError) -> Int {
        let until = deadline(seconds: 10)
        while true {
            let (message, bytes, _) = try observer.readMessage(until: until)
            if message.isPatch(touching: "/screens/0/state/users") { return bytes }
        }
    }
}

func sysconfCores() -> Int { Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

