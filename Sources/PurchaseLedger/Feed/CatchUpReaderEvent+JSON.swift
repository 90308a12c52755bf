import Foundation
import LedgerJSON

extension CatchUpReader.Event {
    /// Writes an event as the feed shows it (`GET /v1/events`): its place in the log, its type,
    /// its data as stored (Schema/EVENTS.md), its two times in UTC and the user it belongs to
    /// (`userId`, left out for a fact that has no user).
    public func write(into w: inout JSONWriter) {
        w.beginObject()
        writeFields(into: &w)
        w.endObject()
    }

    /// The fields of ``write(into:)``, inside an object the caller writes (a webhook's body, which
    /// puts `userId` first itself: `withUser` false).
    public func writeFields(into w: inout JSONWriter, withUser: Bool = true) {
        w.key("position")
        w.rawNumber(String(position))
        w.field("stream", stream)
        w.field("version", version)
        w.field("type", type)
        w.key("data")
        w.value((try? JSONParser.parse(data)) ?? .null)
        w.field("occurredAt", occurredAt)
        w.field("recordedAt", recordedAt)
        if withUser, let userId { w.field("userId", userId) }
    }
}

extension EventPage {
    /// Writes a page as `GET /v1/events` answers it: `{"events": [...], "cursor": "positions",
    /// "next": position}`.
    public func write(into w: inout JSONWriter) {
        w.beginObject()
        w.key("events")
        w.beginArray()
        for event in events { event.write(into: &w) }
        w.endArray()
        w.field("cursor", cursor.description)
        w.key("next")
        w.rawNumber(String(next))
        w.endObject()
    }
}
