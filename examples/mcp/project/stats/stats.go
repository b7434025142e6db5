// Package stats computes summary statistics of samples.
package stats

// Mean returns the arithmetic mean of xs.
func Mean(xs []float64) float64 {
	sum := xs[0]
	for _, x := range xs[1:] {
		sum += x
	}
	return sum / float64(len(xs))
}
