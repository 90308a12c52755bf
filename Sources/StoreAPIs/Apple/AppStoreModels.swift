import Foundation

/// Which App Store Server API to ask: production or sandbox (each has its own base URL).
public enum AppStoreEnvironment: String, Sendable, Equatable, CaseIterable {
    case production = "Production"
    case sandbox = "Sandbox"
}

/// Send Consumption Information's body (`ConsumptionRequest`, the v2 endpoint).
public struct ConsumptionRequest: Sendable, Equatable, Encodable {
    /// `DELIVERED` or why the item was not delivered.
    public enum DeliveryStatus: String, Sendable, Equatable, Encodable {
        case delivered = "DELIVERED"
        case undeliveredQualityIssue = "UNDELIVERED_QUALITY_ISSUE"
        case undeliveredWrongItem = "UNDELIVERED_WRONG_ITEM"
        case undeliveredServerOutage = "UNDELIVERED_SERVER_OUTAGE"
        case undeliveredOther = "UNDELIVERED_OTHER"
    }

    /// The outcome the developer prefers for the refund request.
    public enum RefundPreference: String, Sendable, Equatable, Encodable, CaseIterable {
        case decline = "DECLINE"
        case grantFull = "GRANT_FULL"
        case grantProrated = "GRANT_PRORATED"
    }

    /// Must be true: Apple takes no answer without the customer's consent.
    public var customerConsented: Bool
    public var deliveryStatus: DeliveryStatus
    /// In thousandths of a percent (0…100000); nil leaves it out (required for auto-renewable
    /// subscriptions, which Apple refuses a percentage for).
    public var consumptionPercentage: Int?
    public var sampleContentProvided: Bool
    /// Nil leaves it out.
    public var refundPreference: RefundPreference?

    public init(customerConsented: Bool = true, deliveryStatus: DeliveryStatus, consumptionPercentage: Int? = nil,
                sampleContentProvided: Bool, refundPreference: RefundPreference? = nil) {
        self.customerConsented = customerConsented
        self.deliveryStatus = deliveryStatus
        self.consumptionPercentage = consumptionPercentage
        self.sampleContentProvided = sampleContentProvided
        self.refundPreference = refundPreference
    }
}

/// Get Notification History's filter (`NotificationHistoryRequest`). The dates are required.
public struct NotificationHistoryRequest: Sendable, Equatable, Encodable {
    /// Milliseconds since the epoch; Apple keeps 180 days.
    public var startDate: Int64
    /// Milliseconds since the epoch, after `startDate`.
    public var endDate: Int64
    public var notificationType: String?
    public var notificationSubtype: String?
    public var transactionId: String?
    public var onlyFailures: Bool?

    public init(startDate: Date, endDate: Date, notificationType: String? = nil, notificationSubtype: String? = nil,
                transactionId: String? = nil, onlyFailures: Bool? = nil) {
        self.startDate = Int64((startDate.timeIntervalSince1970 * 1000).rounded(.down))
        self.endDate = Int64((endDate.timeIntervalSince1970 * 1000).rounded(.down))
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.transactionId = transactionId
        self.onlyFailures = onlyFailures
    }
}

/// One page of Get Notification History (`NotificationHistoryResponse`).
public struct NotificationHistoryPage: Sendable, Equatable, Decodable {
    /// Each notification's `signedPayload` (a JWS, not verified here), oldest first.
    public var signedPayloads: [String]
    public var hasMore: Bool
    /// Present when `hasMore`: asks for the next page (with the same request body).
    public var paginationToken: String?

    enum CodingKeys: String, CodingKey {
        case notificationHistory, hasMore, paginationToken
    }

    struct Item: Decodable {
        var signedPayload: String
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        signedPayloads = try (c.decodeIfPresent([Item].self, forKey: .notificationHistory) ?? []).map(\.signedPayload)
        hasMore = try c.decodeIfPresent(Bool.self, forKey: .hasMore) ?? false
        paginationToken = try c.decodeIfPresent(String.self, forKey: .paginationToken).flatMap { $0.isEmpty ? nil : $0 }
    }
}
