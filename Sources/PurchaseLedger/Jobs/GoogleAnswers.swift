import Crypto
import Foundation
import LedgerJSON
import StoreAPIs

/// What the Play Developer API's answers teach the ledger (docs/contract.md §6.3): the payment an
/// answer describes, as a `learnedPayment` notification that `ledger.notify` applies (owner,
/// parking, duplicates, lineage, product type and a missing price are the database's to decide,
/// as for every notification), and the acknowledgement the answer asks for.
enum GoogleAnswers {
    /// `purchases.subscriptionsv2.get`: the line item of the notification's product; its
    /// `latestSuccessfulOrderId` is the payment's transaction and paymentSeq; the lineage is the
    /// token's, else the order id without its `..N` renewal suffix; the price is the line item's
    /// recurring price (else the lineage's latest, in the database).
    static func subscription(_ answer: SubscriptionPurchaseV2, job: ClaimedJob, token: String) throws -> (StoreNotification, [StoreJob]) {
        let product = job.args["subscriptionId"].flatMap { $0.isEmpty ? nil : $0 }
        guard let item = product.flatMap(answer.lineItem(productId:)) ?? answer.lineItems.first else {
            throw JobRunner.PermanentFailure(description: "subscriptionsv2: the answer has no line item")
        }
        guard let order = item.latestSuccessfulOrderId ?? answer.latestOrderId else {
            throw JobRunner.PermanentFailure(description: "subscriptionsv2: the answer has no latestSuccessfulOrderId (nothing was paid)")
        }
        guard let expiry = item.expiryTime else {
            throw JobRunner.PermanentFailure(description: "subscriptionsv2: line item \(item.productId) has no expiryTime")
        }
        var price: (String, String)?
        if let recurring = item.autoRenewingPlan?.recurringPrice {
            guard let decimal = recurring.decimal, Price(decimal) != nil else {
                throw JobRunner.PermanentFailure(description: "subscriptionsv2: recurringPrice \(recurring.units)+\(recurring.nanos) nanos is not a price")
            }
            price = (decimal, recurring.currencyCode)
        }
        let digest = job.args["purchaseTokenSha256"] ?? SHA256.lowercaseHex(of: Array(token.utf8))
        var proof = JSONWriter()
        proof.beginObject()
        proof.field("api", "purchases.subscriptionsv2.get")
        proof.field("latestOrderId", answer.latestOrderId)
        proof.field("subscriptionState", answer.subscriptionState)
        proof.field("acknowledgementState", answer.acknowledgementState)
        proof.field("testPurchase", answer.isTestPurchase)
        proof.field("obfuscatedExternalAccountId", answer.obfuscatedExternalAccountId)
        proof.field("linkedPurchaseTokenSha256", answer.linkedPurchaseToken.map { SHA256.lowercaseHex(of: Array($0.utf8)) })
        proof.key("lineItems")
        proof.beginArray()
        for line in answer.lineItems {
            proof.beginObject()
            proof.field("productId", line.productId)
            proof.field("expiryTime", line.expiryTime.map { Timestamp($0).iso8601Microseconds })
            proof.field("latestSuccessfulOrderId", line.latestSuccessfulOrderId)
            if let plan = line.autoRenewingPlan {
                proof.field("autoRenewEnabled", plan.autoRenewEnabled.map { $0 ? "true" : "false" })
                if let money = plan.recurringPrice {
                    proof.field("recurringPrice", "\(money.units) \(money.nanos) \(money.currencyCode)")
                }
            }
            proof.endObject()
        }
        proof.endArray()
        proof.endObject()

        let eventTime = job.args["eventTime"].flatMap { Timestamp.parseISO8601($0)?.date } ?? Date()
        var notification = learned(job: job, api: "subscriptionsv2", at: eventTime, digest: digest,
                                   account: answer.obfuscatedExternalAccountId, proof: proof.string)
        notification.storeProductType = "subscription"
        notification.originalTransactionId = orderBase(order)
        notification.payment = payment(productId: item.productId, order: order, purchaseTime: eventTime, expiry: expiry,
                                       price: price, test: answer.isTestPurchase, digest: digest)
        let follow = answer.isAcknowledgementPending
            ? [acknowledge(job: job, type: "subscription", productId: item.productId, digest: digest)] : []
        return (notification, follow)
    }

    /// `purchases.productsv2.get`: a consumable, its `orderId` the transaction and paymentSeq,
    /// bought at `purchaseCompletionTime`; its price is the one a `product` line declared.
    static func product(_ answer: ProductPurchaseV2, job: ClaimedJob, token: String) throws -> (StoreNotification, [StoreJob]) {
        guard let order = answer.orderId else {
            throw JobRunner.PermanentFailure(description: "productsv2: the answer has no orderId")
        }
        let sku = job.args["sku"].flatMap { $0.isEmpty ? nil : $0 }
        guard let productId = answer.productIds.first(where: { $0 == sku }) ?? answer.productIds.first ?? sku else {
            throw JobRunner.PermanentFailure(description: "productsv2: the answer names no product")
        }
        let digest = job.args["purchaseTokenSha256"] ?? SHA256.lowercaseHex(of: Array(token.utf8))
        let eventTime = job.args["eventTime"].flatMap { Timestamp.parseISO8601($0)?.date } ?? Date()
        var proof = JSONWriter()
        proof.beginObject()
        proof.field("api", "purchases.productsv2.get")
        proof.field("orderId", order)
        proof.field("purchaseState", answer.purchaseState)
        proof.field("purchaseCompletionTime", answer.purchaseCompletionTime.map { Timestamp($0).iso8601Microseconds })
        proof.field("acknowledgementState", answer.acknowledgementState)
        proof.field("testPurchase", answer.isTestPurchase)
        proof.field("obfuscatedExternalAccountId", answer.obfuscatedExternalAccountId)
        proof.key("productIds")
        proof.beginArray()
        for id in answer.productIds { proof.value(.string(id)) }
        proof.endArray()
        proof.endObject()
        var notification = learned(job: job, api: "productsv2", at: eventTime, digest: digest,
                                   account: answer.obfuscatedExternalAccountId, proof: proof.string)
        notification.storeProductType = "consumable"
        notification.payment = payment(productId: productId, order: order, purchaseTime: answer.purchaseCompletionTime ?? eventTime,
                                       expiry: nil, price: nil, test: answer.isTestPurchase, digest: digest)
        let follow = answer.isAcknowledgementPending
            ? [acknowledge(job: job, type: "product", productId: productId, digest: digest)] : []
        return (notification, follow)
    }

    /// The read of a payment an SDK line recorded (``LedgerCommand/askingStores(_:)``): the
    /// acknowledgement job when the answer says pending, nothing else. The packages are tried in
    /// turn; one that does not know the token (404) passes to the next, the last one's 404 fails
    /// the job for good.
    static func check(job: ClaimedJob, token: String, google: GooglePlayClient) async throws -> [StoreJob] {
        let packages = (job.args["packageName"] ?? "").split(separator: ",").map(String.init)
        let productId = job.args["productId"] ?? ""
        let type = job.args["type"] == "subscription" ? "subscription" : "product"
        let digest = job.args["purchaseTokenSha256"] ?? SHA256.lowercaseHex(of: Array(token.utf8))
        for (index, package) in packages.enumerated() {
            do {
                let pending = type == "subscription"
                    ? try await google.subscriptionV2(packageName: package, token: token).isAcknowledgementPending
                    : try await google.productV2(packageName: package, token: token).isAcknowledgementPending
                return pending ? [acknowledge(package: package, type: type, productId: productId, digest: digest)] : []
            } catch let error as StoreAPIError where error.status == 404 && index < packages.count - 1 {
                continue
            }
        }
        throw JobRunner.PermanentFailure(description: "google.check: no package name to ask about (LEDGER_GOOGLE_PACKAGE_NAMES)")
    }

    /// `GPA.1234-5678-9012-34567..3` → `GPA.1234-5678-9012-34567`: the subscription's first order.
    static func orderBase(_ order: String) -> String {
        guard let range = order.range(of: "..") else { return order }
        return String(order[..<range.lowerBound])
    }

    private static func learned(job: ClaimedJob, api: String, at time: Date, digest: String, account: String?,
                                proof: String) -> StoreNotification {
        var notification = StoreNotification(
            storeCode: .googlePlay, notificationId: "\(job.args["notificationId"] ?? "job-\(job.id)")/\(api)",
            notificationType: api, effect: .learnedPayment, effectiveAt: time, proof: proof)
        notification.purchaseTokenSha256 = digest
        notification.appAccountToken = account
        return notification
    }

    private static func payment(productId: String, order: String, purchaseTime: Date, expiry: Date?,
                                price: (String, String)?, test: Bool, digest: String) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.field("storeCode", StoreCode.googlePlay.rawValue)
        w.field("productId", productId)
        w.field("transactionId", order)
        w.field("purchaseTime", Timestamp(purchaseTime).iso8601Microseconds)
        if let expiry { w.field("expiryTime", Timestamp(expiry).iso8601Microseconds) }
        if let (amount, currency) = price {
            w.field("price", amount)
            w.field("currency", currency)
        }
        w.field("sandboxPayment", test)
        w.field("promotionPayment", false)
        w.field("purchaseTokenSha256", digest)
        w.endObject()
        return w.string
    }

    private static func acknowledge(job: ClaimedJob, type: String, productId: String, digest: String) -> StoreJob {
        acknowledge(package: job.args["packageName"] ?? "", type: type, productId: productId, digest: digest)
    }

    /// One acknowledgement per token, whichever job (a notification's, a line's check) asks first.
    private static func acknowledge(package: String, type: String, productId: String, digest: String) -> StoreJob {
        StoreJob(kind: .googleAcknowledge, purpose: "acknowledge:GG:\(digest)",
                 args: ["packageName": package, "productId": productId, "type": type, "purchaseTokenSha256": digest])
    }
}
