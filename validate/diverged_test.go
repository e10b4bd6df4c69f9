package validate

import (
	"strings"
	"testing"

	"scaleplan/fit/logs"
	"scaleplan/predict"
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

// TestPositiveRoIsLabel checks a record's positive_rois label: the mask
// head's RoIs an image that the run's data gave it, a whole number from 1
// to the box head's 512, carried into the operator model, where fewer
// make the predicted step shorter.
func TestPositiveRoIsLabel(t *testing.T) {
	cat, prof := defaults(t)
	const header = `{"kind":"header","run":"r","tool":"torchbench","machine":{"cpu":"x","cores":16,"framework":"torch 2.11.0 torchvision 0.26.0"},"config":{"models_info":{"maskrcnn-r50-fpn":{"optimizer":"sgd lr 0.02 momentum 0.9 wd 1e-4, linear warm-up from 0.001 over 1000 steps"}}}}` + "\n"
	const rec = `{"kind":"measurement","run":"r","model":"maskrcnn-r50-fpn","device":"h100-sxm5-80gb","precision":"amp-fp16","workers":1,"batch":4,"global_batch":4,"steps":10,"step_time_s":0.1,"samples_per_s":40,"labels":{"positive_rois":"ROIS"}}` + "\n"
	read := func(rois string) ([]Measured, error) {
		lg, err := logs.Read(strings.NewReader(header+strings.Replace(rec, "ROIS", rois, 1)), "t.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		return (&LogReader{Catalog: cat}).Measurements(lg, prof, map[string]int{})
	}
	for _, bad := range []string{"0", "513", "8.5", "many"} {
		if _, err := read(bad); err == nil || !strings.Contains(err.Error(), `t.jsonl:2: positive_rois "`+bad+`": want a whole number of RoIs an image from 1 to 512`) {
			t.Errorf("positive_rois %s: %v, want the record and the valid range", bad, err)
		}
	}
	few, err := read("8")
	if err != nil || len(few) != 1 || few[0].MaskRoIs != 8 {
		t.Fatalf("positive_rois 8: %+v, %v", few, err)
	}
	many := few[0]
	many.MaskRoIs = 0 // the generator's 128
	rep, err := CompareMeasured([]Measured{few[0], many}, cat, prof, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var p []float64
	for _, g := range rep.Groups {
		for _, r := range g.Rows {
			p = append(p, r.Predicted)
		}
	}
	if len(p) != 2 || !(p[0] > p[1]) {
		t.Errorf("predicted %v samples/s at 8 and at 128 positive RoIs an image; want more at 8", p)
	}
}
