package fit

import (
	"errors"
	"math"
	"strings"
	"testing"

	"scaleplan/internal/units"
)

// TestReadNCCL reads the two hand-written nccl-tests logs of testdata,
// written in the lines nccl-tests' src/common.cu prints (they are not the
// output of a run). nccl_allreduce_h100x16.txt is all_reduce_perf over 16
// H100s on two nodes from 8 B to 8 GiB in steps of 4, each time 40 µs +
// S/(192 GB/s) printed to four or five figures; nccl_mixed.txt is an
// all_gather over eight A100s of one node with a row that did not
// validate and an NCCL INFO line, then an older release's test (no
// "Collective test starting" line) of two ranks cut short.
func TestReadNCCL(t *testing.T) {
	lg, err := ReadFile("testdata/nccl_allreduce_h100x16.txt")
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
	// The fit recovers the law the times were printed from.
	f := FitCollective(lg.Name, c)
	if f.Err != nil || math.Abs(float64(f.Latency)/40e-6-1) > 1e-3 || math.Abs(float64(f.Bandwidth)/192e9-1) > 1e-3 ||
		math.Abs(float64(f.BusBandwidth)/360e9-1) > 1e-3 || f.R2 < 0.9999 || f.PeakBytes != 8<<30 {
		t.Errorf("fit: %+v", f)
	}

	lg, err = ReadFile("testdata/nccl_mixed.txt")
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
	// All-gather: bus factor 7/8 on 12 µs + S/(400/(7/8) GB/s).
	if f := FitCollective("", ag); f.Err != nil || math.Abs(float64(f.Latency)/12e-6-1) > 1e-3 || math.Abs(float64(f.BusBandwidth)/400e9-1) > 1e-3 {
		t.Errorf("all_gather fit: %+v", f)
	}
	// The older test stays under 64 B: latency only.
	if f := FitCollective("", old); !errors.Is(f.Err, ErrLatencyOnly) || math.Abs(float64(f.Latency)-9.5e-6) > 1e-9 || f.Bandwidth != 0 {
		t.Errorf("older test: %+v", f)
	}
}

// TestFitCollective checks the fit against the law it is fitted to, and
// its refusals.
func TestFitCollective(t *testing.T) {
	law := func(alpha, beta float64, sizes ...units.Bytes) Collective {
		c := Collective{Op: "all_reduce", Ranks: 4}
		for _, s := range sizes {
			c.Points = append(c.Points, CollectivePoint{Bytes: s, Time: units.Seconds(alpha + float64(s)/beta)})
		}
		return c
	}
	f := FitCollective("x", law(20e-6, 50e9, 8, 1<<10, 1<<20, 1<<30))
	if f.Err != nil || math.Abs(float64(f.Latency)-20e-6) > 1e-15 || math.Abs(float64(f.Bandwidth)/50e9-1) > 1e-9 ||
		math.Abs(float64(f.BusBandwidth)/(50e9*1.5)-1) > 1e-9 || math.Abs(f.R2-1) > 1e-12 || f.MaxRelError > 1e-9 {
		t.Errorf("exact law: %+v", f)
	}
	// No latency in the data: α held at 0, not negative.
	c := law(0, 10e9, 1<<20, 1<<24)
	c.Points[0].Time *= 0.9
	if f := FitCollective("x", c); f.Err != nil || f.Latency != 0 || !(f.Bandwidth > 0) {
		t.Errorf("no latency: %+v", f)
	}
	zero := law(1e-5, 1e9, 8, 1024)
	zero.Points[1].Time = 0
	if f := FitCollective("x", zero); f.Err == nil || !strings.Contains(f.Err.Error(), "want a size of 0 or more and a time above 0") {
		t.Errorf("a time of 0: %v", f.Err)
	}
	if f := FitCollective("x", law(1e-5, 1e9, 1024)); !errors.Is(f.Err, ErrFewSizes) {
		t.Errorf("one size: %v", f.Err)
	}
	shrinking := law(0, 1e9, 1<<20, 1<<21)
	shrinking.Points[1].Time = shrinking.Points[0].Time / 2
	if f := FitCollective("x", shrinking); f.Err == nil || !strings.Contains(f.Err.Error(), "does not grow") {
		t.Errorf("shrinking times: %v", f.Err)
	}
	for _, tc := range []struct {
		op   string
		n    int
		want float64
	}{{"all_reduce", 8, 1.75}, {"reduce_scatter", 8, 0.875}, {"all_gather", 4, 0.75}, {"alltoall", 2, 0.5}, {"broadcast", 8, 1}, {"sendrecv", 2, 1}} {
		if k, ok := BusFactor(tc.op, tc.n); !ok || k != tc.want {
			t.Errorf("BusFactor(%s, %d) = %v, %v; want %v", tc.op, tc.n, k, ok, tc.want)
		}
	}
	if _, ok := BusFactor("gather", 8); ok {
		t.Error("BusFactor(gather) known")
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
