package validate_test

import (
	"fmt"
	"strings"

	"scaleplan/hw"
	"scaleplan/model"
	"scaleplan/predict"
	"scaleplan/validate"
)

// A case file with one calibrating and one predicted figure of seed 003.
func ExampleCompareCases() {
	cases, err := validate.ReadCases(strings.NewReader(`cases:
  - name: 1gpu-v0
    scenario: seed003-resnet50-2gpu-nop2p
    set: {gpus: 1}
    metric: v0
    published: 258.1
    source: seed 003
    calibrates: true
    fits: [v0]
  - name: 2gpu-t
    scenario: seed003-resnet50-2gpu-nop2p
    set: {gpus: 2}
    metric: t
    published: 0.15 s
    source: seed 003
    calibrated_by: [1gpu-v0]
`), "example.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	rep := validate.CompareCases(cases, validate.Options{})
	for _, r := range rep.Results {
		fmt.Printf("%s: predicted %.4g, published %.4g, %s\n", r.Case.Name, r.Predicted, r.Published.Value, r.Role())
	}
	fmt.Printf("mean absolute error over %d case: %.1f%%\n", rep.N, 100*rep.MAE)
	// Output:
	// 1gpu-v0: predicted 258.1, published 258.1, calibrates v0
	// 2gpu-t: predicted 0.1353, published 0.15, prediction
	// mean absolute error over 1 case: 9.8%
}

// ResNet-50 measured in fp32 on one H200 (testdata/measurements/h200-2026-11-26)
// against the catalogue's roofline for that GPU, and the memory model's
// largest batch against the measured limit in amp-fp16.
func ExampleCompareMeasured() {
	cat, err := hw.Default()
	if err != nil {
		fmt.Println(err)
		return
	}
	prof, err := model.Default()
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, err := validate.CompareMeasured([]validate.Measured{
		{Device: "NVIDIA H200", Model: "resnet50", Precision: "fp32", Batch: 512, SamplesPerSec: 1084.3},
		{Device: "NVIDIA H200", Model: "resnet50", Precision: "amp-fp16", Batch: 2048, SamplesPerSec: 3087.7},
		{Device: "NVIDIA H200", Model: "resnet50", Precision: "amp-fp16", Batch: 4096, OOM: true},
	}, cat, prof, predict.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, g := range rep.Groups {
		r := g.Rows[0]
		fmt.Printf("%s %s batch %d: %.0f samples/s predicted, %.0f measured (%+.1f%%); largest batch %d, agrees %v\n",
			g.Device, g.Precision, r.Batch, r.Predicted, r.SamplesPerSec, 100*r.Error(), g.PredictedMax, g.MemoryAgrees())
	}
	// Output:
	// h200-sxm-141gb amp-fp16 batch 2048: 7324 samples/s predicted, 3088 measured (+137.2%); largest batch 3214, agrees true
	// h200-sxm-141gb fp32 batch 512: 1159 samples/s predicted, 1084 measured (+6.9%); largest batch 1607, agrees true
}

// ResNet-50 in fp32 at 32 images per GPU: measured on one H200
// (testdata/measurements/h200-2026-11-26), and predicted from the catalogue for
// that GPU alone, for a DGX H200 node (NVLink under NCCL) and for two
// (NDR InfiniBand under verbs between them). Each line's efficiency is
// its prediction against as many times the one GPU's.
func ExampleCompareMeasured_system() {
	cat, err := hw.Default()
	if err != nil {
		fmt.Println(err)
		return
	}
	prof, err := model.Default()
	if err != nil {
		fmt.Println(err)
		return
	}
	ms := []validate.Measured{{Device: "NVIDIA H200", Model: "resnet50", Precision: "fp32", Batch: 32, SamplesPerSec: 837.1}}
	for _, n := range []int{8, 16} {
		// The samples/s of n GPUs were not measured: n times the one's.
		ms = append(ms, validate.Measured{Device: "NVIDIA H200", Model: "resnet50", Precision: "fp32", Batch: 32,
			Devices: n, System: "dgx-h200", SamplesPerSec: 837.1 * float64(n)})
	}
	rep, err := validate.CompareMeasured(ms, cat, prof, predict.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	one := rep.Groups[0].Rows[0].Predicted
	fmt.Printf("1 GPU: %.0f samples/s predicted, %.0f measured (%+.1f%%)\n", one, rep.Groups[0].Rows[0].SamplesPerSec, 100*rep.Groups[0].Rows[0].Error())
	for _, g := range rep.Groups[1:] {
		r := g.Rows[0]
		fmt.Printf("%d GPUs of %s over %s: %.0f samples/s predicted, efficiency %.1f%%\n",
			g.Devices, g.System, r.Exchange, r.Predicted, 100*r.Predicted/(float64(g.Devices)*one))
	}
	// Output:
	// 1 GPU: 953 samples/s predicted, 837 measured (+13.8%)
	// 8 GPUs of dgx-h200 over nccl: 7557 samples/s predicted, efficiency 99.1%
	// 16 GPUs of dgx-h200 over nccl, verbs: 15026 samples/s predicted, efficiency 98.6%
}
