package compute

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// TestReadHostTableMeasured reads scripts/torchhost.py's table of this
// machine, compute/testdata/torch-host.csv, which MeasuredHost and
// CPUDispatch type in: the same figures, and no CUDA ones (a host without
// a GPU).
func TestReadHostTableMeasured(t *testing.T) {
	h, err := ReadHostFile("testdata/torch-host.csv")
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][2]units.Seconds{
		"module_call":     {h.ModuleCall, MeasuredHost.ModuleCall},
		"autograd_record": {h.AutogradRecord, MeasuredHost.AutogradRecord},
		"sgd_tensor":      {h.SGDTensor, MeasuredHost.SGDTensor},
		"adam_tensor":     {h.AdamTensor, MeasuredHost.AdamTensor},
		"scaler_tensor":   {h.ScalerTensor, MeasuredHost.ScalerTensor},
	} {
		if math.Abs(float64(got[0]-got[1])) > 1e-15 {
			t.Errorf("%s: read %v, MeasuredHost %v", name, got[0], got[1])
		}
	}
	if math.Abs(float64(h.CPUOp-CPUDispatch)) > 1e-15 {
		t.Errorf("CPU operator %v: want the table's dispatch, CPUDispatch %v", h.CPUOp, CPUDispatch)
	}
	if h.Kernel != 0 || h.Sync != 0 {
		t.Errorf("CUDA costs %v, %v from a table without them: want 0", h.Kernel, h.Sync)
	}
}

// hostTable is a table with the required quantities and extra lines.
func hostTable(extra string) string {
	return "# torch host cost per operator, microseconds (scripts/torchhost.py)\n" +
		"quantity,value\nloop,0.004\ndispatch,0.729\nautograd_record,0.418\nmodule_call,1.118\n" +
		"autocast,-0.010\nsgd_tensor,1.815\nadam_tensor,6.842\nscaler_tensor,1.465\n" + extra
}

// TestHostKernelCost checks a table's cuda_op and cuda_sync where the
// step charges them: each forward kernel of the MLP costs the host
// cuda_op instead of DispatchEager + LaunchKernel (4.2 µs), so the forward
// pass's host time grows by the kernels times the difference; and a step
// that reads its loss on the host waits the table's synchronisation
// instead of SyncLatency; the kernels a library launches inside an
// operator cost a bare LaunchKernel.
func TestHostKernelCost(t *testing.T) {
	h, err := ReadHostTable(strings.NewReader(hostTable("cuda_op,35.14\ncuda_sync,21.5\n")))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(h.Kernel)-35.14e-6) > 1e-15 || math.Abs(float64(h.Sync)-21.5e-6) > 1e-15 {
		t.Fatalf("Kernel %v, Sync %v: want 35.14 µs and 21.5 µs", h.Kernel, h.Sync)
	}
	ops, err := model.Ops("mlp", model.Shape{Batch: 16, Precision: model.FP32})
	if err != nil {
		t.Fatal(err)
	}
	base := Config{Device: toy(), Precision: hw.FP32, Mode: Eager, Optimizer: model.Momentum}
	slow := base
	slow.Host = &h
	s0, s1 := mustStep(t, &base, ops), mustStep(t, &slow, ops)
	var kernels int
	for i := range ops {
		if ops[i].Pass == model.Forward {
			kernels += base.Kernels(&ops[i])
		}
	}
	if kernels == 0 {
		t.Fatal("the MLP's forward pass launches no kernel")
	}
	want := float64(kernels) * (35.14e-6 - float64(DispatchEager+LaunchKernel))
	near(t, "forward host time's growth", float64(s1.Host.Forward-s0.Host.Forward), want)

	// ResNet-50 in NCHW at fp16: the transposes cuDNN launches inside each
	// tensor-core convolution cost a bare LaunchKernel once the host
	// measures its dispatched kernel, as with a calibrated launch.
	rn, err := model.Ops("resnet50", model.Shape{Batch: 8, Precision: model.FP16})
	if err != nil {
		t.Fatal(err)
	}
	nchw := Config{Device: toy(), Precision: hw.FP16, Mode: Eager, Optimizer: model.Momentum, NCHW: true}
	nchwSlow := nchw
	nchwSlow.Host = &h
	var dispatched, library int
	for i := range rn {
		if rn[i].Pass != model.Forward {
			continue
		}
		lib := 0
		if nchw.transposed(&rn[i]) {
			lib = TransposeKernels
		}
		dispatched += nchw.Kernels(&rn[i]) - lib
		library += lib
	}
	if library == 0 {
		t.Fatal("ResNet-50 in NCHW at fp16 transposes nothing")
	}
	published := float64(DispatchEager + LaunchKernel)
	want = float64(dispatched)*(35.14e-6-published) + float64(library)*(float64(LaunchKernel)-published)
	near(t, "NCHW forward host time's change", float64(mustStep(t, &nchwSlow, rn).Host.Forward-mustStep(t, &nchw, rn).Host.Forward), want)

	// One synchronisation (the loss read after the forward pass, as
	// LossSync makes it) adds the table's figure instead of SyncLatency.
	sync0, sync1 := base, base
	sync0.LossSync, sync1.LossSync = true, true
	sync1.Host = &HostCosts{Sync: 21.5e-6}
	c0, c1 := mustStep(t, &sync0, ops), mustStep(t, &sync1, ops)
	if c0.Syncs != 1 {
		t.Fatalf("%d synchronisations with LossSync: want 1", c0.Syncs)
	}
	near(t, "step's growth by the sync", float64(c1.Compute()-c0.Compute()), 21.5e-6-float64(SyncLatency))
}

// mustStep returns Step(c, ops), failing t on an error.
func mustStep(t *testing.T, c *Config, ops []model.Op) StepTime {
	t.Helper()
	s, err := Step(c, ops)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestReadHostTableErrors checks that a bad table names its line and
// what it wants.
func TestReadHostTableErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "no header"},
		{"# only a comment\n", "no header"},
		{"name,val\n", "line 1: \"name,val\": want the header"},
		{hostTable("cuda_ops,3\n"), "unknown quantity \"cuda_ops\": want one of loop, dispatch"},
		{hostTable("module_call,2\n"), "module_call given twice"},
		{hostTable("cuda_op,fast\n"), "cuda_op \"fast\": want a number"},
		{hostTable("cuda_op,NaN\n"), "want a number"},
		{hostTable("cuda_op,-3\n"), "cuda_op -3 µs: want 0 to"},
		{hostTable("cuda_op,-1.5\n"), "cuda_op -1.5 µs: want 0 to"},
		{hostTable("cuda_sync,2e7\n"), "cuda_sync 2e+07 µs: want 0 to"},
		{hostTable("cuda_op\n"), "want quantity,value"},
		{"quantity,value\nmodule_call,1\n", "missing autograd_record, sgd_tensor, adam_tensor, scaler_tensor"},
		{"quantity,value\n" + strings.Repeat("x", 5000) + "\n", "line 2: longer than 4096 bytes"},
		{"quantity,value\n" + strings.Repeat("#\n", 1001), "more than 1000 lines"},
	} {
		_, err := ReadHostTable(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40q: error %v, want %q", tc.in, err, tc.want)
		}
	}
	path := filepath.Join(t.TempDir(), "host.csv")
	if err := os.WriteFile(path, []byte("quantity,value\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadHostFile(path); err == nil || !strings.Contains(err.Error(), path+": missing") {
		t.Errorf("ReadHostFile: %v, want the path and what is missing", err)
	}
	if _, err := ReadHostFile(filepath.Join(t.TempDir(), "absent.csv")); err == nil {
		t.Error("ReadHostFile of a missing file: no error")
	}
}

// FuzzReadHostTable checks that no input crashes the reader and that what
// it accepts has the costs the model may use: finite, 0 to 10^6 µs.
func FuzzReadHostTable(f *testing.F) {
	f.Add(hostTable("cuda_op,35.14\ncuda_sync,21.5\n"))
	f.Add("quantity,value\nmodule_call,1e308\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, in string) {
		h, err := ReadHostTable(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, v := range []units.Seconds{h.ModuleCall, h.AutogradRecord, h.SGDTensor, h.AdamTensor, h.ScalerTensor, h.Kernel, h.Sync, h.CPUOp} {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("accepted a cost of %v s from %q", v, in)
			}
		}
	})
}

// TestTimerEvents checks the measuring program's timer events: five a
// step at a measured 20 µs each add 100 µs to the host's time of a step
// (HostTime.Step), to a calibration's host cost per step too unless it
// holds them (Efficiencies.EventsInStepHost), and nothing where the host
// measured no event's cost.
func TestTimerEvents(t *testing.T) {
	h, err := ReadHostTable(strings.NewReader(hostTable("cuda_event,20\n")))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(h.Event)-20e-6) > 1e-15 {
		t.Fatalf("event %v, want 20 µs", h.Event)
	}
	ops, err := model.Ops("mlp", model.Shape{Batch: 16, Precision: model.FP32})
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Device: toy(), Precision: hw.FP32, Mode: Eager, Optimizer: model.Momentum, Host: &h}
	base := mustStep(t, &c, ops)
	c.TimerEvents = 5
	near(t, "host step time of five events", float64(mustStep(t, &c, ops).Host.Step-base.Host.Step), 100e-6)
	c.Eff = &Efficiencies{StepHost: 300e-6}
	near(t, "a calibration's step host and five events", float64(mustStep(t, &c, ops).Host.Step), 400e-6)
	c.Eff.EventsInStepHost = true
	near(t, "a calibration's step host holding the events", float64(mustStep(t, &c, ops).Host.Step), 300e-6)
	c.Eff = nil
	c.Host = nil
	if s := mustStep(t, &c, ops); s.Host.Step != 0 {
		t.Errorf("events on a host that measured none: step host %v, want 0", s.Host.Step)
	}
}

// TestHostNoise checks that a figure the timings' noise left a little
// below 0 (module_call at −0.4 µs) reads as 0, and one within the range
// as it is.
func TestHostNoise(t *testing.T) {
	h, err := ReadHostTable(strings.NewReader(strings.Replace(hostTable("cuda_op,0.8\n"), "module_call,1.118", "module_call,-0.4", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if h.ModuleCall != 0 || math.Abs(float64(h.Kernel)-0.8e-6) > 1e-15 {
		t.Errorf("module call %v, kernel %v: want 0 and 0.8 µs", h.ModuleCall, h.Kernel)
	}
}

// TestHostCostsFrom checks the quantities of a bench log's header
// (machine.host_costs) against the table that holds the same figures,
// and the errors naming a quantity.
func TestHostCostsFrom(t *testing.T) {
	want, err := ReadHostTable(strings.NewReader(hostTable("cuda_op,35.14\ncuda_sync,21.5\n")))
	if err != nil {
		t.Fatal(err)
	}
	q := map[string]float64{"loop": 0.004, "dispatch": 0.729, "autograd_record": 0.418, "module_call": 1.118,
		"autocast": -0.010, "sgd_tensor": 1.815, "adam_tensor": 6.842, "scaler_tensor": 1.465, "cuda_op": 35.14, "cuda_sync": 21.5}
	got, err := HostCostsFrom(q)
	if err != nil || got != want {
		t.Errorf("HostCostsFrom: %+v, %v; want %+v", got, err, want)
	}
	q["cuda_ops"] = 3
	if _, err := HostCostsFrom(q); err == nil || !strings.Contains(err.Error(), `unknown quantity "cuda_ops"`) {
		t.Errorf("an unknown quantity: %v", err)
	}
	delete(q, "cuda_ops")
	delete(q, "module_call")
	if _, err := HostCostsFrom(q); err == nil || !strings.Contains(err.Error(), "missing module_call") {
		t.Errorf("a missing quantity: %v", err)
	}
}
