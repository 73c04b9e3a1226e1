package main

import "testing"

// The per-round median is the middle round, or the mean of the two middle
// rounds of an even number.
func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{1.5}, 1.5},
		{[]float64{1, 2, 7}, 2},
		{[]float64{1.66, 1.66, 1.73, 1.89}, 1.695},
		{[]float64{1, 3}, 2},
	} {
		if got := median(c.in); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
