package predict

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// TestGNMTEpochsUncalibrated predicts the shipped MLPerf v0.7 GNMT
// scenarios by operators, uncalibrated, and compares the epoch each
// predicts (the training set over the simulated samples/s) with the
// published one of validate/cases.yaml: NVIDIA's DGX-1 (277.412 s,
// 3,969,024 pairs of at most 75 tokens), Fujitsu's GX2570 M5 (269.902 s,
// 3,860,480 pairs of at most 65) and NVIDIA's DGX A100 at 384 pairs a GPU
// (115.380 s, 3,965,952 pairs). Each scenario's batches are computed at the 37 tokens a
// side its data set is padded to (model/profiles/datasets.yaml, from
// NVIDIA's MLPerf v0.6 GNMT log). Every epoch is within 15 % of the
// published one, and docs/validation-gnmt.md quotes the figures.
func TestGNMTEpochsUncalibrated(t *testing.T) {
	page, err := os.ReadFile("../docs/validation-gnmt.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		scenario  string
		samples   float64
		published float64
	}{
		{"dgx1-gnmt-mlperf-v0.7", 3969024, 277.412},
		{"zinrai-200h-gnmt-mlperf-v0.7", 3860480, 269.902},
		{"dgx-a100-gnmt-mlperf-v0.7", 3965952, 115.380},
	} {
		p := predictOn(t, c.scenario, 8, nil)
		row := p.Rows[0]
		if p.Source.String() != "operators" || row.Result == nil {
			t.Fatalf("%s: source %q, result %v", c.scenario, p.Source, row.Result)
		}
		epoch := c.samples / row.Result.SamplesPerSec
		e := epoch/c.published - 1
		if math.Abs(e) > 0.15 {
			t.Errorf("%s: epoch %.1f s predicted against %.1f s published (%+.1f %%): want within 15 %%", c.scenario, epoch, c.published, 100*e)
		}
		want := fmt.Sprintf("| `%s` | %d | %.1f s | %.1f s | %+.1f %% |", c.scenario, row.Result.GlobalBatch/8, c.published, epoch, 100*e)
		if !strings.Contains(string(page), want) {
			t.Errorf("docs/validation-gnmt.md lacks %q", want)
		}
	}
}
