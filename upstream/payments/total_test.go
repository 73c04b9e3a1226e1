package payments_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fingraph/fingraph/upstream/payments"
)

// An order total beyond int64 saturates instead of wrapping: 4 × 2^62 must
// not read as an order of 0.
func TestItemsTotalSaturatesInsteadOfWrapping(t *testing.T) {
	n := int64(1250)
	for _, tc := range []struct {
		items payments.Items
		want  int64
	}{
		{payments.Items{Number: &n}, 1250},
		{payments.Items{Item: &payments.Item{Amount: 2490, Quantity: 2}}, 4980},
		{payments.Items{List: []payments.Item{{Amount: 2490, Quantity: 2}, {Amount: 590}}}, 5570},
		{payments.Items{Item: &payments.Item{Amount: 1 << 62, Quantity: 4}}, math.MaxInt64},
		{payments.Items{List: []payments.Item{{Amount: math.MaxInt64}, {Amount: 2}}}, math.MaxInt64},
		{payments.Items{List: []payments.Item{{Amount: math.MinInt64}, {Amount: -2}}}, math.MinInt64},
	} {
		assert.Equal(t, tc.want, tc.items.Total())
	}
}
