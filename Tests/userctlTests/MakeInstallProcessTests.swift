import Foundation
import Glibc
import Testing
import UserListTestSupport

/// Issue 27 item 6: `make install` puts bash and zsh completion where Debian's shells look, and
/// `make uninstall` takes them away again. Runs the Makefile into a temporary DESTDIR with the
/// debug binaries (RELEASE_DIR=…: `make release` is too slow for a test; install itself does
/// not build either way).
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(2)),
       .disabled(if: RealDaemon.skipReason != nil || !FileManager.default.isExecutableFile(atPath: "/usr/bin/make"),
                 "needs make and a built userctl"))
struct MakeInstallProcessTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static func make(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try TUIHarness.run("/usr/bin/make", ["-s", "-C", root] + arguments)
    }

    @Test(arguments: ["/usr/local", "/usr"])
    func installAndUninstallShellCompletion(prefix: String) throws {
        let products = try #require(RealDaemon.productsDirectory)
        let destination = "/tmp/ulct-install-\(getpid())-" + String(UUID().uuidString.prefix(8))
        defer { try? FileManager.default.removeItem(atPath: destination) }
        let common = ["DESTDIR=\(destination)", "PREFIX=\(prefix)", "RELEASE_DIR=\(products)"]
        let bash = destination + prefix + "/share/bash-completion/completions/userctl"
        let zsh = destination + prefix + (prefix == "/usr" ? "/share/zsh/vendor-completions/_userctl" : "/share/zsh/site-functions/_userctl")

        let install = try Self.make(["install"] + common)
        #expect(install.status == 0, "\(install.output)")
        let bashScript = try String(contentsOfFile: bash, encoding: .utf8)
        #expect(bashScript.contains("complete -F _userctl userctl"), "bash completion installed at \(bash)")
        #expect(try String(contentsOfFile: zsh, encoding: .utf8).hasPrefix("#compdef userctl"), "zsh completion installed at \(zsh)")
        for path in [bash, zsh] {
            let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? 0
            #expect(mode == 0o644, "\(path) is world-readable, not executable: \(String(mode, radix: 8))")
        }
        if FileManager.default.isExecutableFile(atPath: "/bin/bash") {
            let loaded = try TUIHarness.run("/bin/bash", ["-c", "source \(bash) && complete -p userctl"])
            #expect(loaded.status == 0 && loaded.output.contains("-F _userctl"), "bash loads it: \(loaded.output)")
        }

        let uninstall = try Self.make(["uninstall"] + common)
        #expect(uninstall.status == 0, "\(uninstall.output)")
        #expect(!FileManager.default.fileExists(atPath: bash) && !FileManager.default.fileExists(atPath: zsh), "both removed")
        #expect(!FileManager.default.fileExists(atPath: destination + prefix + "/bin/userctl"), "and the binary")
    }
}
