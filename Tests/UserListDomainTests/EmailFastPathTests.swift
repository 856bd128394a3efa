import Testing
@testable import UserListDomain
import UserListTestSupport

/// `validEmail` takes a one-pass check for plain ASCII addresses: for every ASCII text it must
/// accept exactly what the rule-by-rule check accepts.
@Suite struct EmailFastPathTests {
    @Test func theFastPathAcceptsExactlyWhatTheRulesAccept() {
        // Short texts over the bytes that matter: separators, letters, space, a control, DEL.
        let alphabet: [UInt8] = Array("a@.@.b-_ ".utf8) + [0x09, 0x1B, 0x7F]
        var generator = SplitMix64(seed: 7)
        var accepted = 0
        for round in 0..<200_000 {
            let length = round < 5 ? [0, 1, 254, 255, 320][round] : Int.random(in: 0...9, using: &generator)
            var bytes = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }
            if round % 2 == 1 {  // a valid address with up to two bytes changed
                bytes = Array("ab@c.de".utf8)
                for _ in 0..<Int.random(in: 0...2, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = alphabet.randomElement(using: &generator)!
                }
            }
            if round < 5 && length > 3 {  // the length limits: a long valid-looking address
                bytes = Array(repeating: UInt8(ascii: "a"), count: length - 4) + Array("@b.c".utf8)
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let byRules = (try? UserValidation.checkedEmail(text)) != nil
            #expect(UserValidation.isPlainASCIIEmail(text) == byRules, "\(bytes)")
            if byRules { accepted += 1 }
        }
        #expect(accepted > 10_000, "the sample must hold valid addresses too")
        #expect(UserValidation.isPlainASCIIEmail("ada@example.com"))
        #expect(!UserValidation.isPlainASCIIEmail("zoë@example.com"), "not ASCII: the full path decides")
        #expect((try? UserValidation.validEmail("zoë@example.com")) == "zoë@example.com")
    }
}
