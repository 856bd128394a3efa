import UserListWire

/// Aligned columns for people (`sessions`, `status`, `list`): widths measured in terminal
/// columns, cells escaped by `TerminalText`, numbers right-aligned.
struct Table {
    var headers: [String]
    var rows: [[String]]
    /// Columns whose cells are right-aligned.
    var numeric: Set<Int> = []

    func render(style: Style) -> String {
        let cells = rows.map { $0.map(TerminalText.visible) }
        var widths = headers.map { DisplayWidth.of($0) }
        for row in cells {
            for (column, cell) in row.enumerated() where column < widths.count {
                widths[column] = max(widths[column], DisplayWidth.of(cell))
            }
        }
        func line(_ row: [String]) -> String {
            row.enumerated().map { column, cell in
                let gap = String(repeating: " ", count: max(0, widths[column] - DisplayWidth.of(cell)))
                if column == row.count - 1 && !numeric.contains(column) { return cell }
                return numeric.contains(column) ? gap + cell : cell + gap
            }.joined(separator: "  ")
        }
        var out = [style.bold(line(headers))]
        out += cells.map(line)
        return out.joined(separator: "\n")
    }

    /// A JSON scalar as a cell: strings as they are, numbers as written, null as "-".
    static func cell(_ value: JSONValue?) -> String {
        switch value {
        case nil, .null?: return "-"
        case .string(let text)?: return text
        case .bool(let flag)?: return flag ? "yes" : "no"
        case .double(let number)?: return number.rounded() == number ? String(Int(number)) : String(format1(number))
        case let other?: return other.description
        }
    }

    private static func format1(_ number: Double) -> String {
        let tenths = (number * 10).rounded() / 10
        return String(tenths)
    }
}
