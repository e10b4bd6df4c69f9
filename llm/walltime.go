package llm

import (
	"fmt"
	"math"

	"scaleplan/internal/units"
)

// Reliability is what interrupts a run and what an interruption costs
// besides the lost work.
type Reliability struct {
	// PerGPUHour is the rate of unexpected interruptions of one GPU-hour
	// (PublishedInterruptions has measured ones).
	PerGPUHour float64
	// Restart is the time from an interruption to training again, lost
	// work aside: detecting the failure, replacing or excluding the node,
	// relaunching, re-initialising communicators and reading the
	// checkpoint back. It depends on the site's automation; docs/llm-time.md
	// lists published figures.
	Restart units.Seconds
}

// WallTime is where the wall time of a run goes. Compute, Checkpoints,
// LostWork and Restarts add up to Wall.
type WallTime struct {
	// Compute is the failure-free training time the caller gave.
	Compute units.Seconds
	// Checkpoints is the time training stalls for checkpoints;
	// LostWork the work redone after interruptions (and, asynchronous,
	// lost to checkpoints not yet durable); Restarts the restarts.
	Checkpoints, LostWork, Restarts units.Seconds
	// Wall is the expected wall time; Goodput Compute/Wall.
	Wall    units.Seconds
	Goodput float64
	// Interval is the compute time between checkpoints; MTBF the mean
	// time between interruptions; Interruptions and CheckpointCount the
	// expected counts over the run.
	Interval, MTBF                 units.Seconds
	Interruptions, CheckpointCount float64
}

// TrainWallTime returns the expected wall time of a run whose
// failure-free compute time is compute, on gpus GPUs that fail at r, with
// checkpoints of cost ck every interval of compute (0: BestInterval; no
// shorter than ck.Persist). In
// the first-order model of Waste the wall time T satisfies
//
//	T = compute + T·C/τ + T·(τ/2 + P)/M + T·R/M
//
// so T = compute/(1 − w(τ)) and the goodput is 1 − w(τ). It fails when
// the interruptions leave no progress (w ≥ 1); the model assumes τ and
// the restart well below M.
func TrainWallTime(compute units.Seconds, gpus int, r Reliability, ck CheckpointCost, interval units.Seconds) (WallTime, error) {
	if !(compute > 0) || math.IsInf(float64(compute), 0) {
		return WallTime{}, fmt.Errorf("compute time %g s: want a positive finite time", float64(compute))
	}
	if !(ck.Stall > 0) || ck.Persist < 0 || !(r.Restart >= 0) || interval < 0 {
		return WallTime{}, fmt.Errorf("checkpoint stall %g s, persist %g s, restart %g s, interval %g s: want a positive stall and no negative times",
			float64(ck.Stall), float64(ck.Persist), float64(r.Restart), float64(interval))
	}
	m, err := MTBF(r.PerGPUHour, gpus)
	if err != nil {
		return WallTime{}, err
	}
	tau := interval
	if tau == 0 {
		tau = BestInterval(ck, m)
	}
	if tau < ck.Persist {
		return WallTime{}, fmt.Errorf("checkpoint interval %.0f s: want at least the %.0f s an asynchronous checkpoint takes to be written", float64(tau), float64(ck.Persist))
	}
	w := Waste(tau, ck, r.Restart, m)
	if !(w < 1) {
		return WallTime{}, fmt.Errorf("an interruption every %.2f h with checkpoints every %.2f h, %.0f s each, and %.0f s restarts wastes %.0f %% of the time: no progress",
			float64(m/units.Hour), float64(tau/units.Hour), float64(ck.Stall), float64(r.Restart), 100*w)
	}
	wall := compute / units.Seconds(1-w)
	return WallTime{
		Compute:         compute,
		Checkpoints:     wall * ck.Stall / tau,
		LostWork:        wall * (tau/2 + ck.Persist) / m,
		Restarts:        wall * r.Restart / m,
		Wall:            wall,
		Goodput:         1 - w,
		Interval:        tau,
		MTBF:            m,
		Interruptions:   float64(wall / m),
		CheckpointCount: float64(wall / tau),
	}, nil
}

// Estimate is the time to train to a token budget: the steps at each
// batch, their failure-free time, and where the wall time goes.
type Estimate struct {
	Schedule TokenSchedule
	Phases   []PhaseTime
	WallTime
}

// EstimateTraining combines the parts: the schedule's failure-free time
// from stepTime (TokenSchedule.Time), then TrainWallTime on gpus GPUs
// with reliability r, checkpoints ck and interval (0: BestInterval).
func EstimateTraining(s TokenSchedule, stepTime func(batch int) (units.Seconds, error), gpus int, r Reliability, ck CheckpointCost, interval units.Seconds) (Estimate, error) {
	compute, phases, err := s.Time(stepTime)
	if err != nil {
		return Estimate{}, err
	}
	w, err := TrainWallTime(compute, gpus, r, ck, interval)
	if err != nil {
		return Estimate{}, err
	}
	return Estimate{Schedule: s, Phases: phases, WallTime: w}, nil
}
