package validate

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"

	"scaleplan/predict"
)

// TestErrorInterval checks ErrorInterval against the quantiles of rank
// p·n worked by hand: of the 25 errors 0.00, 0.01, …, 0.24 (shuffled, a
// NaN among them, left out) the 10th percentile lies at rank 2.5, halfway
// between 0.01 and 0.02, and the 90th at rank 22.5, between 0.21 and
// 0.22; under IntervalMinRows errors there is no interval.
func TestErrorInterval(t *testing.T) {
	var errs []float64
	for i := range 25 {
		errs = append(errs, float64((i*7)%25)/100) // 7 is prime to 25: each once
	}
	errs = append(errs, math.NaN())
	got := ErrorInterval(errs)
	if math.Abs(got[0]-0.015) > 1e-12 || math.Abs(got[1]-0.215) > 1e-12 {
		t.Errorf("ErrorInterval = %v, want [0.015 0.215]", got)
	}
	if errs[1] != 0.07 {
		t.Error("ErrorInterval reordered its argument")
	}
	if got := ErrorInterval(errs[:IntervalMinRows-1]); !math.IsNaN(got[0]) || !math.IsNaN(got[1]) {
		t.Errorf("%d errors: %v, want NaN, NaN", IntervalMinRows-1, got)
	}
}

// TestOperatorsBandPublished checks predict.OperatorsBand, the band an
// uncalibrated prediction by operators prints, against what it states it
// is: ErrorInterval over every row of the published files
// (testdata/measurements/published-*.csv), each predicted as validate
// --measured predicts it, to the constant's three decimals. It then checks
// what docs/compute.md says of the band out of sample: with each file
// left out in turn, the interval of the other files' rows holds more of
// the left-out file's rows than ∓ the other files' mean absolute error
// does (pooled over the files), at the shares the page prints.
func TestOperatorsBandPublished(t *testing.T) {
	cat, prof := defaults(t)
	files, err := filepath.Glob("../testdata/measurements/published-*.csv")
	if err != nil || len(files) < 2 {
		t.Fatalf("published files: %v (%v)", files, err)
	}
	byFile := make([][]float64, len(files))
	var all []float64
	var one, several [2]float64 // rows and the sum of |error|, of one device and of several
	nodes := 0                  // rows of several nodes
	for i, f := range files {
		rep, err := CompareMeasured(measuredFile(t, cat, prof, f), cat, prof, predict.Options{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, g := range rep.Groups {
			for _, r := range g.Rows {
				if e := r.Error(); !math.IsNaN(e) {
					byFile[i] = append(byFile[i], e)
					split := &one
					if r.Devices > 8 {
						nodes++
						if r.Devices != 64 {
							t.Errorf("%s: a row of %d devices; docs/compute.md counts the runs of several nodes as runs of 64", f, r.Devices)
						}
					}
					if r.Devices > 1 {
						split = &several
					}
					split[0]++
					split[1] += math.Abs(e)
				}
			}
		}
		all = append(all, byFile[i]...)
	}
	iv := ErrorInterval(all)
	if lv := IntervalLevels[1] - IntervalLevels[0]; math.Abs(predict.BandLevel-lv) > 1e-12 {
		t.Errorf("predict.BandLevel %v, want the share ErrorInterval holds, %v", predict.BandLevel, lv)
	}
	if b := predict.OperatorsBand; math.Abs(b.Lo-iv[0]) > 5e-4 || math.Abs(b.Hi-iv[1]) > 5e-4 {
		t.Errorf("predict.OperatorsBand %+v; the %d published rows give %.4f to %.4f", b, len(all), iv[0], iv[1])
	}
	var inBand, inMAE, n int
	for i := range files {
		var rest []float64
		for j := range files {
			if j != i {
				rest = append(rest, byFile[j]...)
			}
		}
		band := ErrorInterval(rest)
		var mae float64
		for _, e := range rest {
			mae += math.Abs(e)
		}
		mae /= float64(len(rest))
		for _, e := range byFile[i] {
			if band[0] <= e && e <= band[1] {
				inBand++
			}
			if math.Abs(e) <= mae {
				inMAE++
			}
			n++
		}
	}
	band, mae := float64(inBand)/float64(n), float64(inMAE)/float64(n)
	if !(band > mae) {
		t.Errorf("left out file by file, the interval holds %.3f of the rows, ∓ the mean absolute error %.3f; want the interval more", band, mae)
	}
	quote := docQuote(t, "compute.md")
	sorted := slices.Clone(all)
	slices.Sort(sorted)
	var sum float64
	for _, e := range all {
		sum += math.Abs(e)
	}
	inAll := 0
	for _, e := range all {
		if math.Abs(e) <= sum/float64(len(all)) {
			inAll++
		}
	}
	for _, want := range []string{
		fmt.Sprintf("over the %d files' %d rows it runs from %s to %s, its median %s", len(files), len(all),
			signed(100*sorted[0]), signed(100*sorted[len(sorted)-1]), signed(100*stat.Quantile(0.5, stat.Empirical, sorted, nil))),
		fmt.Sprintf("∓ %.1f %% held %.0f %%", 100*sum/float64(len(all)), 100*float64(inAll)/float64(len(all))),
		fmt.Sprintf("held %.0f %% of the file's rows, where ∓ the others' mean absolute error held %.0f %%", 100*band, 100*mae),
		fmt.Sprintf("the %.0f of one device are off by %.1f %% (mean absolute), the %.0f of several devices (two to eight GPUs of one server, and %d runs of 64 GPUs) by %.1f %%",
			one[0], 100*one[1]/one[0], several[0], nodes, 100*several[1]/several[0]),
		fmt.Sprintf("it is %s (%.1f points against %.1f)", widthWord(100*(iv[1]-iv[0]), 200*sum/float64(len(all))), 100*(iv[1]-iv[0]), 200*sum/float64(len(all))),
	} {
		quote(want)
	}
}

// widthWord compares an interval's width with another's, both in points
// as the docs print them to one decimal: narrower, as wide, or wider.
func widthWord(w, other float64) string {
	a, b := math.Round(10*w), math.Round(10*other)
	switch {
	case a < b:
		return "narrower"
	case a > b:
		return "wider"
	}
	return "as wide"
}
