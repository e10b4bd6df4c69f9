package llm

// Mixed-precision Adam's bytes per parameter, Rajbhandari et al. 2020
// ("ZeRO"), Section 3.1: 2 for the 16-bit weights, 2 for the 16-bit
// gradients and K = 12 for the optimizer state (fp32 master weights,
// momentum and variance). Megatron-LM keeps its gradients in an fp32
// buffer instead: 4 bytes, 18 in all (Megatron-LM docs, "Distributed
// Optimizer": bf16 param, fp32 grads, 18 bytes non-distributed, 6 + 12/d
// distributed).
const (
	weightBytes     = 2
	gradBytes16     = 2
	gradBytes32     = 4
	optimizerBytesK = 12
)

// States is the memory of the model states of one GPU, in bytes.
type States struct {
	// Weights is the 16-bit weights, Gradients the gradients and
	// Optimizer the fp32 master weights and Adam moments this GPU keeps.
	Weights, Gradients, Optimizer float64
}

// Total returns Weights + Gradients + Optimizer.
func (s States) Total() float64 { return s.Weights + s.Gradients + s.Optimizer }

// ModelStates returns the model states of one GPU holding psi parameters
// shared by a group of n data-parallel ranks under sharding sh, with g
// bytes per gradient (2, or 4 for fp32 gradients). In Rajbhandari et al.
// 2020's notation (Figure 1, with K = 12):
//
//	none, n = 1          (2 + g + K)·Ψ
//	zero1, distopt       (2 + g)·Ψ + K·Ψ/n
//	zero2                2·Ψ + (g + K)·Ψ/n
//	zero3, fsdp, hsdp    (2 + g + K)·Ψ/n
func ModelStates(psi float64, n int, sh Sharding, g float64) States {
	k := float64(optimizerBytesK)
	nf := float64(max(n, 1))
	s := States{Weights: weightBytes * psi, Gradients: g * psi, Optimizer: k * psi}
	switch sh {
	case ShardZeRO1, ShardDistOpt:
		s.Optimizer /= nf
	case ShardZeRO2:
		s.Optimizer /= nf
		s.Gradients /= nf
	case ShardZeRO3, ShardFSDP, ShardHSDP:
		s.Optimizer /= nf
		s.Gradients /= nf
		s.Weights /= nf
	}
	return s
}

// sharded reports whether sh partitions the weights (ZeRO-3 and FSDP).
func sharded(sh Sharding) bool { return sh == ShardZeRO3 || sh == ShardFSDP || sh == ShardHSDP }

// gradBytes returns the bytes per gradient.
func (l Layout) gradBytes() float64 {
	if l.FP32Grads {
		return gradBytes32
	}
	return gradBytes16
}
