import Synchronization

/// What a ``HangUpHandler`` calls once when the client goes away, unless disarmed first.
final class HangUpWatch: Sendable {
    private let action: Mutex<(@Sendable () -> Void)?>

    init(_ action: @escaping @Sendable () -> Void) {
        self.action = Mutex(action)
    }

    /// Runs the action, once.
    func fire() {
        let action = action.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }

    /// The work ended: the action never runs.
    func disarm() {
        action.withLock { $0 = nil }
    }

    /// True once fired or disarmed.
    var isDone: Bool {
        action.withLock { $0 == nil }
    }
}
