import Synchronization

/// Wakes one sleeper early: ``JobRunner/runForever(interval:doorbell:)`` waits on it between
/// looks for due jobs, and whoever writes jobs in the same process (the webhook dispatcher in
/// `ledger serve`) rings it, so a new job runs at once instead of at the runner's next look. A
/// ring while nobody waits ends the next wait at once; rings never queue up beyond one.
public final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    public init() {}

    /// Ends the current wait, or the next one when nobody waits.
    public func ring() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.rung = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns when the bell rings (or rang since the last wait), after `timeout`, or when the
    /// task is cancelled. One waiter at a time.
    public func wait(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // Only a timeout that ran out rings: a cancelled one was ended by a ring.
                if (try? await Task.sleep(for: timeout)) != nil { self.ring() }
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { state -> Bool in
                        if state.rung {
                            state.rung = false
                            return true
                        }
                        state.waiter = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                ring()
            }
            group.cancelAll()
        }
    }
}
