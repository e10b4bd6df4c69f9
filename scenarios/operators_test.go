package scenarios

import (
	"math"
	"strings"
	"testing"

	"scaleplan/compute"
	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// TestOperatorsCalibration: an operators entry fitted on the scenario's
// device kind sets the efficiencies its operator model computes by (the
// law is compute.LawAt's under them), and is named in OperatorsBy; an
// entry of another device leaves the scenario as it is, and
// CalibrationsUsed refuses it. The scenario's mode (cuda-graphs, its
// submission's) picks the entry and sets the law's host cost per kernel.
func TestOperatorsCalibration(t *testing.T) {
	files := writeCalibrations(t,
		"operators:\n  - {device: h100-sxm5-80gb, mode: cuda-graphs, classes: [{class: tensor-fp16, efficiency: 0.3}, {class: memory, efficiency: 0.6}], launch: 20 us, step_host: 1 ms, error_before: 0.5, error: 0.2, rows: 60, models: [resnet50]}\n",
		"operators:\n  - {device: v100-sxm2-16gb, classes: [{class: tensor-fp16, efficiency: 0.5}], launch: 20 us, error_before: 0.5, error: 0.2, rows: 10, models: [resnet50]}\n")
	const name = "dgx-h100-resnet50-mlperf-v3.0"
	r, err := Load(name, Options{Calibrations: files})
	if err != nil {
		t.Fatal(err)
	}
	if r.OperatorsBy != files[0].Path || r.Operators == nil || !r.OperatorCompute() {
		t.Fatalf("operators by %q, %+v", r.OperatorsBy, r.Operators)
	}
	want := compute.Efficiencies{Launch: 20 * units.Microsecond, StepHost: units.Millisecond}
	want.Set(compute.TensorFP16, 0.3)
	want.Set(compute.MemoryBound, 0.6)
	if *r.Operators != want {
		t.Errorf("efficiencies %+v, want %+v", *r.Operators, want)
	}
	p := r.Points()[0]
	cfg, err := r.Build(p)
	if err != nil {
		t.Fatal(err)
	}
	l, err := compute.LawAt(compute.Config{Device: r.Device, Precision: hw.FP16, Mode: compute.Graphs, Eff: &want, FuseBNReLU: r.Fuse == FuseBNReLU}, r.Mdl.Name, p.BatchPerDevice)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(cfg.Compute.PerSample/l.PerSample)-1) > 1e-12 || cfg.Compute.Fixed != l.Fixed {
		t.Errorf("compute %+v, want the law %+v", cfg.Compute, l)
	}
	if err := CalibrationsUsed(files[:1], []*Resolved{r}); err != nil {
		t.Errorf("the H100's entry: %v", err)
	}
	other, err := Load(name, Options{Calibrations: files[1:]})
	if err != nil {
		t.Fatal(err)
	}
	if other.Operators != nil || other.OperatorsBy != "" {
		t.Errorf("a V100 entry applied to an H100 scenario: %q", other.OperatorsBy)
	}
	if err := CalibrationsUsed(files[1:], []*Resolved{other}); err == nil {
		t.Error("a V100 operators entry for an H100 scenario was not refused")
	}
}

// TestFrameworkMode checks a scenario's mode: its own where it names one
// (the MLPerf scenarios', from their submissions' configurations), else
// its framework's (compiled for MXNet's and TensorFlow's graph executors,
// eager otherwise), and that Build computes the operator model in it.
func TestFrameworkMode(t *testing.T) {
	for _, c := range []struct {
		name, framework string
		want            compute.Mode
	}{
		{"dgx-h100-resnet50-mlperf-v3.0", "", compute.Graphs}, // MXNET_ENABLE_CUDA_GRAPHS=1
		{"dgx-a100-ssd-mlperf-v1.1", "", compute.Compiled},    // hybridized, no CUDA graphs
		{"dgx1-transformer-mlperf-v0.7", "", compute.Eager},   // fairseq, eager
		{"dgx-h100-resnet50-mlperf-v3.0", "mxnet", compute.Compiled},
		{"dgx-h100-resnet50-mlperf-v3.0", "tensorflow 2.4", compute.Compiled},
		{"dgx-h100-resnet50-mlperf-v3.0", "pytorch", compute.Eager},
		{"dgx-h100-resnet50-mlperf-v3.0", "caffe2", compute.Eager},
	} {
		edit := func(s *Scenario) {}
		if c.framework != "" { // the framework's default: the file's mode left out
			edit = func(s *Scenario) { s.Framework, s.Mode = c.framework, "" }
		}
		r, err := Load(c.name, Options{Edit: edit})
		if err != nil {
			t.Fatal(err)
		}
		if r.Mode != c.want {
			t.Errorf("%s, framework %q: mode %q, want %q", c.name, r.Framework, r.Mode, c.want)
		}
	}
	// At 8 images a GPU eager PyTorch's dispatch bounds the step; without
	// it the device does (cuda-graphs and compiled alike).
	fixed := map[compute.Mode]units.Seconds{}
	for _, m := range compute.Modes {
		r, err := Load("dgx-h100-resnet50-mlperf-v3.0", Options{Edit: func(s *Scenario) { s.Mode, s.BatchPerDevice = m, 8 }})
		if err != nil {
			t.Fatal(err)
		}
		p := r.Points()[0]
		cfg, err := r.Build(p)
		if err != nil {
			t.Fatal(err)
		}
		l, err := compute.LawAt(compute.Config{Device: r.Device, Precision: hw.FP16, Mode: m, FuseBNReLU: r.Fuse == FuseBNReLU}, r.Mdl.Name, p.BatchPerDevice)
		if err != nil {
			t.Fatal(err)
		}
		if !r.OperatorCompute() || math.Abs(float64(cfg.Compute.PerSample/l.PerSample)-1) > 1e-12 || cfg.Compute.Fixed != l.Fixed {
			t.Errorf("%s: compute %+v, want the law %+v", m, cfg.Compute, l)
		}
		fixed[m] = cfg.Compute.Fixed + units.Seconds(p.BatchPerDevice)*cfg.Compute.PerSample
	}
	if !(fixed[compute.Graphs] <= fixed[compute.Compiled] && fixed[compute.Compiled] < fixed[compute.Eager]) {
		t.Errorf("steps by mode %v: want cuda-graphs ≤ compiled < eager at 8 images a GPU", fixed)
	}
}

// TestSentenceLen checks the tokens a scenario's batches are computed at:
// a data set of sentences with a one-dimensional input_shape gives its
// length, anything else the model's default (0); and the shipped GNMT
// scenarios' data sets give 37 tokens a side, the padded length of
// model/profiles/datasets.yaml, where the model's own default is 28.
func TestSentenceLen(t *testing.T) {
	for _, c := range []struct {
		data *model.Dataset
		want int
	}{
		{nil, 0},
		{&model.Dataset{SampleUnit: model.Image, InputShape: []int{224, 224, 3}}, 0},
		{&model.Dataset{SampleUnit: model.Token, InputShape: []int{1}}, 0},
		{&model.Dataset{SampleUnit: model.Sentence, InputShape: []int{384}}, 384},
		{&model.Dataset{SampleUnit: model.Sentence, InputShape: []int{2, 64}}, 0},
	} {
		if got := sentenceLen(c.data); got != c.want {
			t.Errorf("%+v: %d, want %d", c.data, got, c.want)
		}
	}
	for _, name := range []string{"dgx1-gnmt-mlperf-v0.7", "zinrai-200h-gnmt-mlperf-v0.7"} {
		r, err := Load(name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := sentenceLen(r.Data); got != 37 {
			t.Errorf("%s: %d tokens a side, want 37", name, got)
		}
	}
}

// TestFuseField checks a scenario's fuse field: bn-relu reaches the
// operator model for resnet50 (a fused step is shorter), another value is
// refused naming the valid one, and another model's scenario may not fuse.
func TestFuseField(t *testing.T) {
	step := func(fuse string) float64 {
		t.Helper()
		r, err := Load("dgx1-resnet50-mlperf-v0.7", Options{Edit: func(s *Scenario) { s.Fuse = fuse }})
		if err != nil {
			t.Fatal(err)
		}
		c, err := r.Build(Point{Devices: 1, Nodes: 1, BatchPerDevice: 208})
		if err != nil {
			t.Fatal(err)
		}
		return float64(c.Compute.PerSample)
	}
	if f, u := step(FuseBNReLU), step(""); !(f < u) {
		t.Errorf("per sample fused %v s, unfused %v s: want the fused shorter", f, u)
	}
	for _, c := range []struct{ name, fuse, want string }{
		{"dgx1-resnet50-mlperf-v0.7", "bn", `fuse: "bn": want bn-relu or nothing`},
		{"dgx1-gnmt-mlperf-v0.7", FuseBNReLU, "fuse: bn-relu: only the operators of resnet50 and ssd-resnet34 fuse their batch norms, not gnmt's"},
	} {
		_, err := Load(c.name, Options{Edit: func(s *Scenario) { s.Fuse = c.fuse }})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s, fuse %q: %v; want %q", c.name, c.fuse, err, c.want)
		}
	}
}
