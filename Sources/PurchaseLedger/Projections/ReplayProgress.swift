/// Where a rebuild or a verify is, for a progress display. Reported after each replay batch and
/// at each change of phase.
public struct ReplayProgress: Sendable, Hashable {
    /// The steps of a rebuild (`replaying`, `catchingUp`, `swapping`) and of a verify
    /// (`replaying`, `comparing`).
    public enum Phase: String, Sendable, Hashable {
        /// Applying the log, batch by batch, to the shadow tables.
        case replaying = "replaying"
        /// Building the shadow tables' secondary indexes after the bulk load.
        case indexing = "indexing"
        /// Applying, without locks, the events appended since the replay's snapshot.
        case catchingUp = "catching up"
        /// Under a short lock: the last events, then the swap.
        case swapping = "swapping"
        /// Comparing the shadow tables with the live ones.
        case comparing = "comparing"
    }

    /// The current step.
    public var phase: Phase
    /// Events applied to the shadow tables so far.
    public var eventsDone: Int
    /// Events the replay covers (those visible when it started; the catch-up adds the rest).
    public var eventsTotal: Int
}
