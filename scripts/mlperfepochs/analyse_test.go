package main

import (
	"math"
	"os"

	"path/filepath"
	"strings"
	"testing"

	"scaleplan/internal/calib"
	"scaleplan/internal/mlperfepochs"
)

// The shipped calibration is what fit makes of the committed tables: a
// change to either without the other fails here.
func TestShippedCalibration(t *testing.T) {
	root := filepath.Join("..", "..")
	dir := t.TempDir()
	out := filepath.Join(dir, "cal.yaml")
	var sb strings.Builder
	err := run([]string{"fit", "-data", filepath.Join(root, "internal", "mlperfepochs"), "-calibration", out}, &sb)
	if err != nil {
		t.Fatal(err)
	}
	got, err := calib.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := calib.ReadFile(filepath.Join(root, "scenarios", "calibrations", "mlperf-epochs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Steps) != len(want.Steps) {
		t.Fatalf("%d steps entries, shipped %d", len(got.Steps), len(want.Steps))
	}
	for i, g := range got.Steps {
		w := want.Steps[i]
		if g.Model != w.Model || math.Abs(g.SMin-w.SMin) > 1e-9*w.SMin || math.Abs(g.BNoise-w.BNoise) > 1e-9*w.BNoise {
			t.Errorf("entry %d: %s %g %g, shipped %s %g %g", i, g.Model, g.SMin, g.BNoise, w.Model, w.SMin, w.BNoise)
		}
	}
	if !strings.Contains(sb.String(), "| resnet | lars | v3.1 |") {
		t.Error("the tables lack ResNet-50 LARS's v3.1 hold-out row")
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "mlperf-epochs.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "<!-- written by: go run ./scripts/mlperfepochs fit -->\n"+sb.String()+"<!-- end -->") {
		t.Error("docs/mlperf-epochs.md: the tables between the markers are not what fit prints now")
	}
}

// Open-division rows stay out of the fit; a group of fewer than three
// batches is listed, not fitted; one whose B_noise the data leave unbounded
// is not shipped.
func TestAnalyseGroups(t *testing.T) {
	var rows []mlperfepochs.Row
	for i, B := range []float64{1024, 2048, 4096, 8192, 16384, 32768} {
		e := 35 * (1 + B/40000)
		rows = append(rows, mlperfepochs.Row{Round: []string{"v1.0", "v2.0"}[i%2], Division: "closed", GlobalBatch: B, Optimizer: "lars", Mean: e})
	}
	rows = append(rows,
		mlperfepochs.Row{Round: "v1.0", Division: "open", GlobalBatch: 512, Optimizer: "lars", Mean: 1000},
		mlperfepochs.Row{Round: "v1.0", Division: "closed", GlobalBatch: 512, Optimizer: "sgd", Mean: 40},
		mlperfepochs.Row{Round: "v2.0", Division: "closed", GlobalBatch: 1024, Optimizer: "sgd_with_momentum", Mean: 41})
	gs, err := analyse("resnet", rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 2 || gs[0].Optimizer != "lars" || len(gs[0].Rows) != 6 || gs[1].Optimizer != "sgd" || len(gs[1].Rows) != 2 {
		t.Fatalf("groups: %+v", gs)
	}
	if gs[1].Fit != nil || gs[1].shipped() {
		t.Error("sgd: 2 batches fitted or shipped")
	}
	f := gs[0].Fit
	if math.Abs(f.EMin-35) > 1e-6 || math.Abs(f.Steps.BNoise-40000) > 1e-3 {
		t.Errorf("E_min %g, B_noise %g; want 35 and 40000", f.EMin, f.Steps.BNoise)
	}
	if _, err := analyse("gnmt", rows); err == nil {
		t.Error("unknown benchmark: no error")
	}
}
