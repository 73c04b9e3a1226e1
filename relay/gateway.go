package relay

import "strings"

// gatewayEventPrefix starts the raw id of an Event the gateway made itself
// (a card issued, a conversion created): no upstream can read such an event
// back, so its raw id says where it is in the gateway's event stream, by
// its cursor (opaque: it shows nothing of the stream's other events). No
// upstream event id has this prefix (they are UUIDs).
const gatewayEventPrefix = "gw~"

// GatewayEventRaw is the raw Event id of the gateway's event id at the
// stream position of cursor.
func GatewayEventRaw(cursor, id string) string {
	return gatewayEventPrefix + cursor + "~" + id
}

// ParseGatewayEventRaw reads a raw Event id made by GatewayEventRaw; ok is
// false for an upstream event's id.
func ParseGatewayEventRaw(raw string) (cursor, id string, ok bool) {
	rest, found := strings.CutPrefix(raw, gatewayEventPrefix)
	if !found {
		return "", "", false
	}
	cursor, id, found = strings.Cut(rest, "~")
	if !found || id == "" || cursor == "" {
		return "", "", false
	}
	return cursor, id, true
}
