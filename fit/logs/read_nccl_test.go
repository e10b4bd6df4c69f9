package logs

import (
	"math"
	"strings"
	"testing"
)

// TestReadNCCL reads the two hand-written nccl-tests logs of ../testdata,
// written in the lines nccl-tests' src/common.cu prints (they are not the
// output of a run). nccl_allreduce_h100x16.txt is all_reduce_perf over 16
// H100s on two nodes from 8 B to 8 GiB in steps of 4, each time 40 µs +
// S/(192 GB/s) printed to four or five figures; nccl_mixed.txt is an
// all_gather over eight A100s of one node with a row that did not
// validate and an NCCL INFO line, then an older release's test (no
// "Collective test starting" line) of two ranks cut short. TestFitNCCL
// fits them.
func TestReadNCCL(t *testing.T) {
	lg, err := ReadFile("../testdata/nccl_allreduce_h100x16.txt")
	if err != nil {
		t.Fatal(err)
	}
	if lg.Format != NCCLTests || lg.Malformed != 0 || len(lg.Notes) != 0 || len(lg.Records) != 0 || len(lg.Collectives) != 1 {
		t.Fatalf("format %s, %s, notes %q, %d records, %d collectives", lg.Format, lg.MalformedSummary(), lg.Notes, len(lg.Records), len(lg.Collectives))
	}
	c := lg.Collectives[0]
	if c.Line != 6 || c.Op != "all_reduce" || c.Ranks != 16 || c.Nodes != 2 || c.Device != "NVIDIA H100 80GB HBM3" || c.Type != "float" || len(c.Points) != 16 {
		t.Fatalf("%+v", c)
	}
	for i, p := range c.Points {
		s := 8 * math.Pow(4, float64(i))
		want := 40e-6 + s/192e9
		if float64(p.Bytes) != s || math.Abs(float64(p.Time)/want-1) > 5e-4 || p.Line != 29+i {
			t.Errorf("point %d: %v in %v at line %d; want %v in %v at %d", i, p.Bytes, p.Time, p.Line, s, want, 29+i)
		}
		if bus := float64(p.AlgBW) * 2 * 15 / 16; math.Abs(float64(p.BusBW)-bus) > 0.01e9 {
			t.Errorf("point %d: busbw %v, algbw × 2(n−1)/n %v", i, p.BusBW, bus)
		}
	}
	if c.AvgBusBW < 125e9 || c.AvgBusBW > 125.3e9 {
		t.Errorf("avg busbw %v, want the log's 125.2 GB/s", c.AvgBusBW)
	}

	lg, err = ReadFile("../testdata/nccl_mixed.txt")
	if err != nil {
		t.Fatal(err)
	}
	if lg.Malformed != 2 || len(lg.Collectives) != 2 || len(lg.Notes) != 1 || !strings.Contains(lg.Notes[0], "1 test without a \"# Collective test starting\" line") {
		t.Fatalf("%s, %d collectives, notes %q", lg.MalformedSummary(), len(lg.Collectives), lg.Notes)
	}
	for i, w := range []string{"#wrong 2: the result did not validate", "have 6 fields, want at least 8"} {
		if !strings.Contains(lg.Errors[i].Error(), w) {
			t.Errorf("malformed %d: %v, want %q", i, lg.Errors[i], w)
		}
	}
	ag, old := lg.Collectives[0], lg.Collectives[1]
	if ag.Op != "all_gather" || ag.Ranks != 8 || ag.Nodes != 1 || ag.Device != "NVIDIA A100-SXM4-80GB" || len(ag.Points) != 10 || ag.AvgBusBW != 311.772e9 {
		t.Errorf("all_gather: %+v", ag)
	}
	if old.Op != "" || old.Ranks != 2 || len(old.Points) != 4 {
		t.Errorf("older test: %+v", old)
	}
}

func TestDetectNCCL(t *testing.T) {
	const header = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	if f, err := Detect([]byte("# nThread 1 nGpus 8\n" + header)); err != nil || f != NCCLTests {
		t.Errorf("header: %s, %v", f, err)
	}
	if f, err := Detect([]byte("size,algbw,busbw\n")); f == NCCLTests {
		t.Errorf("a CSV naming the columns: %s, %v", f, err)
	}
}
