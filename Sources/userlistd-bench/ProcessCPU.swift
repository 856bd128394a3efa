import Foundation

/// The CPU time a process's threads have run, from /proc/PID/task/*/schedstat (nanoseconds,
/// exact, unlike the clock ticks of /proc/PID/stat). Read before and after a measured stretch.
enum ProcessCPU {
    static func nanoseconds(pid: Int32) -> UInt64? {
        let tasks = "/proc/\(pid)/task"
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: tasks) else { return nil }
        var total: UInt64 = 0
        for thread in threads {
            // A thread that ended meanwhile has no file: its time is gone from the sum either way.
            guard let text = try? String(contentsOfFile: "\(tasks)/\(thread)/schedstat", encoding: .utf8),
                  let onCPU = text.split(separator: " ").first.flatMap({ UInt64($0) }) else { continue }
            total += onCPU
        }
        return total
    }
}
