//go:build !linux

package tensor

// adviseHuge does nothing outside Linux.
func adviseHuge([]float32) {}
