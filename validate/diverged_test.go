package validate

import (
	"strings"
	"testing"

	"scaleplan/fit/logs"
)

// TestDivergedRun checks that the records of engine/torchbench's Mask
// R-CNN trained with its first optimizer (SGD at 0.01 from the first
// step, under which the network diverges) are left out under their own
// reason, and that neither the warmed-up optimizer's records nor another
// model's of the same log are.
func TestDivergedRun(t *testing.T) {
	cat, prof := defaults(t)
	const rec = `{"kind":"measurement","run":"r","model":"MODEL","device":"h100-sxm5-80gb","precision":"amp-fp16","workers":1,"batch":4,"global_batch":4,"steps":10,"step_time_s":0.1,"samples_per_s":40}` + "\n"
	for _, c := range []struct {
		optimizer, model string
		left             bool
	}{
		{"sgd lr 0.01 momentum 0.9 wd 1e-4", "maskrcnn-r50-fpn", true},
		{"sgd lr 0.02 momentum 0.9 wd 1e-4, linear warm-up from 0.001 over 1000 steps", "maskrcnn-r50-fpn", false},
		{"sgd lr 0.01 momentum 0.9 wd 1e-4", "resnet50", false},
	} {
		header := `{"kind":"header","run":"r","tool":"torchbench","machine":{"cpu":"x","cores":16,"framework":"torch 2.11.0 torchvision 0.26.0"},"config":{"models_info":{"` +
			c.model + `":{"optimizer":"` + c.optimizer + `"}}}}` + "\n"
		lg, err := logs.Read(strings.NewReader(header+strings.Replace(rec, "MODEL", c.model, 1)), "t.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		left := map[string]int{}
		ms, err := (&LogReader{Catalog: cat}).Measurements(lg, prof, left)
		if err != nil {
			t.Fatal(err)
		}
		if got := left[LeftDiverged] == 1 && len(ms) == 0; got != c.left || (!c.left && len(ms) != 1) {
			t.Errorf("%s with %q: %d rows, left out %v; want left out %v", c.model, c.optimizer, len(ms), left, c.left)
		}
	}
}
