package predict

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"scaleplan/scenarios"
)

// operatorsEpoch returns the epoch of samples that one node of eight GPUs
// of scenario name predicts by operators, uncalibrated (the samples over
// the simulated samples/s), with edit applied to the scenario, and the
// batch per GPU it ran.
func operatorsEpoch(t *testing.T, name string, samples float64, edit func(*scenarios.Scenario)) (epoch float64, batch int) {
	t.Helper()
	r, err := scenarios.Load(name, scenarios.Options{Edit: func(s *scenarios.Scenario) {
		s.Sweep.Devices = []int{8}
		if edit != nil {
			edit(s)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Predict(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	row := p.Rows[0]
	if p.Source.String() != "operators" || row.Result == nil {
		t.Fatalf("%s: source %q, result %v", name, p.Source, row.Result)
	}
	return samples / row.Result.SamplesPerSec, row.Result.GlobalBatch / 8
}

// readPage returns the docs page name.
func readPage(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../docs/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestResNetEpochsByOperators predicts one node of each shipped MLPerf
// ResNet-50 scenario that runs NVIDIA's MXNet program (or Fujitsu's), and
// of NVIDIA's MXNet SSD,
// uncalibrated, with the batch norms fused as their run_and_time.sh
// passes --fuse-bn-relu 1 --fuse-bn-add-relu 1 (scenario fuse: bn-relu)
// and without, and compares each epoch (ImageNet's 1,281,167 images) with
// the published one of validate/cases.yaml. The fused program is nearer
// every published epoch than the unfused one, and
// docs/validation-mlperf-operators.md quotes the figures.
func TestResNetEpochsByOperators(t *testing.T) {
	page := readPage(t, "validation-mlperf-operators.md")
	var before, after float64
	cases := []struct {
		scenario  string
		published float64
	}{
		{"dgx1-resnet50-mlperf-v0.7", 114.867},
		{"zinrai-200h-resnet50-mlperf-v0.7", 117.183},
		{"dgx-a100-resnet50-mlperf-v0.7", 56.987},
		{"dgx-a100-resnet50-mlperf-v1.1", 48.665},
		{"dgx-a100-resnet50-mlperf-v2.0", 47.163},
		{"dgx-h100-resnet50-mlperf-v3.0", 22.846},
		{"eos-resnet50-mlperf-v4.0", 22.376},
	}
	for _, c := range cases {
		fused, _ := operatorsEpoch(t, c.scenario, 1281167, func(s *scenarios.Scenario) { s.Fuse = scenarios.FuseBNReLU })
		unfused, _ := operatorsEpoch(t, c.scenario, 1281167, func(s *scenarios.Scenario) { s.Fuse = "" })
		ef, eu := fused/c.published-1, unfused/c.published-1
		before += math.Abs(eu)
		after += math.Abs(ef)
		if !(math.Abs(ef) < math.Abs(eu)) {
			t.Errorf("%s: fused %+.1f %%, unfused %+.1f %% from the published %.3f s: want the fused nearer", c.scenario, 100*ef, 100*eu, c.published)
		}
		want := strings.ReplaceAll(fmt.Sprintf("| `%s` | %.3f s | %.1f s (%+.1f %%) | %.1f s (%+.1f %%) |", c.scenario, c.published, unfused, 100*eu, fused, 100*ef), "(-", "(−")
		if !strings.Contains(page, want) {
			t.Errorf("docs/validation-mlperf-operators.md lacks %q", want)
		}
	}
	n := float64(len(cases))
	want := fmt.Sprintf("mean absolute error %.1f %% unfused, %.1f %% fused", 100*before/n, 100*after/n)
	if !strings.Contains(page, want) {
		t.Errorf("docs/validation-mlperf-operators.md lacks %q", want)
	}

	// NVIDIA's MXNet SSD fuses its ResNet-34 backbone's norms by default:
	// one DGX A100 of v1.1, COCO's 117,266 training images.
	const ssd, published = "dgx-a100-ssd-mlperf-v1.1", 9.558
	fused, _ := operatorsEpoch(t, ssd, 117266, func(s *scenarios.Scenario) { s.Fuse = scenarios.FuseBNReLU })
	unfused, _ := operatorsEpoch(t, ssd, 117266, func(s *scenarios.Scenario) { s.Fuse = "" })
	ef, eu := fused/published-1, unfused/published-1
	if !(math.Abs(ef) < math.Abs(eu)) {
		t.Errorf("%s: fused %+.1f %%, unfused %+.1f %%: want the fused nearer", ssd, 100*ef, 100*eu)
	}
	want = fmt.Sprintf("| `%s` | %.3f s | %.1f s (%+.1f %%) | %.1f s (%+.1f %%) |", ssd, published, unfused, 100*eu, fused, 100*ef)
	if !strings.Contains(page, want) {
		t.Errorf("docs/validation-mlperf-operators.md lacks %q", want)
	}
}

// TestGNMTEpochsUncalibrated predicts the shipped MLPerf v0.7 GNMT
// scenarios by operators, uncalibrated, and compares each epoch with the
// published one of validate/cases.yaml: NVIDIA's DGX-1 (277.412 s,
// 3,969,024 pairs of at most 75 tokens), Fujitsu's GX2570 M5 (269.902 s,
// 3,860,480 pairs of at most 65) and NVIDIA's DGX A100 at 384 pairs a GPU
// (115.380 s, 3,965,952 pairs). Each scenario's batches are computed at
// the 37 tokens a side its data set is padded to
// (model/profiles/datasets.yaml, from NVIDIA's MLPerf v0.6 GNMT log).
// Every epoch is within 15 % of the published one, and
// docs/validation-gnmt.md quotes the figures.
func TestGNMTEpochsUncalibrated(t *testing.T) {
	page := readPage(t, "validation-gnmt.md")
	for _, c := range []struct {
		scenario  string
		samples   float64
		published float64
	}{
		{"dgx1-gnmt-mlperf-v0.7", 3969024, 277.412},
		{"zinrai-200h-gnmt-mlperf-v0.7", 3860480, 269.902},
		{"dgx-a100-gnmt-mlperf-v0.7", 3965952, 115.380},
	} {
		epoch, batch := operatorsEpoch(t, c.scenario, c.samples, nil)
		e := epoch/c.published - 1
		if math.Abs(e) > 0.15 {
			t.Errorf("%s: epoch %.1f s predicted against %.1f s published (%+.1f %%): want within 15 %%", c.scenario, epoch, c.published, 100*e)
		}
		want := fmt.Sprintf("| `%s` | %d | %.1f s | %.1f s | %+.1f %% |", c.scenario, batch, c.published, epoch, 100*e)
		if !strings.Contains(page, want) {
			t.Errorf("docs/validation-gnmt.md lacks %q", want)
		}
	}
}
