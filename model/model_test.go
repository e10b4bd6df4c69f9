package model

import (
	"math"
	"reflect"
	"testing"

	"scaleplan/internal/units"
)

func TestBuckets(t *testing.T) {
	m := &Model{Name: "toy", Params: 165, Layers: []Layer{
		{Name: "e", Params: 10}, {Name: "d", Params: 20}, {Name: "c", Params: 30},
		{Name: "b", Params: 100}, {Name: "a", Params: 5},
	}}
	cases := []struct {
		name          string
		size          units.Bytes
		bytesPerParam float64
		want          []units.Bytes
	}{
		// By hand: 10+20 = 30 fits 50; +30 would be 60, so close at 30;
		// 30 alone; +100 would exceed, close; 100 is over size, alone;
		// 5 is the last bucket.
		{"size 50", 50, 1, []units.Bytes{30, 30, 100, 5}},
		// Exactly full is not over: 10+20+30 = 60 at size 60.
		{"size 60", 60, 1, []units.Bytes{60, 100, 5}},
		// fp32: 40, 80, 120, 400, 20 bytes; size 130.
		{"fp32 size 130", 130, 4, []units.Bytes{120, 120, 400, 20}},
		{"one bucket", 1e9, 2, []units.Bytes{330}},
		{"size 0: one per layer", 0, 1, []units.Bytes{10, 20, 30, 100, 5}},
	}
	for _, c := range cases {
		got := m.Buckets(c.size, c.bytesPerParam)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Buckets(%v, %v) = %v, want %v", c.name, c.size, c.bytesPerParam, got, c.want)
		}
	}
	// Without a layout the model is one layer.
	bare := &Model{Name: "bare", Params: 1000}
	if got := bare.Buckets(100, 4); !reflect.DeepEqual(got, []units.Bytes{4000}) {
		t.Errorf("Buckets without layers = %v, want [4000]", got)
	}
}

// TestBucketsShipped checks the invariants of the DDP rule on every shipped
// model: buckets sum to the gradient, none but single-layer ones exceed the
// size, and no two neighbours could have been merged.
func TestBucketsShipped(t *testing.T) {
	p, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	const size = 25 * units.MiB
	for _, name := range p.ModelNames() {
		m := p.Models[name]
		bs := m.Buckets(size, 4)
		var sum units.Bytes
		for _, b := range bs {
			sum += b
		}
		if g := m.GradientBytes(FP32); math.Abs(float64(sum-g)) > 1e-9*float64(g) {
			t.Errorf("%s: buckets sum to %v, gradient is %v", name, sum, g)
		}
		var maxLayer units.Bytes
		for _, l := range m.Layers {
			maxLayer = max(maxLayer, units.Bytes(4*l.Params))
		}
		for i, b := range bs {
			if b > size && b > maxLayer {
				t.Errorf("%s: bucket %d of %v exceeds %v and is not a single layer", name, i, b, size)
			}
		}
	}
	// ResNet-50 in fp32 (102.2 MB) needs at least ⌈102.2 MB / 25 MiB⌉ = 4
	// buckets; its 8 MiB fc weight and 9 MiB layer4 convolutions make 5.
	m, _ := p.Model("resnet50")
	if n := len(m.Buckets(size, 4)); n < 4 || n > 6 {
		t.Errorf("resnet50 has %d fp32 buckets of 25 MiB, want 4 to 6", n)
	}
}

func TestGradientAndFLOPs(t *testing.T) {
	m := defaultModel(t, "resnet50")
	// 25,557,032 parameters × 4 bytes.
	if got, want := m.GradientBytes(FP32), units.Bytes(102228128); got != want {
		t.Errorf("GradientBytes(fp32) = %v, want %v", got, want)
	}
	if got, want := m.GradientBytes(FP16), units.Bytes(51114064); got != want {
		t.Errorf("GradientBytes(fp16) = %v, want %v", got, want)
	}
	if got, want := m.GradientBytes(BF16), m.GradientBytes(FP16); got != want {
		t.Errorf("GradientBytes(bf16) = %v, want %v", got, want)
	}
	if got, want := m.TrainFLOPsPerSample(), 3*m.ForwardFLOPs; got != want {
		t.Errorf("TrainFLOPsPerSample = %v, want 3 × %v", got, want)
	}
	mr := defaultModel(t, "maskrcnn-r50-fpn")
	if got, want := mr.WeightBytes(FP32), units.Bytes(4*(44125173+222400)); got != want {
		t.Errorf("mask r-cnn WeightBytes(fp32) = %v, want %v", got, want)
	}
}

func TestActivationBytes(t *testing.T) {
	m := &Model{Activations: Activations{FP32: 100 * units.MB}}
	if got := m.ActivationBytes(FP16); got != 50*units.MB {
		t.Errorf("fp16 defaults to half of fp32: got %v", got)
	}
	m.Activations.FP16 = 60 * units.MB
	for p, want := range map[Precision]units.Bytes{FP32: 100 * units.MB, FP16: 60 * units.MB, BF16: 60 * units.MB} {
		if got := m.ActivationBytes(p); got != want {
			t.Errorf("ActivationBytes(%s) = %v, want %v", p, got, want)
		}
	}
	if got := m.TrainMemoryTraffic(FP16); got != 240*units.MB {
		t.Errorf("TrainMemoryTraffic(fp16) = %v, want 4 × 60 MB", got)
	}
}

func TestPrecision(t *testing.T) {
	for _, c := range []struct {
		s    string
		size float64
	}{{"fp32", 4}, {"fp16", 2}, {"bf16", 2}} {
		p, err := ParsePrecision(c.s)
		if err != nil || p.Size() != c.size {
			t.Errorf("ParsePrecision(%q) = %v, %v; size %v, want %v", c.s, p, err, p.Size(), c.size)
		}
	}
	if _, err := ParsePrecision("fp8"); err == nil || err.Error() != `unknown precision "fp8" (valid: fp32, fp16, bf16)` {
		t.Errorf("ParsePrecision(fp8) error = %v", err)
	}
	mustPanic(t, badPrecision, func() { Precision("int8").Size() })
	mustPanic(t, badBytesPerParam, func() { (&Model{Params: 1}).Buckets(1, 0) })
}

func TestEfficiency(t *testing.T) {
	for c, want := range map[Class]float64{DenseConv: 0.35, DepthwiseConv: 0.10, Transformer: 0.40, RNN: 0.25, MLP: 0.30, "other": 0} {
		if got := c.DefaultEfficiency(); got != want {
			t.Errorf("%s.DefaultEfficiency() = %v, want %v", c, got, want)
		}
	}
	m := &Model{Class: RNN}
	if got := m.EffectiveEfficiency(); got != 0.25 {
		t.Errorf("EffectiveEfficiency without Efficiency = %v, want the class default 0.25", got)
	}
	m.Efficiency = 0.5
	if got := m.EffectiveEfficiency(); got != 0.5 {
		t.Errorf("EffectiveEfficiency = %v, want 0.5", got)
	}
}

func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		if r := recover(); r != want {
			t.Errorf("panic %v, want %q", r, want)
		}
	}()
	f()
}

func TestInputElements(t *testing.T) {
	p := mustDefault(t)
	for name, want := range map[string]int64{"imagenet-1k": 224 * 224 * 3, "coco2017-1333": 800 * 1344 * 3, "fashion-mnist": 784, "wmt-en-de-tokens": 1} {
		d, err := p.Dataset(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.InputElements(); got != want {
			t.Errorf("%s.InputElements() = %d, want %d", name, got, want)
		}
	}
}
