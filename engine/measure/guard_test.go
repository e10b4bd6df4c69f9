package measure

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"scaleplan/engine/dist"
)

// fakeGuard returns a guard whose probes return the given handoffs in
// turn (then the last one forever) and whose sleeps only add up.
func fakeGuard(probes ...time.Duration) (g *Guard, slept *time.Duration) {
	slept = new(time.Duration)
	g = NewGuard()
	g.probe = func() (time.Duration, error) {
		d := probes[0]
		if len(probes) > 1 {
			probes = probes[1:]
		}
		return d, nil
	}
	g.sleep = func(d time.Duration) { *slept += d }
	var clock time.Time
	g.now = func() time.Time { return clock } // measurements take no time
	return g, slept
}

func TestCoreGuard(t *testing.T) {
	const ns = time.Nanosecond
	near, far := 30*ns, 200*ns // together, and apart at 3 × 30 ns
	for _, tc := range []struct {
		name    string
		probes  []time.Duration // after the five of start
		calls   int             // measurements made
		repeats int
		waited  time.Duration
		kept    int // kept although apart
	}{
		{"together", []time.Duration{near, near}, 1, 0, 0, 0},
		{"apart before, then together", []time.Duration{far, far, near, near}, 1, 0, 200 * time.Millisecond, 0},
		{"apart after, together again", []time.Duration{near, far, near, near}, 2, 1, 0, 0},
		{"apart after every try", []time.Duration{near, far}, 3, 2, 2 * 5 * time.Second, 1}, // no wait before the first try
		{"at three times the best, still together", []time.Duration{90 * ns, 90 * ns}, 1, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := []time.Duration{50 * ns, near, 40 * ns, near, 60 * ns}
			g, slept := fakeGuard(append(start, tc.probes...)...)
			g.start()
			if g.Best != near || *slept != 4*20*time.Millisecond {
				t.Fatalf("after start: best %v, slept %v; want %v, 80ms", g.Best, *slept, near)
			}
			*slept = 0
			calls := 0
			m, _, err := g.measure(func() (*dist.Measurement, error) { calls++; return &dist.Measurement{Steps: calls}, nil })
			if err != nil {
				t.Fatal(err)
			}
			if m.Steps != calls || calls != tc.calls || g.Repeats != tc.repeats || g.Waited != tc.waited || *slept != tc.waited || g.Kept != tc.kept {
				t.Errorf("kept measurement %d of %d calls, %d repeats, waited %v (slept %v), %d kept apart; want the last of %d, %d, %v, %d",
					m.Steps, calls, g.Repeats, g.Waited, *slept, g.Kept, tc.calls, tc.repeats, tc.waited, tc.kept)
			}
		})
	}
	// Once the budget is spent, the guard neither waits nor repeats.
	g, slept := fakeGuard(near, near, near, near, near, near, far) // five for start, one before the first try
	g.Budget = 7 * time.Second
	g.start()
	*slept = 0
	for i, want := range []struct {
		calls  int
		waited time.Duration
	}{{3, 7 * time.Second}, {1, 7 * time.Second}} { // the second try waits 5 s, the third until 7
		calls := 0
		if _, _, err := g.measure(func() (*dist.Measurement, error) { calls++; return &dist.Measurement{}, nil }); err != nil {
			t.Fatal(err)
		}
		if calls != want.calls || g.Waited != want.waited {
			t.Errorf("measurement %d with the cores apart: %d calls, waited %v; want %d, %v", i, calls, g.Waited, want.calls, want.waited)
		}
	}
	if s := g.String(); !strings.HasSuffix(s, "2 kept apart (the 7s allowed for waiting and measuring again were spent)") {
		t.Errorf("summary %q", s)
	}
	// Measurements made again count against the budget too: a run whose
	// best probe came from a spell of closer cores (19 ns, both vCPUs on
	// one physical core) finds the usual handoff hovering about three
	// times it (50 ns before each measurement, 60 ns after), and makes
	// every measurement, here of 10 s, again; after 60 s of measurements
	// discarded it repeats no more.
	g, _ = fakeGuard(19 * time.Nanosecond)
	g.start()
	var clock time.Time
	g.now = func() time.Time { return clock }
	after := false
	g.probe = func() (time.Duration, error) {
		after = !after
		if after {
			return 50 * time.Nanosecond, nil
		}
		return 60 * time.Nanosecond, nil
	}
	for i, want := range []int{3, 3, 3, 1, 1} {
		calls := 0
		if _, _, err := g.measure(func() (*dist.Measurement, error) {
			calls++
			clock = clock.Add(10 * time.Second)
			return &dist.Measurement{}, nil
		}); err != nil {
			t.Fatal(err)
		}
		if calls != want {
			t.Errorf("measurement %d with the usual cores above three times the best: %d calls, want %d", i, calls, want)
		}
	}
	if s := g.String(); g.Redone != 60*time.Second || g.Waited != 0 || !strings.HasSuffix(s, ", 60.0 s measuring again (the 1m0s allowed for waiting and measuring again were spent)") {
		t.Errorf("redone %v, summary %q", g.Redone, s)
	}
	// A failing probe turns the guard off: the run goes on unguarded and
	// the report says why.
	g, _ = fakeGuard(near, near, near, near, near, near)
	boom := errors.New("boom")
	g.start()
	g.probe = func() (time.Duration, error) { return 0, boom }
	for range 2 {
		calls := 0
		if _, _, err := g.measure(func() (*dist.Measurement, error) { calls++; return &dist.Measurement{}, nil }); err != nil || calls != 1 {
			t.Errorf("measurement with the guard off: %d calls, %v", calls, err)
		}
	}
	if !errors.Is(g.Off, boom) || !strings.HasSuffix(g.String(), "; off after 5 probes: probing the cores: boom") {
		t.Errorf("guard after a failed probe: off %v, summary %q", g.Off, g.String())
	}
	// Errors of the measurement are returned.
	g, _ = fakeGuard(near)
	if _, _, err := g.measure(func() (*dist.Measurement, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("failing measurement: %v", err)
	}
	if s := g.String(); s != "handoff between the first two CPUs 30 ns at best (apart above 90 ns): 0 measurements repeated, 0.0 s of waiting, 0 kept apart" {
		t.Errorf("summary %q", s)
	}
}

// A run that starts with the cores apart takes that spell for its best;
// once a lower probe shows the spell for what it was, the measurements
// made in it are made again after the rounds and replaced when the new
// one's probes are lower.
func TestCoreGuardRevisit(t *testing.T) {
	const ns = time.Nanosecond
	near, far := 30*ns, 200*ns
	// start: five far probes (best 200 ns); round 0: far before and after
	// configuration 0, far before and near after configuration 1 (best
	// 30 ns); then near for ever.
	g, _ := fakeGuard(far, far, far, far, far, far, far, far, near)
	calls := 0
	var order []string
	measure := func(r, i int) (*dist.Measurement, error) {
		calls++
		order = append(order, fmt.Sprintf("%d/%d", r, i))
		d := time.Duration(calls) * time.Millisecond
		return &dist.Measurement{Config: dist.Config{Workers: 1, Batch: 4}, Steps: 1, StepStats: []dist.StepStats{{Time: d}}}, nil
	}
	_, kept, err := Rounds(2, 0, 2, measure, nil, g)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"0/0", "0/1", "1/0", "1/1", "0/0", "0/1"}; !slices.Equal(order, want) {
		t.Errorf("measured %v, want %v", order, want)
	}
	stepOf := func(m *dist.Measurement) time.Duration { return m.StepStats[0].Time }
	if stepOf(kept[0][0]) != 5*time.Millisecond || stepOf(kept[1][0]) != 6*time.Millisecond ||
		stepOf(kept[0][1]) != 3*time.Millisecond || stepOf(kept[1][1]) != 4*time.Millisecond {
		t.Errorf("kept the measurements of calls %v %v / %v %v, want 5 3 / 6 4", stepOf(kept[0][0]), stepOf(kept[0][1]), stepOf(kept[1][0]), stepOf(kept[1][1]))
	}
	if g.Best != near || g.Revisit != 2 || g.Kept != 0 || !strings.Contains(g.String(), ", 2 made again after the rounds (made apart before the run's best probe)") {
		t.Errorf("best %v, %d revisited, %d kept apart, summary %q", g.Best, g.Revisit, g.Kept, g)
	}
	// At most a round's worth is made again (one configuration: one),
	// and nothing once the budget is spent; the rest are counted.
	for _, tc := range []struct {
		budget           time.Duration
		calls, unrevisit int
	}{{time.Minute, 4, 1}, {0, 3, 2}} {
		g, _ = fakeGuard(far, far, far, far, far, far, far, far, near)
		g.Budget = tc.budget
		calls, order = 0, nil
		if _, _, err := Rounds(1, 0, 3, measure, nil, g); err != nil {
			t.Fatal(err)
		}
		if calls != tc.calls || g.Unrevisited != tc.unrevisit || !strings.Contains(g.String(), fmt.Sprintf(", %d more made apart before it left as they were", tc.unrevisit)) {
			t.Errorf("budget %v: %d measurements (%v), %d left, summary %q; want %d, %d", tc.budget, calls, order, g.Unrevisited, g, tc.calls, tc.unrevisit)
		}
	}
	// A revisit that finds the cores apart again keeps the old
	// measurement (its level is no higher), counted as kept apart once.
	g, _ = fakeGuard(near, near, near, near, near, far)
	g.start()
	_, level, replace, err := g.revisit(far, func() (*dist.Measurement, error) { return &dist.Measurement{}, nil })
	if err != nil || replace || level != far || g.Kept != 1 || g.Revisit != 1 {
		t.Errorf("revisit in a spell: level %v, replace %v, %d kept apart, %d revisited, %v; want %v, false, 1, 1", level, replace, g.Kept, g.Revisit, err, far)
	}
	// Without a guard, or with one turned off, nothing is stale.
	var none *Guard
	if none.stale(time.Second) {
		t.Error("a nil guard finds a measurement stale")
	}
	g.Off = errors.New("off")
	if g.stale(time.Second) {
		t.Error("a guard turned off finds a measurement stale")
	}
}
