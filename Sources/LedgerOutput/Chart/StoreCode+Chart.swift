import PurchaseLedger

extension StoreCode {
    /// The store's code and name, for legends.
    public var legendName: String { "\(rawValue) (\(self == .appStore ? "App Store" : "Google Play"))" }

    /// A fixed colour per store (Okabe-Ito: readable for colour-blind people too).
    public var chartColor: String { self == .appStore ? "#0072B2" : "#D55E00" }
}
