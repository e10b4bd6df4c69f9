package validate

import (
	"fmt"
	"math"
	"testing"

	"scaleplan/predict"
	"scaleplan/scenarios"
)

func TestSourceFile(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"testdata/a.csv:12", "testdata/a.csv"},
		{"a.jsonl:3", "a.jsonl"},
		{"a.jsonl", "a.jsonl"},
		{"C:/logs/a.csv:7", "C:/logs/a.csv"},
		{"a.csv:", "a.csv:"},
		{"a.csv:x1", "a.csv:x1"},
		{":5", ":5"},
		{"", ""},
	} {
		if got := SourceFile(c.in); got != c.want {
			t.Errorf("SourceFile(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestSourceErrors checks the errors by source file against the rows'
// own errors, summed by hand: two files of ResNet-50 rows, one of them
// with rows of one device and of eight, out-of-memory rows counted in
// neither, a file's twelve rows giving its 80 % interval and a file of
// two none; the files' counts and mean absolute errors weighted by them
// give the report's. A row a calibration was fitted to counts in no file.
func TestSourceErrors(t *testing.T) {
	cat, prof := defaults(t)
	var ms []Measured
	row := func(src string, line, batch, devices int, v float64) {
		m := Measured{Device: "v100-sxm2-16gb", Model: "resnet50", Precision: "fp32", Batch: batch, Devices: devices, SamplesPerSec: v, OOM: v == 0,
			Source: fmt.Sprintf("%s:%d", src, line)}
		if devices > 1 {
			m.System = "dgx1"
		}
		ms = append(ms, m)
	}
	for i := range 12 {
		row("logs/a.csv", i+2, 16*(i+1), 1, 200+10*float64(i))
	}
	row("logs/a.csv", 14, 4096, 1, 0) // out of memory
	row("logs/b.csv", 2, 64, 1, 330)
	row("logs/b.csv", 3, 64, 8, 2500)
	rep, err := CompareMeasured(ms, cat, prof, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	errs := map[string][]float64{}
	multi := map[string][]bool{}
	for _, g := range rep.Groups {
		for _, r := range g.Rows {
			if e := r.Error(); !math.IsNaN(e) {
				f := SourceFile(r.Source)
				errs[f] = append(errs[f], e)
				multi[f] = append(multi[f], r.Devices > 1)
			}
		}
	}
	if len(rep.Sources) != 2 || rep.Sources[0].Source != "logs/a.csv" || rep.Sources[1].Source != "logs/b.csv" {
		t.Fatalf("sources %+v: want logs/a.csv, logs/b.csv", rep.Sources)
	}
	var rows int
	var weighted float64
	for _, s := range rep.Sources {
		es := errs[s.Source]
		var sum, abs, one, several float64
		var nOne, nSeveral int
		for i, e := range es {
			sum += e
			abs += math.Abs(e)
			if multi[s.Source][i] {
				several += math.Abs(e)
				nSeveral++
			} else {
				one += math.Abs(e)
				nOne++
			}
		}
		n := float64(len(es))
		if s.Rows != len(es) || s.OneRows != nOne || s.SeveralRows != nSeveral {
			t.Errorf("%s: %d rows (%d of one device, %d of several), want %d (%d, %d)", s.Source, s.Rows, s.OneRows, s.SeveralRows, len(es), nOne, nSeveral)
		}
		if math.Abs(s.Mean-sum/n) > 1e-12 || math.Abs(s.MAE-abs/n) > 1e-12 {
			t.Errorf("%s: mean %v, MAE %v; want %v, %v", s.Source, s.Mean, s.MAE, sum/n, abs/n)
		}
		if math.Abs(s.OneMAE-one/float64(nOne)) > 1e-12 {
			t.Errorf("%s: MAE of one device %v, want %v", s.Source, s.OneMAE, one/float64(nOne))
		}
		if nSeveral == 0 && !math.IsNaN(s.SeveralMAE) || nSeveral > 0 && math.Abs(s.SeveralMAE-several/float64(nSeveral)) > 1e-12 {
			t.Errorf("%s: MAE of several devices %v, want %v over %d", s.Source, s.SeveralMAE, several/float64(nSeveral), nSeveral)
		}
		if iv, want := s.Interval, ErrorInterval(es); iv != want && !(math.IsNaN(iv[0]) && math.IsNaN(want[0])) {
			t.Errorf("%s: interval %v, want %v", s.Source, iv, want)
		}
		rows += s.Rows
		weighted += s.MAE * float64(s.Rows)
	}
	if a := rep.Sources[0]; a.Rows != 12 || math.IsNaN(a.Interval[0]) || a.SeveralRows != 0 {
		t.Errorf("a.csv: %d rows, interval %v, %d of several devices: want 12, an interval, none", a.Rows, a.Interval, a.SeveralRows)
	}
	if b := rep.Sources[1]; b.Rows != 2 || !math.IsNaN(b.Interval[0]) || b.SeveralRows != 1 {
		t.Errorf("b.csv: %d rows, interval %v, %d of several devices: want 2, none under %d rows, 1", b.Rows, b.Interval, b.SeveralRows, IntervalMinRows)
	}
	if rows != rep.Rows || math.Abs(weighted/float64(rows)-rep.MAE) > 1e-12 {
		t.Errorf("sources hold %d rows at %v, want the report's %d at %v", rows, weighted/float64(rows), rep.Rows, rep.MAE)
	}
	// All is every file's rows together: the report's, split by the
	// files' own counts and errors weighted by them.
	var one, several [2]float64
	for _, s := range rep.Sources {
		one[0] += float64(s.OneRows)
		one[1] += float64(s.OneRows) * s.OneMAE
		if s.SeveralRows > 0 {
			several[0] += float64(s.SeveralRows)
			several[1] += float64(s.SeveralRows) * s.SeveralMAE
		}
	}
	if a := rep.All; a.Rows != rep.Rows || a.Interval != rep.Interval || float64(a.OneRows) != one[0] || float64(a.SeveralRows) != several[0] ||
		math.Abs(a.OneMAE-one[1]/one[0]) > 1e-12 || math.Abs(a.SeveralMAE-several[1]/several[0]) > 1e-12 {
		t.Errorf("all %+v; want the report's %d rows and interval %v, %v of one device at %v, %v of several at %v",
			a, rep.Rows, rep.Interval, one[0], one[1]/one[0], several[0], several[1]/several[0])
	}

	// The published calibrations were fitted to the A100's ResNet-50 rows
	// in fp16: such a row counts in no source.
	pub, err := scenarios.ReadCalibrationFiles([]string{scenarios.Published})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = CompareCalibrated([]Measured{{Device: "a100-sxm4-80gb", Model: "resnet50", Precision: "amp-fp16", Batch: 256, SamplesPerSec: 2000, Source: "c.csv:2"}}, cat, prof, pub, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Groups[0].Rows[0].Fitted || len(rep.Sources) != 0 {
		t.Errorf("fitted %v, sources %+v: want fitted, none", rep.Groups[0].Rows[0].Fitted, rep.Sources)
	}
}
