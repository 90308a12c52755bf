/// A place in the event feed: the position of the last event read in each node group's order
/// (``CatchUpReader``), at most one per group. On one server, and on a cluster whose commands
/// run through its coordinator, there is one group, and a cursor is one position: the last event
/// read. Its text, the feed's `after` and `cursor`, is the positions joined by commas (`0`: the
/// start).
///
/// ```swift
/// var cursor = EventCursor.start
/// for try await event in ledger.eventFeed(after: cursor) {
///     try await handle(event)
///     cursor.advance(past: event)   // store cursor.description to resume after a restart
/// }
/// ```
public struct EventCursor: Sendable, Hashable, CustomStringConvertible {
    /// One position per node group that has been read, in group order.
    public private(set) var positions: [Int64]

    /// The longest text form read: room for a position (up to 19 digits and a comma) of each of
    /// 200 node groups.
    public static let maxTextLength = 4000

    /// Before every event.
    public static let start = EventCursor(positions: [])

    /// Positions already one per node group and in group order (a reader's checkpoints').
    init(positions: [Int64]) {
        self.positions = positions
    }

    /// After the event at `position` in its group's order (0: the start); other groups from
    /// their start.
    public init(position: Int64) {
        self.positions = position > 0 ? [position] : []
    }

    /// Reads the text form: positions, 0 or more, joined by commas, at most one per node group
    /// (`0` alone is the start). Throws ``LedgerError`` `INVALID_INPUT` naming `field`.
    public init(parsing text: some StringProtocol, field: String = "after") throws(LedgerError) {
        guard text.utf8.count <= Self.maxTextLength else {
            throw LedgerError.invalid(field, "expected at most \(Self.maxTextLength) characters, got \(text.utf8.count)")
        }
        var byGroup: [Int64: Int64] = [:]
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard !part.isEmpty, part.utf8.allSatisfy({ (48...57).contains($0) }), let position = Int64(part) else {
                throw LedgerError.invalid(field, "expected positions, 0 or more, joined by commas, got \"\(text)\"")
            }
            if position == 0 { continue }
            let group = position >> CatchUpReader.groupShift
            if let other = byGroup[group] {
                throw LedgerError.invalid(field, "positions \(other) and \(position) are of one node group (\(group)); a cursor has one per group")
            }
            byGroup[group] = position
        }
        self.positions = byGroup.keys.sorted().map { byGroup[$0]! }
    }

    /// The text form: the positions joined by commas, or `0` for the start.
    public var description: String {
        positions.isEmpty ? "0" : positions.map(String.init).joined(separator: ",")
    }

    /// Moves the cursor past `event`, in the event's node group.
    public mutating func advance(past event: CatchUpReader.Event) {
        let group = event.position >> CatchUpReader.groupShift
        if let index = positions.firstIndex(where: { $0 >> CatchUpReader.groupShift == group }) {
            positions[index] = event.position
        } else {
            positions.append(event.position)
            positions.sort()
        }
    }

    /// The cursor past `events`, in order.
    public func advanced(past events: some Sequence<CatchUpReader.Event>) -> EventCursor {
        var cursor = self
        for event in events { cursor.advance(past: event) }
        return cursor
    }
}
