package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStepsToTarget checks the steps-to-target curve of a scenario: given
// inline, read from a calibration file written by `scaleplan fit`, and
// its errors. The steps are the closed form ⌈s_min·(1 + b_noise/B)⌉.
func TestStepsToTarget(t *testing.T) {
	dir := t.TempDir()
	cal := "steps:\n" +
		"  - {model: gnmt, s_min: 10, b_noise: 5, r2: 0.9, points: 4}\n" +
		"  - {model: resnet50, s_min: 1200, b_noise: 4096, r2: 0.98, points: 7, max_batch: 32768, source: sweep.csv}\n"
	os.WriteFile(filepath.Join(dir, "calib.yaml"), []byte(cal), 0o644)
	base := "name: s\nsystem: tsubame3\nrecipe: tsubame3-resnet50\n"
	write := func(body string) string {
		path := filepath.Join(dir, "s.yaml")
		os.WriteFile(path, []byte(base+body), 0o644)
		return path
	}

	r, err := Load(write("steps_to_target:\n  file: calib.yaml\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := r.StepsToTarget
	if s.SMin != 1200 || s.BNoise != 4096 || s.MaxBatch != 32768 || s.Source != "calib.yaml (sweep.csv)" {
		t.Errorf("from file: %+v", s)
	}
	for _, c := range []struct{ b, want int }{{4096, 2400}, {1024, 6000}, {1 << 20, 1205}, {8, 615600}, {3000, 2839}} {
		if got := s.Steps(c.b); got != c.want {
			t.Errorf("Steps(%d) = %d, want %d", c.b, got, c.want)
		}
	}
	if got, want := s.String(), "S(B) = 1200 · (1 + 4096/B)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}

	r, err = Load(write("steps_to_target: {s_min: 500, b_noise: 0, max_batch: 100}\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := r.StepsToTarget; s.Steps(7) != 500 || s.MaxBatch != 100 || r.StepsPath() != "" {
		t.Errorf("inline: %+v", s)
	}

	for _, c := range []struct{ body, msg string }{
		{"steps_to_target: {s_min: 0}\n", "line 4: steps_to_target.s_min: must be a number of steps > 0"},
		{"steps_to_target: {s_min: 5, b_noise: -1, max_batch: -2}\n", "steps_to_target.b_noise: must be >= 0"},
		{"steps_to_target: {s_min: 5, max_batch: -2}\n", "steps_to_target.max_batch: must be >= 0, got -2"},
		{"steps_to_target: {file: none.yaml}\n", "none.yaml"},
		{"steps_to_target: {s_mim: 5}\n", "s_mim"},
		{"steps_to_target: {s_min: 1e10, b_noise: 1e10}\n", "steps at batch 1 is more than 1e15"},
	} {
		if _, err := Load(write(c.body), Options{}); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: error %v, want %q", c.body, err, c.msg)
		}
	}
	os.WriteFile(filepath.Join(dir, "calib.yaml"), []byte("steps:\n  - {model: gnmt, s_min: 10, b_noise: 5, r2: 0.9, points: 4}\n"), 0o644)
	if _, err := Load(write("steps_to_target: {file: calib.yaml}\n"), Options{}); err == nil ||
		!strings.Contains(err.Error(), `calib.yaml has no steps entry for model "resnet50" and optimizer "sgd" (entries: gnmt)`) {
		t.Errorf("missing entry: %v", err)
	}
}

// TestStepsByOptimizer checks that a calibration file's steps entry is
// picked by the recipe's optimizer (tsubame3-resnet50 trains with
// momentum, the sgd family) or the scenario's optimizer, with the entry's
// intervals, and StepsRange at their ends in closed form.
func TestStepsByOptimizer(t *testing.T) {
	write := scenarioWriter(t, "steps:\n"+
		"  - {model: resnet50, labels: {optimizer: lars}, s_min: 1000, s_min_interval: [900, 1100], b_noise: 40000, b_noise_interval: [30000, 50000], r2: 0.9, points: 9}\n"+
		"  - {model: resnet50, labels: {optimizer: sgd}, s_min: 100, b_noise: 400000, r2: 0.9, points: 8}\n")
	r, err := Load(write("steps_to_target: {file: calib.yaml}\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := r.StepsToTarget; s.SMin != 100 || s.BNoise != 400000 {
		t.Errorf("recipe's momentum: %+v, want the sgd entry", s)
	}
	if _, _, ok := r.StepsToTarget.StepsRange(1000); ok {
		t.Error("sgd entry without intervals: a range")
	}
	r, err = Load(write("steps_to_target: {file: calib.yaml, optimizer: lars}\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := r.StepsToTarget
	// B = 10000: ⌈900·(1 + 3)⌉ = 3600, ⌈1100·(1 + 5)⌉ = 6600.
	if lo, hi, ok := s.StepsRange(10000); s.SMin != 1000 || !ok || lo != 3600 || hi != 6600 {
		t.Errorf("lars: %+v, range %d to %d (%v), want 3600 to 6600", s, lo, hi, ok)
	}
	if _, err := Load(write("steps_to_target: {file: calib.yaml, optimizer: lamb}\n"), Options{}); err == nil || !strings.Contains(err.Error(), `optimizer "lamb"`) {
		t.Errorf("lamb: error %v, want no entry for optimizer lamb", err)
	}
	if _, err := Load(write("steps_to_target: {s_min: 5, s_min_interval: [6, 4]}\n"), Options{}); err == nil || !strings.Contains(err.Error(), "s_min_interval") {
		t.Errorf("reversed interval: error %v", err)
	}
}

// scenarioWriter writes cal as calib.yaml into a temporary directory and
// returns a function that writes a tsubame3-resnet50 scenario with body
// beside it and returns its path.
func scenarioWriter(t *testing.T, cal string) func(body string) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "calib.yaml"), []byte(cal), 0o644); err != nil {
		t.Fatal(err)
	}
	return func(body string) string {
		path := filepath.Join(dir, "s.yaml")
		if err := os.WriteFile(path, []byte("name: s\nsystem: tsubame3\nrecipe: tsubame3-resnet50\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
}
