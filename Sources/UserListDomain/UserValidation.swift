import Foundation

/// The rules a user's editable fields must meet before any store sees them.
public enum UserValidation {
    public static let maximumNameLength = 200

    /// Returns the name as it will be stored (trimmed), or throws a validation error.
    public static func validName(_ raw: String) throws(UserError) -> String {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else {
            throw .validation(field: .name, message: "The name cannot be empty.")
        }
        guard name.count <= maximumNameLength else {
            throw .validation(
                field: .name,
                message: "The name is \(name.count) characters long; at most \(maximumNameLength) are allowed.")
        }
        return name
    }

    /// Plausible, not RFC 5322: one "@", something before it, a dotted domain after it, no spaces.
    public static func validEmail(_ raw: String) throws(UserError) -> String {
        let email = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        let plausible = parts.count == 2
            && !parts[0].isEmpty
            && parts[1].contains(".")
            && !parts[1].hasPrefix(".") && !parts[1].hasSuffix(".")
            && !email.contains(where: \.isWhitespace)
            && email.count <= 254
        guard plausible else {
            throw .validation(field: .email, message: "“\(email)” does not look like an email address.")
        }
        return email
    }
}
