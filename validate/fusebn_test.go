package validate

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"scaleplan/predict"
)

// TestFuseBNReLURows checks what docs/compute.md ("Fused batch norms")
// says the fuse column moves on published-resnet50.csv: each group of its
// MXNet AMP rows before (the column cleared) and after, and the file's
// mean absolute error; and that no other row moves.
func TestFuseBNReLURows(t *testing.T) {
	cat, prof := defaults(t)
	ms := measuredFile(t, cat, prof, "../testdata/measurements/published-resnet50.csv")
	plain := make([]Measured, len(ms))
	copy(plain, ms)
	fused := 0
	for i := range plain {
		if plain[i].FuseBNReLU {
			fused++
		}
		plain[i].FuseBNReLU = false
	}
	if fused == 0 {
		t.Fatal("no row fuses")
	}
	errs := func(ms []Measured) (map[string]float64, float64) {
		rep, err := CompareMeasured(ms, cat, prof, predict.Options{})
		if err != nil {
			t.Fatal(err)
		}
		by := map[string]float64{}
		var sum float64
		var n int
		for _, g := range rep.Groups {
			for _, r := range g.Rows {
				by[r.Source] = 100 * r.Error()
				sum += math.Abs(r.Error())
				n++
			}
		}
		return by, 100 * sum / float64(n)
	}
	before, maeBefore := errs(plain)
	after, maeAfter := errs(ms)
	type span struct{ lo, hi float64 }
	groups := map[string]*[2]span{}
	widen := func(name string, i int, v float64) {
		g := groups[name]
		if g == nil {
			g = &[2]span{{math.Inf(1), math.Inf(-1)}, {math.Inf(1), math.Inf(-1)}}
			groups[name] = g
		}
		g[i].lo, g[i].hi = math.Min(g[i].lo, v), math.Max(g[i].hi, v)
	}
	for _, m := range ms {
		src := m.Source
		if !m.FuseBNReLU {
			if before[src] != after[src] {
				t.Errorf("%s: unfused row moved, %.1f to %.1f %%", src, before[src], after[src])
			}
			continue
		}
		var g string
		switch { // the file's rows by device: MLPerf's A100 is the 40GB, DeepLearningExamples' the 80GB
		case strings.HasPrefix(m.Device, "v100"):
			g = "v100"
		case m.Device == "a100-sxm4-40gb":
			g = "mlperf-a100"
		case strings.HasPrefix(m.Device, "h100") && m.Devices == 8:
			g = "mlperf-h100"
		case strings.HasPrefix(m.Device, "h100"):
			g = "mlperf-h100-64"
		default:
			g = "dle-a100"
		}
		widen(g, 0, before[src])
		widen(g, 1, after[src])
	}
	r := func(v float64) string { return strings.Replace(fmt.Sprintf("%+.0f", v), "-", "−", 1) }
	quote := docQuote(t, "compute.md")
	v, a, h, h64, d := groups["v100"], groups["mlperf-a100"], groups["mlperf-h100"], groups["mlperf-h100-64"], groups["dle-a100"]
	for _, want := range []string{
		fmt.Sprintf("the V100's %s to %s %% to %s to %s %%", r(v[0].lo), r(v[0].hi), r(v[1].lo), r(v[1].hi)),
		fmt.Sprintf("the MLPerf DGX A100 and DGX H100 rows %s and %s %% to %s and %s %% (but the 64-GPU DGX H100 row %s to %s %%)",
			r(a[0].lo), r(h[0].lo), r(a[1].lo), r(h[1].lo), r(h64[0].lo), r(h64[1].lo)),
		fmt.Sprintf("A100 rows %s to %s %% to %s to %s %%", r(d[0].lo), r(d[0].hi), r(d[1].lo), r(d[1].hi)),
		fmt.Sprintf("`published-resnet50.csv` %.1f to %.1f %%", maeBefore, maeAfter),
	} {
		quote(want)
	}
}
