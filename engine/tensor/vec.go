package tensor

import "gonum.org/v1/gonum/blas/gonum"

// vec is gonum's pure-Go BLAS, whose level-1 routines have SIMD assembly
// on amd64; it serves the short vector operations of both backends,
// where a cgo call would cost more than the work.
var vec gonum.Implementation

// AddScaled adds alpha·s to dst element by element,
//
//	dst[i] += alpha * s[i]
//
// It panics if the lengths differ.
func AddScaled(dst []float32, alpha float32, s []float32) {
	if len(dst) != len(s) {
		panic(badSize)
	}
	if len(s) == 0 {
		return
	}
	vec.Saxpy(len(s), alpha, s, 1, dst, 1)
}
