package validate

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"testing"

	"scaleplan/internal/mlperfepochs"
	"scaleplan/internal/units"
	"scaleplan/scenarios"
)

// TestEosPage checks the figures docs/validation-mlperf-eos.md derives
// from the held-out Eos cases, each recomputed here and read from the
// page: the epochs law of each time-to-train case at its global batch
// (steps ⌈S_min·(1 + B_noise/B)⌉ times B, over ImageNet's images for
// ResNet-50) against the mean of its own runs in the embedded table, and
// BERT's step on 434 nodes, predicted (global batch over the predicted
// samples/s), measured (over the log's) and its calibrated compute (the
// per-device batch over the one node's v0 per device).
func TestEosPage(t *testing.T) {
	quote := docQuote(t, "validation-mlperf-eos.md")
	for _, c := range []struct {
		law                 CaseEpochs
		n, batch            float64
		scale               float64 // the unit the page quotes: 1 (epochs) or 1e6 (M samples)
		lawQuote, runsQuote string  // the page's wording of each
	}{
		{CaseEpochs{Data: "resnet", Optimizer: "lars", Round: "v4.0", System: "eos_n316_ngc24.04_mxnet"}, 1281167, 40448, 1,
			"gives %.1f epochs at the global batch of 40,448", "(mean %.1f, %s)"},
		{CaseEpochs{Data: "bert", Optimizer: "lamb", Round: "v3.1", System: "eos_n434_ngc23.09_pytorch"}, 1, 13888, 1e6,
			"gives %.2f M samples at the global batch of 13,888", "took a mean of %.2f M (%s)"},
	} {
		curve, err := c.law.epochsCurve(c.n, "")
		if err != nil {
			t.Fatal(err)
		}
		law := math.Ceil(curve.SMin*(1+curve.BNoise/c.batch)) * c.batch / c.n
		data, err := mlperfepochs.Read(c.law.Data)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := readEpochsRows(bytes.NewReader(data), c.law.Data)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(rows, func(r epochsRow) bool { return r.System == c.law.System && r.Round == c.law.Round })
		if i < 0 {
			t.Fatalf("%s: no %s row in the %s table", c.law.System, c.law.Round, c.law.Data)
		}
		runs := rows[i].Epochs
		quote(fmt.Sprintf(c.lawQuote, law/c.scale))
		quote(fmt.Sprintf(c.runsQuote, runs/c.scale, signed(pct(law/runs-1))))
	}

	f := BuiltinCases()
	keep := []string{"mlperf-v3.0-dgxh100-bert-n1-throughput", "mlperf-v3.1-eos-n434-bert-throughput"}
	f.Cases = slices.DeleteFunc(f.Cases, func(c Case) bool { return !slices.Contains(keep, c.Name) })
	rep := CompareCases(f, Options{})
	if rep.Failed != 0 || len(rep.Results) != 2 {
		t.Fatalf("%d results, %d failed", len(rep.Results), rep.Failed)
	}
	byName := func(rep *Report, name string) *CaseResult {
		for i := range rep.Results {
			if rep.Results[i].Case.Name == name {
				return &rep.Results[i]
			}
		}
		t.Fatalf("no result of %s", name)
		return nil
	}
	node, big := byName(rep, keep[0]), byName(rep, keep[1])
	perDevice := node.Fitted.V0 / float64(node.Fitted.Devices)
	compute := 4 / perDevice
	predicted := 13888 / big.Predicted
	measured := 13888 / big.Published.Value
	ms := func(s float64) float64 { return math.Round(1e4*s) / 10 }
	quote(fmt.Sprintf("puts the step at %.1f ms; the model's is %.1f ms, %.2f ms of computing (the v3.0 node's %.1f sequences/s a GPU, calibrated) and %.2f ms of exposed exchange",
		ms(measured), ms(predicted), 1000*compute, perDevice, 1000*(predicted-compute)))
	quote(fmt.Sprintf("the step is %.0f %% long", 100*(predicted/measured-1)))

	// The same case with the exchange in five buckets of a fifth of the
	// model's fp16 gradients each, as DistributedFusedLAMB's five blocks.
	_, prof := defaults(t)
	bert, err := prof.Model("bert-large")
	if err != nil {
		t.Fatal(err)
	}
	block := units.Bytes(math.Ceil(2 * float64(bert.Params) / 5))
	five := CompareCases(f, Options{Scenario: scenarios.Options{Edit: func(s *scenarios.Scenario) {
		if s.Name == "eos-bert-mlperf-v3.1" {
			s.Parallelism.Bucket = block
		}
	}}})
	if five.Failed != 0 {
		t.Fatalf("%d failed with buckets of %v", five.Failed, block)
	}
	quote(fmt.Sprintf("in five buckets of %.1f MB, a fifth of its fp16 gradients, the model's step is %.1f ms", float64(block)/1e6, ms(13888/byName(five, keep[1]).Predicted)))
}
