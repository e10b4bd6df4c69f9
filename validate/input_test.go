package validate

import (
	"math"
	"strings"
	"testing"

	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/model"
	"scaleplan/predict"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// TestCompareMeasuredHostDecode checks measurements whose host decoded
// their ImageNet input (DeepLearningExamples' PyTorch ResNet-50, 8
// DataLoader workers per GPU on a DGX-1, 10 on a DGX A100) against the
// decode rate written out by hand: a node decodes E cores' worth of
// samples, each taking 5 ms (datasets.yaml, on the 2.5 GHz reference core)
// × 2.5 GHz / f, at the clock f of its busy cores, a line from the boost
// clock with one busy core to the base clock with all:
//
//   - DGX-1, 8 GPUs: 64 workers on 40 cores of 2 threads, all at 2.2 GHz:
//     E = 40 + 24·0.3 = 47.2, 8,307 images/s, under the GPUs' rate;
//   - DGX A100, 1 GPU: 10 workers on 10 of 128 cores at
//     f = 3.4 − 1.15·9/127 GHz: E = 10, 2,655 images/s, more than the
//     operator model's A100 takes in AMP (its convolutions at the
//     efficiency CUTLASS measures on it): not host-bound;
//   - DGX A100, 8 GPUs: 80 workers, f = 3.4 − 1.15·79/127 GHz: E = 80,
//     17,182 images/s, just more than the eight A100s take with each
//     kernel's KernelTime: not host-bound;
//   - DGX-1, 8 GPUs, TensorFlow's 10 threads each: 80 on 80 threads at
//     2.2 GHz, E = 40 + 40·0.3 = 52, 9,152 images/s;
//   - DGX-1, 1 GPU: 8 workers at 3.6 − 1.4·7/39 GHz decode 2,143 images/s,
//     more than the GPU takes: not host-bound.
//
// Without decode workers the rows are the GPUs' compute alone, faster
// where the host bounds them, the same where it does not.
func TestCompareMeasuredHostDecode(t *testing.T) {
	cat, prof := defaults(t)
	const perSample = 5e-3 * 2.5 // core-seconds · GHz of one sample
	for _, tc := range []struct {
		device, system string
		devices, work  int
		rate           float64 // images/s of the node's decoding
		hostBound      bool
	}{
		{"v100-sxm2-16gb", "dgx1", 8, 8, (40 + 24*scenarios.SMTYield) * 2.2 / perSample, true},
		{"a100-sxm4-80gb", "dgx-a100", 1, 10, 10 * (3.4 - 1.15*9/127) / perSample, false},
		{"a100-sxm4-80gb", "dgx-a100", 8, 10, 80 * (3.4 - 1.15*79/127) / perSample, false},
		{"v100-sxm2-16gb", "dgx1", 8, 10, (40 + 40*scenarios.SMTYield) * 2.2 / perSample, true},
	} {
		m := Measured{Device: tc.device, Model: "resnet50", Precision: "amp-fp16", Batch: 256, Devices: tc.devices, System: tc.system,
			Variant: "channels_last", Framework: "torch", SamplesPerSec: 1000, DecodeWorkers: tc.work}
		free := m
		free.DecodeWorkers = 0
		rep, err := CompareMeasured([]Measured{m, free}, cat, prof, predict.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rows := rep.Groups[0].Rows
		if len(rows) != 2 {
			t.Fatalf("%s × %d: %d rows, want 2", tc.system, tc.devices, len(rows))
		}
		bound, gpus := rows[0].Predicted, rows[1].Predicted
		if rows[0].DecodeWorkers == 0 {
			bound, gpus = gpus, bound
		}
		if !tc.hostBound {
			if math.Abs(bound-gpus) > 1e-12*gpus || !(gpus < tc.rate) {
				t.Errorf("%s × %d: %.6f images/s with decode workers, %.6f without; want the same, under the host's %.0f", tc.system, tc.devices, bound, gpus, tc.rate)
			}
			continue
		}
		if !(gpus > tc.rate) {
			t.Errorf("%s × %d: GPUs alone %.0f images/s, want more than the host's %.0f", tc.system, tc.devices, gpus, tc.rate)
		}
		if math.Abs(bound-tc.rate) > 1e-6*tc.rate {
			t.Errorf("%s × %d: %.2f images/s with decode workers, want the host's %.2f", tc.system, tc.devices, bound, tc.rate)
		}
	}
}

// TestHostDecodeOneGPU: one GPU's 8 DataLoader workers on a DGX-1 run at
// the clock of 8 busy cores and decode 2,143 images/s, more than the
// operator model's V100 takes in AMP: the row is not host-bound.
func TestHostDecodeOneGPU(t *testing.T) {
	cat, prof := defaults(t)
	_, node, _, err := cat.Resolve("dgx1")
	if err != nil {
		t.Fatal(err)
	}
	data, err := prof.Dataset("imagenet-1k")
	if err != nil {
		t.Fatal(err)
	}
	var in sim.Input
	scenarios.HostDecode(&in, data, node, 8)
	rate, want := in.DecodeParallelism()/float64(in.Decode), 8*(3.6-1.4*7/39)/12.5e-3
	if math.Abs(rate-want) > 1e-9*want || math.Round(rate) != 2143 {
		t.Errorf("8 workers decode %v images/s, want %v (2,143)", rate, want)
	}
	m := Measured{Device: "v100-sxm2-16gb", Model: "resnet50", Precision: "amp-fp16", Batch: 256, System: "dgx1",
		Variant: "channels_last", Framework: "torch", SamplesPerSec: 1200, DecodeWorkers: 8}
	free := m
	free.DecodeWorkers = 0
	rep, err := CompareMeasured([]Measured{m, free}, cat, prof, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Groups[0].Rows; math.Abs(r[0].Predicted-r[1].Predicted) > 1e-12*r[1].Predicted || !(r[0].Predicted < rate) {
		t.Errorf("one GPU: %v images/s with its workers, %v without; want the same, under %v", r[0].Predicted, r[1].Predicted, rate)
	}
}

// TestCompareMeasuredHostDecodeErrors: decode workers need a system and a
// sensible count.
func TestCompareMeasuredHostDecodeErrors(t *testing.T) {
	cat, prof := defaults(t)
	ok := Measured{Device: "v100-sxm2-16gb", Model: "resnet50", Precision: "amp-fp16", Batch: 256, System: "dgx1", SamplesPerSec: 1000, DecodeWorkers: 8, Source: "t.csv:3"}
	if _, err := CompareMeasured([]Measured{ok}, cat, prof, predict.Options{}); err != nil {
		t.Fatal(err)
	}
	checkRefusals(t, cat, prof, ok, []refusal{
		{func(m *Measured) { m.System = "" }, []string{"t.csv:3", "8 decode workers per device: name the system"}},
		{func(m *Measured) { m.DecodeWorkers = 5000 }, []string{"t.csv:3", "decode workers 5000: want 1 to 4096"}},
		{func(m *Measured) { m.System = "dgx-a100" }, []string{"t.csv:3", "system dgx-a100's nodes hold a100-sxm4-80gb"}},
	})
}

// TestReadDecodeWorkers reads a CSV's decode_workers column into the
// measurements, for one device too (whose system then names the host),
// and refuses a count that is not a whole number.
func TestReadDecodeWorkers(t *testing.T) {
	cat, prof := defaults(t)
	csv := "model,device,precision,devices,batch,samples_per_s,system,decode_workers\n" +
		"resnet50,v100-sxm2-16gb,amp-fp16,1,256,1200,dgx1,8\n" +
		"resnet50,v100-sxm2-16gb,amp-fp16,8,256,8322,dgx1,\n"
	read := func(text string) ([]Measured, error) { return readCSV(t, cat, prof, text) }
	ms, err := read(csv)
	if err != nil || len(ms) != 2 || ms[0].DecodeWorkers != 8 || ms[0].System != "dgx1" || ms[1].DecodeWorkers != 0 {
		t.Fatalf("read %+v, %v; want 8 workers on dgx1, then none", ms, err)
	}
	_, err = read(strings.Replace(csv, ",dgx1,8", ",dgx1,eight", 1))
	if err == nil || !strings.Contains(err.Error(), `t.csv:2: decode_workers "eight": want a whole number of processes per device`) {
		t.Errorf("decode_workers eight: %v", err)
	}
}

// readCSV reads text as a CSV file t.csv into measurements.
func readCSV(t *testing.T, cat *hw.Catalog, prof *model.Profiles, text string) ([]Measured, error) {
	t.Helper()
	lg, err := logs.Read(strings.NewReader(text), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	return (&LogReader{Catalog: cat}).Measurements(lg, prof, map[string]int{})
}

// TestSharedHostMirrored checks a TensorFlow Mask R-CNN row on eight GPUs
// of a DGX-1, whose one process's host suppresses every device's
// proposals (sharedHost), against the closed form by hand: at 4 images
// per GPU each device's step grows by max(0, W/c − H) over one device's,
// W = 4 images × the five levels' 113.6 ms of host work
// (TestMaskRCNNFrameworks's figures), H = P2's 29.2 ms, c = (40 cores +
// 40 threads · SMTYield)/8 = 6.5: 40.7 ms.
// A PyTorch row and a row of one GPU keep one device's law.
func TestSharedHostMirrored(t *testing.T) {
	cat, prof := defaults(t)
	mdl, err := prof.Model("maskrcnn-r50-fpn")
	d := cat.DeviceCalled("v100-sxm2-16gb")
	if err != nil || d == nil {
		t.Fatalf("the catalogue's Mask R-CNN (%v) and V100 16GB (%v)", err, d)
	}
	p2 := 201600*14.45e-9 + 1999000*13.17e-9
	all := p2 + (50400+12600+3150+819)*14.45e-9 + (3*1999000+819*818/2)*13.17e-9
	cores := (40 + 40*scenarios.SMTYield) / 8
	for _, tc := range []struct {
		framework string
		perNode   int
		grows     float64
	}{
		{"tensorflow", 8, math.Max(0, 4*all/cores-p2)},
		{"torch", 8, 0},
		{"tensorflow", 1, 0},
	} {
		m := Measured{Device: d.Name, Model: mdl.Name, Precision: "amp-fp16", Batch: 4, Devices: 8, System: "dgx1", Framework: tc.framework}
		cfg, err := measuredConfig(mdl, d, &m, 4, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		alone := 4*float64(cfg.Compute.PerSample) + float64(cfg.Compute.Fixed)
		cfg.DevicesPerNode = tc.perNode
		if err := sharedHost(&cfg, cat, mdl, d, &m, 4, 0, nil); err != nil {
			t.Fatal(err)
		}
		shared := 4*float64(cfg.Compute.PerSample) + float64(cfg.Compute.Fixed)
		if math.Abs(shared-alone-tc.grows) > 1e-9 {
			t.Errorf("%s on %d GPUs of a node: the step grows %.6g s, want %.6g s", tc.framework, tc.perNode, shared-alone, tc.grows)
		}
	}
}
