import ArgumentParser
import PurchaseLedger

/// `--store AS|GG`, repeatable: the stores a query or report keeps (all when none is given).
struct StoreFilterOptions: ParsableArguments {
    @Option(name: .customLong("store"), help: "Only this store (AS or GG); repeat for several.")
    var stores: [StoreCode] = []

    /// The stores given, as the library takes them (empty for every store).
    var set: Set<StoreCode> { Set(stores) }
}
