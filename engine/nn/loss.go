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
//
// When the batch is one part of a larger one whose mean loss is trained
// on, as a data-parallel worker's or a micro-batch's is, MeanOver is the
// larger batch's size M, and the gradient is this part's share of the
// larger mean, (p_k − q_k)/M: the parts' gradients then only need to be
// summed, which is what an all-reduce does, and each sample's term is
// the one a single worker would compute for the whole batch.
type CrossEntropy struct {
	// Smoothing is ε, in [0, 1). Default 0.
	Smoothing float64

	// MeanOver is M, the number of samples the gradient's mean is
	// taken over; 0 means the batch's own N. It changes the gradient,
	// not the loss Forward returns, which is always the batch's mean.
	MeanOver int

	grad tensor.T
	done bool
}

// Forward returns the mean loss of logits [N, K] against labels, and
// computes the gradient that Backward returns. It panics if logits is not
// two-dimensional, len(labels) != N, a label is outside [0, K),
// Smoothing is outside [0, 1) or MeanOver is negative.
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
	if ce.MeanOver < 0 {
		panic(badMeanOver)
	}
	ce.grad.Resize(n, k)
	var total float64
	inv := 1 / float64(max(1, n))
	ginv := inv
	if ce.MeanOver > 0 {
		ginv = 1 / float64(ce.MeanOver)
	}
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
			g[j] = float32((float64(g[j])/sum - q) * ginv)
		}
	}
	ce.done = true
	return total * inv
}

// Backward returns dL/dlogits from the last Forward, owned by ce: with
// MeanOver set, the gradient of this batch's share of the mean over
// MeanOver samples.
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
