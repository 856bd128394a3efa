// swift-tools-version:6.0
// The target graph is the architecture: an import that breaks the dependency rule does not compile.
//
//   UserListDomain        <- nothing
//   UserListData          <- Domain, ThreadLocks, CSQLite, CLibPQ, CCurlLoader
//   UserListPresentation  <- Domain
//   UserListWire          <- nothing of ours (the wire protocol)
//   UserListServer        <- Domain, Presentation, Wire, ThreadLocks, CSystemd
//   UserListClient        <- Wire, ThreadLocks
//   ThreadLocks           <- nothing (the one lock type, a pthread mutex TSan sees)
//   userlistd, userctl    <- composition roots: they alone see everything
import PackageDescription

let package = Package(
    name: "userlistd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "userlistd", targets: ["userlistd"]),
        .executable(name: "userctl", targets: ["userctl"]),
    ],
    targets: [
        // MARK: system libraries (Debian -dev packages, found by pkg-config)
        .systemLibrary(
            name: "CSystemd", pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),

        // Linux calls the Glibc module leaves out (epoll, eventfd, SO_PEERCRED).
        .target(name: "CLinuxIO"),
        // The PostgreSQL store's libpq, loaded on its first connection rather than linked (see its header).
        .target(name: "CLibPQ"),
        // The REST source's HTTP: libcurl loaded on first use, not linked (see its header).
        .target(name: "CCurlLoader"),
        // userlistd only: catches the daemon's signals from before any thread starts (see its header).
        .target(name: "CDaemonSignals"),

        // The one lock type (a pthread mutex ThreadSanitizer can see); no dependencies.
        .target(name: "ThreadLocks"),

        // MARK: layers
        .target(name: "UserListDomain"),
        .target(name: "UserListData", dependencies: ["UserListDomain", "ThreadLocks", "CSQLite", "CLibPQ", "CCurlLoader"], exclude: ["DURABILITY.md", "REST.md"]),
        .target(name: "UserListPresentation", dependencies: ["UserListDomain"]),
        // libm: the wire target uses rounding functions but imports neither Foundation nor Glibc.
        .target(name: "UserListWire", linkerSettings: [.linkedLibrary("m")]),
        .target(
            name: "UserListServer",
            dependencies: ["UserListDomain", "UserListPresentation", "UserListWire", "ThreadLocks", "CSystemd", "CLinuxIO"]),
        .target(name: "UserListClient", dependencies: ["UserListWire", "ThreadLocks"]),

        // MARK: composition roots
        .executableTarget(
            name: "userlistd",
            dependencies: ["UserListDomain", "UserListData", "UserListPresentation", "UserListServer", "CDaemonSignals", "CLinuxIO"]),
        .executableTarget(name: "userctl", dependencies: ["UserListClient", "UserListWire", "ThreadLocks"]),
        .executableTarget(name: "userlistd-bench-store", dependencies: ["UserListData", "UserListDomain"]),
        // UserListTestSupport: the store section starts a scratch PostgreSQL as the tests do.
        .executableTarget(name: "userlistd-bench", dependencies: ["UserListWire", "UserListDomain", "UserListData", "CLinuxIO", "UserListTestSupport"]),

        // MARK: tests mirror the sources
        // Helpers several test targets share (a real daemon child process, a seeded PRNG).
        .target(name: "UserListTestSupport", dependencies: ["ThreadLocks", "UserListClient"],
                path: "Tests/UserListTestSupport"),
        .testTarget(name: "ThreadLocksTests", dependencies: ["ThreadLocks", "UserListTestSupport"]),
        .testTarget(name: "UserListDomainTests", dependencies: ["UserListDomain", "UserListTestSupport"]),
        .testTarget(name: "UserListDataTests", dependencies: ["UserListData", "UserListDomain", "UserListTestSupport", "ThreadLocks"]),
        .testTarget(
            name: "UserListPresentationTests",
            dependencies: ["UserListPresentation", "UserListDomain", "ThreadLocks", "UserListTestSupport"]),
        .testTarget(name: "UserListWireTests", dependencies: ["UserListWire", "UserListTestSupport"]),
        .testTarget(
            name: "UserListServerTests",
            dependencies: ["UserListServer", "UserListPresentation", "UserListDomain", "UserListWire", "UserListData", "UserListClient", "ThreadLocks", "UserListTestSupport"],
            exclude: ["Scripts"]),
        .testTarget(name: "UserListClientTests", dependencies: ["UserListClient", "UserListWire", "UserListTestSupport"]),
        .testTarget(name: "userctlTests", dependencies: ["userctl", "UserListClient", "UserListWire", "UserListTestSupport"]),
        .testTarget(name: "FaultTests", dependencies: ["UserListWire", "UserListServer", "CSQLite", "UserListTestSupport", "ThreadLocks"], exclude: ["Corpus"]),
    ],
    swiftLanguageModes: [.v6]
)

// Strict settings for every Swift target, in one place.
for target in package.targets where target.type != .system && !["CLinuxIO", "CDaemonSignals"].contains(target.name) {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
