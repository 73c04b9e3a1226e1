package relay

import (
	"strconv"
	"strings"
)

// gatewayEventPrefix starts the raw id of an Event the gateway made itself
// (a card issued, a conversion created): no upstream can read such an event
// back, so its raw id says where it is in the gateway's event stream. No
// upstream event id has this prefix (they are UUIDs).
const gatewayEventPrefix = "gw~"

// GatewayEventRaw is the raw Event id of the gateway's event id at stream
// position seq.
func GatewayEventRaw(seq uint64, id string) string {
	return gatewayEventPrefix + strconv.FormatUint(seq, 10) + "~" + id
}

// ParseGatewayEventRaw reads a raw Event id made by GatewayEventRaw; ok is
// false for an upstream event's id.
func ParseGatewayEventRaw(raw string) (seq uint64, id string, ok bool) {
	rest, found := strings.CutPrefix(raw, gatewayEventPrefix)
	if !found {
		return 0, "", false
	}
	s, id, found := strings.Cut(rest, "~")
	if !found || id == "" {
		return 0, "", false
	}
	seq, err := strconv.ParseUint(s, 10, 64)
	if err != nil || seq == 0 {
		return 0, "", false
	}
	return seq, id, true
}
