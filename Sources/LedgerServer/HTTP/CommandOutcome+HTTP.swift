import Foundation
import HTTPTypes
import Hummingbird
import LedgerOutput
import PurchaseLedger

extension CommandOutcome {
    /// The answer to one command: 200 with the result `ledger ingest` prints for a line (without
    /// `line`), 202 for `parked` (accepted, applied when its owner is known), the contract
    /// refusal's status with `{"code","message"}` otherwise.
    var response: Response {
        get throws {
            if let error, status == .rejected { throw APIError(error) }
            return .json(json, status: status == .parked ? .accepted : .ok)
        }
    }
}
