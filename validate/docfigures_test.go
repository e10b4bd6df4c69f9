package validate

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"scaleplan/scenarios"
	"scaleplan/sim"
)

// errorsWith runs the built-in cases with edit applied to every scenario
// and returns the report and each case's relative error by name.
func errorsWith(t *testing.T, edit func(*scenarios.Scenario)) (*Report, map[string]float64) {
	t.Helper()
	rep := CompareCases(BuiltinCases(), Options{Scenario: scenarios.Options{Edit: edit}})
	if rep.Failed != 0 {
		t.Fatalf("%d cases failed", rep.Failed)
	}
	errs := map[string]float64{}
	for _, r := range rep.Results {
		errs[r.Case.Name] = r.Error
	}
	return rep, errs
}

// docQuote returns a check that docs/page, its white space collapsed to
// single spaces, holds a text, as a page quotes a figure whatever its
// line breaks.
func docQuote(t *testing.T, page string) func(string) {
	t.Helper()
	doc, err := os.ReadFile("../docs/" + page)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	return func(s string) {
		t.Helper()
		if !strings.Contains(text, s) {
			t.Errorf("docs/%s lacks %q", page, s)
		}
	}
}

// docSay returns docQuote's check of docs/page that also logs the text,
// so that -v prints the lines the page quotes.
func docSay(t *testing.T, page string) func(string) {
	t.Helper()
	quote := docQuote(t, page)
	return func(s string) {
		t.Helper()
		t.Log(s)
		quote(s)
	}
}

// pct rounds a relative error to a percentage of one decimal, as the
// docs quote it.
func pct(e float64) float64 { return math.Round(1000*e) / 10 }

// TestInterferenceEffect checks what docs/simulator.md ("Compute and
// communication interfere") says of the validation cases with the
// default interference and with parallelism.interference: 0: the mean
// error of the independent cases moves by under half a point, no case by
// three or more, and the figures the page quotes, read from it.
func TestInterferenceEffect(t *testing.T) {
	doc, err := os.ReadFile("../docs/simulator.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	zero := 0.0
	def, a := errorsWith(t, nil)
	off, b := errorsWith(t, func(s *scenarios.Scenario) { s.Parallelism.Interference = &zero })
	if d := math.Abs(def.MAE - off.MAE); d >= 0.005 {
		t.Errorf("mean error %.4f with the default, %.4f without: more than half a point apart", def.MAE, off.MAE)
	}
	if want := fmt.Sprintf("(%.1f %% with the default s, %.1f %% without)", pct(def.MAE), pct(off.MAE)); !strings.Contains(text, want) {
		t.Errorf("docs/simulator.md lacks %q", want)
	}
	for name, e := range a {
		if d := math.Abs(e - b[name]); d >= 0.03 {
			t.Errorf("%s: %+.4f with the default, %+.4f without: moves %.1f points, docs/simulator.md says under three", name, e, b[name], 100*d)
		}
	}
	for _, c := range []struct{ name, quote string }{
		{"mlperf-v0.7-dgxa100-transformer-n60-epoch", "the Transformer on 60 DGX A100 nodes (%s against %s without)"},
		{"tsubame3-caffe2-b-32", "seed 001 (b) on 32 GPUs (%s against %s)"},
		{"mlperf-v2.0-dgxa100-resnet50-n527-epoch", "ResNet-50 on 527 DGX A100 nodes (%s against %s)"},
	} {
		if want := fmt.Sprintf(c.quote, signed(pct(a[c.name])), signed(pct(b[c.name]))); !strings.Contains(text, want) {
			t.Errorf("%s: docs/simulator.md lacks %q", c.name, want)
		}
	}
}

// signed writes a percentage as the docs quote it: a sign (− for minus),
// one decimal and " %".
func signed(p float64) string {
	if p == 0 {
		p = 0 // not −0, which would print "+-0.0"
	}
	if p < 0 {
		return fmt.Sprintf("−%.1f %%", -p)
	}
	return fmt.Sprintf("+%.1f %%", p)
}

// TestExchangeAtScale checks what docs/network.md ("Rings at scale") says
// of the fixed all-reduces at scale: a flat ring of 512 H100s waits
// 2(p−1) hops of 2 µs NVLink plus NCCL's 5 µs overhead per all-reduce;
// run in place of NCCL's model on the MLPerf epoch cases, hierarchical
// predicts DGX H100 on 64 and 96 nodes within 10 % where a flat ring is
// more than twice the measured epoch, 128 DGX A100 nodes within 5 %, and
// CoreWeave's 448 nodes over 20 % slow, which NCCL's model gets within 5 %.
func TestExchangeAtScale(t *testing.T) {
	r, err := scenarios.Load("dgx-h100-resnet50-mlperf-v3.0", scenarios.Options{Edit: func(s *scenarios.Scenario) {
		s.Sweep.Devices = []int{512}
		s.Parallelism.AllReduce = "ring"
	}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.Build(r.Points()[0])
	if err != nil {
		t.Fatal(err)
	}
	if got, err := sim.AllReduceTime(c, 1); err != nil || math.Abs(float64(got)-2*511*7e-6) > 1e-9 {
		t.Errorf("flat ring of 512 H100s, one byte: %v (%v), want 2·511·7 µs", got, err)
	}
	with := func(alg string) func(*scenarios.Scenario) {
		return func(s *scenarios.Scenario) {
			if s.Parallelism.AllReduce == "nccl" || s.Parallelism.AllReduce == "" {
				s.Parallelism.AllReduce = alg
			}
		}
	}
	_, nccl := errorsWith(t, nil)
	_, hier := errorsWith(t, with("hierarchical"))
	_, ring := errorsWith(t, with("ring"))
	for _, name := range []string{"mlperf-v3.0-dgx-h100-n64-resnet50-epoch", "mlperf-v3.0-dgx-h100-n96-resnet50-epoch"} {
		if math.Abs(hier[name]) >= 0.10 || ring[name] <= 1 {
			t.Errorf("%s: hierarchical %+.3f (want within 10 %%), flat ring %+.3f (want over +100 %%)", name, hier[name], ring[name])
		}
	}
	for _, name := range []string{"mlperf-v1.1-dgxa100-resnet50-n128-epoch", "mlperf-v1.1-dgxa100-ssd-n128-epoch"} {
		if math.Abs(hier[name]) >= 0.05 {
			t.Errorf("%s: hierarchical %+.3f, want within 5 %%", name, hier[name])
		}
	}
	const cw = "mlperf-v3.1-coreweave-h100-n448-resnet50-epoch"
	if hier[cw] <= 0.20 || math.Abs(nccl[cw]) >= 0.05 {
		t.Errorf("%s: hierarchical %+.3f (want over +20 %%), nccl %+.3f (want within 5 %%)", cw, hier[cw], nccl[cw])
	}
}
