extension ConnectionPool {
    /// An idle connection, a new one (opened off the cooperative pool), or a wait in line for either.
    func checkOut() async throws -> PooledConnection {
        switch try await lease() {
        case .idle(let pooled):
            return pooled
        case .create:
            do {
                return try await PooledConnection.open(configuration)
            } catch {
                checkIn(nil)  // give the slot back (perhaps to a waiter, which then tries to connect itself)
                throw error
            }
        }
    }

    /// Takes a lease now, or queues a continuation that `checkIn` resumes in FIFO order.
    private func lease() async throws -> Lease {
        let id = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Lease, any Error>) in
                let immediate: Result<Lease, any Error>? = state.withLock { state in
                    if state.isClosed { return .failure(PostgresError.poolClosed) }
                    // Checked under the lock: a cancellation after this point finds the waiter in `onCancel`.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if let pooled = state.idle.popLast() { return .success(.idle(pooled)) }
                    if state.open < size {
                        state.open += 1
                        return .success(.create)
                    }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                state.waiters.firstIndex { $0.id == id }.map { state.waiters.remove(at: $0) }
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Returns a connection to the pool, or with nil gives up its slot (the connection was dropped).
    /// The first waiter, if any, gets the connection or the slot.
    func checkIn(_ pooled: PooledConnection?) {
        enum Next {
            case resume(Waiter, Lease)
            case close(PooledConnection)
            case nothing
        }
        let next: Next = state.withLock { state in
            if state.isClosed {
                state.open -= 1
                return pooled.map(Next.close) ?? .nothing
            }
            if !state.waiters.isEmpty {
                return .resume(state.waiters.removeFirst(), pooled.map(Lease.idle) ?? .create)
            }
            if let pooled { state.idle.append(pooled) } else { state.open -= 1 }
            return .nothing
        }
        switch next {
        case .resume(let waiter, let lease): waiter.continuation.resume(returning: lease)
        case .close(let pooled): pooled.queue.async { pooled.connection.close() }
        case .nothing: break
        }
    }
}
