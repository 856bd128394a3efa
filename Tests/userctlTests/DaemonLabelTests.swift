import Testing
@testable import userctl

/// The wordings of the daemon in the TUI's title line (#48 item 5), longest that fits first.
@Suite struct DaemonLabelTests {
    let privateOne = DaemonLabel(kind: .perUser, socket: "/run/user/1000/userlistd.sock", pid: 4242)

    @Test func theWholePathWhenItFits() {
        #expect(privateOne.text(fitting: 80) == "private daemon pid 4242, /run/user/1000/userlistd.sock")
        #expect(DaemonLabel(kind: .named, socket: "/tmp/d/sock", pid: 7).text(fitting: 80) == "daemon pid 7, /tmp/d/sock")
        #expect(DaemonLabel(kind: .system, socket: DaemonLocator.systemSocket).text(fitting: 80)
                == "system daemon, /run/userlistd/userlistd.sock")
    }

    @Test func thePathsEndThenNoPathThenThePidAlone() {
        #expect(privateOne.text(fitting: 40) == "private daemon pid 4242, …userlistd.sock")
        #expect(privateOne.text(fitting: 25) == "private daemon pid 4242")
        #expect(privateOne.text(fitting: 18) == "private pid 4242")
        #expect(privateOne.text(fitting: 3) == "pid 4242", "never shorter than the shortest")
        #expect(DaemonLabel(kind: .system, socket: DaemonLocator.systemSocket).text(fitting: 20) == "system daemon")
        #expect(DaemonLabel(kind: .system, socket: DaemonLocator.systemSocket).text(fitting: 8) == "system")
    }

    @Test func beforeThePidIsKnown() {
        let unknown = DaemonLabel(kind: .perUser, socket: "/run/user/1000/userlistd.sock")
        #expect(unknown.text(fitting: 80) == "private daemon, /run/user/1000/userlistd.sock")
        #expect(unknown.text(fitting: 10) == "private")
    }
}
