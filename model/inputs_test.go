package model

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"scaleplan/internal/config"
	"scaleplan/internal/units"
)

// plausibleBase is a valid profile document with every bounded figure.
const plausibleBase = `datasets:
  imagenet-1k:
    train_samples: 1281167
    bytes_per_sample: 110 kB
    input_shape: [224, 224, 3]
    cpu_seconds_per_sample: 5 ms
models:
  resnet50:
    task: image-classification
    dataset: imagenet-1k
    params: 100
    forward_flops: 8 GFLOP
    activations: {fp32: 90 MB, fp16: 45 MB}
    class: dense-conv
    efficiency: 0.35
`

// TestPlausibleRanges sets each bounded figure to the edges of its range
// (accepted), just past them and to values no profile has (refused with
// the path, the range and the value).
func TestPlausibleRanges(t *testing.T) {
	base, err := Parse(strings.NewReader(plausibleBase))
	if err != nil {
		t.Fatal(err)
	}
	ds := func(f func(d *Dataset, v float64)) func(*Profiles, float64) {
		return func(p *Profiles, v float64) { f(p.Datasets["imagenet-1k"], v) }
	}
	md := func(f func(m *Model, v float64)) func(*Profiles, float64) {
		return func(p *Profiles, v float64) { f(p.Models["resnet50"], v) }
	}
	cases := []struct {
		path   string
		set    func(*Profiles, float64)
		lo, hi float64
		rng    string // as the error gives it
		zeroOK bool
	}{
		{"models.resnet50.forward_flops", md(func(m *Model, v float64) { m.ForwardFLOPs = units.FLOPs(v) }), 1, 1e18, "1 to 1e18 FLOPs", false},
		{"models.resnet50.activations.fp32", md(func(m *Model, v float64) { m.Activations.FP32 = units.Bytes(v) }), 1, 1 << 40, "1 B to 1 TiB", false},
		{"models.resnet50.activations.fp16", md(func(m *Model, v float64) { m.Activations.FP16 = units.Bytes(v) }), 0.5, 1 << 40, "0.5 B to 1 TiB", true},
		{"models.resnet50.activations.transient", md(func(m *Model, v float64) { m.Activations.Transient = units.Bytes(v) }), 1, 1 << 40, "1 B to 1 TiB", true},
		{"models.resnet50.efficiency", md(func(m *Model, v float64) { m.Efficiency = v }), 1e-3, 1, "0.001 to 1", true},
		{"datasets.imagenet-1k.bytes_per_sample", ds(func(d *Dataset, v float64) { d.BytesPerSample = units.Bytes(v) }), 1, 1 << 40, "1 B to 1 TiB", false},
		{"datasets.imagenet-1k.cpu_seconds_per_sample", ds(func(d *Dataset, v float64) { d.CPUSecondsPerSample = units.Seconds(v) }), 1e-9, 1e3, "1 ns to 1000 s", true},
	}
	check := func(path string, set func(*Profiles, float64), v float64) error {
		p := base.Clone()
		set(p, v)
		err := p.Validate()
		if err != nil && strings.Count(err.Error(), ": ") > 2 {
			t.Errorf("%s = %g: problems of other fields too: %v", path, v, err)
		}
		return err
	}
	for _, c := range cases {
		for _, v := range []float64{c.lo, c.hi} {
			if err := check(c.path, c.set, v); err != nil {
				t.Errorf("%s = %g (an edge) refused: %v", c.path, v, err)
			}
		}
		want := c.path + ": must be within " + c.rng + ", got "
		if c.zeroOK {
			want = c.path + ": must be 0 or within " + c.rng + ", got "
		}
		for _, v := range []float64{c.lo * (1 - 1e-9), c.hi * (1 + 1e-9), 5e-324, 1e-300, 1e308, -1, math.NaN(), math.Inf(1)} {
			if err := check(c.path, c.set, v); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s = %g: %v, want %q", c.path, v, err, want)
			}
		}
		if err := check(c.path, c.set, 0); (err == nil) != c.zeroOK {
			t.Errorf("%s = 0: %v", c.path, err)
		}
	}
}

// TestParseManyBadModels gives 2,000 models with a subnormal FLOP count:
// refused quickly, the first config.MaxListed listed with their lines.
func TestParseManyBadModels(t *testing.T) {
	const n = 2000
	var b strings.Builder
	b.WriteString(plausibleBase)
	for i := range n {
		fmt.Fprintf(&b, "  m%d: {task: t, dataset: imagenet-1k, params: 1, forward_flops: 5e-324 FLOP, activations: {fp32: 1 MB}, class: dense-conv}\n", i)
	}
	_, err := Parse(strings.NewReader(b.String()))
	if err == nil {
		t.Fatal("accepted")
	}
	lines := strings.Split(err.Error(), "\n")
	if want := fmt.Sprintf("%d problems:", n); lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	if want := "  line 16: models.m0.forward_flops: must be within 1 to 1e18 FLOPs, got 4.941e-324 FLOP"; len(lines) < 2 || lines[1] != want {
		t.Errorf("second line %q, want %q", lines[1], want)
	}
	if want := fmt.Sprintf("  and %d more", n-config.MaxListed); lines[len(lines)-1] != want {
		t.Errorf("last line %q, want %q", lines[len(lines)-1], want)
	}
}

// TestSmallestActivations: activations of 1 B in fp32 (the least) take the
// default fp16 of 0.5 B, which is accepted.
func TestSmallestActivations(t *testing.T) {
	src := strings.Replace(plausibleBase, "activations: {fp32: 90 MB, fp16: 45 MB}", "activations: {fp32: 1 B}", 1)
	p, err := Parse(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Models["resnet50"].Activations.FP16; got != 0.5 {
		t.Errorf("fp16 activations %v, want 0.5 B", got)
	}
}

// TestLLMSampleFLOPs: a 405-billion-parameter model on 8,192-token
// samples does 2 · 405e9 · 8192 = 6.6e15 FLOPs per sample forward and
// 2.0e16 forward and backward (the 6N-per-token rule); the profile is
// accepted, as is the cap of 1e18 forward FLOPs per sample.
func TestLLMSampleFLOPs(t *testing.T) {
	src := `datasets:
  tokens-8k:
    sample_unit: sentence
    train_samples: 1000000
    bytes_per_sample: 32.768 kB
    input_shape: [8192]
models:
  llm-405b:
    task: language-modelling
    dataset: tokens-8k
    params: 405000000000
    forward_flops: 6.63552 PFLOP
    activations: {fp32: 500 GB}
    class: transformer
`
	p, err := Parse(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	m := p.Models["llm-405b"]
	if got, want := float64(m.TrainFLOPsPerSample()), 6*405e9*8192; relErr(got, want) > 1e-12 {
		t.Errorf("training FLOPs per sample %g, want 6 · 405e9 · 8192 = %g", got, want)
	}
	for _, f := range []string{"1 EFLOP", "1000 PFLOP"} {
		if _, err := Parse(strings.NewReader(strings.Replace(src, "6.63552 PFLOP", f, 1))); err != nil {
			t.Errorf("forward_flops %s refused: %v", f, err)
		}
	}
	if _, err := Parse(strings.NewReader(strings.Replace(src, "6.63552 PFLOP", "1.001 EFLOP", 1))); err == nil {
		t.Error("forward_flops 1.001 EFLOP accepted")
	}
}
