import Postgres

/// Re-verifies the proof kept with every App Store notification (`ledger verify
/// --signatures`): each `NotificationReceived` event holds the `signedPayload` exactly as Apple
/// sent it, and this checks it again, the outer JWS and the nested transaction and renewal info,
/// against the roots given, at the payload's own `signedDate` (so it holds years later, after
/// the certificates expired), with the same code that checked it on arrival
/// (`AppleNotificationDecoder.verifySignatures`). It also checks that the signed payload is this
/// event's: its `notificationUUID` is the event's `notificationId`.
///
/// Google Play's push bodies carry no signature of their own (the push endpoint authenticates
/// the caller), so they are counted, not verified. The bundle ids and environments are not
/// checked again: they are today's configuration, not a property of the proof.
public struct StoredSignatureAudit {
    /// At most this many failures are described (the first ones by position).
    public var limit: Int
    /// Events read per query.
    public var batchSize: Int
    let connection: Connection
    let roots: AppleRootCertificates

    public init(connection: Connection, roots: AppleRootCertificates, limit: Int = 1000, batchSize: Int = 1000) {
        self.connection = connection
        self.roots = roots
        self.limit = max(1, limit)
        self.batchSize = max(1, batchSize)
    }

    /// Reads every notification event in position order, in one snapshot, calling `progress`
    /// with the number read so far after each batch.
    public func verify(progress: (Int) -> Void = { _ in }) throws -> SignatureReport {
        try connection.repeatableRead { c in
            var report = SignatureReport()
            var after: Int64 = 0
            while true {
                let rows = try c.query("""
                    SELECT e.position, e.data->>'storeCode' AS store_code, e.data->>'notificationId' AS notification_id,
                           e.data->'received'->>'signedPayload' AS signed_payload
                      FROM ledger.events e
                     WHERE e.type = \(EventType.notificationReceived.rawValue) AND e.position > \(after)
                     ORDER BY e.position
                     LIMIT \(batchSize)
                    """)
                if rows.isEmpty { return report }
                for row in rows {
                    let position: Int64 = try row.decode("position")
                    after = position
                    let notificationId: String = try row.decode("notification_id", as: String?.self) ?? ""
                    guard try row.decode("store_code", as: String?.self) == StoreCode.appStore.rawValue else {
                        report.unsigned += 1
                        continue
                    }
                    report.checked += 1
                    if let problem = check(try row.decode("signed_payload", as: String?.self), notificationId: notificationId) {
                        report.failed += 1
                        if report.failures.count < limit {
                            report.failures.append(SignatureFailure(position: position, notificationId: notificationId,
                                                                    detail: problem))
                        }
                    }
                }
                progress(report.checked + report.unsigned)
                if rows.count < batchSize { return report }
            }
        }
    }

    /// Why the kept payload does not prove the event, or nil when it does.
    private func check(_ signedPayload: String?, notificationId: String) -> String? {
        guard let signedPayload else { return "no signedPayload kept in data.received" }
        let parts: AppleNotificationDecoder.SignedParts
        do {
            parts = try AppleNotificationDecoder.verifySignatures(signedPayload, roots: roots)
        } catch {
            return error.description
        }
        let uuid = (try? parts.payload.optionalString("notificationUUID", maxLength: 128)) ?? nil
        guard uuid == notificationId else {
            let signed = uuid.map { "\"\($0)\"" } ?? "missing"
            return "signedPayload.notificationUUID: \(signed), not the event's notificationId \"\(notificationId)\""
        }
        return nil
    }
}

/// The result of ``StoredSignatureAudit/verify(progress:)``.
public struct SignatureReport: Sendable, Hashable {
    /// App Store notifications whose kept signedPayload was verified again.
    public var checked = 0
    /// Of those, how many failed.
    public var failed = 0
    /// Google Play notifications, which carry no signature of their own.
    public var unsigned = 0
    /// The first failures by position (at most the audit's limit).
    public var failures: [SignatureFailure] = []

    /// True when every kept signature still holds.
    public var isIntact: Bool { failed == 0 }
}

/// A kept notification whose proof does not hold.
public struct SignatureFailure: Sendable, Hashable {
    /// The `NotificationReceived` event's position.
    public var position: Int64
    /// Its `notificationUUID`, as the event names it.
    public var notificationId: String
    /// The check that failed, named as on arrival (`SIGNATURE_INVALID: signedPayload...`).
    public var detail: String
}
