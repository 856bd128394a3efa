import Testing
import UserListServer

/// `userlistd --help` (and the man page made from it) names every option with its value, however
/// long the option's name.
@Suite struct HelpTextTests {
    @Test func everyOptionIsShownWholeWithItsHelp() {
        let lines = ConfigParser.helpText(defaults: DaemonConfig(socketPath: "/tmp/x.sock", databasePath: "/tmp/x.db", stateDirectory: "/tmp/x")).split(separator: "\n", omittingEmptySubsequences: false)
        for option in ConfigParser.options {
            let flag = "--\(option.key) \(option.value)"
            guard let at = lines.firstIndex(where: { $0.drop(while: { $0 == " " }).hasPrefix(flag) }) else {
                Issue.record("\(flag) is not in the help")
                continue
            }
            let shown = lines[at].hasSuffix(option.help) || (at + 1 < lines.count && lines[at + 1].hasSuffix(option.help))
            #expect(shown, "the help of \(flag)")
        }
    }
}
