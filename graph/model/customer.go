package model

// Customer is a payments customer (Customer in the schema). Its stored
// cards, balance entries and subscriptions are converted from the
// upstream's record only when a query selects them, through Extras: a
// customer listing converts every customer, and most screens (the README
// query among them) select none of the three.
type Customer struct {
	// GlobalID is Customer.id; ID is the upstream's (upstreamId).
	GlobalID string
	ID       string
	Number   string
	Contact  *Contact
	Status   string
	// Currency is nil when the upstream gives none.
	Currency *string
	Total    float64
	// Extras converts the customer's lists; nil has none.
	Extras CustomerExtras
}

// CustomerExtras are a customer's lists, each converted when it is read;
// an error is the upstream's part that could not be read, and fails that
// field alone.
type CustomerExtras interface {
	PaymentMethods() ([]*PaymentMethod, error)
	Balance() ([]*CustomerBalance, error)
	Subscription() ([]*CustomerSubscription, error)
}

// IsNode marks Customer as a Node.
func (Customer) IsNode() {}

// GetID is the Node id.
func (c Customer) GetID() string { return c.GlobalID }

// PaymentMethods are the customer's stored cards, in priority order.
func (c *Customer) PaymentMethods() ([]*PaymentMethod, error) {
	if c.Extras == nil {
		return []*PaymentMethod{}, nil
	}
	return c.Extras.PaymentMethods()
}

// Balance is the customer's balance entries.
func (c *Customer) Balance() ([]*CustomerBalance, error) {
	if c.Extras == nil {
		return []*CustomerBalance{}, nil
	}
	return c.Extras.Balance()
}

// Subscription is the customer's subscriptions.
func (c *Customer) Subscription() ([]*CustomerSubscription, error) {
	if c.Extras == nil {
		return []*CustomerSubscription{}, nil
	}
	return c.Extras.Subscription()
}
