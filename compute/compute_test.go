package compute

import (
	"encoding/csv"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// toy is a device with round figures: 100 SMs, 100 TFLOP/s at fp16, 10 at
// fp32, 1 TB/s.
func toy() *hw.Device {
	return &hw.Device{Name: "toy", Kind: hw.GPU, SMs: 100,
		Peak:            hw.Peak{FP32: 10e12, FP16: 100e12},
		MemoryBandwidth: 1e12}
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Abs(want) {
		t.Errorf("%s = %.9g, want %.9g", what, got, want)
	}
}

func TestGEMMClosedForm(t *testing.T) {
	c := &Config{Device: toy(), Precision: hw.FP16}
	// 1280×4096 by 4096×1280: 10×10 tiles of 128×128, one wave on 100 SMs.
	op := model.Op{Kind: model.MatMul, FLOPs: 2 * 1280 * 1280 * 4096, M: 1280, N: 1280, K: 4096, Groups: 1,
		Read: 2 * 2 * 1280 * 4096, Write: 2 * 1280 * 1280}
	got, err := OpTime(c, &op)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "1280² × 4096 GEMM (s)", float64(got), 2*1280*1280*4096/(100e12*0.8))
	// One more row makes 11×10 tiles: two waves, the second a tenth full,
	// and the whole takes twice as long.
	op2 := op
	op2.M, op2.FLOPs = 1281, 2*1281*1280*4096
	got2, _ := OpTime(c, &op2)
	near(t, "one more tile row / one wave", float64(got2/got), 2)
}

func TestQuantisation(t *testing.T) {
	near(t, "10×10 tiles on 100 SMs", Quantisation(1280, 1280, 64, 1, 100), 1)
	near(t, "11×10 tiles on 100 SMs", Quantisation(1281, 1280, 64, 1, 100), (1281.0/1408)*(110.0/200))
	// One tile of a deep product is split along K into 4096/256 = 16 slices.
	near(t, "split-K", Quantisation(128, 128, 4096, 1, 100), 16.0/100)
	// A half-filled tile: 64 of 128 rows.
	near(t, "64×128 on one SM", Quantisation(64, 128, 128, 1, 1), 0.5)
	// Batched products count every group's tiles: 200 tiles, 2 full waves.
	near(t, "200 groups", Quantisation(128, 128, 64, 200, 100), 1)
}

func TestMemoryBound(t *testing.T) {
	c := &Config{Device: toy(), Precision: hw.FP16}
	op := model.Op{Kind: model.Elementwise, FLOPs: 1e8, Read: 5e8, Write: 5e8}
	got, _ := OpTime(c, &op)
	near(t, "1 GB elementwise (s)", float64(got), 1e9/(1e12*0.83))
	// Its FLOPs at the CUDA cores' 10 TFLOP/s·0.8 take 12.5 µs, far less.
	op.FLOPs = 1e11 // now 12.5 ms of compute: compute-bound
	got, _ = OpTime(c, &op)
	near(t, "compute-bound elementwise (s)", float64(got), 1e11/(10e12*0.8))
}

func TestAttention(t *testing.T) {
	op := model.Op{Kind: model.Attention, FLOPs: 4 * 1280 * 1280 * 64 * 100, M: 1280, N: 1280, K: 64, Groups: 100,
		Read: 1e9, Write: 1e9}
	fused := &Config{Device: toy(), Precision: hw.FP16, FusedAttention: true}
	unfused := &Config{Device: toy(), Precision: hw.FP16}
	// 10·10 tiles × 100 groups: 10 full waves.
	f, _ := OpTime(fused, &op)
	near(t, "fused attention (s)", float64(f), math.Max(op.FLOPs/(100e12*0.5), 2e9/(1e12*0.83)))
	u, _ := OpTime(unfused, &op)
	near(t, "unfused attention (s)", float64(u), op.FLOPs/(100e12*0.8)+2e9/(1e12*0.83))
	if unfused.Kernels(&op) != 3 || fused.Kernels(&op) != 1 {
		t.Errorf("kernels: unfused %d, fused %d; want 3 and 1", unfused.Kernels(&op), fused.Kernels(&op))
	}
}

// TestFP8GEMM checks a product at fp8 against its closed form: the fp8
// peak at EffGEMM times the kernel speed-up that Transformer Engine's GEMM
// profiling tutorial measures on an H200 NVL (31.968 ms in bf16, 16.785
// ms in fp8, over the peaks' ratio of 2), 0.7619.
func TestFP8GEMM(t *testing.T) {
	near(t, "fp8 efficiency", DefaultEfficiency(TensorFP8), 0.8*(31.968/16.785)/2)
	d := toy()
	d.Peak.FP8 = 200e12
	c := &Config{Device: d, Precision: hw.FP8}
	op := model.Op{Kind: model.MatMul, FLOPs: 2 * 1280 * 1280 * 4096, M: 1280, N: 1280, K: 4096, Groups: 1}
	got, err := OpTime(c, &op)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "fp8 1280² × 4096 GEMM (s)", float64(got), op.FLOPs/(200e12*0.8*31.968/16.785/2))
	if k := c.ClassOf(&op); k != TensorFP8 {
		t.Errorf("class of an fp8 product: %s, want %s", k, TensorFP8)
	}
}

func TestPrecisionPeaks(t *testing.T) {
	d := toy()
	d.Peak.TF32 = 50e12
	op := model.Op{Kind: model.Conv, FLOPs: 2 * 1280 * 1280 * 4096, M: 1280, N: 1280, K: 4096, Groups: 1}
	for _, c := range []struct {
		p    hw.Precision
		peak float64
	}{{hw.FP32, 10e12}, {hw.TF32, 50e12}, {hw.FP16, 100e12}} {
		got, err := OpTime(&Config{Device: d, Precision: c.p}, &op)
		if err != nil {
			t.Fatal(err)
		}
		near(t, string(c.p)+" conv (s)", float64(got), op.FLOPs/(c.peak*0.8))
	}
	// A grouped convolution runs on the CUDA cores whatever the precision.
	g := op
	g.Kind = model.GroupedConv
	got, _ := OpTime(&Config{Device: d, Precision: hw.FP16}, &g)
	near(t, "grouped conv at fp16 (s)", float64(got), op.FLOPs/(10e12*0.8))
}

// TestStepLaunch checks each mode's host time against the device's, which
// it overlaps: eager PyTorch's host (a dispatch, a launch, a module call
// and an autograd record per forward operator; a dispatch and a launch
// per backward one, at PublishedHost's figures) is shorter than these
// small operators' device time with eager mode's KernelTime, which decides
// the step; a CUDA graph's or compiled step's launches hide behind the
// device, whose kernels take no KernelTime.
func TestStepLaunch(t *testing.T) {
	ops := []model.Op{
		{Kind: model.Elementwise, Pass: model.Forward, Read: 1e6},
		{Kind: model.Elementwise, Pass: model.Backward, Read: 2e6},
		{Kind: model.Update, Pass: model.UpdatePass, Read: 3e6},
	}
	mem := func(b float64) float64 { return b / (1e12 * 0.83) }
	k := float64(KernelTime)
	if host := 4.2e-6 + 5e-6 + 1.8e-6; host >= mem(1e6)+k {
		t.Fatalf("eager forward host %g s: want it shorter than the device's %g s", host, mem(1e6)+k)
	}
	for _, c := range []struct {
		m             Mode
		launch        float64
		fwd, bwd, upd float64
	}{
		{Eager, 4.2e-6, mem(1e6) + k, mem(2e6) + k, mem(3e6) + k},
		{Graphs, 0.5e-6, mem(1e6), mem(2e6), mem(3e6)},
		{Compiled, 0.9e-6, mem(1e6), mem(2e6), mem(3e6)},
	} {
		s, err := Step(&Config{Device: toy(), Precision: hw.FP16, Mode: c.m, Host: &PublishedHost}, ops)
		if err != nil {
			t.Fatal(err)
		}
		near(t, string(c.m)+" forward", float64(s.Forward), c.fwd)
		near(t, string(c.m)+" backward", float64(s.Backward), c.bwd)
		near(t, string(c.m)+" update", float64(s.Update), c.upd)
		near(t, string(c.m)+" launch", float64(s.Launch), 3*c.launch)
	}
}

// paramOps is a step of one linear layer of 1,000×1,000 weights and a
// bias (two parameter tensors) whose products take 1 s on the toy device,
// far longer than any host cost.
func paramOps() []model.Op {
	const fl = 0.8 * 100e12 // 1 s at fp16 on the toy device
	m := model.Op{Kind: model.MatMul, FLOPs: fl, M: 12800, N: 1000, K: 1000, Groups: 1, Params: 1001000}
	fwd, bwd := m, m
	fwd.Pass, bwd.Pass, bwd.Params = model.Forward, model.Backward, 0
	return []model.Op{fwd, bwd}
}

// bare is a calibration whose kernels take no device time of their own
// (KernelTime 1 fs, in place of eager mode's published KernelTime), for
// the tests of the host's closed forms, whose steps are host-bound or
// sum a few long operators.
var bare = &Efficiencies{KernelTime: 1e-15}

// TestOverlapSync checks the step's closed forms: the host's optimizer
// step hides behind a long device pass without a synchronisation, and
// follows it with the gradient scaler's.
func TestOverlapSync(t *testing.T) {
	ops := paramOps()
	q := Quantisation(12800, 1000, 1000, 1, 100)
	dev := 2/q + 2*float64(KernelTime) // two products of 1/q s each, a kernel each
	sizes := []int64{1000000, 1000}
	// Momentum SGD: four foreach calls, each one launch (2 tensors), and
	// the step's 1.815 µs a tensor (compute/testdata/torch-host.csv).
	opt := 4*(3.3e-6+0.9e-6) + 2*1.815e-6
	c := &Config{Device: toy(), Precision: hw.FP16, Mode: Eager, Optimizer: model.Momentum}
	s, err := Step(c, ops)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "optimizer host", float64(s.Host.Optimizer), opt)
	near(t, "no sync: max(host, device)", float64(s.Compute()), dev)
	c.GradScaler = true
	s, _ = Step(c, ops)
	before, after := c.scalerHost(sizes)
	near(t, "scaler before", float64(before), 3*4.2e-6+3.3e-6+0.9e-6+2*1.465e-6)
	near(t, "scaler after", float64(after), 4.2e-6)
	near(t, "sync: device, then the optimizer", float64(s.Compute()), dev+opt+float64(after))
	if !s.Sync {
		t.Error("a gradient scaler's step: want Sync")
	}
	// A host longer than the device decides: 10,000 tiny forward ops on
	// a device whose kernels take no time of their own (bare); at the
	// published KernelTime the device decides.
	tiny := make([]model.Op, 10000)
	for i := range tiny {
		tiny[i] = model.Op{Kind: model.Elementwise, Pass: model.Forward, Read: 8}
	}
	s, _ = Step(&Config{Device: toy(), Precision: hw.FP16, Mode: Eager, Eff: bare}, tiny)
	near(t, "host-bound step, measured", float64(s.Compute()), 10000*(4.2e-6+1.118e-6+0.418e-6))
	s, _ = Step(&Config{Device: toy(), Precision: hw.FP16, Mode: Eager, Host: &PublishedHost, Eff: bare}, tiny)
	near(t, "host-bound step, published", float64(s.Compute()), 10000*(4.2e-6+5e-6+1.8e-6))
	s, _ = Step(&Config{Device: toy(), Precision: hw.FP16, Mode: Eager}, tiny)
	near(t, "device-bound step at KernelTime", float64(s.Compute()), 10000*(8/(1e12*EffMemory)+float64(KernelTime)))
	// Adam: 6.842 µs a tensor beyond its seven foreach calls.
	c = &Config{Device: toy(), Precision: hw.FP16, Mode: Eager, Optimizer: model.Adam}
	s, _ = Step(c, ops)
	near(t, "adam host", float64(s.Host.Optimizer), 7*(3.3e-6+0.9e-6)+2*6.842e-6)
}

// TestMeasuredHost checks MeasuredHost against the table it is taken from,
// scripts/torchhost.py's output in testdata/torch-host.csv.
func TestMeasuredHost(t *testing.T) {
	rows := csvRecords(t, "testdata/torch-host.csv")
	table := map[string]float64{}
	for _, row := range rows[1:] {
		v, err := strconv.ParseFloat(row[1], 64)
		if err != nil {
			t.Fatalf("%s: %v", row[0], err)
		}
		table[row[0]] = v
	}
	for name, got := range map[string]units.Seconds{
		"module_call": MeasuredHost.ModuleCall, "autograd_record": MeasuredHost.AutogradRecord,
		"sgd_tensor": MeasuredHost.SGDTensor, "adam_tensor": MeasuredHost.AdamTensor,
		"scaler_tensor": MeasuredHost.ScalerTensor, "dispatch": CPUDispatch,
	} {
		want, ok := table[name]
		if !ok {
			t.Errorf("%s: not in the table", name)
		}
		if math.Abs(float64(got)/1e-6-want) > 5e-4 {
			t.Errorf("%s: %g µs, the table %g µs", name, float64(got)/1e-6, want)
		}
	}
}

func TestForeachLaunches(t *testing.T) {
	ones := func(n int) []int64 {
		s := make([]int64, n)
		for i := range s {
			s[i] = 1
		}
		return s
	}
	for _, c := range []struct {
		depth int
		sizes []int64
		want  int
	}{
		{1, nil, 0},
		{1, ones(110), 1},
		{1, ones(111), 2},
		{2, ones(65), 2}, // 64 tensors a launch at depth 2
		{5, ones(61), 3}, // 30 at depth 5
		{1, []int64{320 * 65536}, 1},
		{1, []int64{320*65536 + 1}, 2}, // 321 chunks: a second launch
	} {
		if got := foreachLaunches(c.depth, c.sizes); got != c.want {
			t.Errorf("depth %d, %d tensors: %d launches, want %d", c.depth, len(c.sizes), got, c.want)
		}
	}
}

// TestMemoryShare checks the memory-bound kernels that move their bytes
// below a streaming kernel's rate: a softmax's and a dropout's forward
// pass at EffSoftmax and EffDropout (their backward passes at EffMemory),
// an addition with a broadcast input at EffBroadcast of the bandwidth, a reduction over the rows at EffReduce (float32 under autocast: twice its bytes, one kernel,
// no cast), a layer norm's forward pass at EffLayerNorm, its backward
// pass and a batch norm's at EffMemory; a calibration's memory
// efficiency scales each.
func TestMemoryShare(t *testing.T) {
	const bw = 1e12 // toy()'s bandwidth
	c := &Config{Device: toy(), Precision: hw.FP16}
	amp := &Config{Device: toy(), Precision: hw.FP16, Autocast: true}
	half := &Config{Device: toy(), Precision: hw.FP16, Eff: &Efficiencies{}}
	half.Eff.Set(MemoryBound, EffMemory/2)
	reduce := model.Op{Kind: model.Elementwise, Pass: model.Backward, Read: 2e6, Write: 1e3, Reduce: true}
	lnReduce := model.Op{Kind: model.Norm, Pass: model.Backward, Read: 2e6, Write: 1e3, Reduce: true, Float32: true, Float32Input: true}
	for _, k := range []struct {
		name string
		c    *Config
		op   model.Op
		want float64
	}{
		{"bias gradient", c, reduce, 2.001e6 / (bw * EffReduce)},
		{"bias gradient, memory at half", half, reduce, 2 * 2.001e6 / (bw * EffReduce)},
		{"norm's scale and shift gradients under autocast", amp, lnReduce, 2 * 2.001e6 / (bw * EffReduce)},
		{"norm's scale and shift gradients in 16 bits", c, lnReduce, 2.001e6 / (bw * EffReduce)},
		{"layer norm", c, model.Op{Kind: model.Norm, Pass: model.Forward, Read: 1e6, Write: 1e6}, 2e6 / (bw * EffLayerNorm)},
		{"layer norm's input gradient", c, model.Op{Kind: model.Norm, Pass: model.Backward, Read: 2e6, Write: 1e6}, 3e6 / (bw * EffMemory)},
		{"batch norm", c, model.Op{Kind: model.Norm, Pass: model.Forward, Read: 1e6, Write: 1e6, BatchNorm: true}, 2e6 / (bw * EffMemory)},
		{"softmax", c, model.Op{Kind: model.Softmax, Pass: model.Forward, Read: 1e6, Write: 1e6}, 2e6 / (bw * EffSoftmax)},
		{"softmax's gradient", c, model.Op{Kind: model.Softmax, Pass: model.Backward, Read: 2e6, Write: 1e6}, 3e6 / (bw * EffMemory)},
		{"dropout", c, model.Op{Kind: model.Elementwise, Pass: model.Forward, Read: 1e6, Write: 1e6, Random: true}, 2e6 / (bw * EffDropout)},
		{"dropout's gradient", c, model.Op{Kind: model.Elementwise, Pass: model.Backward, Read: 2e6, Write: 1e6}, 3e6 / (bw * EffMemory)},
		{"broadcast addition", c, model.Op{Kind: model.Elementwise, Pass: model.Forward, Read: 1e6, Write: 1e6, Broadcast: true}, 2e6 / (bw * EffBroadcast)},
		{"broadcast addition, memory at half", half, model.Op{Kind: model.Elementwise, Pass: model.Forward, Read: 1e6, Write: 1e6, Broadcast: true}, 2 * 2e6 / (bw * EffBroadcast)},
	} {
		got, err := OpTime(k.c, &k.op)
		if err != nil {
			t.Fatal(err)
		}
		near(t, k.name, float64(got), k.want)
	}
	if n := amp.Kernels(&lnReduce); n != 1 {
		t.Errorf("norm's scale and shift gradients under autocast: %d kernels, want 1 (no cast)", n)
	}
	kinds, err := KindTimes(amp, []model.Op{lnReduce})
	if err != nil {
		t.Fatal(err)
	}
	if kinds[CastKind] != 0 {
		t.Errorf("norm's scale and shift gradients: %v s of casts, want none", kinds[CastKind])
	}
}

// TestAutocast checks autocast's float32 operators (twice the 16-bit bytes
// and a cast of three times their Write) and weight casts (6 bytes a
// parameter, a kernel per tensor, in each pass).
func TestAutocast(t *testing.T) {
	op := model.Op{Kind: model.Elementwise, Pass: model.Forward, FLOPs: 1, Read: 1e6, Write: 1e6, Float32: true}
	bw := 1e12 * 0.83
	on := &Config{Device: toy(), Precision: hw.FP16, Autocast: true}
	off := &Config{Device: toy(), Precision: hw.FP16}
	got, _ := OpTime(on, &op)
	near(t, "float32 op under autocast", float64(got), 4e6/bw+3e6/bw)
	got, _ = OpTime(off, &op)
	near(t, "float32 op without autocast", float64(got), 2e6/bw)
	if on.Kernels(&op) != 2 || off.Kernels(&op) != 1 {
		t.Errorf("kernels: %d under autocast, %d without; want 2 and 1", on.Kernels(&op), off.Kernels(&op))
	}
	fp32 := &Config{Device: toy(), Precision: hw.FP32, Autocast: true}
	if got, _ := OpTime(fp32, &op); math.Abs(float64(got)-2e6/bw) > 1e-15 {
		t.Errorf("autocast at fp32: %v, want the plain %v", got, 2e6/bw)
	}
	ops := paramOps()
	k, b := weightCasts(ops)
	if k != 2 || b != 6*1001000 {
		t.Errorf("weight casts: %d kernels, %v bytes; want 2 and %d", k, b, 6*1001000)
	}
	son, _ := Step(&Config{Device: toy(), Precision: hw.FP16, Mode: Graphs, Autocast: true}, ops)
	soff, _ := Step(&Config{Device: toy(), Precision: hw.FP16, Mode: Graphs}, ops)
	near(t, "casts' device time, forward", float64(son.DeviceForward-soff.DeviceForward), 6*1001000/bw)
	near(t, "casts' device time, backward", float64(son.DeviceBackward-soff.DeviceBackward), 6*1001000/bw)
	near(t, "casts' launches", float64(son.Launch-soff.Launch), 4*0.5e-6)
}

// builtin returns the built-in catalogue's device called name.
func builtin(t testing.TB, name string) *hw.Device {
	t.Helper()
	cat, err := hw.Load()
	if err == nil {
		var d *hw.Device
		if d, err = cat.Device(name); err == nil {
			return d
		}
	}
	t.Fatal(err)
	return nil
}

// stepAt is the forward and backward time of name at batch b.
func stepAt(t *testing.T, c *Config, name string, b int) units.Seconds {
	t.Helper()
	ops, err := model.Ops(name, model.Shape{Batch: b, Precision: storage(c.Precision)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Step(c, ops)
	if err != nil {
		t.Fatal(err)
	}
	return s.Compute()
}

func TestMonotone(t *testing.T) {
	h100 := builtin(t, "h100-sxm5-80gb")
	faster := *h100
	faster.Name = "faster"
	faster.Peak.FP32, faster.Peak.FP16, faster.MemoryBandwidth = 2*h100.Peak.FP32, 2*h100.Peak.FP16, 2*h100.MemoryBandwidth
	for _, name := range []string{"resnet50", "mlp", "bert-base", "efficientnet-b4"} {
		c := &Config{Device: h100, Precision: hw.FP16, Mode: Eager}
		f := &Config{Device: &faster, Precision: hw.FP16, Mode: Eager}
		prev := units.Seconds(0)
		for b := 1; b <= 64; b *= 2 {
			tb := stepAt(t, c, name, b)
			if tb < prev {
				t.Errorf("%s: step at batch %d (%v) shorter than at %d (%v)", name, b, tb, b/2, prev)
			}
			prev = tb
			if tf := stepAt(t, f, name, b); tf > tb {
				t.Errorf("%s at batch %d: the faster device takes %v, the H100 %v", name, b, tf, tb)
			}
		}
	}
}

func TestLawAt(t *testing.T) {
	d := builtin(t, "v100-sxm2-16gb")
	c := Config{Device: d, Precision: hw.FP16, Mode: Eager}
	l, err := LawAt(c, "resnet50", 64)
	if err != nil {
		t.Fatal(err)
	}
	t1, t2 := stepAt(t, &c, "resnet50", 64), stepAt(t, &c, "resnet50", 128)
	near(t, "law at b", float64(64*l.PerSample+l.Fixed), float64(t1))
	near(t, "law at 2b", float64(128*l.PerSample+l.Fixed), float64(t2))
	if !(l.Fixed > 0) || !(l.ForwardFraction > 0 && l.ForwardFraction < 1) {
		t.Errorf("law %+v: want a positive fixed part and a forward fraction in (0, 1)", l)
	}
	again, _ := LawAt(c, "resnet50", 64)
	lawMu.Lock()
	clear(lawCache)
	lawMu.Unlock()
	fresh, _ := LawAt(c, "resnet50", 64)
	if again != l || fresh != l {
		t.Errorf("law not deterministic: %+v, cached %+v, recomputed %+v", l, again, fresh)
	}
}

func TestLawErrors(t *testing.T) {
	cpu := &hw.Device{Name: "cpu", Kind: hw.CPU, Peak: hw.Peak{FP32: 1e12}, MemoryBandwidth: 1e11}
	if _, err := LawAt(Config{Device: cpu, Precision: hw.FP32}, "resnet50", 8); !errors.Is(err, ErrNoModel) {
		t.Errorf("device without SMs: %v, want ErrNoModel", err)
	}
	d := builtin(t, "h100-sxm5-80gb")
	if _, err := LawAt(Config{Device: d, Precision: hw.FP16}, "no-such-model", 8); !errors.Is(err, ErrNoModel) {
		t.Errorf("model without generator: %v, want ErrNoModel", err)
	}
	if _, err := LawAt(Config{Device: d, Precision: hw.FP64}, "resnet50", 8); err == nil {
		t.Error("fp64: no error")
	}
	if _, err := LawAt(Config{Device: builtin(t, "v100-sxm2-16gb"), Precision: hw.BF16}, "resnet50", 8); err == nil {
		t.Error("bf16 on V100 (no peak): no error")
	}
	if _, err := LawAt(Config{Device: d, Precision: hw.FP16}, "resnet50", 0); err == nil {
		t.Error("batch 0: no error")
	}
	if _, err := ParseMode("jit"); err == nil {
		t.Error("mode jit: no error")
	}
	if m, err := ParseMode(""); err != nil || m != Eager {
		t.Errorf("mode \"\": %v, %v; want eager", m, err)
	}
}

// BenchmarkResNet50Step is the operator model's step of ResNet-50 at batch
// 256 in fp16 on an H100: the generator's operators and their times.
func BenchmarkResNet50Step(b *testing.B) {
	benchStep(b, "resnet50", 256)
}

// BenchmarkLlama405BStep is the same for one 8,192-token sequence of
// Llama 3 405B, all 126 layers.
func BenchmarkLlama405BStep(b *testing.B) {
	benchStep(b, "llama3-405b", 1)
}

func benchStep(b *testing.B, name string, batch int) {
	c := &Config{Device: builtin(b, "h100-sxm5-80gb"), Precision: hw.BF16, Mode: Eager}
	for b.Loop() {
		ops, err := model.Ops(name, model.Shape{Batch: batch, Precision: model.BF16})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Step(c, ops); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCatalogueSMs checks the built-in GPUs' SM counts against their
// architecture whitepapers (V100: Table 1 of the Volta whitepaper; A100:
// of the A100 whitepaper; H100 SXM5: of the H100 whitepaper).
func TestCatalogueSMs(t *testing.T) {
	for name, want := range map[string]int{"v100-sxm2-16gb": 80, "p100-sxm2": 56, "a100-sxm4-80gb": 108, "a100-sxm4-40gb": 108, "h100-sxm5-80gb": 132, "h200-sxm-141gb": 132, "t4": 40} {
		if got := builtin(t, name).SMs; got != want {
			t.Errorf("%s: %d SMs, want %d", name, got, want)
		}
	}
	if builtin(t, "gc200").SMs != 0 || Covers(builtin(t, "gc200"), "resnet50") {
		t.Error("the IPU has an SM count: the operator model would apply to it")
	}
}

func TestNCHWTransposes(t *testing.T) {
	op := model.Op{Kind: model.Conv, FLOPs: 2 * 1280 * 1280 * 4096, M: 1280, N: 1280, K: 4096, Groups: 1, Read: 4e8, Write: 1e8}
	mem := 5e8 / (1e12 * 0.83)
	comp := op.FLOPs / (100e12 * 0.8)
	c := &Config{Device: toy(), Precision: hw.FP16, NCHW: true}
	got, _ := OpTime(c, &op)
	near(t, "NCHW fp16 conv (s)", float64(got), math.Max(comp, mem)+2*mem)
	if k := c.Kernels(&op); k != 3 {
		t.Errorf("NCHW fp16 conv: %d kernels, want 3 (two transposes)", k)
	}
	// fp32 convolutions run on the CUDA cores in NCHW, and a grouped one
	// is not a tensor-core convolution: neither is transposed.
	fp32 := &Config{Device: toy(), Precision: hw.FP32, NCHW: true}
	got, _ = OpTime(fp32, &op)
	near(t, "NCHW fp32 conv (s)", float64(got), math.Max(op.FLOPs/(10e12*0.8), mem))
	g := op
	g.Kind = model.GroupedConv
	if c.Kernels(&g) != 1 || fp32.Kernels(&op) != 1 {
		t.Error("a grouped or fp32 convolution is transposed")
	}
}

// TestDepthwise checks a grouped convolution's memory term at EffDepthwise
// of the bandwidth, 0.24 against a streaming kernel's 0.83.
func TestDepthwise(t *testing.T) {
	c := &Config{Device: toy(), Precision: hw.FP16}
	op := model.Op{Kind: model.GroupedConv, FLOPs: 1e6, Read: 6e8, Write: 6e8, M: 1000, N: 1, K: 9, Groups: 32}
	got, _ := OpTime(c, &op)
	near(t, "depthwise conv (s)", float64(got), 1.2e9/(1e12*0.24))
	ew := op
	ew.Kind = model.Elementwise
	got2, _ := OpTime(c, &ew)
	near(t, "depthwise over elementwise", float64(got/got2), 0.83/0.24)
}

func TestParamSizes(t *testing.T) {
	ops := []model.Op{
		{Kind: model.MatMul, Pass: model.Forward, Params: 1001000, K: 1000, N: 1000, Groups: 1},
		{Kind: model.GroupedConv, Pass: model.Forward, Params: 32*9 + 32, K: 9, N: 1, Groups: 32},
		{Kind: model.Norm, Pass: model.Forward, Params: 128},
		{Kind: model.Conv, Pass: model.Forward, Params: 147 * 64, K: 147, N: 64, Groups: 1},
		{Kind: model.MatMul, Pass: model.Backward, K: 1000, N: 1000},
	}
	want := []int64{1000000, 1000, 288, 32, 64, 64, 147 * 64}
	got := paramSizes(ops)
	if len(got) != len(want) {
		t.Fatalf("sizes %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("sizes %v, want %v", got, want)
			break
		}
	}
}

// TestSyncSegments checks the step of operators with synchronisations
// against the closed form Σ_k (max(H_k, D_k) + SyncLatency) + max(H, D)
// of the last segment, by hand on the toy device: a memory-bound forward
// operator of 1 GB (D = 1/830 s) issued in eager mode at PublishedHost's
// figures (H = 4.2 + 5 + 1.8 µs), then an untracked operator of 3 kernels and 8 bytes that syncs (H
// = 3·4.2 µs, D = 8/830e9 s), then 200 tiny tracked operators (each H =
// 11 µs, D = 8/830e9 s) and a 1 GB backward operator (H = 4.2 µs).
func TestSyncSegments(t *testing.T) {
	const bw = 1e12 * 0.83
	big := model.Op{Kind: model.Elementwise, Pass: model.Forward, Read: 5e8, Write: 5e8}
	ops := []model.Op{big, {Kind: model.Elementwise, Pass: model.Forward, Read: 8, Kernels: 3, Sync: true, Untracked: true}}
	for range 200 {
		ops = append(ops, model.Op{Kind: model.Elementwise, Pass: model.Forward, Read: 8})
	}
	back := big
	back.Pass = model.Backward
	ops = append(ops, back)
	c := &Config{Device: toy(), Precision: hw.FP16, Mode: Eager, Host: &PublishedHost, Eff: bare}
	s, err := Step(c, ops)
	if err != nil {
		t.Fatal(err)
	}
	launch, tracked := 4.2e-6, 4.2e-6+5e-6+1.8e-6
	first := math.Max(tracked+3*launch, 1e9/bw+8/bw) + 5.8e-6
	last := math.Max(200*tracked+launch, 200*8/bw+1e9/bw) // the host decides
	near(t, "two segments", float64(s.Compute()), first+last)
	near(t, "waited", float64(s.Waited), first)
	if s.Syncs != 1 {
		t.Errorf("syncs %d, want 1", s.Syncs)
	}
	// Without the sync the host runs ahead: one max over the whole step.
	ops[1].Sync = false
	s, _ = Step(c, ops)
	near(t, "no sync", float64(s.Compute()), math.Max(201*tracked+4*launch, 2e9/bw+201*8/bw))
	// A compiled program keeps the data-dependent work on the device.
	ops[1].Sync = true
	c.Mode = Compiled
	s, _ = Step(c, ops)
	if s.Syncs != 0 {
		t.Errorf("compiled: syncs %d, want 0", s.Syncs)
	}
}

// TestLossSync checks Config.LossSync on TestSyncSegments' toy step
// without its syncing operator: the host reads the loss after the last
// forward operator, so the step is max(H_fwd, D_fwd) + SyncLatency +
// max(H_bwd, D_bwd), by hand; only in eager mode.
func TestLossSync(t *testing.T) {
	const bw = 1e12 * 0.83
	big := model.Op{Kind: model.Elementwise, Pass: model.Forward, Read: 5e8, Write: 5e8}
	ops := []model.Op{big}
	for range 200 {
		ops = append(ops, model.Op{Kind: model.Elementwise, Pass: model.Forward, Read: 8})
	}
	back := big
	back.Pass = model.Backward
	ops = append(ops, back)
	c := &Config{Device: toy(), Precision: hw.FP16, Mode: Eager, Host: &PublishedHost, LossSync: true, Eff: bare}
	s, err := Step(c, ops)
	if err != nil {
		t.Fatal(err)
	}
	launch, tracked := 4.2e-6, 4.2e-6+5e-6+1.8e-6
	fwd := math.Max(201*tracked, 1e9/bw+200*8/bw) + 5.8e-6
	near(t, "loss read", float64(s.Compute()), fwd+math.Max(launch, 1e9/bw))
	if s.Syncs != 1 {
		t.Errorf("syncs %d, want 1", s.Syncs)
	}
	c.Mode = Compiled
	if s, _ = Step(c, ops); s.Syncs != 0 {
		t.Errorf("compiled: syncs %d, want 0", s.Syncs)
	}
}

// TestConvEfficiencyMeasured checks the A100's convolutions against the
// runtimes NVIDIA's CUTLASS profiler documentation (media/docs/profiler.md,
// "Example Tensor Core Convolution Operation" and "Example CUDA Core
// Convolution Operation") prints for a 3×3 forward convolution of 8 images
// of 224×224×128 to 128 channels, 118,482,796,544 FLOPs: 0.945071 ms in
// fp16 on the tensor cores and 8.13237 ms in fp32 on the CUDA cores; and
// the V100's against DeepBench's 0.379 ms for a 3×3 convolution of 16
// inputs of 175×40×128 to 128 channels in fp16 (results/train/
// DeepBench_NV_V100.xlsx). The same product as a matrix product runs at
// the A100's measured product efficiency (gemm_efficiency, the page's
// GEMM), and a device that gives no convolution efficiency (the H100)
// runs both alike.
func TestConvEfficiencyMeasured(t *testing.T) {
	const flops = 118482796544
	// Implicit GEMM M = 8·224·224, N = 128, K = 128·3·3; bytes: the fp16
	// activations in and the fp32 output (the page's --Output=f32).
	conv := model.Op{Kind: model.Conv, FLOPs: flops, M: 8 * 224 * 224, N: 128, K: 1152, Groups: 1,
		Read: 8 * 224 * 224 * 128 * 2, Write: 8 * 224 * 224 * 128 * 4}
	a100 := builtin(t, "a100-sxm4-40gb")
	for _, tc := range []struct {
		p    hw.Precision
		want float64 // seconds, the page's runtime
	}{{hw.FP16, 0.945071e-3}, {hw.FP32, 8.13237e-3}} {
		got, err := OpTime(&Config{Device: a100, Precision: tc.p}, &conv)
		if err != nil {
			t.Fatal(err)
		}
		if r := float64(got) / tc.want; math.Abs(r-1) > 0.005 {
			t.Errorf("A100 %s conv: %.4g ms, CUTLASS measured %.4g ms (ratio %.4f)", tc.p, float64(got)*1e3, tc.want*1e3, r)
		}
	}
	gemm := conv
	gemm.Kind = model.MatMul
	got, _ := OpTime(&Config{Device: a100, Precision: hw.FP16}, &gemm)
	q := 3136.0 / (30 * 108) // 3,136 tiles of 128×128 in 30 waves of 108 SMs
	near(t, "A100 fp16 product of the conv's shape (s)", float64(got), flops/(312e12*a100.GEMMEfficiency.Tensor*q))
	// DeepBench's V100 convolution: M = 16·175·40, N = 128, K = 1,152.
	db := model.Op{Kind: model.Conv, FLOPs: 2 * 112000 * 128 * 1152, M: 112000, N: 128, K: 1152, Groups: 1,
		Read: 112000 * 128 * 2, Write: 112000 * 128 * 2}
	got, _ = OpTime(&Config{Device: builtin(t, "v100-sxm2-16gb"), Precision: hw.FP16}, &db)
	if r := float64(got) / 0.379e-3; math.Abs(r-1) > 0.005 {
		t.Errorf("V100 fp16 conv: %.4g ms, DeepBench measured 0.379 ms (ratio %.4f)", float64(got)*1e3, r)
	}
	h100 := builtin(t, "h100-sxm5-80gb")
	tc, _ := OpTime(&Config{Device: h100, Precision: hw.FP16}, &conv)
	tg, _ := OpTime(&Config{Device: h100, Precision: hw.FP16}, &gemm)
	near(t, "H100 conv over product", float64(tc/tg), 1)
	// A calibration's tensor-core efficiency scales the measured one.
	var e Efficiencies
	e.Set(TensorFP16, 0.4)
	cal, _ := OpTime(&Config{Device: a100, Precision: hw.FP16, Eff: &e}, &conv)
	near(t, "calibrated A100 conv (s)", float64(cal), flops/(312e12*0.4*(0.415/a100.GEMMEfficiency.Tensor)*q))
}

// TestHostOp checks an operator the host computes (model.Op.HostCPU)
// against the closed form by hand on the toy device, in compiled mode,
// where no other operator syncs: a 1 GB forward operator (D = 1/830 s,
// H = 0.9 µs), the host's 50 ms operator of 8 bytes on the device, then
// a 1 GB backward operator; each of the first two segments takes
// max(H, D) + SyncLatency.
func TestHostOp(t *testing.T) {
	const bw = 1e12 * 0.83
	big := model.Op{Kind: model.Elementwise, Pass: model.Forward, Read: 5e8, Write: 5e8}
	back := big
	back.Pass = model.Backward
	ops := []model.Op{big, {Kind: model.Elementwise, Pass: model.Forward, Read: 8, HostCPU: 0.05, Untracked: true}, back}
	for _, m := range []Mode{Compiled, Eager} {
		c := &Config{Device: toy(), Precision: hw.FP16, Mode: m, Host: &PublishedHost, Eff: bare}
		s, err := Step(c, ops)
		if err != nil {
			t.Fatal(err)
		}
		l := float64(m.Launch())
		if m == Eager {
			l += 5e-6 + 1.8e-6 // the first operator's module call and record
		}
		first := math.Max(l, 1e9/bw) + 5.8e-6
		host := math.Max(float64(m.Launch())+0.05, 8/bw) + 5.8e-6
		last := math.Max(float64(m.Launch()), 1e9/bw)
		near(t, string(m)+" step", float64(s.Compute()), first+host+last)
		near(t, string(m)+" waited", float64(s.Waited), first+host)
		if s.Syncs != 2 {
			t.Errorf("%s: syncs %d, want 2", m, s.Syncs)
		}
	}
}

// TestHostCores checks a host operator's time when its pieces share the
// host's cores (Config.HostCores): the longer of HostCPU and HostWork
// over the cores, by hand: 50 ms of 400 core-ms over 4 cores takes
// 100 ms, over 16 its 50 ms; cores that are not a finite number ≥ 0 are
// an error.
func TestHostCores(t *testing.T) {
	op := model.Op{Kind: model.Elementwise, Pass: model.Forward, Read: 8, HostCPU: 0.05, HostWork: 0.4, Untracked: true}
	for _, c := range []struct{ cores, want float64 }{{0, 0.05}, {4, 0.1}, {16, 0.05}} {
		cfg := &Config{Device: toy(), Precision: hw.FP16, Mode: Compiled, HostCores: c.cores}
		s, err := Step(cfg, []model.Op{op})
		if err != nil {
			t.Fatal(err)
		}
		want := math.Max(0.9e-6+c.want, 8/(1e12*0.83)) + 2*5.8e-6 // the empty segment before it closes too
		near(t, "host cores", float64(s.Compute()), want)
	}
	for _, bad := range []float64{-1, math.Inf(1), math.NaN()} {
		if _, err := Step(&Config{Device: toy(), Precision: hw.FP16, HostCores: bad}, []model.Op{op}); err == nil || !strings.Contains(err.Error(), "host cores") {
			t.Errorf("host cores %v: error %v, want one naming them", bad, err)
		}
	}
}

// TestLawCacheKeysDevice checks that LawAt's cache tells apart two
// devices of one name whose convolutions run at different efficiencies,
// and two host costs: an edited copy of the A100 whose tensor-core
// convolutions reach half its catalogue figure takes longer per sample,
// and PublishedHost's costlier module calls make the host-bound small
// batch slower than MeasuredHost's.
func TestLawCacheKeysDevice(t *testing.T) {
	a100 := builtin(t, "a100-sxm4-80gb")
	slow := *a100
	slow.ConvEfficiency.Tensor /= 2
	c := Config{Device: a100, Precision: hw.FP16, Mode: Eager}
	l1, err := LawAt(c, "resnet50", 64)
	if err != nil {
		t.Fatal(err)
	}
	c.Device = &slow
	l2, err := LawAt(c, "resnet50", 64)
	if err != nil {
		t.Fatal(err)
	}
	if !(l2.PerSample > l1.PerSample) {
		t.Errorf("A100 copy with half the convolution efficiency: %v per sample, the A100 %v", l2.PerSample, l1.PerSample)
	}
	c.Device, c.Eff = a100, bare // the host decides the MLP's step
	m, _ := LawAt(c, "mlp", 1)
	c.Host = &PublishedHost
	p, _ := LawAt(c, "mlp", 1)
	if !(p.PerSample+p.Fixed > m.PerSample+m.Fixed) {
		t.Errorf("MLP at batch 1: %v with the published host costs, %v with the measured", p.PerSample+p.Fixed, m.PerSample+m.Fixed)
	}
}

// TestLawFusedAttention checks that LawAt runs a transformer's attention
// fused where the Config asks, and caches the two apart: GPT-3 Small's
// step at 2,048 tokens, against the closed form of what its unfused
// attention moves besides. Unfused, each layer's attention writes and reads
// b·a·s² values (2 bytes each in bf16) three times forward (the scores,
// the probabilities, the dropout's output) and reads them three times,
// and the backward pass moves them again; that traffic at the device's
// memory rate bounds from below what fusing saves (the unfused products
// and their traffic add, fused they overlap), less the fused backward's
// extra half pass of the products at the peak.
func TestLawFusedAttention(t *testing.T) {
	h100 := builtin(t, "h100-sxm5-80gb")
	c := Config{Device: h100, Precision: hw.BF16, Mode: Eager, SeqLen: 2048}
	unfused, err := LawAt(c, "gpt3-125m", 8)
	if err != nil {
		t.Fatal(err)
	}
	c.FusedAttention = true
	fused, err := LawAt(c, "gpt3-125m", 8)
	if err != nil {
		t.Fatal(err)
	}
	const b, s, a, layers = 8, 2048, 12, 12
	step := func(l Law) float64 { return float64(l.PerSample)*b + float64(l.Fixed) }
	scores := float64(b * a * s * s)
	traffic := layers * scores * 2 * 6 / (float64(h100.MemoryBandwidth) * DefaultEfficiency(MemoryBound))
	extra := layers * 0.5 * 4 * b * s * s * 768 / float64(h100.PeakFLOPs(hw.BF16))
	if saved := step(unfused) - step(fused); !(saved > traffic-extra) || !(step(fused) > 0) {
		t.Errorf("fusing saves %v s of %v a step; want at least the scores' traffic %v s less the fused backward's extra products (%v s at the peak)", saved, step(unfused), traffic, extra)
	}
}

// TestGEMMEfficiencyGH100 checks the catalogue's gemm_efficiency of the
// A100s against its source, CUTLASS's profiler page (235.1 TFLOP/s for an
// fp16 3456×4096×8192 product on full waves: 864 tiles in 8 waves of 108
// SMs), and of the H100s and the H200 against theirs, Transformer Engine's GEMM
// profiling tutorial (docs/examples/gemm_profiling/gemm_profiling.rst,
// "Worked Example: 5B Model on H200", pre-quantized): one layer's twelve
// bf16 products of width 4,096 and FFN 16,384 on 15,872 tokens, 2·15,872
// ·4,096·(12,288 + 4,096 + 16,384 + 16,384) FLOPs forward and twice that
// backward, in 31.968 ms on an H200 NVL of 835.5 TFLOP/s dense bf16 (its
// datasheet's 1,671 with sparsity, halved); and how the model uses it: a
// product on the tensor cores at it in place of EffGEMM, every
// tensor-core class scaled alike (fp8 at it times FP8KernelRatio), the
// CUDA cores and the memory at their defaults, a calibration's figure
// over it, and a device with both a convolution and a product figure
// running its convolutions at the convolution's.
func TestGEMMEfficiencyGH100(t *testing.T) {
	const layer = 3 * 2 * 15872 * 4096 * (12288 + 4096 + 16384 + 16384)
	published := layer / 31.968e-3 / 835.5e12
	for _, name := range []string{"h100-sxm5-80gb", "h100-pcie-80gb", "h200-sxm-141gb"} {
		d := builtin(t, name)
		if g := d.GEMMEfficiency.Tensor; math.Abs(g-published) > 0.0005 {
			t.Errorf("%s: gemm_efficiency %v, the tutorial gives %.4f", name, g, published)
		}
	}
	h100 := builtin(t, "h100-sxm5-80gb")
	g := h100.GEMMEfficiency.Tensor
	for _, tc := range []struct {
		k    Class
		want float64
	}{{TensorFP16, g}, {TensorBF16, g}, {TensorTF32, g}, {TensorFP8, g * FP8KernelRatio},
		{CUDACore, EffGEMM}, {MemoryBound, EffMemory}, {Grouped, EffDepthwise}, {Flash, EffFlash}} {
		near(t, "H100 "+string(tc.k), DeviceEfficiency(h100, tc.k), tc.want)
	}
	near(t, "A100 page's product quantisation", Quantisation(3456, 4096, 8192, 1, 108), 1)
	for _, name := range []string{"a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-40gb", "a100-pcie-80gb"} {
		if g := builtin(t, name).GEMMEfficiency.Tensor; math.Abs(g-235.1/312) > 0.0005 {
			t.Errorf("%s: gemm_efficiency %v, the page gives %.4f", name, g, 235.1/312)
		}
	}
	near(t, "V100 tensor-fp16", DeviceEfficiency(builtin(t, "v100-sxm2-16gb"), TensorFP16), EffGEMM)
	// 4096³ in bf16: 1,024 tiles in 8 waves of 132 SMs.
	op := model.Op{Kind: model.MatMul, FLOPs: 2 * 4096 * 4096 * 4096, M: 4096, N: 4096, K: 4096, Groups: 1, Read: 1, Write: 1}
	q := 1024.0 / (8 * 132)
	got, err := OpTime(&Config{Device: h100, Precision: hw.BF16}, &op)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "H100 bf16 4096³ (s)", float64(got), op.FLOPs/(989.5e12*g*q))
	var e Efficiencies
	e.Set(TensorBF16, 0.5)
	got, _ = OpTime(&Config{Device: h100, Precision: hw.BF16, Eff: &e}, &op)
	near(t, "H100 bf16 4096³ calibrated at 0.5 (s)", float64(got), op.FLOPs/(989.5e12*0.5*q))
	// The A100, with a product figure, keeps its convolutions at the
	// measured 0.415 of the peak, whatever the product figure.
	a100 := *builtin(t, "a100-sxm4-40gb")
	a100.GEMMEfficiency.Tensor = 0.6
	conv := model.Op{Kind: model.Conv, FLOPs: 118482796544, M: 8 * 224 * 224, N: 128, K: 1152, Groups: 1, Read: 1, Write: 1}
	got, _ = OpTime(&Config{Device: &a100, Precision: hw.FP16}, &conv)
	near(t, "A100 conv with a product figure (s)", float64(got), conv.FLOPs/(312e12*0.415*(3136.0/(30*108))))
}

// csvRecords returns the records of the CSV file at path, its # lines
// left out as comments.
func csvRecords(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}
