import Testing
import UserListWire

/// Cases from RFC 6902 appendix A, plus pointer escaping from RFC 6901.
@Suite struct JSONPatchApplyTests {
    func apply(_ doc: String, _ patch: String) throws -> JSONValue {
        let ops = try JSONValue(parsing: patch).arrayValue!.map { try PatchOperation(json: $0) }
        return try JSONPatch.apply(ops, to: try JSONValue(parsing: doc))
    }
    func json(_ text: String) throws -> JSONValue { try JSONValue(parsing: text) }

    @Test func rfcExamples() throws {
        #expect(try apply(#"{"foo":"bar"}"#, #"[{"op":"add","path":"/baz","value":"qux"}]"#) == json(#"{"baz":"qux","foo":"bar"}"#))
        #expect(try apply(#"{"foo":["bar","baz"]}"#, #"[{"op":"add","path":"/foo/1","value":"qux"}]"#) == json(#"{"foo":["bar","qux","baz"]}"#))
        #expect(try apply(#"{"baz":"qux","foo":"bar"}"#, #"[{"op":"remove","path":"/baz"}]"#) == json(#"{"foo":"bar"}"#))
        #expect(try apply(#"{"foo":["bar","qux","baz"]}"#, #"[{"op":"remove","path":"/foo/1"}]"#) == json(#"{"foo":["bar","baz"]}"#))
        #expect(try apply(#"{"baz":"qux","foo":"bar"}"#, #"[{"op":"replace","path":"/baz","value":"boo"}]"#) == json(#"{"baz":"boo","foo":"bar"}"#))
        #expect(try apply(#"{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}"#,
                          #"[{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]"#)
                == json(#"{"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}"#))
        #expect(try apply(#"{"foo":["all","grass","cows","eat"]}"#, #"[{"op":"move","from":"/foo/1","path":"/foo/3"}]"#)
                == json(#"{"foo":["all","cows","eat","grass"]}"#))
        #expect(try apply(#"{"baz":"qux","foo":["a",2,"c"]}"#, #"[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]"#)
                == json(#"{"baz":"qux","foo":["a",2,"c"]}"#))
        #expect(throws: PatchError.self) { try apply(#"{"baz":"qux"}"#, #"[{"op":"test","path":"/baz","value":"bar"}]"#) }
        #expect(try apply(#"{"foo":"bar"}"#, #"[{"op":"add","path":"/child","value":{"grandchild":{}}}]"#) == json(#"{"foo":"bar","child":{"grandchild":{}}}"#))
        #expect(throws: PatchError.self) { try apply(#"{"foo":"bar"}"#, #"[{"op":"add","path":"/baz/bat","value":"qux"}]"#) }
        #expect(try apply(#"{"foo":["bar"]}"#, #"[{"op":"add","path":"/foo/-","value":["abc","def"]}]"#) == json(#"{"foo":["bar",["abc","def"]]}"#))
        #expect(try apply(#"{"/":9,"~1":10}"#, #"[{"op":"test","path":"/~01","value":10}]"#) == json(#"{"/":9,"~1":10}"#))
        #expect(try apply(#"{"foo":1}"#, #"[{"op":"copy","from":"/foo","path":"/bar"}]"#) == json(#"{"foo":1,"bar":1}"#))
        #expect(try apply(#"{"foo":1}"#, #"[{"op":"replace","path":"","value":[1]}]"#) == json("[1]"))
    }

    @Test func rejectsBadIndicesAndPaths() {
        #expect(throws: PatchError.self) { try apply(#"[1,2]"#, #"[{"op":"add","path":"/3","value":0}]"#) }
        #expect(throws: PatchError.self) { try apply(#"[1,2]"#, #"[{"op":"remove","path":"/01"}]"#) }
        #expect(throws: PatchError.self) { try apply(#"[1,2]"#, #"[{"op":"remove","path":"/-"}]"#) }
        #expect(throws: PatchError.self) { try apply(#"[1,2]"#, #"[{"op":"replace","path":"/2","value":0}]"#) }
        #expect(throws: PatchError.self) { try apply(#"{"a":{"b":1}}"#, #"[{"op":"move","from":"/a","path":"/a/b/c"}]"#) }
        #expect(throws: PatchError.self) { try apply(#"{"a":1}"#, #"[{"op":"add","path":"/a/b","value":1}]"#) }
        #expect(throws: PatchError.self) { try apply(#"{"a":1}"#, #"[{"op":"remove","path":"/b"}]"#) }
    }

    @Test func failureLeavesTheOriginalUntouched() throws {
        let doc: JSONValue = ["a": [1, 2, 3]]
        #expect(throws: PatchError.self) {
            _ = try JSONPatch.apply([.remove(path: "/a/0"), .remove(path: "/missing")], to: doc)
        }
        #expect(doc == ["a": [1, 2, 3]])
    }

    @Test func pointerEscaping() {
        let pointer = JSONPointer(tokens: ["a/b", "c~d", ""])
        #expect(pointer.description == "/a~1b/c~0d/")
        #expect(JSONPointer(parsing: pointer.description) == pointer)
        #expect(JSONPointer(parsing: "no-slash") == nil)
        #expect(JSONPointer(parsing: "/bad~2") == nil)
        #expect(JSONPointer(parsing: "") == .root)
    }
}
