package plots

import (
	"errors"
	"math"
	"testing"

	"scaleplan/fit"
	"scaleplan/internal/mlperfepochs"
)

func TestEpochsChart(t *testing.T) {
	const eMin, bNoise, n = 35.0, 40000.0, 1281167.0
	var b, e []float64
	var pts []EpochsPoint
	rounds := []string{"v1.0", "v2.0"}
	for i, B := 0, 1024.0; B <= 65536; i, B = i+1, B*2 {
		v := eMin * (1 + B/bNoise)
		b, e = append(b, B), append(e, v)
		pts = append(pts, EpochsPoint{Batch: B, Epochs: v, Min: v - 1, Max: v + 1, Round: rounds[i%2]})
	}
	f, err := fit.Epochs(b, e, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Epochs(EpochsData{Subject: "resnet lars", Points: pts, Fit: f})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, s := range c.Series {
		seen[s.Name] += len(s.Rows)
		if s.Name == "fit" {
			for _, r := range s.Rows {
				// The closed form E_min·(1 + B/B_noise) of the data.
				if want := eMin * (1 + r[0]/bNoise); math.Abs(r[1]-want) > 1e-6*want {
					t.Errorf("fit at %g: %g, want %g", r[0], r[1], want)
				}
			}
		}
	}
	if seen["v1.0"] != 4 || seen["v2.0"] != 3 || seen["fit"] == 0 || seen["range v1.0"] != 8 {
		t.Errorf("series rows %v: want 4 points of v1.0, 3 of v2.0, a range bar (2 rows) per v1.0 point", seen)
	}
	if _, err := Epochs(EpochsData{}); !errors.Is(err, ErrNoData) {
		t.Errorf("no points: %v, want ErrNoData", err)
	}
	if _, err := Epochs(EpochsData{Points: []EpochsPoint{{Batch: 1, Epochs: math.NaN()}}}); err == nil {
		t.Error("NaN epochs: no error")
	}
}

// The chart of an MLPerf group draws each submission at its batch and
// mean with its runs' range, and the group's fit along the law
// E_min·(1 + B/B_noise) the rows were made from.
func TestEpochsFromGroup(t *testing.T) {
	const eMin, bNoise = 35.0, 40000.0
	var rows []mlperfepochs.Row
	for i, B := range []float64{1024, 2048, 4096, 8192, 16384, 32768} {
		e := eMin * (1 + B/bNoise)
		rows = append(rows, mlperfepochs.Row{Round: []string{"v1.0", "v2.0"}[i%2], Division: "closed", GlobalBatch: B,
			Optimizer: "lars", Mean: e, Min: e - 1, Max: e + 2})
	}
	gs, err := mlperfepochs.Analyse("resnet", rows)
	if err != nil || len(gs) != 1 {
		t.Fatalf("analyse: %v groups, %v", len(gs), err)
	}
	d := EpochsFromGroup(gs[0])
	if d.Subject != "resnet lars" || d.Unit != "epochs" || len(d.Points) != len(rows) {
		t.Fatalf("data %q %q, %d points", d.Subject, d.Unit, len(d.Points))
	}
	for i, p := range d.Points {
		if r := rows[i]; p.Batch != r.GlobalBatch || p.Epochs != r.Mean || p.Min != r.Min || p.Max != r.Max || p.Round != r.Round {
			t.Errorf("point %d: %+v, want row %+v", i, p, r)
		}
	}
	c, err := Epochs(d)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range c.Series {
		if s.Name != "fit" {
			continue
		}
		for _, r := range s.Rows {
			n++
			if want := eMin * (1 + r[0]/bNoise); math.Abs(r[1]-want) > 1e-6*want {
				t.Errorf("fit at %g: %g, want %g", r[0], r[1], want)
			}
		}
	}
	if n == 0 {
		t.Error("no fit series")
	}
	bert := EpochsFromGroup(&mlperfepochs.Group{Bench: "bert", Optimizer: "lamb", Subject: mlperfepochs.Subjects["bert"]})
	if bert.Unit != "samples" {
		t.Errorf("bert unit %q, want samples", bert.Unit)
	}
}
