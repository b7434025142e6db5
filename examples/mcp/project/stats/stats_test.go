package stats

import "testing"

func TestMean(t *testing.T) {
	tests := map[string]struct {
		give []float64
		want float64
	}{
		"one":   {give: []float64{4}, want: 4},
		"three": {give: []float64{1, 2, 6}, want: 3},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Mean(tt.give); got != tt.want {
				t.Errorf("Mean(%v) = %v, want %v", tt.give, got, tt.want)
			}
		})
	}
}
