package banking

import (
	"context"
	"net/http"
)

// LimitsService reads and changes corporation limits. The wire shape is
// camelCase, as the spec's examples show.
type LimitsService service

// LimitSet holds the limits of one payment method and transaction type. A
// nil field is no limit. Amounts are minor units of the corporation's
// currency.
type LimitSet struct {
	ID                        string    `json:"_id,omitempty"`
	DailySuccessfulVelocity   *int64    `json:"dailySuccessfulVelocity"`
	WeeklySuccessfulVelocity  *int64    `json:"weeklySuccessfulVelocity"`
	MonthlySuccessfulVelocity *int64    `json:"monthlySuccessfulVelocity"`
	AttemptVelocityPerHour    *int64    `json:"attemptVelocityPerHour"`
	MinimumAmount             *int64    `json:"minimumAmount"`
	MaximumAmount             *int64    `json:"maximumAmount"`
	DailyLimitAmount          *int64    `json:"dailyLimitAmount"`
	WeeklyLimitAmount         *int64    `json:"weeklyLimitAmount"`
	MonthlyLimitAmount        *int64    `json:"monthlyLimitAmount"`
	CreatedAt                 Timestamp `json:"createdAt"`
	UpdatedAt                 Timestamp `json:"updatedAt"`
}

// Limit is the spec's Corporation Limit.
type Limit struct {
	ID              string    `json:"id"`
	IdentityID      string    `json:"identityId,omitempty"`
	PaymentMethod   string    `json:"paymentMethod"`
	TransactionType string    `json:"transactionType"`
	LimitSet        LimitSet  `json:"limitSet"`
	CreatedAt       Timestamp `json:"createdAt"`
	UpdatedAt       Timestamp `json:"updatedAt"`
}

// LimitUpdate is the body of PUT /corporations/:id/limits/:limitId. Only
// the limitSet fields that are set are sent; the rest stay unchanged.
type LimitUpdate struct {
	ID              string          `json:"id"`
	CorporationID   string          `json:"corporationId"`
	PaymentMethod   string          `json:"paymentMethod,omitempty"`
	TransactionType string          `json:"transactionType,omitempty"`
	LimitSet        *LimitSetUpdate `json:"limitSet,omitempty"`
}

// LimitSetUpdate holds the limitSet fields to change.
type LimitSetUpdate struct {
	DailySuccessfulVelocity   *int64 `json:"dailySuccessfulVelocity,omitempty"`
	WeeklySuccessfulVelocity  *int64 `json:"weeklySuccessfulVelocity,omitempty"`
	MonthlySuccessfulVelocity *int64 `json:"monthlySuccessfulVelocity,omitempty"`
	AttemptVelocityPerHour    *int64 `json:"attemptVelocityPerHour,omitempty"`
	MinimumAmount             *int64 `json:"minimumAmount,omitempty"`
	MaximumAmount             *int64 `json:"maximumAmount,omitempty"`
	DailyLimitAmount          *int64 `json:"dailyLimitAmount,omitempty"`
	WeeklyLimitAmount         *int64 `json:"weeklyLimitAmount,omitempty"`
	MonthlyLimitAmount        *int64 `json:"monthlyLimitAmount,omitempty"`
}

func limitsPath(corporationID string) string {
	return "corporations/" + pathEscape(corporationID) + "/limits"
}

// List reads the corporation's limits. The spec's GET of one limit has no
// method: a limit is never read without its corporation's others nearby
// (node lookups and Corporation.limits share the listing through a loader),
// and the listing costs the same one call.
func (s *LimitsService) List(ctx context.Context, corporationID string) ([]*Limit, error) {
	out, err := call[[]*Limit](ctx, s.client, http.MethodGet, limitsPath(corporationID), nil)
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// Update changes a limit; in.ID and in.CorporationID are filled from the
// arguments.
func (s *LimitsService) Update(ctx context.Context, corporationID, limitID string, in *LimitUpdate) (*Limit, error) {
	body := *in
	body.ID, body.CorporationID = limitID, corporationID
	return call[Limit](ctx, s.client, http.MethodPut, limitsPath(corporationID)+"/"+pathEscape(limitID), &body)
}

// Delete removes a limit and answers the removed limit.
func (s *LimitsService) Delete(ctx context.Context, corporationID, limitID string) (*Limit, error) {
	return call[Limit](ctx, s.client, http.MethodDelete, limitsPath(corporationID)+"/"+pathEscape(limitID), nil)
}
