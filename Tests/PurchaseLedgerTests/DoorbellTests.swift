import Foundation
import PurchaseLedger
import Testing

/// The doorbell a job runner waits on between looks: a ring ends the wait, a ring with nobody
/// waiting ends the next one, and a cancelled waiter goes. The bounds are a minute against
/// waits of an hour, so only a wait that the ring did not end can fail them (at the suite's
/// time limit rather than an hour later).
@Suite("Doorbell", .timeLimit(.minutes(2)))
struct DoorbellTests {
    @Test func aRingEndsTheWaitLongBeforeItsTimeout() async throws {
        let bell = Doorbell()
        let started = ContinuousClock.now
        let waiter = Task { await bell.wait(timeout: .seconds(3600)) }
        try await Task.sleep(for: .milliseconds(100))
        bell.ring()
        await waiter.value
        #expect(ContinuousClock.now - started < .seconds(60))
    }

    @Test func aRingWithNobodyWaitingEndsTheNextWaitOnlyOnce() async throws {
        let bell = Doorbell()
        bell.ring()
        bell.ring()
        let started = ContinuousClock.now
        await bell.wait(timeout: .seconds(3600))
        #expect(ContinuousClock.now - started < .seconds(60))
        // The two rings were one: the next wait lasts until its timeout.
        let second = ContinuousClock.now
        await bell.wait(timeout: .milliseconds(300))
        #expect(ContinuousClock.now - second >= .milliseconds(300))
    }

    @Test func aWaitEndsAtItsTimeoutWithoutARing() async {
        let bell = Doorbell()
        let started = ContinuousClock.now
        await bell.wait(timeout: .milliseconds(200))
        #expect(ContinuousClock.now - started >= .milliseconds(200))
    }

    @Test func cancellingTheWaiterEndsTheWait() async throws {
        let bell = Doorbell()
        let started = ContinuousClock.now
        let waiter = Task { await bell.wait(timeout: .seconds(3600)) }
        try await Task.sleep(for: .milliseconds(100))
        waiter.cancel()
        await waiter.value
        #expect(ContinuousClock.now - started < .seconds(60))
    }
}
