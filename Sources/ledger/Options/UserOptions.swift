import ArgumentParser
import PurchaseLedger

/// `--user`: the user a query is about, checked by the contract's rule for a user ID.
struct UserOptions: ParsableArguments {
    @Option(name: .customLong("user"), help: "The user ID.")
    var userId: String

    /// A usage error (exit 2, nothing on standard output) for a user ID the contract refuses,
    /// naming `--user` and never printing the value back.
    func validate() throws {
        do {
            try LedgerCommand.validateUserId(userId, field: "--user")
        } catch {
            throw ValidationError(error.message)
        }
    }
}
