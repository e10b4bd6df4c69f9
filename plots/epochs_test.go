package plots

import (
	"errors"
	"math"
	"testing"

	"scaleplan/fit"
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
