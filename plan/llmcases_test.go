package plan

import (
	"math"
	"strings"
	"testing"

	"scaleplan/hw"
)

// TestLLMCases predicts every published LLM run of LLMCases with the
// operator model, logs each error and bounds the mean absolute error at
// 15 % (issue 47's target; no case calibrates). Each case cites its paper
// and table.
func TestLLMCases(t *testing.T) {
	cat, err := hw.Default()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := LLMCases()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, c := range cs {
		if !strings.Contains(c.Source, "et al.") && !strings.Contains(c.Source, "Llama Team") || !strings.Contains(c.Source, "arXiv:") {
			t.Errorf("%s: source %q cites no paper", c.Name, c.Source)
		}
		r, err := EvalLLMCase(cat, c)
		if err != nil {
			t.Fatal(err)
		}
		sum += math.Abs(r.Error)
		l := r.Layout
		t.Logf("%-28s tp %d pp %2d v %d dp %3d b %d %-9s %-8s %-16s published %7.2f predicted %7.2f  %+6.1f %%",
			c.Name, l.TP, l.PP, max(l.VirtualStages, 1), l.DP, l.MicroBatch, l.Recompute, l.Sharding, c.Metric, c.Published, r.Predicted, 100*r.Error)
		if math.Abs(r.Error) > 0.5 {
			t.Errorf("%s: predicted %.4g, published %.4g", c.Name, r.Predicted, c.Published)
		}
	}
	mae := sum / float64(len(cs))
	t.Logf("%d cases, mean absolute error %.1f %%", len(cs), 100*mae)
	if mae > 0.15 {
		t.Errorf("mean absolute error %.1f %% over %d cases: want at most 15 %%", 100*mae, len(cs))
	}
}
