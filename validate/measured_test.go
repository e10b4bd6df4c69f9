package validate

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"scaleplan/compute"
	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/internal/calib"
	"scaleplan/model"
	"scaleplan/predict"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// defaults returns the built-in catalogue and profiles.
func defaults(t testing.TB) (*hw.Catalog, *model.Profiles) {
	t.Helper()
	cat, err := hw.Default()
	if err != nil {
		t.Fatal(err)
	}
	prof, err := model.Default()
	if err != nil {
		t.Fatal(err)
	}
	return cat, prof
}

// measuredFile returns the measurements of the log at path as validate
// --measured reads them, with the built-in catalogue cat and profiles
// prof.
func measuredFile(t testing.TB, cat *hw.Catalog, prof *model.Profiles, path string) []Measured {
	t.Helper()
	lg, err := logs.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := (&LogReader{Catalog: cat}).Measurements(lg, prof, map[string]int{})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// measuredGlob returns the measurements of every log the patterns match,
// each of which must match one at least.
func measuredGlob(t testing.TB, cat *hw.Catalog, prof *model.Profiles, patterns ...string) []Measured {
	t.Helper()
	var ms []Measured
	for _, g := range patterns {
		files, err := filepath.Glob(g)
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v (%v)", g, files, err)
		}
		for _, f := range files {
			ms = append(ms, measuredFile(t, cat, prof, f)...)
		}
	}
	return ms
}

// TestCompareMeasuredClosedForm checks the prediction for one device
// against the operator model's law (compute.LawAt) and, for the device
// without its SM count, against the roofline written out by hand: a step
// of b samples takes b·PerSample + Fixed, or b·max(3F/(peak·e), 4A/B),
// plus P·bytes/B, with bytes the optimizer's traffic
// per parameter (20 for momentum SGD in fp32 and for mixed precision with
// fp16 gradients and an fp32 master), and the largest batch is the memory
// left after weights, gradients, momentum and master copy over 1.05
// times the activations of a sample.
func TestCompareMeasuredClosedForm(t *testing.T) {
	cat, prof := defaults(t)
	d := cat.DeviceCalled("NVIDIA H200")
	if d == nil || d.Name != "h200-sxm-141gb" {
		t.Fatalf("CUDA's name NVIDIA H200 resolves to %v, want h200-sxm-141gb", d)
	}
	m, err := prof.Model("resnet50")
	if err != nil {
		t.Fatal(err)
	}
	bw := float64(d.MemoryBandwidth)
	P := float64(m.Params)
	for _, tc := range []struct {
		prec            string
		peak            hw.Precision
		act             float64 // stored activations per sample
		weights, master float64 // bytes per parameter of weights and gradients, and of momentum and master
	}{
		{"fp32", hw.FP32, float64(m.Activations.FP32), 4, 4},
		{"tf32", hw.TF32, float64(m.Activations.FP32), 4, 4},
		{"amp-fp16", hw.FP16, float64(m.ActivationBytes(model.FP16)), 2, 4},
		{"amp-bf16", hw.BF16, float64(m.ActivationBytes(model.BF16)), 2, 4},
	} {
		const b = 256
		rep, err := CompareMeasured([]Measured{
			{Device: "NVIDIA H200", Model: "resnet50", Precision: tc.prec, Batch: b, SamplesPerSec: 1000},
			{Device: "h200-sxm-141gb", Model: "resnet50", Precision: tc.prec, Batch: 4096, OOM: true},
		}, cat, prof, predict.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.prec, err)
		}
		if len(rep.Groups) != 1 || len(rep.Groups[0].Rows) != 2 {
			t.Fatalf("%s: %d groups, want 1 of 2 rows", tc.prec, len(rep.Groups))
		}
		g := rep.Groups[0]
		// The H200 gives its SMs: compute by operators, the law at b.
		law, err := compute.LawAt(compute.Config{Device: d, Precision: tc.peak, Mode: compute.Eager}, "resnet50", b)
		if err != nil {
			t.Fatal(err)
		}
		update := P * 20 / bw
		want := b / (b*float64(law.PerSample) + float64(law.Fixed) + update)
		if got := g.Rows[0].Predicted; math.Abs(got-want) > 1e-9*want || !g.Rows[0].ByOperators {
			t.Errorf("%s: predicted %.6g samples/s (by operators %v), closed form %.6g", tc.prec, got, g.Rows[0].ByOperators, want)
		}
		// Without an SM count, the roofline: b·max(3F/(peak·e), 4A/B).
		sms := d.SMs
		d.SMs = 0
		roof, err := CompareMeasured([]Measured{{Device: "NVIDIA H200", Model: "resnet50", Precision: tc.prec, Batch: b, SamplesPerSec: 1000}}, cat, prof, predict.Options{})
		d.SMs = sms
		if err != nil {
			t.Fatal(err)
		}
		perSample := max(3*float64(m.ForwardFLOPs)/(float64(d.PeakFLOPs(tc.peak))*0.35), 4*tc.act/bw)
		wantRoof := b / (b*perSample + update)
		if got := roof.Groups[0].Rows[0].Predicted; math.Abs(got-wantRoof) > 1e-9*wantRoof || roof.Groups[0].Rows[0].ByOperators {
			t.Errorf("%s without SMs: predicted %.6g samples/s, roofline closed form %.6g", tc.prec, got, wantRoof)
		}
		if got, want := g.Rows[0].Error(), want/1000-1; math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: error %v, want %v", tc.prec, got, want)
		}
		fixed := P*(2*tc.weights+tc.master) + P*tc.master*boolf(tc.weights != tc.master)
		wantMax := int(math.Floor((float64(d.Memory) - fixed) / (1.05 * tc.act)))
		if g.PredictedMax != wantMax {
			t.Errorf("%s: largest batch %d, closed form %d", tc.prec, g.PredictedMax, wantMax)
		}
		if fp := g.Rows[0].Footprint; math.Abs(float64(fp)-(fixed+1.05*tc.act*b)) > 1 {
			t.Errorf("%s: footprint at batch %d %v, closed form %v", tc.prec, b, fp, fixed+1.05*tc.act*b)
		}
		if g.LargestRun != b || g.FirstOOM != 4096 || !(g.LargestError == g.Rows[0].Error()) {
			t.Errorf("%s: largest run %d, first OOM %d, error there %v", tc.prec, g.LargestRun, g.FirstOOM, g.LargestError)
		}
	}
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// TestCompareMeasuredScale checks that a sentence pair of 128 token pairs
// predicts 1/128 of the token pairs per second of 128 times the batch,
// and a largest batch of 1/128 of the tokens, rounded down. The H200 is
// taken without its SM count (the roofline): by operators a sentence of
// 128 tokens is also what attention spans, which a count of token pairs
// does not say (TestCompareMeasuredSentence).
func TestCompareMeasuredScale(t *testing.T) {
	cat, prof := defaults(t)
	d := cat.DeviceCalled("NVIDIA H200")
	sms := d.SMs
	d.SMs = 0
	defer func() { d.SMs = sms }()
	rep, err := CompareMeasured([]Measured{
		{Device: "NVIDIA H200", Model: "transformer-base", Precision: "fp32", Batch: 64, SampleScale: 128, SamplesPerSec: 700, Optimizer: model.Adam},
		{Device: "NVIDIA H200", Model: "transformer-base", Precision: "amp-fp16", Batch: 64 * 128, SamplesPerSec: 700 * 128, Optimizer: model.Adam},
	}, cat, prof, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tokens, pairs := rep.Groups[0], rep.Groups[1]
	if pairs.Precision != "fp32" || tokens.Precision != "amp-fp16" {
		t.Fatalf("groups %s, %s: want amp-fp16 then fp32", tokens.Precision, pairs.Precision)
	}
	ref, err := CompareMeasured([]Measured{
		{Device: "NVIDIA H200", Model: "transformer-base", Precision: "fp32", Batch: 64 * 128, SamplesPerSec: 700 * 128, Optimizer: model.Adam},
	}, cat, prof, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := ref.Groups[0]
	if got, want := pairs.Rows[0].Predicted, r.Rows[0].Predicted/128; math.Abs(got-want) > 1e-9*want {
		t.Errorf("sentence pairs/s %v, want token pairs/s / 128 = %v", got, want)
	}
	if got, want := pairs.Rows[0].Error(), r.Rows[0].Error(); math.Abs(got-want) > 1e-12 {
		t.Errorf("error %v per sentence pair, %v per token pair: want the same", got, want)
	}
	if got, want := pairs.PredictedMax, r.PredictedMax/128; got != want {
		t.Errorf("largest batch %d sentence pairs, want %d tokens / 128 = %d", got, r.PredictedMax, want)
	}
	if got, want := rep.MAE, (math.Abs(tokens.Rows[0].Error())+math.Abs(pairs.Rows[0].Error()))/2; math.Abs(got-want) > 1e-15 {
		t.Errorf("MAE %v, want the mean of the two rows' %v", got, want)
	}
}

// TestCompareMeasuredVariant checks that measurements of another variant
// (channels_last) form a group of their own, after the default's, with
// the same prediction at the same batch: the catalogue does not model
// memory formats.
func TestCompareMeasuredVariant(t *testing.T) {
	cat, prof := defaults(t)
	rep, err := CompareMeasured([]Measured{
		{Device: "NVIDIA H200", Model: "resnet50", Precision: "amp-fp16", Variant: "channels_last", Batch: 256, SamplesPerSec: 6000},
		{Device: "NVIDIA H200", Model: "resnet50", Precision: "amp-fp16", Batch: 256, SamplesPerSec: 3000},
		{Device: "NVIDIA H200", Model: "resnet50", Precision: "amp-fp16", Batch: 512, SamplesPerSec: 3050},
	}, cat, prof, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 2 {
		t.Fatalf("%d groups, want 2", len(rep.Groups))
	}
	def, cl := rep.Groups[0], rep.Groups[1]
	if def.Variant != "" || cl.Variant != "channels_last" || len(def.Rows) != 2 || len(cl.Rows) != 1 {
		t.Fatalf("groups %q (%d rows), %q (%d rows): want \"\" (2), \"channels_last\" (1)", def.Variant, len(def.Rows), cl.Variant, len(cl.Rows))
	}
	if def.LargestRun != 512 || cl.LargestRun != 256 {
		t.Errorf("largest batches %d, %d; want 512, 256", def.LargestRun, cl.LargestRun)
	}
	if a, b := def.Rows[0].Predicted, cl.Rows[0].Predicted; a != b || !(a > 0) {
		t.Errorf("predicted %v and %v at batch 256: want the same, positive", a, b)
	}
	if got, want := cl.Rows[0].Error(), cl.Rows[0].Predicted/6000-1; math.Abs(got-want) > 1e-15 {
		t.Errorf("channels_last error %v, want %v", got, want)
	}
}

func TestMemoryAgrees(t *testing.T) {
	for _, tc := range []struct {
		run, oom, pred int
		want           bool
	}{
		{512, 1024, 256, true},
		{512, 1024, 255, false},
		{512, 1024, 2047, true},
		{512, 1024, 2048, false},
		{512, 0, 1 << 20, true},
		{512, 0, 255, false},
		{0, 8, 4, false},
		{512, 1024, -1, false},
	} {
		g := MeasuredGroup{LargestRun: tc.run, FirstOOM: tc.oom, PredictedMax: tc.pred}
		if got := g.MemoryAgrees(); got != tc.want {
			t.Errorf("run %d, first OOM %d, predicted %d: agrees %v, want %v", tc.run, tc.oom, tc.pred, got, tc.want)
		}
	}
}

// refusal is a change to a measurement that CompareMeasured refuses, and
// what its error must say.
type refusal struct {
	edit func(*Measured)
	want []string
}

// checkRefusals checks that CompareMeasured refuses ok changed by each of
// refusals with an error that says what the refusal wants.
func checkRefusals(t *testing.T, cat *hw.Catalog, prof *model.Profiles, ok Measured, refusals []refusal) {
	t.Helper()
	for _, tc := range refusals {
		m := ok
		tc.edit(&m)
		_, err := CompareMeasured([]Measured{m}, cat, prof, predict.Options{})
		if err == nil {
			t.Errorf("%+v: no error, want %q", m, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: error %q, want %q in it", m, err, w)
			}
		}
	}
}

func TestCompareMeasuredErrors(t *testing.T) {
	cat, prof := defaults(t)
	ok := Measured{Device: "NVIDIA H200", Model: "resnet50", Precision: "fp32", Batch: 8, SamplesPerSec: 100, Source: "x.jsonl:3"}
	checkRefusals(t, cat, prof, ok, []refusal{
		{func(m *Measured) { m.Device = "NVIDIA B300" }, []string{"x.jsonl:3", `unknown device "NVIDIA B300"`, "h200-sxm-141gb"}},
		{func(m *Measured) { m.Model = "resnet51" }, []string{"x.jsonl:3", "resnet51", "resnet50"}},
		{func(m *Measured) { m.Precision = "int8" }, []string{"x.jsonl:3", `unknown precision "int8"`, "amp-bf16"}},
		{func(m *Measured) { m.Batch = 0 }, []string{"x.jsonl:3", "batch 0"}},
		{func(m *Measured) { m.SamplesPerSec = 0 }, []string{"x.jsonl:3", "samples/s 0"}},
		{func(m *Measured) { m.SamplesPerSec = math.Inf(1) }, []string{"samples/s +Inf"}},
		{func(m *Measured) { m.SampleScale = 0.5 }, []string{"sample scale 0.5"}},
		{func(m *Measured) { m.SampleScale = math.NaN() }, []string{"sample scale NaN"}},
		{func(m *Measured) { m.Device = "p100-sxm2"; m.Precision = "amp-bf16" }, []string{"x.jsonl:3", "no bf16 peak"}},
	})
}

// TestCompareMeasuredNodeClosedForm checks a measurement of 8 devices in
// one DGX H200 against the ring written out by hand on top of the one
// device's prediction (TestCompareMeasuredClosedForm checks that): the
// MLP's 7.45 MB gradient is one bucket, so its all-reduce starts when the
// backward pass ends and the update waits for it, and a ring of p devices
// takes 2(p − 1)(α + G/(p·β)) on ports of NVLink's 450 GB/s at NCCL's
// efficiency 0.8, α its 2 µs latency plus NCCL's 5 µs overhead.
func TestCompareMeasuredNodeClosedForm(t *testing.T) {
	cat, prof := defaults(t)
	m, err := prof.Model("mlp")
	if err != nil {
		t.Fatal(err)
	}
	const b = 512
	one := Measured{Device: "NVIDIA H200", Model: "mlp", Precision: "fp32", Batch: b, SamplesPerSec: 1e5}
	rep, err := CompareMeasured([]Measured{one}, cat, prof, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	step1 := b / rep.Groups[0].Rows[0].Predicted
	grad := 4 * float64(m.Params)
	if grad >= float64(25<<20) {
		t.Fatalf("gradient %v bytes: not one bucket", grad)
	}
	alpha, beta := 7e-6, 0.8*450e9
	for _, p := range []int{2, 4, 8} {
		several := one
		several.Devices, several.System, several.SamplesPerSec = p, "dgx-h200", float64(p)*1e5
		rep, err := CompareMeasured([]Measured{one, several}, cat, prof, predict.Options{})
		if err != nil {
			t.Fatalf("%d devices: %v", p, err)
		}
		if len(rep.Groups) != 2 || rep.Groups[1].Devices != p || rep.Groups[1].System != "dgx-h200" || rep.Groups[0].Devices != 1 || rep.Groups[0].System != "" {
			t.Fatalf("%d devices: groups %+v, want one of 1 device, then one of %d on dgx-h200", p, rep.Groups, p)
		}
		g := rep.Groups[1]
		ring := 2 * float64(p-1) * (alpha + grad/(float64(p)*beta))
		want := float64(p*b) / (step1 + ring)
		if got := g.Rows[0].Predicted; math.Abs(got-want) > 1e-9*want {
			t.Errorf("%d devices: predicted %.6g samples/s, closed form %.6g", p, got, want)
		}
		// Scaling: measured p times the one device's, predicted by the
		// closed form; the one device has none.
		if r := g.Rows[0]; r.MeasuredScaling != 1 || math.Abs(r.PredictedScaling-step1/(step1+ring)) > 1e-9 {
			t.Errorf("%d devices: scaling measured %v, predicted %v; want 1, %v", p, r.MeasuredScaling, r.PredictedScaling, step1/(step1+ring))
		}
		if r := rep.Groups[0].Rows[0]; !math.IsNaN(r.MeasuredScaling) || !math.IsNaN(r.PredictedScaling) {
			t.Errorf("one device: scaling %v, %v; want NaN", r.MeasuredScaling, r.PredictedScaling)
		}
		if rep.ScalingRows != 1 || math.Abs(rep.ScalingError-(1-step1/(step1+ring))) > 1e-9 {
			t.Errorf("%d devices: %d rows scaled, error %v; want 1, %v", p, rep.ScalingRows, rep.ScalingError, 1-step1/(step1+ring))
		}
		if g.Rows[0].Exchange != "nccl" || rep.Groups[0].Rows[0].Exchange != "" {
			t.Errorf("%d devices: exchange %q (one device %q), want nccl (\"\")", p, g.Rows[0].Exchange, rep.Groups[0].Rows[0].Exchange)
		}
		if g.PredictedMax != rep.Groups[0].PredictedMax || g.Rows[0].Footprint != rep.Groups[0].Rows[0].Footprint {
			t.Errorf("%d devices: largest batch %d, footprint %v; want one device's %d, %v", p, g.PredictedMax, g.Rows[0].Footprint, rep.Groups[0].PredictedMax, rep.Groups[0].Rows[0].Footprint)
		}
	}
}

// TestCompareMeasuredScalingMatch checks which row of one device a row of
// several is scaled against: the same batch and accumulation, not another
// batch, precision or an out-of-memory row.
func TestCompareMeasuredScalingMatch(t *testing.T) {
	cat, prof := defaults(t)
	node := func(b, accum int, prec string) Measured {
		return Measured{Device: "NVIDIA H200", Model: "resnet50", Precision: prec, Batch: b, Accumulation: accum, Devices: 8, System: "dgx-h200", SamplesPerSec: 7000}
	}
	rep, err := CompareMeasured([]Measured{
		{Device: "NVIDIA H200", Model: "resnet50", Precision: "fp32", Batch: 64, SamplesPerSec: 1000},
		{Device: "NVIDIA H200", Model: "resnet50", Precision: "fp32", Batch: 64, SamplesPerSec: 500}, // the first one counts
		{Device: "NVIDIA H200", Model: "resnet50", Precision: "fp32", Batch: 128, OOM: true},
		node(64, 1, "fp32"), node(64, 2, "fp32"), node(128, 1, "fp32"), node(64, 1, "tf32"),
	}, cat, prof, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var scaled []string
	for _, g := range rep.Groups {
		for _, r := range g.Rows {
			if !math.IsNaN(r.MeasuredScaling) {
				scaled = append(scaled, fmt.Sprintf("%s b%d a%d %.3f", g.Precision, r.Batch, r.Accumulation, r.MeasuredScaling))
			}
		}
	}
	if want := []string{"fp32 b64 a1 0.875"}; !slices.Equal(scaled, want) {
		t.Errorf("scaled rows %q, want %q", scaled, want)
	}
}

// TestCompareMeasuredMatchesScenario checks measurements of 1 to 32 DGX
// H200 GPUs (up to four nodes, over NDR InfiniBand with verbs) against
// what predict computes for a scenario of the same configuration: the
// MLPerf ResNet-50 recipe (LARS, fp16 with fp32 master weights) on the
// system with synthetic input and the ring exchange CompareMeasured runs,
// built by scenarios.Resolved.Build.
func TestCompareMeasuredMatchesScenario(t *testing.T) {
	cat, prof := defaults(t)
	const b = 128
	for _, n := range []int{1, 8, 16, 32} {
		src := fmt.Sprintf("name: same\nsystem: dgx-h200\nrecipe: mlperf-v0.7-resnet50\nprecision: fp16\nparallelism: {allreduce: ring}\nsweep: {devices: [%d], batch: [%d]}\ninput: {storage: synthetic}\n", n, b)
		r, err := scenarios.Parse(strings.NewReader(src), "same.yaml", scenarios.Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := predict.Predict(r, predict.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 1 || res.Rows[0].Err != nil {
			t.Fatalf("%d devices: scenario rows %+v", n, res.Rows)
		}
		want := res.Rows[0].Result.SamplesPerSec
		rep, err := CompareMeasured([]Measured{{Device: "h200-sxm-141gb", Model: "resnet50", Precision: "amp-fp16", Optimizer: model.LARS,
			Batch: b, Devices: n, System: "dgx-h200", SamplesPerSec: want}}, cat, prof, predict.Options{})
		if err != nil {
			t.Fatalf("%d devices: %v", n, err)
		}
		row := rep.Groups[0].Rows[0]
		if math.Abs(row.Predicted-want) > 1e-9*want {
			t.Errorf("%d devices: predicted %.6g samples/s, the scenario %.6g", n, row.Predicted, want)
		}
		wantX := map[int]string{1: "", 8: "nccl", 16: "nccl, verbs", 32: "nccl, verbs"}[n]
		if row.Exchange != wantX {
			t.Errorf("%d devices: exchange %q, want %q", n, row.Exchange, wantX)
		}
	}
}

// TestCompareMeasuredTransports checks that a measurement's transports
// replace the system's defaults: IPoIB between two DGX H200 nodes (one
// port of a node's eight, at 0.35 of the line rate) exposes more of the
// all-reduce than verbs over all eight, and a transport the system lacks,
// or one that cannot carry the traffic, is refused with the valid ones.
func TestCompareMeasuredTransports(t *testing.T) {
	cat, prof := defaults(t)
	m := Measured{Device: "h200-sxm-141gb", Model: "resnet50", Precision: "amp-fp16", Batch: 64, Devices: 16, System: "dgx-h200", SamplesPerSec: 1e4, Source: "x.csv:2"}
	predicted := func(inter, intra string) (float64, string) {
		t.Helper()
		m := m
		m.Transport, m.IntraTransport = inter, intra
		rep, err := CompareMeasured([]Measured{m}, cat, prof, predict.Options{})
		if err != nil {
			t.Fatalf("%q, %q: %v", inter, intra, err)
		}
		r := rep.Groups[0].Rows[0]
		return r.Predicted, r.Exchange
	}
	verbs, x := predicted("", "")
	if x != "nccl, verbs" {
		t.Errorf("defaults: exchange %q, want nccl, verbs", x)
	}
	if v, x := predicted("verbs", "nccl"); v != verbs || x != "nccl, verbs" {
		t.Errorf("verbs and nccl named: %v samples/s over %q, want the defaults' %v", v, x, verbs)
	}
	ipoib, x := predicted("ipoib", "")
	if x != "nccl, ipoib" || !(ipoib < 0.9*verbs) {
		t.Errorf("ipoib: %v samples/s over %q; want under 0.9 × verbs' %v, over nccl, ipoib", ipoib, x, verbs)
	}
	checkRefusals(t, cat, prof, m, []refusal{
		{func(m *Measured) { m.Transport = "slingshot" }, []string{"x.csv:2", "slingshot", "verbs"}},
		{func(m *Measured) { m.IntraTransport = "verbs" }, []string{"x.csv:2", `intra-node transport "verbs"`, "works only between nodes"}},
	})
}

// TestCompareMeasuredNodes checks that a measurement's node count places
// its devices: 8 H200s on one node of a DGX H200 all-reduce over NVLink
// alone (nccl), on 2 nodes of 4 also over the fabric (nccl, verbs); 16 on
// 2 nodes are the whole nodes that the count alone gives.
func TestCompareMeasuredNodes(t *testing.T) {
	cat, prof := defaults(t)
	predicted := func(devices, nodes int) (float64, string) {
		t.Helper()
		m := Measured{Device: "h200-sxm-141gb", Model: "resnet50", Precision: "amp-fp16", Batch: 64, Devices: devices, Nodes: nodes,
			System: "dgx-h200", SamplesPerSec: 1e4, Source: "x.jsonl:2"}
		rep, err := CompareMeasured([]Measured{m}, cat, prof, predict.Options{})
		if err != nil {
			t.Fatalf("%d devices on %d nodes: %v", devices, nodes, err)
		}
		r := rep.Groups[0].Rows[0]
		return r.Predicted, r.Exchange
	}
	if _, x := predicted(8, 0); x != "nccl" {
		t.Errorf("8 devices, nodes not said: exchange %q, want nccl (one node)", x)
	}
	if _, x := predicted(8, 2); x != "nccl, verbs" {
		t.Errorf("8 devices on 2 nodes: exchange %q, want nccl, verbs", x)
	}
	whole, _ := predicted(16, 0)
	if two, _ := predicted(16, 2); two != whole {
		t.Errorf("16 devices: %v samples/s on 2 nodes, %v on whole nodes; want the same", two, whole)
	}
}

// TestCompareMeasuredSystemErrors checks the refusals of measurements of
// several devices: each names the record and what is wrong.
func TestCompareMeasuredSystemErrors(t *testing.T) {
	cat, prof := defaults(t)
	ok := Measured{Device: "NVIDIA H200", Model: "resnet50", Precision: "fp32", Batch: 8, Devices: 16, System: "dgx-h200", SamplesPerSec: 100, Source: "x.jsonl:3"}
	if _, err := CompareMeasured([]Measured{ok}, cat, prof, predict.Options{}); err != nil {
		t.Fatalf("16 devices of dgx-h200: %v", err)
	}
	checkRefusals(t, cat, prof, ok, []refusal{
		{func(m *Measured) { m.System = "" }, []string{"x.jsonl:3", "16 devices: name the system"}},
		{func(m *Measured) { m.System = "dgx-h300" }, []string{"x.jsonl:3", `"dgx-h300"`, "dgx-h200"}},
		{func(m *Measured) { m.System = "dgx-h100" }, []string{"x.jsonl:3", "measured on h200-sxm-141gb, but system dgx-h100's nodes hold h100-sxm5-80gb"}},
		{func(m *Measured) { m.Devices = 12 }, []string{"x.jsonl:3", "12 devices are not whole nodes of system dgx-h200, whose nodes hold 8"}},
		{func(m *Measured) { m.Devices = 1024 }, []string{"x.jsonl:3", "1024 devices need 128 nodes of 8; system dgx-h200 has 127"}},
		{func(m *Measured) { m.Nodes = 3 }, []string{"x.jsonl:3", "16 devices on 3 nodes: not as many on each, up to the 8 of a node of system dgx-h200"}},
		{func(m *Measured) { m.Nodes = 1 }, []string{"x.jsonl:3", "16 devices on 1 nodes: not as many on each, up to the 8"}},
		{func(m *Measured) { m.Devices = -2 }, []string{"x.jsonl:3", "devices -2"}},
		{func(m *Measured) { m.Accumulation = -1 }, []string{"x.jsonl:3", "accumulation -1"}},
	})
	// A system is not needed, nor looked at, for one device.
	one := ok
	one.Devices, one.System = 1, "dgx-h100"
	if _, err := CompareMeasured([]Measured{one}, cat, prof, predict.Options{}); err != nil {
		t.Errorf("one device, system of another device: %v", err)
	}
}

// TestCompareCalibrated checks measurements predicted by a fitted law: one
// device computes b/(b/v0 + t) exactly (the roofline's update carved out
// of t), eight add the exchange to it, and the rows the law was fitted to
// (one device, a global batch within the fitted ones, from a log its
// source names) are marked and left out of the errors.
func TestCompareCalibrated(t *testing.T) {
	cat, prof := defaults(t)
	const v0, tt = 1100.0, 0.009
	cals := []scenarios.CalibrationFile{{Path: "h200.yaml", Cal: &calib.Calibration{Throughput: []calib.ThroughputEntry{{
		Model: "resnet50", Device: "NVIDIA H200", Devices: 1, Precision: "fp32", V0: v0, T: tt,
		Batches: []int{32, 512}, Source: "logs/resnet50.jsonl, logs/other.jsonl",
	}}}}}
	row := func(b, devices int, source string) Measured {
		return Measured{Device: "h200-sxm-141gb", Model: "resnet50", Precision: "fp32", Batch: b, Devices: devices,
			System: "dgx-h200", SamplesPerSec: 1000 * float64(devices), Source: source}
	}
	ms := []Measured{
		row(64, 1, "elsewhere/resnet50.jsonl:5"), // fitted: the source's base name, batch 64 within 32–512
		row(16, 1, "logs/resnet50.jsonl:3"),      // below the fitted batches: a prediction
		row(64, 1, "mine.jsonl:1"),               // another log: a prediction
		row(64, 8, "logs/resnet50.jsonl:9"),      // eight devices: a prediction
		{Device: "h200-sxm-141gb", Model: "resnet50", Precision: "tf32", Batch: 64, SamplesPerSec: 2000, Source: "logs/resnet50.jsonl:4"}, // no entry: the roofline
	}
	rep, err := CompareCalibrated(ms, cat, prof, cals, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	errSum, n := 0.0, 0
	for _, g := range rep.Groups {
		for _, r := range g.Rows {
			got = append(got, fmt.Sprintf("%s b%d x%d fitted=%v calibrated=%v", g.Precision, r.Batch, g.Devices, r.Fitted, r.Calibration != ""))
			if g.Devices == 1 && r.Calibration != "" {
				want := float64(r.Batch) / (float64(r.Batch)/v0 + tt)
				if math.Abs(r.Predicted-want) > 1e-9*want {
					t.Errorf("batch %d: predicted %.6g samples/s, closed form %.6g", r.Batch, r.Predicted, want)
				}
			}
			if g.Devices == 8 {
				one := 8 * 64 / (64/v0 + tt)
				if !(r.Predicted < one && r.Predicted > 0.9*one) {
					t.Errorf("8 devices: predicted %.6g samples/s, want a little under 8 × one's %.6g", r.Predicted, one)
				}
			}
			if !r.Fitted {
				errSum += math.Abs(r.Error())
				n++
			}
		}
	}
	want := []string{
		"fp32 b16 x1 fitted=false calibrated=true", "fp32 b64 x1 fitted=true calibrated=true", "fp32 b64 x1 fitted=false calibrated=true",
		"fp32 b64 x8 fitted=false calibrated=true", "tf32 b64 x1 fitted=false calibrated=false",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows\n%q\nwant\n%q", got, want)
	}
	if rep.Fitted != 1 || rep.Rows != 4 || math.Abs(rep.MAE-errSum/float64(n)) > 1e-15 {
		t.Errorf("fitted %d, predictions %d, MAE %v; want 1, 4, %v", rep.Fitted, rep.Rows, rep.MAE, errSum/float64(n))
	}
	if c := rep.Groups[0].Rows[0].Calibration; !strings.HasPrefix(c, "h200.yaml (logs/resnet50.jsonl") {
		t.Errorf("calibration %q, want the file and the entry's source", c)
	}
	// The published calibrations name figures, not files: every row on the
	// entry's device count is taken to be the figure it was fitted to.
	pub, err := scenarios.ReadCalibrationFiles([]string{scenarios.Published})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = CompareCalibrated([]Measured{
		{Device: "v100-sxm2-16gb", Model: "resnet50", Precision: "amp-fp16", Batch: 192, SamplesPerSec: 1376, Source: "any.csv:2"},
		{Device: "v100-sxm2-16gb", Model: "resnet50", Precision: "amp-fp16", Batch: 192, Devices: 8, System: "dgx1", SamplesPerSec: 10723, Source: "any.csv:3"},
	}, cat, prof, pub, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if one, node := rep.Groups[0].Rows[0], rep.Groups[1].Rows[0]; !one.Fitted || node.Fitted || math.Abs(one.Predicted-1376) > 1e-6 || rep.Rows != 1 {
		t.Errorf("published: one GPU fitted %v at %v samples/s, the node fitted %v; %d predictions; want true at 1376, false, 1", one.Fitted, one.Predicted, node.Fitted, rep.Rows)
	}
	// An entry that did not bound v0 computes nothing.
	cals[0].Cal.Throughput[0].V0Unbounded = true
	if _, err := CompareCalibrated(ms[:1], cat, prof, cals, predict.Options{}); err == nil || !strings.Contains(err.Error(), "elsewhere/resnet50.jsonl:5") || !strings.Contains(err.Error(), "did not bound v0") {
		t.Errorf("unbounded v0: %v", err)
	}
}

// TestPublishedPoints: the H100's published entry names two built-in
// cases, one DGX H100 at the scenario's batch of 400 per GPU and eight at
// the case's 50; DeepLearningExamples' one V100 at its scenario's 192; a source
// that names no built-in case gives none.
func TestPublishedPoints(t *testing.T) {
	for _, tc := range []struct {
		source string
		want   [][2]int
	}{
		{"validate case mlperf-v3.0-dgx-h100-resnet50-epoch with mlperf-v3.0-dgx-h100-n8-resnet50-epoch: MLPerf", [][2]int{{8, 400}, {64, 50}}},
		{"validate case dle-mxnet-dgx1-1gpu (the V100-SXM2 16GB's figure): NVIDIA", [][2]int{{1, 192}}},
		{"validate case no-such-case: figure", nil},
		{"a log file.jsonl", nil},
	} {
		if got := publishedPoints(tc.source); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.source, got, tc.want)
		}
	}
}

// TestDeviceRatios checks the comparison of kinds of device: groups of one
// device that differ only in their device are paired, in the report's
// order, at the largest batch both ran (the first row of each there), and
// the ratios and their error are the rows' samples/s divided. A variant,
// several devices, an out-of-memory batch or a row a calibration was
// fitted to pairs nothing.
func TestDeviceRatios(t *testing.T) {
	cat, prof := defaults(t)
	r50 := func(dev, prec string, batch int, v float64) Measured {
		return Measured{Device: dev, Model: "resnet50", Precision: prec, Batch: batch, SamplesPerSec: v, OOM: v == 0}
	}
	ms := []Measured{
		r50("h200-sxm-141gb", "fp32", 128, 1000),
		r50("NVIDIA H100 80GB HBM3", "fp32", 256, 990),
		r50("NVIDIA H200", "fp32", 512, 1084),
		r50("NVIDIA H200", "fp32", 512, 2000), // the second row at 512: not compared
		r50("NVIDIA H100 80GB HBM3", "fp32", 512, 1012),
		r50("NVIDIA H100 80GB HBM3", "fp32", 1024, 0), // out of memory
		r50("NVIDIA H200", "fp32", 256, 1059),
		r50("a100-sxm4-80gb", "fp32", 256, 400),
		r50("NVIDIA H200", "fp32", 1024, 1090), // ran on the H200 alone
		// a variant of its own on one device, and the default on another
		{Device: "h100-sxm5-80gb", Model: "resnet50", Precision: "amp-fp16", Variant: "channels_last", Batch: 256, SamplesPerSec: 4676},
		r50("h200-sxm-141gb", "amp-fp16", 256, 2967),
		// several devices: not compared
		{Device: "h100-sxm5-80gb", Model: "resnet50", Precision: "fp32", Batch: 256, Devices: 8, System: "dgx-h100", SamplesPerSec: 7800},
		{Device: "h200-sxm-141gb", Model: "resnet50", Precision: "fp32", Batch: 256, Devices: 8, System: "dgx-h200", SamplesPerSec: 8300},
	}
	rep, err := CompareMeasured(ms, cat, prof, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// predicted returns the prediction of the first row of device's fp32
	// group of one device at batch.
	predicted := func(device string, batch int) float64 {
		for _, g := range rep.Groups {
			if g.Device == device && g.Precision == "fp32" && g.Devices == 1 {
				for _, r := range g.Rows {
					if r.Batch == batch {
						return r.Predicted
					}
				}
			}
		}
		t.Fatalf("no row of %s at %d", device, batch)
		return 0
	}
	want := []DeviceRatio{
		{Model: "resnet50", Precision: "fp32", Batch: 256, A: "a100-sxm4-80gb", B: "h100-sxm5-80gb", MeasuredA: 400, MeasuredB: 990},
		{Model: "resnet50", Precision: "fp32", Batch: 256, A: "a100-sxm4-80gb", B: "h200-sxm-141gb", MeasuredA: 400, MeasuredB: 1059},
		// the one pair of the same compute: the H200's bandwidth over the H100's
		{Model: "resnet50", Precision: "fp32", Batch: 512, A: "h100-sxm5-80gb", B: "h200-sxm-141gb", MeasuredA: 1012, MeasuredB: 1084, Bandwidth: 4.8 / 3.35},
	}
	for i := range want {
		w := &want[i]
		w.PredictedA, w.PredictedB = predicted(w.A, w.Batch), predicted(w.B, w.Batch)
	}
	for i := range rep.Ratios {
		if i < len(want) && math.Abs(rep.Ratios[i].Bandwidth-want[i].Bandwidth) < 1e-12 {
			rep.Ratios[i].Bandwidth = want[i].Bandwidth // the datasheets' quotient, to the last bit
		}
	}
	if !slices.Equal(rep.Ratios, want) {
		t.Fatalf("ratios\n%+v\nwant\n%+v", rep.Ratios, want)
	}
	r := rep.Ratios[2]
	if got, want := r.Measured(), 1084.0/1012; got != want {
		t.Errorf("measured ratio %v, want %v", got, want)
	}
	if got, want := r.Error(), (r.PredictedB/r.PredictedA)/(1084.0/1012)-1; math.Abs(got-want) > 1e-15 {
		t.Errorf("error %v, want %v", got, want)
	}
	var sum float64
	for _, r := range rep.Ratios {
		sum += math.Abs(r.Error())
	}
	if got := rep.RatioError; math.Abs(got-sum/3) > 1e-15 {
		t.Errorf("RatioError %v, want %v", got, sum/3)
	}

	// The published calibrations were fitted to every one-device row of
	// ResNet-50 in fp16 on the A100: it pairs with nothing.
	pub, err := scenarios.ReadCalibrationFiles([]string{scenarios.Published})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = CompareCalibrated([]Measured{r50("a100-sxm4-80gb", "amp-fp16", 256, 2000), r50("h100-sxm5-80gb", "amp-fp16", 256, 2700)}, cat, prof, pub, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Groups[0].Rows[0].Fitted || len(rep.Ratios) != 0 || !math.IsNaN(rep.RatioError) {
		t.Errorf("A100 row fitted %v; ratios %+v, error %v: want fitted, none, NaN", rep.Groups[0].Rows[0].Fitted, rep.Ratios, rep.RatioError)
	}
}

func TestMeasuredLayout(t *testing.T) {
	for _, c := range []struct {
		framework, variant string
		nchw               bool
	}{
		{"torch 2.11.0+cu130", "", true},
		{"torch 2.11.0+cu130", "compile", true},
		{"torch 2.11.0+cu130", "channels_last compile", false},
		{"", "", false},
		{"mxnet 1.8", "", false},
	} {
		if got := measuredNCHW(&Measured{Framework: c.framework, Variant: c.variant}); got != c.nchw {
			t.Errorf("%q %q: NCHW %v, want %v", c.framework, c.variant, got, c.nchw)
		}
	}
	for v, want := range map[string]compute.Mode{"": compute.Eager, "channels_last": compute.Eager, "channels_last compile": compute.Compiled, "compile=xla": compute.Compiled, "compiled_not": compute.Eager} {
		if got := measuredMode(&Measured{Framework: "torch", Variant: v}); got != want {
			t.Errorf("variant %q: mode %s, want %s", v, got, want)
		}
	}
	// Graph executors launch their kernels without Python between them.
	for fw, want := range map[string]compute.Mode{"mxnet": compute.Compiled, "tensorflow 2.4": compute.Compiled, "torch": compute.Eager, "": compute.Eager} {
		if got := measuredMode(&Measured{Framework: fw}); got != want {
			t.Errorf("framework %q: mode %s, want %s", fw, got, want)
		}
	}
}

// TestMeasuredCompute checks the host's mechanisms each log gets: PyTorch
// logs their optimizer, autocast under automatic mixed precision and the
// gradient scaler under amp-fp16 only; other frameworks none.
func TestMeasuredCompute(t *testing.T) {
	d := &hw.Device{Name: "d", SMs: 1}
	for _, c := range []struct {
		framework, precision string
		prec                 hw.Precision
		autocast, scaler     bool
		opt                  model.Optimizer
	}{
		{"torch 2.11", "amp-fp16", hw.FP16, true, true, model.Momentum},
		{"torch", "amp-bf16", hw.BF16, true, false, model.Momentum},
		{"torch", "fp16", hw.FP16, false, false, model.Momentum},
		{"torch", "tf32", hw.TF32, false, false, model.Momentum},
		{"mxnet", "amp-fp16", hw.FP16, false, false, ""},
	} {
		ms := &Measured{Framework: c.framework, Precision: c.precision}
		got := measuredCompute(ms, d, c.prec, model.Momentum, 0)
		if got.Autocast != c.autocast || got.GradScaler != c.scaler || got.Optimizer != c.opt {
			t.Errorf("%s %s: autocast %v, scaler %v, optimizer %q; want %v, %v, %q", c.framework, c.precision,
				got.Autocast, got.GradScaler, got.Optimizer, c.autocast, c.scaler, c.opt)
		}
	}
}

// TestCompareMeasuredSentence checks that, by operators, a log's sentence
// pair of 128 tokens is predicted from transformer-base's operators in
// sentences of 128 tokens: the law at 128 times the batch with SeqLen 128.
func TestCompareMeasuredSentence(t *testing.T) {
	cat, prof := defaults(t)
	rep, err := CompareMeasured([]Measured{
		{Device: "NVIDIA H200", Model: "transformer-base", Precision: "fp32", Batch: 64, SampleScale: 128, SamplesPerSec: 700, Optimizer: model.Adam},
	}, cat, prof, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := cat.DeviceCalled("NVIDIA H200")
	law, err := compute.LawAt(compute.Config{Device: d, Precision: hw.FP32, Mode: compute.Eager, SeqLen: 128}, "transformer-base", 64*128)
	if err != nil {
		t.Fatal(err)
	}
	m, err := prof.Model("transformer-base")
	if err != nil {
		t.Fatal(err)
	}
	update := float64(sim.UpdateTime(m, d, model.Adam, model.FP32, model.FP32))
	want := 64 / (64*128*float64(law.PerSample) + float64(law.Fixed) + update)
	if got := rep.Groups[0].Rows[0].Predicted; math.Abs(got-want) > 1e-9*want {
		t.Errorf("sentence pairs/s %v, want %v from the law at sequence length 128", got, want)
	}
}

// TestCompareMeasuredSeqLen checks Measured.SeqLen: BERT-large at its
// profile's 512 tokens predicts as without it; at 128 tokens a sequence
// costs a quarter of the FLOPs or less (model.TransformerShape.TrainFLOPs:
// the products linear in the tokens, attention's in their square), so it
// runs more than three times the sequences a second (the update and the
// launches do not shrink) and less than sixteen (the square), and fits
// more than twice as many in memory; a length on a model profiled per
// image is refused.
func TestCompareMeasuredSeqLen(t *testing.T) {
	cat, prof := defaults(t)
	at := func(seq int) MeasuredGroup {
		t.Helper()
		rep, err := CompareMeasured([]Measured{{Device: "a100-sxm4-80gb", Model: "bert-large", Precision: "amp-fp16",
			Batch: 32, SeqLen: seq, SamplesPerSec: 100}}, cat, prof, predict.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return rep.Groups[0]
	}
	def, full, short := at(0), at(512), at(128)
	if def.Rows[0].Predicted != full.Rows[0].Predicted || def.PredictedMax != full.PredictedMax {
		t.Errorf("512 tokens: %v samples/s, largest batch %d; the profile's length %v, %d", full.Rows[0].Predicted, full.PredictedMax, def.Rows[0].Predicted, def.PredictedMax)
	}
	shape, err := model.LookupTransformer("bert-large")
	if err != nil {
		t.Fatal(err)
	}
	ratio := shape.TrainFLOPs(1, 512) / shape.TrainFLOPs(1, 128)
	if r := short.Rows[0].Predicted / full.Rows[0].Predicted; !(ratio > 4 && r > 3 && r < 16) {
		t.Errorf("128 against 512 tokens: %.3g times the samples/s (the FLOPs %.3g times), want between 3 and 16", r, ratio)
	}
	if !(short.PredictedMax > 2*full.PredictedMax) {
		t.Errorf("largest batch %d at 128 tokens, %d at 512: want more than twice", short.PredictedMax, full.PredictedMax)
	}
	_, err = CompareMeasured([]Measured{{Device: "a100-sxm4-80gb", Model: "resnet50", Precision: "amp-fp16",
		Batch: 32, SeqLen: 128, SamplesPerSec: 100}}, cat, prof, predict.Options{})
	if err == nil || !strings.Contains(err.Error(), "sequence length 128") {
		t.Errorf("resnet50 at 128 tokens: %v, want the length refused", err)
	}
}
