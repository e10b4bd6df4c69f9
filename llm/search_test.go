package llm

import (
	"math"
	"slices"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/model"
)

// searchHW is an H100-like node of 8 GPUs with the roofline and a ring
// network: fast enough to enumerate every layout in a test.
func searchHW() Hardware {
	return Hardware{GPUsPerNode: 8, Memory: 80 * units.GiB, Peak: 989e12,
		Compute: RooflineTime(989e12, 3.35e12, DefaultMatMulEfficiency), Comm: ringTime}
}

// allFits returns every layout of s that fits, each timed alone with a
// fresh stepper (Layout.StepTime) and its memory by Layout.Memory: the
// serial reference the search's caches must agree with.
func allFits(t *testing.T, s Search) []Candidate {
	t.Helper()
	s = s.defaults()
	var out []Candidate
	for _, g := range s.GPUChoices {
		for _, b := range s.GlobalBatches {
			s.layouts(g, b, func(l Layout) bool {
				m, err := l.Memory(s.Shape)
				if err != nil || m.Headroom(s.Hardware.Memory) < 0 {
					return true
				}
				st, err := l.StepTime(s.Shape, s.Hardware)
				if err != nil {
					t.Fatal(err)
				}
				c := Candidate{Layout: l, Step: st, Memory: m}
				if s.Tokens > 0 {
					c.Steps = int(math.Ceil(s.Tokens / (float64(b) * float64(s.Shape.SeqLen))))
					c.TrainTime = units.Seconds(c.Steps) * st.Time
					c.GPUHours = float64(g) * float64(c.TrainTime) / 3600
				}
				out = append(out, c)
				return true
			})
		}
	}
	return out
}

// TestSearchDeadline: over two GPU counts and two batches, a search with
// a deadline returns the cheapest layouts that meet it, as a serial scan
// of every layout, each timed alone, finds them; one with a budget of
// GPU-hours the fastest within it.
func TestSearchDeadline(t *testing.T) {
	sh, _ := model.LookupTransformer("llama2-7b")
	sh.FusedAttention = true
	base := Search{Shape: sh, GPUChoices: []int{8, 16}, GlobalBatches: []int{64, 128}, Hardware: searchHW(),
		Tokens: 1e9, Top: 5}
	ref := allFits(t, base)
	if len(ref) < 100 {
		t.Fatalf("%d layouts fit", len(ref))
	}
	fastest := slices.MinFunc(ref, func(a, b Candidate) int { return int(math.Copysign(1, float64(a.TrainTime-b.TrainTime))) })
	dl := base
	dl.Deadline = fastest.TrainTime * 1.5
	res, err := dl.Run()
	if err != nil {
		t.Fatal(err)
	}
	var meet []Candidate
	for _, c := range ref {
		if c.TrainTime <= dl.Deadline {
			meet = append(meet, c)
		}
	}
	cheapest := slices.MinFunc(meet, func(a, b Candidate) int { return int(math.Copysign(1, a.GPUHours-b.GPUHours)) })
	if res.Fit != len(ref) || res.Missed != len(ref)-len(meet) || len(res.Best) != 5 {
		t.Errorf("fit %d, missed %d, best %d: want %d, %d, 5", res.Fit, res.Missed, len(res.Best), len(ref), len(ref)-len(meet))
	}
	if got := res.Best[0]; math.Abs(got.GPUHours/cheapest.GPUHours-1) > 1e-12 || !sameTime(got.Step.Time, findStep(ref, got.Layout)) {
		t.Errorf("cheapest %+v: %.6g GPU-hours, want %.6g (%+v)", got.Layout, got.GPUHours, cheapest.GPUHours, cheapest.Layout)
	}
	for i, c := range res.Best {
		if c.TrainTime > dl.Deadline || i > 0 && c.GPUHours < res.Best[i-1].GPUHours {
			t.Errorf("best %d: %v, %.6g GPU-hours: past the deadline or out of order", i, c.TrainTime, c.GPUHours)
		}
	}
	bu := base
	bu.MaxGPUHours = cheapest.GPUHours * 1.01
	res, err = bu.Run()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range res.Best {
		if c.GPUHours > bu.MaxGPUHours || i > 0 && c.TrainTime < res.Best[i-1].TrainTime {
			t.Errorf("budget best %d: %v, %.6g GPU-hours: over the budget or out of order", i, c.TrainTime, c.GPUHours)
		}
	}
	bu.MaxGPUHours = cheapest.GPUHours / 2
	if _, err := bu.Run(); err == nil {
		t.Error("a budget below the cheapest layout accepted")
	}
}

// findStep returns the reference step time of l.
func findStep(ref []Candidate, l Layout) units.Seconds {
	for _, c := range ref {
		if c.Layout == l {
			return c.Step.Time
		}
	}
	return -1
}

// TestSearchRanksAcrossCounts: without a token budget the search over
// GPU counts and batches ranks by tokens per second; each returned
// candidate's step and memory equal the layout's own StepTime and
// Memory; the best is the serial scan's.
func TestSearchRanksAcrossCounts(t *testing.T) {
	sh, _ := model.LookupTransformer("gpt3-1.3b")
	sh.FusedAttention = true
	s := Search{Shape: sh, GPUChoices: []int{8, 16}, GlobalBatches: []int{64, 128}, Hardware: searchHW(), Top: 20}
	res, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	ref := allFits(t, s)
	best := slices.MaxFunc(ref, func(a, b Candidate) int {
		return int(math.Copysign(1, a.Step.TokensPerSecond()-b.Step.TokensPerSecond()))
	})
	if got := res.Best[0].Step.TokensPerSecond(); math.Abs(got/best.Step.TokensPerSecond()-1) > 1e-12 {
		t.Errorf("best %.6g tokens/s (%+v), want %.6g (%+v)", got, res.Best[0].Layout, best.Step.TokensPerSecond(), best.Layout)
	}
	for i, c := range res.Best {
		st, _ := c.Layout.StepTime(sh, s.Hardware)
		m, _ := c.Layout.Memory(sh)
		if !sameTime(c.Step.Time, st.Time) || c.Memory != m {
			t.Errorf("%+v: step %v, memory %v; alone %v, %v", c.Layout, c.Step.Time, c.Memory.Peak.Total(), st.Time, m.Peak.Total())
		}
		if i > 0 && c.Step.TokensPerSecond() > res.Best[i-1].Step.TokensPerSecond() {
			t.Errorf("candidate %d faster than %d", i, i-1)
		}
	}
	sp := map[bool]bool{}
	for _, c := range ref {
		sp[c.Layout.SequenceParallel && c.Layout.TP > 1] = true
	}
	if res.Layouts != len(ref)+res.TooLarge || !sp[true] || !sp[false] {
		t.Errorf("layouts %d, fit %d, too large %d, sequence parallel seen %v", res.Layouts, len(ref), res.TooLarge, sp)
	}
	for _, bad := range []Search{
		{Shape: sh, GPUChoices: []int{0}, GlobalBatch: 8, Hardware: searchHW()},
		{Shape: sh, GPUs: 8, GlobalBatch: 8, Hardware: searchHW(), Deadline: 10},
		{Shape: sh, GPUs: 8, GlobalBatch: 8, Hardware: searchHW(), Tokens: math.NaN()},
	} {
		if _, err := bad.Run(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
