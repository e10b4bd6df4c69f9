package llm

import (
	"math"
	"strings"
	"testing"

	"scaleplan/internal/units"
)

// TestLlama3Rate checks that Llama 3's figures come back: 419
// interruptions in 54 days on 16,384 GPUs is one every 54·24/419 = 3.09
// hours ("about one every three hours"), 54.3 a week.
func TestLlama3Rate(t *testing.T) {
	r := Llama3Interruptions.PerGPUHour()
	if math.Abs(r-419.0/(16384*54*24)) > 1e-18 {
		t.Errorf("rate %g", r)
	}
	m, err := MTBF(r, 16384)
	if err != nil {
		t.Fatal(err)
	}
	if h := float64(m / units.Hour); math.Abs(h-54*24/419.0) > 1e-9 {
		t.Errorf("MTBF %.4f h, want %.4f", h, 54*24/419.0)
	}
	if week := float64(7 * units.Day / m); math.Abs(week-419.0/54*7) > 1e-9 {
		t.Errorf("%.2f a week, want %.2f", week, 419.0/54*7)
	}
	// The others by hand: OPT 105/(992·1440 h), BLOOM 1.5/(384·168 h).
	for _, c := range []struct {
		p    Interruptions
		want float64
	}{{OPTInterruptions, 7.3505e-5}, {BLOOMInterruptions, 2.3251e-5}} {
		if r := c.p.PerGPUHour(); math.Abs(r/c.want-1) > 1e-4 {
			t.Errorf("%s: %.5g per GPU-hour, want %.5g", c.p.Name, r, c.want)
		}
	}
	if _, err := MTBF(0, 8); err == nil {
		t.Error("zero rate: no error")
	}
	if _, err := MTBF(1e-5, 0); err == nil {
		t.Error("zero GPUs: no error")
	}
}

// TestYoungDaly checks both intervals by hand and that Young's is the
// minimum of the waste, by finite differences.
func TestYoungDaly(t *testing.T) {
	// √(2 · 60 s · 3 h) = 1,138.42 s.
	if got := YoungInterval(60, 3*units.Hour); math.Abs(float64(got)-1138.4199576606165) > 1e-9 {
		t.Errorf("Young %v", got)
	}
	// C = 600 s, M = 1 h: x = 1/12, √(2·600·3600)·(1 + √x/3 + x/9) − 600 = 1,697.71 s.
	if got := DalyInterval(600, units.Hour); math.Abs(float64(got)-1697.7059780556401) > 1e-9 {
		t.Errorf("Daly %v", got)
	}
	if got := DalyInterval(3*units.Hour, units.Hour); got != units.Hour {
		t.Errorf("Daly with C ≥ 2M: %v, want M", got)
	}
	// Daly → Young as C/M → 0 (the difference tends to −2C/3).
	if r := float64(DalyInterval(1, 1e6) / YoungInterval(1, 1e6)); math.Abs(r-1) > 1e-3 {
		t.Errorf("Daly/Young at C/M = 1e-6: %v", r)
	}
	ck := CheckpointCost{Stall: 120}
	for _, m := range []units.Seconds{units.Hour, 3 * units.Hour, 50 * units.Hour} {
		tau := BestInterval(ck, m)
		w := Waste(tau, ck, 600, m)
		for _, h := range []units.Seconds{1, 10, tau / 10} {
			if Waste(tau-h, ck, 600, m) <= w || Waste(tau+h, ck, 600, m) <= w {
				t.Errorf("M %v: waste at τ %v ± %v not above %v", m, tau, h, w)
			}
		}
		// By hand: C/τ + (τ/2 + R)/M.
		if want := 120/float64(tau) + (float64(tau)/2+600)/float64(m); math.Abs(w-want) > 1e-15 {
			t.Errorf("waste %v, want %v", w, want)
		}
	}
	// Asynchronous: no shorter than the time to become durable.
	async := CheckpointCost{Stall: 1, Persist: 2000}
	if got := BestInterval(async, units.Hour); got != 2000 {
		t.Errorf("async interval %v, want the 2000 s write", got)
	}
}

// TestTrainWallTime checks the breakdown by hand, that it adds up, and
// BLOOM's "checkpoint every 3h ... we would lose 1.5h of training on
// hardware crash" (Bekman 2022).
func TestTrainWallTime(t *testing.T) {
	// 384 GPUs at 1.5 a week: M = 1/(1.5/(384·168) · 384) = 112 h.
	r := Reliability{PerGPUHour: BLOOMInterruptions.PerGPUHour(), Restart: 0.5 * units.Hour}
	ck := CheckpointCost{Stall: 60}
	w, err := TrainWallTime(2400*units.Hour, 384, r, ck, 3*units.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(w.MTBF/units.Hour)-112) > 1e-9 {
		t.Errorf("MTBF %v h, want 112", w.MTBF/units.Hour)
	}
	if lost := float64(w.LostWork / units.Seconds(w.Interruptions) / units.Hour); math.Abs(lost-1.5) > 1e-9 {
		t.Errorf("lost work per interruption %.4f h, want 1.5", lost)
	}
	// By hand: w = 60/10800 + (1.5 + 0.5)/112; wall = 2400 h/(1 − w).
	waste := 60.0/10800 + 2.0/112
	if math.Abs(float64(w.Wall/units.Hour)-2400/(1-waste)) > 1e-6 || math.Abs(w.Goodput-(1-waste)) > 1e-12 {
		t.Errorf("wall %.3f h, goodput %.5f, want %.3f h and %.5f", w.Wall/units.Hour, w.Goodput, 2400/(1-waste), 1-waste)
	}
	if sum := w.Compute + w.Checkpoints + w.LostWork + w.Restarts; math.Abs(float64(sum-w.Wall)) > 1e-6 {
		t.Errorf("breakdown adds to %v, wall %v", sum, w.Wall)
	}
	if math.Abs(float64(w.Checkpoints)-w.CheckpointCount*60) > 1e-6 || math.Abs(float64(w.Restarts)-w.Interruptions*1800) > 1e-6 {
		t.Errorf("checkpoints %v for %v of them, restarts %v for %v interruptions", w.Checkpoints, w.CheckpointCount, w.Restarts, w.Interruptions)
	}
	// Interval 0: Young's optimum, √(2·60 s·112 h).
	best, _ := TrainWallTime(2400*units.Hour, 384, r, ck, 0)
	if want := math.Sqrt(2 * 60 * 112 * 3600); math.Abs(float64(best.Interval)-want) > 1e-6 || best.Wall >= w.Wall {
		t.Errorf("best interval %v, want %v; wall %v not below the 3 h interval's %v", best.Interval, want, best.Wall, w.Wall)
	}
}

// TestTrainWallTimeErrors checks the refusals.
func TestTrainWallTimeErrors(t *testing.T) {
	r := Reliability{PerGPUHour: Llama3Interruptions.PerGPUHour(), Restart: units.Hour}
	cases := []struct {
		compute units.Seconds
		gpus    int
		r       Reliability
		ck      CheckpointCost
		want    string
	}{
		{0, 8, r, CheckpointCost{Stall: 1}, "compute time 0"},
		{units.Hour, 8, r, CheckpointCost{}, "positive stall"},
		{units.Hour, 8, Reliability{Restart: -1, PerGPUHour: 1e-5}, CheckpointCost{Stall: 1}, "restart -1"},
		{units.Hour, 0, r, CheckpointCost{Stall: 1}, "at least 1 GPU"},
		// 131,072 GPUs: M = 23 min, less than the 1 h restart.
		{units.Hour, 131072, r, CheckpointCost{Stall: 60}, "no progress"},
	}
	for _, tc := range cases {
		_, err := TrainWallTime(tc.compute, tc.gpus, tc.r, tc.ck, 0)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc, err, tc.want)
		}
	}
	async := CheckpointCost{Stall: 1, Persist: 600}
	if _, err := TrainWallTime(units.Hour, 8, r, async, 300); err == nil || !strings.Contains(err.Error(), "interval 300 s") {
		t.Errorf("interval below the write: %v", err)
	}
}

// TestEstimateTraining checks that the combination is the schedule's
// time through TrainWallTime, and that either part's error comes back.
func TestEstimateTraining(t *testing.T) {
	s, err := ScheduleTokens(600, 10, 6, Rampup{Start: 2, Increment: 2, Samples: 20})
	if err != nil {
		t.Fatal(err)
	}
	step := func(b int) (units.Seconds, error) { return units.Seconds(1000 * b), nil } // 5·2000 + 3·4000 + 6·6000 s
	r := Reliability{PerGPUHour: 1e-3, Restart: 60}
	ck := CheckpointCost{Stall: 10}
	e, err := EstimateTraining(s, step, 64, r, ck, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := TrainWallTime(58000, 64, r, ck, 0)
	if e.Compute != 58000 || e.WallTime != want || len(e.Phases) != 3 || e.Schedule.Steps != 14 {
		t.Errorf("%+v, want compute 58,000 s and %+v", e, want)
	}
	if _, err := EstimateTraining(s, step, 0, r, ck, 0); err == nil {
		t.Error("0 GPUs: no error")
	}
	if _, err := EstimateTraining(s, func(int) (units.Seconds, error) { return -1, nil }, 64, r, ck, 0); err == nil {
		t.Error("negative step time: no error")
	}
}
