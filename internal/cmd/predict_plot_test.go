package cmd

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPredictPlot checks that predict --plot draws the default study: one
// time-to-train and one efficiency chart with a line per variant, and a
// breakdown and a timeline per variant, every PNG decodable.
func TestPredictPlot(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := runCLI("predict", "--devices", "1,4,32", "--plot", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, name := range []string{"scaling", "efficiency", "breakdown-tsubame3-resnet50-caffe2-verbs", "timeline-tsubame3-resnet50-caffe2-default-32-devices-batch-32"} {
		for _, ext := range []string{".png", ".svg"} {
			path := filepath.Join(dir, name+ext)
			if !strings.Contains(stderr, "wrote "+path) {
				t.Errorf("stderr does not report %s:\n%s", path, stderr)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Error(err)
				continue
			}
			if ext == ".png" {
				if _, err := png.Decode(f); err != nil {
					t.Errorf("%s: %v", path, err)
				}
			}
			f.Close()
		}
	}
}

// TestPlanPlot checks that plan --plot draws the Pareto chart.
func TestPlanPlot(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := runCLI("plan", "--recipe", "mlperf-v0.7-resnet50", "--deadline", "2h", "--systems", "dgx-a100,zinrai-200h", "--max-devices", "64", "--plot", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := os.Open(filepath.Join(dir, "pareto.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pareto.svg")); err != nil {
		t.Error(err)
	}
}
