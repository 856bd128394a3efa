import Foundation
import Testing
import UserListDomain

/// Validation trims names, emails and avatar URLs without Foundation (an import validates
/// millions of fields); what it trims must be exactly what Foundation's
/// `.whitespacesAndNewlines` trims, so stored data does not change with the speed-up.
@Suite struct TrimmingTests {
    /// Every scalar Foundation calls white space or a newline, and a few it does not.
    static let edges: [String] = (0...0xFFFF).compactMap { value -> String? in
        guard let scalar = Unicode.Scalar(value),
              CharacterSet.whitespacesAndNewlines.contains(scalar) || [0x200B, 0x180E, 0xFEFF, 0x2060].contains(value)
        else { return nil }
        return String(scalar)
    }

    @Test func namesAreTrimmedExactlyAsFoundationTrimsThem() throws {
        #expect(Self.edges.count > 20)
        for edge in Self.edges {
            for raw in [edge + "Ada" + edge, edge + edge + "Ada Lovelace", "Zoë" + edge, "A" + edge + "B"] {
                let expected = raw.trimmingCharacters(in: .whitespacesAndNewlines)
                if expected.isEmpty || expected.unicodeScalars.contains(where: UserValidation.isForbidden) { continue }
                #expect(try UserValidation.validName(raw) == expected, "U+\(String(edge.unicodeScalars.first!.value, radix: 16))")
            }
        }
    }

    @Test func aNameOfWhiteSpaceAloneIsEmpty() {
        #expect(throws: UserError.self) { try UserValidation.validName(" \u{A0}\u{3000}\u{2028} ") }
    }

    @Test func anEmailWithWhiteSpaceInsideIsRefusedAndAroundItIsTrimmed() throws {
        #expect(try UserValidation.validEmail("\u{3000}ada@example.com\u{A0}") == "ada@example.com")
        #expect(throws: UserError.self) { try UserValidation.validEmail("ada\u{A0}byron@example.com") }
        #expect(throws: UserError.self) { try UserValidation.validEmail("ada byron@example.com") }
    }
}
