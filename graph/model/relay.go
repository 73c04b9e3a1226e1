package model

import "github.com/fingraph/fingraph/relay"

// The hand-written models that are Relay nodes compute their global id from
// the raw ids they carry, so no code path that builds one can forget it.
// The generated node models carry it in their GlobalID field, which the
// resolvers' converters set.

// GlobalID is the card's global id (Card.id).
func (c *Card) GlobalID() string { return relay.ID(relay.Card, c.ID) }

// IsNode marks Card as a Node.
func (*Card) IsNode() {}

// GetID is the Node id.
func (c *Card) GetID() string { return c.GlobalID() }

// GlobalID is the order's global id (Order.id).
func (o *Order) GlobalID() string { return relay.ID(relay.Order, o.ID) }

// IsNode marks Order as a Node.
func (*Order) IsNode() {}

// GetID is the Node id.
func (o *Order) GetID() string { return o.GlobalID() }

// GlobalID is the wallet's global id (Wallet.id): its corporation and its
// own id, as the upstream reads wallets under their corporation.
func (w *Wallet) GlobalID() string { return relay.ID(relay.Wallet, w.CorporationID, w.ID) }

// IsNode marks Wallet as a Node.
func (*Wallet) IsNode() {}

// GetID is the Node id.
func (w *Wallet) GetID() string { return w.GlobalID() }

// GlobalID is the event's global id (Event.id): an event the gateway made
// is found again by its position in the event stream.
func (e *Event) GlobalID() string {
	if e.GatewayCursor != "" {
		return relay.ID(relay.Event, relay.GatewayEventRaw(e.GatewayCursor, e.ID))
	}
	return relay.ID(relay.Event, e.ID)
}

// IsNode marks Event as a Node.
func (*Event) IsNode() {}

// GetID is the Node id.
func (e *Event) GetID() string { return e.GlobalID() }

// Reference fields that name another node answer its global id, so a
// client can pass them straight back; the raw ids stay in the struct for
// the resolvers.

// CardholderGlobalID is Card.cardholderId: the cardholder's global id.
func (c *Card) CardholderGlobalID() string { return relay.ID(relay.Person, c.CardholderID) }

// OrderGlobalID is Event.orderId: the global id of the payload's order.
func (e *Event) OrderGlobalID() *string {
	if e.OrderID == nil || *e.OrderID == "" {
		return nil
	}
	id := relay.ID(relay.Order, *e.OrderID)
	return &id
}

// OrderGlobalID is OrderChangePayload.orderId.
func (p *OrderChangePayload) OrderGlobalID() string { return relay.ID(relay.Order, p.OrderID) }

// SourceWalletGlobalID is Conversion.sourceWalletId.
func (c *Conversion) SourceWalletGlobalID() string {
	return relay.ID(relay.Wallet, c.CorporationID, c.SourceWalletID)
}

// TargetWalletGlobalID is Conversion.targetWalletId.
func (c *Conversion) TargetWalletGlobalID() *string {
	if c.TargetWalletID == nil || *c.TargetWalletID == "" {
		return nil
	}
	id := relay.ID(relay.Wallet, c.CorporationID, *c.TargetWalletID)
	return &id
}
