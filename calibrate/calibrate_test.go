package calibrate

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"scaleplan/engine/dist"
	"scaleplan/fit"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/units"
	"scaleplan/sim"
)

// testCalibration is a calibration with round numbers on two cores: v0
// 5000 samples/s, t 10 ms of which 4 ms update, two layers of one 1 MiB
// bucket each.
func testCalibration(link dist.Link) *Calibration {
	return &Calibration{
		Sweeps: []*Sweep{{Law: &fit.ThroughputFit{V0: 5000, T: units.Seconds(0.010)}, Update: 0.004, Forward: 0.4}},
		Layers: []int{1 << 18, 1 << 18}, Bucket: 1 << 20, Cores: 2,
		Links: map[string]*dist.Link{"inproc": &link},
	}
}

// The simulated step against closed forms: one worker follows the fitted
// law b/v0 + t; four workers take four times as long to compute (each has
// a quarter of the machine); W workers add, after the backward pass, the
// ring all-reduce of the whole 2 MiB gradient, 2(W−1)(α + n/(W·β')), over
// links of β' = β·min(1, cores/W): two workers on two cores at the probed
// bandwidth, four at half of it.
func TestEngineSimConfig(t *testing.T) {
	const alpha, beta = 20e-6, 1e9
	link := dist.Link{Latency: alpha, Bandwidth: beta}
	for _, tc := range []struct {
		name    string
		workers int
		batch   int
		want    float64 // step time, seconds
		tol     float64
	}{
		{"one worker", 1, 16, 16.0/5000 + 0.010, 1e-9},
		{"one worker, large batch", 1, 1024, 1024.0/5000 + 0.010, 1e-9},
		{"two workers", 2, 64, 2*(64.0/5000+0.010) + 2*(alpha+float64(2<<20)/(2*beta)), 1e-9},
		{"four workers, half the bandwidth each", 4, 64, 4*(64.0/5000+0.010) + 6*(alpha+float64(2<<20)/(4*beta/2)), 1e-9},
		{"four workers, free links", 4, 64, 4 * (64.0/5000 + 0.010), 1e-6},
	} {
		l := link
		if tc.name == "four workers, free links" {
			l = dist.Link{Bandwidth: 1e18}
		}
		cfg, err := SimConfig(testCalibration(l), tc.workers, tc.batch, "inproc")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		res, err := sim.Run(cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := float64(res.StepTime); math.Abs(got-tc.want)/tc.want > tc.tol {
			t.Errorf("%s: step %.9g s, want %.9g s", tc.name, got, tc.want)
		}
	}
	// Calibrated on one core of the two, as validate --engine does by
	// default: two workers, a core each, compute as fast as the
	// calibrated worker; four take turns, twice as long; one worker with
	// both cores is taken to be twice as fast.
	for _, tc := range []struct {
		workers int
		want    float64
	}{
		{1, 0.5 * (64.0/5000 + 0.010)},
		{2, 64.0/5000 + 0.010 + 2*(alpha+float64(2<<20)/(2*beta))},
		{4, 2*(64.0/5000+0.010) + 6*(alpha+float64(2<<20)/(4*beta/2))},
	} {
		cal := testCalibration(link)
		cal.Sweeps[0].Threads = 1
		cfg, err := SimConfig(cal, tc.workers, 64, "inproc")
		if err != nil {
			t.Fatalf("calibrated on one core, %d workers: %v", tc.workers, err)
		}
		res, err := sim.Run(cfg)
		if err != nil {
			t.Fatalf("calibrated on one core, %d workers: %v", tc.workers, err)
		}
		if got := float64(res.StepTime); math.Abs(got-tc.want)/tc.want > 1e-9 {
			t.Errorf("calibrated on one core, %d workers: step %.9g s, want %.9g s", tc.workers, got, tc.want)
		}
	}
	// On 16 cores, each count calibrated by its own sweep (two workers of
	// 8 cores, four of 4, with laws of their own): each computes as its
	// calibrated worker did, and only the ring is added, at the probed
	// bandwidth (each rank has a core or more).
	cal := testCalibration(link)
	cal.Cores = 16
	cal.Sweeps = []*Sweep{
		{For: 2, Serves: []int{2}, Copies: 2, Threads: 8, Law: &fit.ThroughputFit{V0: 5000, T: units.Seconds(0.010)}, Update: 0.004, Forward: 0.4},
		{For: 4, Serves: []int{4}, Copies: 4, Threads: 4, Law: &fit.ThroughputFit{V0: 2500, T: units.Seconds(0.020)}, Update: 0.004, Forward: 0.4},
	}
	for _, tc := range []struct {
		workers int
		want    float64
	}{
		{2, 64.0/5000 + 0.010 + 2*(alpha+float64(2<<20)/(2*beta))},
		{4, 64.0/2500 + 0.020 + 6*(alpha+float64(2<<20)/(4*beta))},
	} {
		cfg, err := SimConfig(cal, tc.workers, 64, "inproc")
		if err != nil {
			t.Fatal(err)
		}
		res, err := sim.Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := float64(res.StepTime); math.Abs(got-tc.want)/tc.want > 1e-9 {
			t.Errorf("%d workers of their own sweep on 16 cores: step %.9g s, want %.9g s", tc.workers, got, tc.want)
		}
	}
	if _, err := SimConfig(cal, 8, 64, "inproc"); err == nil || err.Error() != "no calibration of 8 workers" {
		t.Errorf("eight workers with only the sweeps of two and four: error %v", err)
	}
	if _, err := SimConfig(testCalibration(link), 2, 16, "tcp"); err == nil {
		t.Error("a transport without a measured link: no error")
	}
}

// The workers' spread from step to step against the expected maximum of
// w lognormal draws of mean 1 and coefficient of variation J, by
// quadrature of E[max] = ∫ (1 − F(x)^w) dx over the distribution's own
// CDF (gonum's distuv): with free links a synchronous step is the slowest
// worker's forward and backward, (b/v0 + t − u1)·max φ_i, then the update.
// The simulated mean over JitterSteps steps is within a fifth (two
// workers) or a tenth (four) of the expected wait for the slowest, a few
// standard errors; one worker, or a batch with no spread, waits for none.
func TestEngineSimJitter(t *testing.T) {
	const j = 0.1
	cal := testCalibration(dist.Link{Bandwidth: 1e18})
	cal.Sweeps[0].Threads = 1
	cal.Sweeps[0].Jitter = map[int]float64{64: j, 128: 0}
	sigma := math.Sqrt(math.Log1p(j * j))
	ln := distuv.LogNormal{Mu: -sigma * sigma / 2, Sigma: sigma}
	expMax := func(w int) float64 {
		const hi, n = 4.0, 400000
		var sum float64
		for i := range n {
			x := (float64(i) + 0.5) * hi / n
			sum += 1 - math.Pow(ln.CDF(x), float64(w))
		}
		return sum * hi / n
	}
	compute := 64.0/5000 + 0.010 - 0.004 // forward and backward of a worker on its own core
	for _, tc := range []struct {
		workers int
		tol     float64 // of the wait for the slowest
	}{{2, 0.2}, {4, 0.1}} {
		cfg, err := SimConfig(cal, tc.workers, 64, "inproc")
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Jitter != j || cfg.Steps != JitterSteps {
			t.Errorf("%d workers: jitter %v over %d steps, want %v over %d", tc.workers, cfg.Jitter, cfg.Steps, j, JitterSteps)
		}
		res, err := sim.Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		s := float64(tc.workers) / 2 // four workers take turns on the two cores
		want := s * compute * (expMax(tc.workers) - 1)
		got := float64(res.StepTime) - s*(compute+0.004)
		if math.Abs(got-want) > tc.tol*want {
			t.Errorf("%d workers: waits %.4g ms for the slowest, want %.4g ms (E[max] %.4f)", tc.workers, got*1e3, want*1e3, expMax(tc.workers))
		}
		if res.Breakdown.Straggler <= 0 {
			t.Errorf("%d workers: no straggler time in %+v", tc.workers, res.Breakdown)
		}
	}
	for _, tc := range []struct{ workers, batch int }{{1, 64}, {2, 128}, {4, 256}} {
		cfg, err := SimConfig(cal, tc.workers, tc.batch, "inproc")
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Jitter != 0 || cfg.Steps != 0 {
			t.Errorf("%d workers, batch %d: jitter %v over %d steps, want none", tc.workers, tc.batch, cfg.Jitter, cfg.Steps)
		}
	}
}

// RoundJitter against hand-computed medians of σ_r/(f_r + b_r).
func TestRoundJitter(t *testing.T) {
	rec := func(steps int, step, std, fwd, bwd float64) benchlog.Record {
		r := benchlog.Record{Kind: benchlog.KindMeasurement, Steps: steps, StepTime: step, StepTimeStd: std}
		if fwd+bwd > 0 {
			r.Phases = &benchlog.Phases{Forward: fwd, Backward: bwd}
		}
		return r
	}
	for _, tc := range []struct {
		name string
		recs []benchlog.Record
		want float64
	}{
		{"none", nil, 0},
		{"one round", []benchlog.Record{rec(10, 0.010, 0.0008, 0.003, 0.005)}, 0.1},
		{"odd: the middle one", []benchlog.Record{rec(10, 0.010, 0.0016, 0.003, 0.005), rec(10, 0.010, 0.0004, 0.003, 0.005), rec(10, 0.010, 0.0008, 0.003, 0.005)}, 0.1},
		{"even: the mean of the middle two", []benchlog.Record{rec(10, 0.010, 0.0004, 0.003, 0.005), rec(10, 0.010, 0.0008, 0.003, 0.005), rec(10, 0.010, 0.0016, 0.003, 0.005), rec(10, 0.010, 0.0040, 0.003, 0.005)}, 0.15},
		{"no phases: over the step", []benchlog.Record{rec(10, 0.010, 0.0005, 0, 0)}, 0.05},
		{"a single step has no spread", []benchlog.Record{rec(1, 0.010, 0, 0.003, 0.005), rec(10, 0.010, 0.0004, 0.003, 0.005)}, 0.05},
		{"a round without a step time is left out", []benchlog.Record{rec(10, 0, 0.0004, 0.003, 0.005)}, 0},
	} {
		if got := RoundJitter(tc.recs); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The sweeps of each calibration: one per worker count that has a core or
// more per worker, on those cores; the counts that take turns share the
// sweep of a worker per core (each), or have one in step over each
// transport (step).
func TestEngineSweeps(t *testing.T) {
	both := []string{"inproc", "tcp"}
	for _, tc := range []struct {
		mode              string
		workers           []int
		transports        []string
		cores, calThreads int
		want              []Sweep
	}{
		{"each", []int{2, 4}, both, 2, 1, []Sweep{{For: 2, Serves: []int{2, 4}, Copies: 2, Threads: 1}}},
		{"each", []int{2, 4}, both, 16, 4, []Sweep{{For: 2, Serves: []int{2}, Copies: 2, Threads: 8}, {For: 4, Serves: []int{4}, Copies: 4, Threads: 4}}},
		{"each", []int{1, 4, 2, 8}, both, 2, 1, []Sweep{{For: 1, Serves: []int{1}, Copies: 1, Threads: 2}, {For: 2, Serves: []int{4, 2, 8}, Copies: 2, Threads: 1}}},
		{"each", []int{3}, both, 16, 5, []Sweep{{For: 3, Serves: []int{3}, Copies: 3, Threads: 5}}},
		{"one", []int{2, 4}, both, 16, 4, []Sweep{{Copies: 4, Threads: 4}}},
		{"one", []int{2, 4}, both, 2, 2, []Sweep{{Copies: 1, Threads: 2}}},
		{"step", []int{2, 4}, both, 2, 1, []Sweep{{For: 2, Serves: []int{2}, Copies: 2, Threads: 1},
			{For: 4, Over: "inproc", Serves: []int{4}, Copies: 4, Threads: 1}, {For: 4, Over: "tcp", Serves: []int{4}, Copies: 4, Threads: 1}}},
		{"step", []int{2, 4}, both, 16, 4, []Sweep{{For: 2, Serves: []int{2}, Copies: 2, Threads: 8}, {For: 4, Serves: []int{4}, Copies: 4, Threads: 4}}},
		{"step", []int{1, 4, 2, 8}, []string{"tcp"}, 2, 1, []Sweep{{For: 1, Serves: []int{1}, Copies: 1, Threads: 2},
			{For: 4, Over: "tcp", Serves: []int{4}, Copies: 4, Threads: 1}, {For: 2, Serves: []int{2}, Copies: 2, Threads: 1}, {For: 8, Over: "tcp", Serves: []int{8}, Copies: 8, Threads: 1}}},
	} {
		got := Sweeps(tc.mode, tc.workers, tc.transports, tc.cores, tc.calThreads)
		ok := len(got) == len(tc.want)
		for i := 0; ok && i < len(got); i++ {
			g, w := got[i], tc.want[i]
			ok = g.For == w.For && g.Over == w.Over && slices.Equal(g.Serves, w.Serves) && g.Copies == w.Copies && g.Threads == w.Threads
		}
		if !ok {
			var gs []Sweep
			for _, g := range got {
				gs = append(gs, *g)
			}
			t.Errorf("Sweeps(%s, %v, %v, %d cores, %d threads) = %+v, want %+v", tc.mode, tc.workers, tc.transports, tc.cores, tc.calThreads, gs, tc.want)
		}
	}
}

// Each count and transport takes its sweep: workers in step over the
// transport where there is one, else the sweep of the count's cores, else
// the one for every count.
func TestEngineCalibrationSweep(t *testing.T) {
	step := &Calibration{Cores: 2, Sweeps: Sweeps("step", []int{2, 4}, []string{"inproc", "tcp"}, 2, 1)}
	each := &Calibration{Cores: 2, Sweeps: Sweeps("each", []int{2, 4}, []string{"inproc", "tcp"}, 2, 1)}
	one := &Calibration{Cores: 2, Sweeps: Sweeps("one", []int{2, 4}, []string{"inproc", "tcp"}, 2, 1)}
	for _, tc := range []struct {
		cal       *Calibration
		w         int
		transport string
		want      *Sweep
	}{
		{step, 2, "tcp", step.Sweeps[0]},
		{step, 4, "inproc", step.Sweeps[1]},
		{step, 4, "tcp", step.Sweeps[2]},
		{each, 4, "tcp", each.Sweeps[0]},
		{one, 4, "inproc", one.Sweeps[0]},
		{step, 3, "tcp", step.Sweeps[0]}, // no sweep in step: that of a worker per core, as each
	} {
		if got := tc.cal.sweep(tc.w, tc.transport); got != tc.want {
			t.Errorf("sweep(%d, %s) = %+v, want %+v", tc.w, tc.transport, got, tc.want)
		}
	}
	// In step, the workers waited for the slowest in every step measured:
	// no jitter is drawn on top; the sweep of two copies keeps its own.
	for _, sw := range step.Sweeps {
		sw.Law = &fit.ThroughputFit{V0: 1000, T: 0.002}
		sw.Jitter = map[int]float64{32: 0.1}
	}
	step.Links = map[string]*dist.Link{"inproc": {Latency: 50e-6, Bandwidth: 5e9}, "tcp": {Latency: 150e-6, Bandwidth: 1.5e9}}
	step.Layers = []int{1000}
	for _, tc := range []struct {
		w         int
		transport string
		jitter    float64
	}{{2, "tcp", 0.1}, {4, "tcp", 0}, {4, "inproc", 0}} {
		cfg, err := SimConfig(step, tc.w, 32, tc.transport)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Jitter != tc.jitter {
			t.Errorf("%d workers %s: jitter %g, want %g", tc.w, tc.transport, cfg.Jitter, tc.jitter)
		}
	}
}
