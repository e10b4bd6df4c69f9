package dist

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"scaleplan/engine/data"
	"scaleplan/engine/nn"
	"scaleplan/engine/optim"
	"scaleplan/engine/tensor"
	"scaleplan/internal/benchlog"
)

// serialTrain is the reference: plain single-worker training written
// without this package, on batch B of the same shuffled order, with
// momentum SGD at a constant rate.
func serialTrain(t *testing.T, model string, hidden []int, batch, steps int, seed uint64, lr float64) []float32 {
	t.Helper()
	return serialShard(t, model, hidden, batch, 1, 0, steps, seed, lr)
}

// serialShard is serialTrain on the samples that worker rank of workers
// gets of each global batch of batch samples, and on those alone.
func serialShard(t *testing.T, model string, hidden []int, batch, workers, rank, steps int, seed uint64, lr float64) []float32 {
	t.Helper()
	train, _, err := data.Synthetic(data.DefaultSynthetic())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, keyInit))
	var net *nn.Network
	if model == "cnn" {
		net = nn.SmallCNN(rng)
	} else {
		net = nn.MLP(rng, append(append([]int{784}, hidden...), 10)...)
	}
	set, _ := optim.Defaults("sgd")
	opt, err := optim.New(set)
	if err != nil {
		t.Fatal(err)
	}
	var groups []optim.Group
	for _, p := range net.ParamGroups() {
		groups = append(groups, optim.Group{Name: p.Name, Params: p.Params, Grads: p.Grads, Exclude: !p.Kind.Decay()})
	}
	s := data.Sampler{N: train.N, Batch: batch, Workers: workers, DropLast: true, Shuffle: true, Seed: seed}
	ce := &nn.CrossEntropy{}
	var x []float32
	var y []int
	for step := range steps {
		e, k := step/s.Batches(), step%s.Batches()
		x, y = train.Gather(x, y, s.Shard(s.Order(e), k, rank))
		net.ZeroGrad()
		net.Loss(ce, tensorOf(x, len(y)), y, true)
		opt.Step(groups, lr)
	}
	return net.Params
}

func tensorOf(x []float32, n int) *tensor.T { return tensor.FromData(x, n, len(x)/n) }

// relDiff returns ‖a − b‖₂ / ‖b‖₂ and max |a_i − b_i| / max |b_i|.
func relDiff(a, b []float32) (norm, maxAbs float64) {
	var d2, b2, dm, bm float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		d2 += d * d
		b2 += float64(b[i]) * float64(b[i])
		dm = max(dm, math.Abs(d))
		bm = max(bm, math.Abs(float64(b[i])))
	}
	return math.Sqrt(d2 / b2), dm / bm
}

func TestDataParallelEqualsSerial(t *testing.T) {
	const steps, seed, lr = 20, 3, 0.05
	// chunk is Config.Chunk: 0 leaves these small batches whole; 3 runs
	// them in chunks of 2 and 3 samples.
	type split struct{ workers, accumulate, chunk int }
	for _, tc := range []struct {
		model  string
		hidden []int
		batch  int
		splits []split
		tol    float64
	}{
		{"mlp", []int{1024, 1024}, 16, []split{{1, 1, 0}, {2, 1, 0}, {4, 1, 0}, {2, 2, 0}, {1, 1, 3}, {2, 1, 3}}, 1e-5},
		{"cnn", nil, 8, []split{{1, 1, 0}, {2, 1, 0}, {4, 1, 0}, {1, 1, 3}, {1, 2, 3}}, 1e-5},
	} {
		want := serialTrain(t, tc.model, tc.hidden, tc.batch, steps, seed, lr)
		for _, w := range tc.splits {
			c := Config{Model: tc.model, Hidden: tc.hidden, Workers: w.workers, Accumulate: w.accumulate, Chunk: w.chunk,
				Batch: tc.batch / (w.workers * w.accumulate), Steps: steps, Seed: seed}
			c.Schedule.Base = lr
			t0 := time.Now()
			res, err := Run(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			n, m := relDiff(res.Params, want)
			t.Logf("%s W=%d M=%d chunk %d: relative difference %.2g (2-norm), %.2g (max); %v", tc.model, w.workers, w.accumulate, w.chunk, n, m, time.Since(t0))
			if n > tc.tol || m > tc.tol {
				t.Errorf("%s W=%d M=%d chunk %d: weights differ from serial training by %.3g (2-norm), %.3g (max), want <= %g", tc.model, w.workers, w.accumulate, w.chunk, n, m, tc.tol)
			}
		}
	}
}

// Independent workers exchange nothing: worker 0 of two ends with the
// weights of serial training on its half of every global batch alone,
// and its all-reduce next to no time. Over TCP they are refused.
func TestIndependentWorkers(t *testing.T) {
	const steps, seed, lr, batch = 10, 3, 0.05, 8
	hidden := []int{64}
	want := serialShard(t, "mlp", hidden, 2*batch, 2, 0, steps, seed, lr)
	c := Config{Model: "mlp", Hidden: hidden, Workers: 2, Batch: batch, Steps: steps, Seed: seed, Independent: true, Threads: 1}
	c.Schedule.Base = lr
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if n, m := relDiff(res.Params, want); n > 1e-5 || m > 1e-5 {
		t.Errorf("independent worker 0 differs from serial training on its shard by %.3g (2-norm), %.3g (max)", n, m)
	}
	// The exchanging run of the same configuration ends elsewhere.
	c.Independent = false
	joint, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := relDiff(joint.Params, want); n < 1e-3 {
		t.Errorf("exchanging workers end within %.3g of worker 0 alone", n)
	}
	c.Independent = true
	m, err := Measure(context.Background(), c, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	// A ring of one rank returns at once: the phases hold only the
	// timing's own cost, where two ranks exchanging these 51k values (204 kB)
	// take tens of µs. The fastest step is taken, as a step during which
	// the system ran something else on the core holds that too.
	fastest := m.StepStats[0].Phases
	for _, s := range m.StepStats[1:] {
		fastest.AllReduce = min(fastest.AllReduce, s.Phases.AllReduce)
		fastest.Wait = min(fastest.Wait, s.Phases.Wait)
	}
	if fastest.AllReduce > 10*time.Microsecond || fastest.Wait > 10*time.Microsecond {
		t.Errorf("independent workers' all-reduce %v, wait %v in the fastest of %d steps; want next to none", fastest.AllReduce, fastest.Wait, len(m.StepStats))
	}
	if r := m.Record("x"); r.Transport != "none" || r.Workers != 2 || r.GlobalBatch != 2*batch {
		t.Errorf("record transport %q, %d workers, global batch %d; want none, 2, %d", r.Transport, r.Workers, r.GlobalBatch, 2*batch)
	}
	c.Transport = "tcp"
	if _, err := Run(context.Background(), c); err == nil || !strings.Contains(err.Error(), "independent workers run in this process") {
		t.Errorf("independent workers over tcp: %v", err)
	}
}

// Independent workers in step meet once a step over their transport but
// exchange nothing else: worker 0 of three ends with the weights of serial
// training on its third of every global batch, over either transport, and
// its record says over which it met. In step applies only to independent
// workers.
func TestInStepWorkers(t *testing.T) {
	const steps, seed, lr, batch = 6, 3, 0.05, 8
	hidden := []int{64}
	want := serialShard(t, "mlp", hidden, 3*batch, 3, 0, steps, seed, lr)
	for _, tr := range []string{"inproc", "tcp"} {
		c := Config{Model: "mlp", Hidden: hidden, Workers: 3, Batch: batch, Steps: steps, Seed: seed, Independent: true, InStep: true, Threads: 1, Transport: tr}
		c.Schedule.Base = lr
		res, err := Run(context.Background(), c)
		if err != nil {
			t.Fatalf("%s: %v", tr, err)
		}
		if n, m := relDiff(res.Params, want); n > 1e-5 || m > 1e-5 {
			t.Errorf("%s: worker 0 in step differs from serial training on its shard by %.3g (2-norm), %.3g (max)", tr, n, m)
		}
		m, err := Measure(context.Background(), c, 0, 2)
		if err != nil {
			t.Fatalf("%s: %v", tr, err)
		}
		if r := m.Record("x"); r.Transport != "none" || r.Labels[benchlog.InStep] != tr || r.Workers != 3 {
			t.Errorf("%s: record transport %q, labels %v, %d workers; want none, in_step %s, 3", tr, r.Transport, r.Labels, r.Workers, tr)
		}
		apart := c
		apart.InStep, apart.Transport = false, "inproc"
		if _, err := Combine([]*Measurement{m, {Config: apart, StepStats: m.StepStats}}); err == nil {
			t.Errorf("%s: a measurement in step combined with one of independent workers", tr)
		}
	}
	c := Config{Model: "mlp", Workers: 2, Batch: batch, Steps: 2, InStep: true}
	if _, err := Run(context.Background(), c); err == nil || !strings.Contains(err.Error(), "in step applies to independent workers") {
		t.Errorf("exchanging workers in step: %v", err)
	}
}

// tiny is a quick configuration: a 784-32-10 MLP on 2000 easy synthetic
// samples (well separated classes).
func tiny() Config {
	c := Config{Model: "mlp", Hidden: []int{32}, Batch: 8, Steps: 30, Seed: 5}
	c.Data.Synthetic = data.SyntheticConfig{Train: 2000, Test: 500, Rows: 28, Cols: 28, Classes: 10, Separation: 0.25, Noise: 0.2, Seed: 1}
	c.Schedule.Base = 0.02
	return c
}

// Every transport, with and without overlap, and every bucket order give
// the same bits for the same seed and worker count.
func TestTransportsBitIdentical(t *testing.T) {
	for _, w := range []int{2, 3} {
		var want uint64
		for i, v := range []struct {
			transport string
			overlap   bool
			bucket    int
		}{
			{"inproc", false, 1 << 12}, {"inproc", true, 1 << 12}, {"tcp", false, 1 << 12}, {"tcp", true, 1 << 12},
		} {
			c := tiny()
			c.Workers, c.Transport, c.Overlap, c.BucketBytes = w, v.transport, v.overlap, v.bucket
			res, err := Run(context.Background(), c)
			if err != nil {
				t.Fatalf("W=%d %+v: %v", w, v, err)
			}
			if h := hashParams(res.Params); h != res.ParamsHash {
				t.Fatalf("ParamsHash %x does not match Params (%x)", res.ParamsHash, h)
			}
			if i == 0 {
				want = res.ParamsHash
			} else if res.ParamsHash != want {
				t.Errorf("W=%d %+v: parameters hash to %016x, inproc without overlap to %016x", w, v, res.ParamsHash, want)
			}
		}
	}
}

// Two runs with the same seed are identical; another seed differs.
func TestDeterministic(t *testing.T) {
	c := tiny()
	c.Workers, c.Overlap = 2, true
	var h [3]uint64
	for i, seed := range []uint64{5, 5, 6} {
		c.Seed = seed
		res, err := Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		h[i] = res.ParamsHash
	}
	if h[0] != h[1] || h[0] == h[2] {
		t.Errorf("hashes %016x %016x (same seed) %016x (other seed): want the first two equal, the third different", h[0], h[1], h[2])
	}
}

// A small network learns the synthetic classes: the run evaluates on the
// held-out set and stops at the target.
func TestEvalReachesTarget(t *testing.T) {
	c := tiny()
	c.Workers, c.Steps = 2, 400
	c.Eval = Eval{Every: 10, Target: 0.95, Stop: true}
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if res.StepsToTarget == 0 || res.FinalAccuracy() < 0.95 {
		t.Fatalf("not reached: %d evaluations, final accuracy %.3f", len(res.Evals), res.FinalAccuracy())
	}
	if len(res.Steps) != res.StepsToTarget || res.StepsToTarget%10 != 0 {
		t.Errorf("stopped after %d steps, target at step %d; want the same, a multiple of 10", len(res.Steps), res.StepsToTarget)
	}
	if first := res.Evals[0].Accuracy; first > 0.5 {
		t.Errorf("accuracy %.3f after 10 steps: the task is too easy to show learning", first)
	}
}

func TestEvalGrowth(t *testing.T) {
	c := tiny()
	c.Steps = 60
	c.Eval = Eval{Every: 5, Growth: 0.5}
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, e := range res.Evals {
		got = append(got, e.Step)
	}
	// 5, 10, 15 (=max(15, 15)), 23 (=⌈15·1.5⌉), 35, 53, then the last step.
	if want := []int{5, 10, 15, 23, 35, 53, 60}; !slices.Equal(got, want) {
		t.Errorf("evaluations at steps %v, want %v", got, want)
	}
}

func TestSearchLR(t *testing.T) {
	c := tiny()
	c.Steps = 200
	c.Eval = Eval{Every: 5, Target: 0.95}
	conv, err := SearchLR(context.Background(), c, []float64{1e-6, 0.005, 0.05, 0.02}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := conv.Trials
	if len(tr) != 4 || tr[0].Reached || tr[0].Steps != 200 {
		t.Fatalf("trials %+v: want 4, the first (lr 1e-6) not reaching the target in 200 steps", tr)
	}
	best := -1
	for i, x := range tr {
		if x.Reached && (best < 0 || x.Steps < tr[best].Steps) {
			best = i
		}
	}
	if best < 0 || best == 1 || conv.LR != tr[best].LR || conv.StepsToTarget != tr[best].Steps || !conv.Reached {
		t.Fatalf("chose lr %g at %d steps from trials %+v", conv.LR, conv.StepsToTarget, tr)
	}
	for i, x := range tr[2:] {
		// Trials after the first success run under its step count.
		if first := firstReached(tr); i+2 > first && x.MaxSteps > tr[first].Steps {
			t.Errorf("trial %d capped at %d steps, after a success in %d", i+2, x.MaxSteps, tr[first].Steps)
		}
	}
	r := conv.Record("r")
	if err := r.Validate(); err != nil || r.GlobalBatch != 8 || r.LearningRate != conv.LR || r.Target != 0.95 {
		t.Errorf("record %+v (%v)", r, err)
	}
}

func firstReached(tr []Trial) int {
	for i, x := range tr {
		if x.Reached {
			return i
		}
	}
	return len(tr)
}

func TestLRGrid(t *testing.T) {
	for _, tc := range []struct {
		base    float64
		ref, b  int
		factors []float64
		max     float64
		want    []float64
	}{
		{0.05, 64, 64, []float64{0.5, 1, 2}, 0, []float64{0.025, 0.05, 0.1}},
		{0.05, 64, 256, []float64{0.5, 1, 2}, 0.15, []float64{0.075, 0.15}},
		{0.025, 64, 4096, []float64{1, 0.5, 2}, 0.2, []float64{0.2, 0.1}},
		{0.1, 256, 16, []float64{1}, 1, []float64{0.00625}},
	} {
		if got := LRGrid(tc.base, tc.ref, tc.b, tc.factors, tc.max); !slices.Equal(got, tc.want) {
			t.Errorf("LRGrid(%g, %d, %d, %v, %g) = %v, want %v", tc.base, tc.ref, tc.b, tc.factors, tc.max, got, tc.want)
		}
	}
}

func TestMeasure(t *testing.T) {
	c := tiny()
	c.Workers, c.Accumulate = 2, 2
	m, err := Measure(context.Background(), c, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.StepStats) != 5 || m.StepStats[0].Step != 3 {
		t.Fatalf("%d timed steps from step %d, want 5 from 3", len(m.StepStats), m.StepStats[0].Step)
	}
	var sum, ss float64
	for _, s := range m.StepStats {
		sum += s.Time.Seconds()
	}
	mean := sum / 5
	for _, s := range m.StepStats {
		ss += (s.Time.Seconds() - mean) * (s.Time.Seconds() - mean)
	}
	if math.Abs(m.StepTime-mean) > 1e-12 || math.Abs(m.StepTimeStd-math.Sqrt(ss/4)) > 1e-12 || math.Abs(m.SamplesPerSec-32/mean) > 1e-6*m.SamplesPerSec {
		t.Errorf("step time %g ± %g, %g samples/s; want %g ± %g, %g", m.StepTime, m.StepTimeStd, m.SamplesPerSec, mean, math.Sqrt(ss/4), 32/mean)
	}
	r := m.Record("r")
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if r.Workers != 2 || r.Batch != 8 || r.GlobalBatch != 32 || r.Accumulate != 2 || r.Model != "mlp-784-32-10" || r.Device != Device || r.Transport != "inproc" {
		t.Errorf("record %+v", r)
	}
	for _, s := range m.StepRecords("r") {
		if err := s.Validate(); err != nil {
			t.Error(err)
		}
	}
}

// Combine is Measure over the timed steps of all its measurements: mean
// and sample standard deviation of the step times, computed here over the
// concatenated steps, and the mean phases.
func TestCombine(t *testing.T) {
	c := tiny()
	var ms []*Measurement
	for _, steps := range []int{3, 4} {
		m, err := Measure(context.Background(), c, 2, steps)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	m, err := Combine(ms)
	if err != nil {
		t.Fatal(err)
	}
	all := append(slices.Clone(ms[0].StepStats), ms[1].StepStats...)
	var sum, ss, fwd float64
	for _, s := range all {
		sum += s.Time.Seconds()
		fwd += s.Phases.Forward.Seconds()
	}
	mean := sum / 7
	for _, s := range all {
		ss += (s.Time.Seconds() - mean) * (s.Time.Seconds() - mean)
	}
	if m.Steps != 7 || m.Warmup != 4 || len(m.StepStats) != 7 {
		t.Errorf("%d steps after %d, %d step stats; want 7 after 4, 7", m.Steps, m.Warmup, len(m.StepStats))
	}
	if math.Abs(m.StepTime-mean) > 1e-12 || math.Abs(m.StepTimeStd-math.Sqrt(ss/6)) > 1e-12 || math.Abs(m.SamplesPerSec-8/mean) > 1e-6*m.SamplesPerSec {
		t.Errorf("step time %g ± %g, %g samples/s; want %g ± %g, %g", m.StepTime, m.StepTimeStd, m.SamplesPerSec, mean, math.Sqrt(ss/6), 8/mean)
	}
	if math.Abs(m.Phases.Forward.Seconds()-fwd/7) > 1e-9 {
		t.Errorf("forward %v, want %gs", m.Phases.Forward, fwd/7)
	}
	other := tiny()
	other.Batch = 16
	o, err := Measure(context.Background(), other, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Combine(append(ms, o)); err == nil || !strings.Contains(err.Error(), "batch 16") {
		t.Errorf("combining batches 8 and 16: %v", err)
	}
	chunked := tiny()
	chunked.Chunk = 3
	o, err = Measure(context.Background(), chunked, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Combine(append(ms, o)); err == nil || !strings.Contains(err.Error(), "in 3 chunks with one in 1") {
		t.Errorf("combining batch 8 whole and in chunks of 3: %v", err)
	}
	if _, err := Combine(nil); err == nil {
		t.Error("combining nothing: no error")
	}
}

func TestConfigErrors(t *testing.T) {
	c := Config{Model: "resnet", Workers: -1, Batch: 0, Transport: "udp", Eval: Eval{Target: 2}, Chunk: 9000}
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`unknown model "resnet" (valid: mlp, cnn)`, "workers -1", "batch 0", "neither steps nor epochs", `unknown transport "udp"`, "target accuracy 2", "chunk 9000 above 8192"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	for _, e := range []float64{-1, math.NaN(), 2e6} {
		c := Config{Model: "mlp", Workers: 1, Batch: 8, Epochs: e, Schedule: optim.ScheduleSettings{Kind: "constant", Base: 0.1}}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("epochs %g not in (0, 1e+06]", e)) {
			t.Errorf("epochs %g: %v", e, err)
		}
	}
	big := tiny()
	big.Batch = 7000
	if _, err := Run(context.Background(), big); err == nil || !strings.Contains(err.Error(), "global batch 7000") {
		t.Errorf("batch larger than the data set: %v", err)
	}
	if _, err := Run(context.Background(), Config{Model: "mlp", Batch: 8, Steps: 1, Data: Data{Dir: t.TempDir()}}); err == nil {
		t.Error("empty data directory: no error")
	}
}

// Cancelling the context stops every worker promptly.
func TestCancel(t *testing.T) {
	for _, transport := range Transports {
		ctx, cancel := context.WithCancel(context.Background())
		c := tiny()
		c.Workers, c.Transport, c.Steps = 3, transport, 1<<20
		n := 0
		c.Progress = func(StepStats) {
			if n++; n == 5 {
				cancel()
			}
		}
		t0 := time.Now()
		_, err := Run(ctx, c)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", transport, err)
		}
		if d := time.Since(t0); d > 10*time.Second {
			t.Errorf("%s: returned after %v", transport, d)
		}
	}
}
