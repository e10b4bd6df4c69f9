package llm

import (
	"fmt"
	"math"

	"scaleplan/internal/units"
)

// Interruptions is a published count of the unexpected interruptions of
// one large training run: Count in Hours of wall time on GPUs GPUs.
type Interruptions struct {
	Name, Source string
	Count        float64
	GPUs         int
	Hours        float64
}

// PerGPUHour returns Count/(GPUs × Hours): the interruption rate of one
// GPU-hour, assuming failures independent and at a constant rate.
func (r Interruptions) PerGPUHour() float64 { return r.Count / (float64(r.GPUs) * r.Hours) }

// The published interruption counts.
var (
	// Llama3Interruptions: "During a 54-day snapshot period of
	// pre-training, we experienced a total of 466 job interruptions ...
	// 419 were unexpected interruptions" on 16,384 H100 80GB (Dubey et al.
	// 2024, "The Llama 3 Herd of Models", arXiv:2407.21783, Section
	// 3.3.4 and Table 5): 1.97e-5 per GPU-hour, one every 3.1 hours.
	Llama3Interruptions = Interruptions{
		Name: "llama3-405b", Source: "Dubey et al. 2024, arXiv:2407.21783, Section 3.3.4",
		Count: 419, GPUs: 16384, Hours: 54 * 24,
	}
	// OPTInterruptions: "hardware failures contributed to at least 35
	// manual restarts ... over the course of 2 months", and the authors
	// estimate 70+ automatic restarts, on 992 A100 80GB (Zhang et al.
	// 2022, "OPT: Open Pre-trained Transformer Language Models",
	// arXiv:2205.01068, Sections 2.4 and 2.5): 105, a lower bound; 2
	// months taken as 60 days.
	OPTInterruptions = Interruptions{
		Name: "opt-175b", Source: "Zhang et al. 2022, arXiv:2205.01068, Section 2.5 (35 manual + 70 automatic restarts, at least)",
		Count: 105, GPUs: 992, Hours: 60 * 24,
	}
	// BLOOMInterruptions: "on average we were getting 1-2 GPU failures a
	// week" (Bekman 2022, "The Technology Behind BLOOM Training",
	// huggingface.co/blog/bloom-megatron-deepspeed) on BLOOM's 48 nodes
	// of 8 A100 80GB (Le Scao et al. 2022, arXiv:2211.05100): 1.5 a week
	// on 384 GPUs.
	BLOOMInterruptions = Interruptions{
		Name: "bloom-176b", Source: "Bekman 2022, huggingface.co/blog/bloom-megatron-deepspeed",
		Count: 1.5, GPUs: 384, Hours: 7 * 24,
	}
)

// PublishedInterruptions returns the shipped interruption counts.
func PublishedInterruptions() []Interruptions {
	return []Interruptions{Llama3Interruptions, OPTInterruptions, BLOOMInterruptions}
}

// MTBF returns the mean time between interruptions of a run on gpus GPUs
// each interrupted at perGPUHour: 1/(perGPUHour × gpus) hours.
func MTBF(perGPUHour float64, gpus int) (units.Seconds, error) {
	if !(perGPUHour > 0) || math.IsInf(perGPUHour, 0) || gpus < 1 {
		return 0, fmt.Errorf("interruption rate %g per GPU-hour on %d GPUs: want a positive finite rate and at least 1 GPU", perGPUHour, gpus)
	}
	return units.Seconds(float64(units.Hour) / (perGPUHour * float64(gpus))), nil
}

// YoungInterval returns Young's first-order optimum checkpoint interval
// (Young 1974, "A first order approximation to the optimum checkpoint
// interval", CACM 17(9)), the compute time between checkpoints that
// minimises the waste C/τ + τ/(2M):
//
//	τ = √(2·C·M)
//
// for a checkpoint stall c and a mean time between interruptions m.
func YoungInterval(c, m units.Seconds) units.Seconds {
	return units.Seconds(math.Sqrt(2 * float64(c) * float64(m)))
}

// DalyInterval returns Daly's higher-order estimate of the optimum
// checkpoint interval (Daly 2006, "A higher order estimate of the optimum
// checkpoint interval for restart dumps", Future Generation Computer
// Systems 22(3), 303-312):
//
//	τ = √(2·C·M)·(1 + ⅓·√(C/(2M)) + ⅑·C/(2M)) − C    for C < 2M
//	τ = M                                           otherwise
func DalyInterval(c, m units.Seconds) units.Seconds {
	if c >= 2*m {
		return m
	}
	x := float64(c) / (2 * float64(m))
	return YoungInterval(c, m)*units.Seconds(1+math.Sqrt(x)/3+x/9) - c
}

// Waste returns the first-order fraction of wall time lost to
// checkpoints and interruptions (Young 1974; Daly 2006) with
// interval tau between checkpoints of cost ck, restart time restart and
// mean time between interruptions m:
//
//	w(τ) = C/τ + (τ/2 + P + R)/M
//
// C is the checkpoint's stall; each interruption loses on average half an
// interval of work, plus P (the time an asynchronous checkpoint takes to
// become durable, during which a failure falls back to the one before),
// plus the restart R. Its minimum over τ is at Young's √(2·C·M).
func Waste(tau units.Seconds, ck CheckpointCost, restart, m units.Seconds) float64 {
	return float64(ck.Stall/tau) + float64((tau/2+ck.Persist+restart)/m)
}

// BestInterval returns the interval that minimises Waste: Young's
// √(2·C·M), but no shorter than the time an asynchronous checkpoint takes
// to become durable (a checkpoint cannot start before the one before it
// is written; the waste is convex in τ, so the bound is then the best).
func BestInterval(ck CheckpointCost, m units.Seconds) units.Seconds {
	return max(YoungInterval(ck.Stall, m), ck.Persist)
}
