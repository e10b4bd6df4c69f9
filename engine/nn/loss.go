package nn

import (
	"math"

	"scaleplan/engine/tensor"
)

// CrossEntropy is the softmax cross-entropy loss with label smoothing,
// averaged over the batch. For logits z [N, K] and integer labels y,
//
//	p_k = exp(z_k) / Σ_j exp(z_j)
//	q_k = (1 - ε)·[k = y] + ε/K
//	L   = (1/N) Σ_n -Σ_k q_k log p_k
//	dL/dz_k = (p_k - q_k) / N
//
// which is PyTorch's CrossEntropyLoss(label_smoothing=ε). With ε = 0 it
// is the usual negative log-likelihood of the label. The log-sum-exp is
// computed in float64 with the maximum logit subtracted.
type CrossEntropy struct {
	// Smoothing is ε, in [0, 1). Default 0.
	Smoothing float64

	grad tensor.T
	done bool
}

// Forward returns the mean loss of logits [N, K] against labels, and
// computes the gradient that Backward returns. It panics if logits is not
// two-dimensional, len(labels) != N, a label is outside [0, K), or
// Smoothing is outside [0, 1).
func (ce *CrossEntropy) Forward(logits *tensor.T, labels []int) float64 {
	if logits.Rank() != 2 {
		panic(badRank)
	}
	n, k := logits.Shape[0], logits.Shape[1]
	if len(labels) != n {
		panic(badLabels)
	}
	eps := ce.Smoothing
	if !(eps >= 0 && eps < 1) {
		panic(badSmoothing)
	}
	ce.grad.Resize(n, k)
	var total float64
	inv := 1 / float64(max(1, n))
	for i, y := range labels {
		if y < 0 || y >= k {
			panic(badLabel)
		}
		z := logits.Data[i*k : (i+1)*k]
		g := ce.grad.Data[i*k : (i+1)*k]
		zmax := float64(z[0])
		for _, v := range z[1:] {
			zmax = max(zmax, float64(v))
		}
		var sum, qz float64
		for j, v := range z {
			e := math.Exp(float64(v) - zmax)
			sum += e
			g[j] = float32(e) // provisional: unnormalised probability
			qz += float64(v) * eps / float64(k)
		}
		qz += (1 - eps) * float64(z[y])
		// -Σ q log p = logsumexp(z) - Σ q z, since Σ q = 1.
		total += zmax + math.Log(sum) - qz
		for j := range g {
			q := eps / float64(k)
			if j == y {
				q += 1 - eps
			}
			g[j] = float32((float64(g[j])/sum - q) * inv)
		}
	}
	ce.done = true
	return total * inv
}

// Backward returns dL/dlogits from the last Forward, owned by ce.
func (ce *CrossEntropy) Backward() *tensor.T {
	if !ce.done {
		panic(badOrder)
	}
	return &ce.grad
}

// Correct returns the number of rows of logits [N, K] whose largest
// element (the first, on ties) is at the row's label. It panics if
// len(labels) != N.
func Correct(logits *tensor.T, labels []int) int {
	if logits.Rank() != 2 {
		panic(badRank)
	}
	n, k := logits.Shape[0], logits.Shape[1]
	if len(labels) != n {
		panic(badLabels)
	}
	c := 0
	for i, y := range labels {
		z := logits.Data[i*k : (i+1)*k]
		best := 0
		for j, v := range z {
			if v > z[best] {
				best = j
			}
		}
		if best == y {
			c++
		}
	}
	return c
}
