/// The result table: every figure beside its same-run baseline, the ratio, and its target.
final class Report {
    struct Row {
        var section: String
        var metric: String
        var value: String
        var baseline: String
        var ratio: String
        var target: String
        var verdict: String
    }

    private(set) var rows: [Row] = []
    private(set) var notes: [String] = []

    func add(_ section: String, _ metric: String, value: String, baseline: String = "–", ratio: String = "–",
             target: String = "–", met: Bool? = nil) {
        let verdict = met.map { $0 ? "met" : "**MISSED**" } ?? "–"
        rows.append(Row(section: section, metric: metric, value: value, baseline: baseline, ratio: ratio,
                        target: target, verdict: verdict))
        let against = baseline == "–" ? "" : "  (baseline \(baseline), \(ratio))"
        print("  \(metric): \(value)\(against)\(target == "–" ? "" : "  target \(target): \(verdict)")")
    }

    /// A latency pair (p50 and p99) against a raw baseline pair.
    /// `p50Allowance`: time the p50 target allows on top of `p50Ratio` times the raw p50, with
    /// what it is (next page: "≤ 3x raw + the SQLite query").
    func latency(_ section: String, _ metric: String, _ samples: Samples, baseline: Samples?,
                 p50Ratio: Double? = nil, p50Allowance: (nanos: UInt64, what: String)? = nil,
                 p99Limit: UInt64? = nil, p99Ratio: Double? = nil) {
        for (label, value, base) in [("p50", samples.p50, baseline?.p50), ("p99", samples.p99, baseline?.p99)] {
            var target = "–"
            var met: Bool?
            let ratio = base.map { $0 > 0 ? Double(value) / Double($0) : 0 }
            if label == "p50", let limit = p50Ratio, let allowance = p50Allowance, let base {
                let budget = UInt64(limit * Double(base)) + allowance.nanos
                target = "≤ \(fixed(limit, 1))x raw + \(allowance.what) \(formatNanos(allowance.nanos)) "
                    + "= \(formatNanos(budget))"
                met = value <= budget
            } else if label == "p50", let limit = p50Ratio, let ratio {
                target = "≤ \(fixed(limit, 1))x raw"
                met = ratio <= limit
            }
            if label == "p99", let limit = p99Limit {
                target = "≤ \(formatNanos(limit))"
                met = value <= limit
            }
            if label == "p99", let limit = p99Ratio, let ratio {
                target = "≤ \(fixed(limit, 1))x raw"
                met = ratio <= limit
            }
            add(section, "\(metric) \(label) (n=\(grouped(samples.count)))", value: formatNanos(value),
                baseline: base.map(formatNanos) ?? "–", ratio: ratio.map { fixed($0, 2) + "x" } ?? "–",
                target: target, met: met)
        }
    }

    func failed(_ section: String, _ what: String, _ error: any Error) {
        add(section, what, value: "failed: \(error)")
        notes.append("\(section): \(what) failed: \(error)")
    }

    func note(_ text: String) {
        notes.append(text)
        print("  note: \(text)")
    }

    /// The table as Markdown, for the terminal and BENCHMARKS.md alike.
    func markdown() -> String {
        var lines = ["| section | figure | value | baseline (same run) | ratio | target | |",
                     "|---|---|---|---|---|---|---|"]
        for row in rows {
            let cells = [row.section, row.metric, row.value, row.baseline, row.ratio, row.target, row.verdict]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        if !notes.isEmpty {
            lines.append("")
            lines.append("Notes:")
            for note in notes { lines.append("- \(note)") }
        }
        return lines.joined(separator: "\n")
    }
}
