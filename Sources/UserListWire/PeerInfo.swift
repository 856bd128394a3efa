/// Who is on the other end, for logs and bug reports: the program's name and build.
public struct PeerInfo: Sendable, Hashable {
    public var name: String
    public var build: String

    public init(name: String, build: String) {
        self.name = name
        self.build = build
    }

    var json: JSONValue { ["name": .string(name), "build": .string(build)] }

    init(_ reader: FieldReader) throws(MessageError) {
        self.name = try reader.string("name")
        self.build = try reader.string("build")
    }
}
