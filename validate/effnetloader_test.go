package validate

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// TestEfficientNetHostCost checks docs/validation-efficientnet.md's
// account of the host's input of DeepLearningExamples' PyTorch
// EfficientNet-B4 rows: for each AMP row of
// testdata/measurements/published-dle-efficientnet-b4.csv, the cost an
// image would have to take on a 2.5 GHz core for its processes to bound
// it, E·f/(2.5 GHz · images/s), with E the cores' worth of its decoding
// processes (sim.Input.DecodeParallelism at scenarios.SMTYield) and f the
// node's clock with that many cores busy (hw.HostCPU.ClockAt); and the
// cost scripts/loadercpu.py measured (model/testdata/loader-cpu.csv),
// scaled by the clocks to 2.5 GHz, against it.
func TestEfficientNetHostCost(t *testing.T) {
	quote := docQuote(t, "validation-efficientnet.md")
	cat, prof := defaults(t)
	const ref = 2.5 * units.GHz
	short := map[string]string{"a100-sxm4-80gb": "A100", "v100-sxm2-16gb": "V100"}
	var least, most float64
	for _, m := range measuredFile(t, cat, prof, "../testdata/measurements/published-dle-efficientnet-b4.csv") {
		if m.Framework != "torch" || m.Precision != "amp-fp16" {
			continue
		}
		_, node, _, err := cat.Resolve(m.System)
		if err != nil {
			t.Fatalf("%s: %v", m.Source, err)
		}
		p := m.DecodeWorkers * m.Devices
		in := sim.Input{Cores: node.CPU.Cores(), Threads: node.CPU.Threads(), Workers: p, SMTYield: scenarios.SMTYield}
		e := in.DecodeParallelism()
		clock := node.CPU.ClockAt(p)
		need := e * float64(clock) / (float64(ref) * m.SamplesPerSec)
		if least == 0 || need < least {
			least = need
		}
		most = max(most, need)
		quote(fmt.Sprintf("| %d %s, PyTorch AMP | %d | %.4g | %.2f GHz | %s | %.1f ms |",
			m.Devices, short[m.Device], p, e, float64(clock)/1e9, thousands(int(math.Round(m.SamplesPerSec))), 1000*need))
	}
	if least == 0 {
		t.Fatal("no PyTorch AMP row in the published file")
	}
	imagenet, err := prof.Dataset("imagenet-1k")
	if err != nil {
		t.Fatal(err)
	}
	base := float64(imagenet.CPUSecondsPerSample)
	quote(fmt.Sprintf("%.1f to %.1f times the %.0f ms assumed for ResNet-50's 224×224 pipeline", least/base, most/base, 1000*base))

	const loader = "../model/testdata/loader-cpu.csv"
	data, err := os.ReadFile(loader)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`, ([0-9.]+) MHz,`).FindSubmatch(data)
	if m == nil {
		t.Fatal("loader-cpu.csv: no clock in its header")
	}
	mhz, _ := strconv.ParseFloat(string(m[1]), 64)
	steps := map[string]float64{}
	for _, r := range csvTable(t, loader)[1:] {
		if steps[r[0]], err = strconv.ParseFloat(r[1], 64); err != nil {
			t.Fatalf("loader-cpu.csv: %v: %v", r, err)
		}
	}
	chain := steps["chain"] / 1000
	if !(chain > 0) {
		t.Fatal("loader-cpu.csv: no chain row")
	}
	scaled := chain * mhz * 1e6 / float64(ref)
	if !(least > 3*scaled) {
		t.Errorf("the rows would need %.1f ms an image at 2.5 GHz, the measured chain takes %.2f: the page says the host is far from bounding them", 1000*least, 1000*scaled)
	}
	quote(fmt.Sprintf("%.2f ms an image on the %.1f GHz core it ran on, %.2f ms at 2.5 GHz", 1000*chain, mhz/1000, 1000*scaled))
	quote(fmt.Sprintf("%.0f to %.0f times less than the rows would need", least/scaled, most/scaled))
	for _, s := range []string{"decode", "random_resized_crop", "autoaugment"} {
		quote(fmt.Sprintf("%s %.2f ms", strings.ReplaceAll(s, "_", " "), steps[s]))
	}
}
