package logs

import (
	"math"
	"slices"
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
	if c.Line != 6 || c.Op != "all_reduce" || c.Ranks != 16 || c.Nodes != 2 || c.Threads != 1 || c.GPUs != 1 || c.Device != "NVIDIA H100 80GB HBM3" || c.Type != "float" || len(c.Points) != 16 {
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

	// The published A100 notes: one thread driving 8 GPUs (-g 8), then 8
	// processes of one GPU (mpirun -np 8 ... -g 1).
	lg, err = ReadFile("../../testdata/measurements/nccl-tests/a100x8-nvswitch-all_reduce.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Collectives) != 2 || lg.Collectives[0].Threads != 1 || lg.Collectives[0].GPUs != 8 || lg.Collectives[1].Threads != 1 || lg.Collectives[1].GPUs != 1 {
		t.Fatalf("A100 notes: %d collectives %+v", len(lg.Collectives), lg.Collectives)
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

// TestReadNCCLLabelled reads the variants of published outputs: each
// line labelled by srun --label ("0: ") or mpirun --tag-output
// ("[1,0]<stdout>:"), a table without its device list given its op,
// ranks and nodes by a "# scaleplan:" line, a test of the binary built
// with MPI=1 (reduce_scatter_perf_mpi), and an older release's test whose
// op only its command line names, and a page that printed the comment
// lines without their "#" (dstack's README examples). The expected values
// are the lines written here.
func TestReadNCCLLabelled(t *testing.T) {
	const hdr = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	for _, tc := range []struct {
		name, log  string
		op         string
		ranks, nod int
	}{
		{"srun", "# scaleplan: op all_reduce ranks 16 nodes 2\n0: " + hdr +
			"0:            8             2     float     sum      -1    164.3    0.00    0.00      0    163.3    0.00    0.00      0\n" +
			"0:           16             4     float     sum      -1    161.4    0.00    0.00      0    160.6    0.00    0.00      0\n",
			"all_reduce", 16, 2},
		{"mpirun", "[1,0]<stdout>:" + hdr +
			"[1,0]<stdout>:           8             2     float     sum      -1    12.90    0.00    0.00      0    12.87    0.00    0.00      0\n" +
			"[1,0]<stdout>:          16             4     float     sum      -1    12.88    0.00    0.00      0    12.83    0.00    0.00      0\n",
			"", 0, 0},
		{"mpi binary", "# Collective test starting: reduce_scatter_perf_mpi\n" +
			"# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20\n" +
			"#  Rank  0 Group  0 Pid 1 on a device  0 [0x4f] NVIDIA H100 80GB HBM3\n" +
			"#  Rank  1 Group  0 Pid 2 on a device  1 [0x50] NVIDIA H100 80GB HBM3\n" + hdr +
			"           8             2     float     sum      -1    12.90    0.00    0.00      0    12.87    0.00    0.00      0\n" +
			"          16             4     float     sum      -1    12.88    0.00    0.00      0    12.83    0.00    0.00      0\n",
			"reduce_scatter", 2, 1},
		{"command", "$ mpirun -np 2 ./build/all_gather_perf -b 8 -e 16\n" +
			"# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n" +
			"#   Rank  0 Pid    746 on a device  0 [0x4f] Tesla V100-SXM2-16GB\n" +
			"#   Rank  1 Pid    747 on b device  0 [0x4f] Tesla V100-SXM2-16GB\n" +
			"#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n" +
			"           8             2   float     sum    48.46    0.00    0.00  1e-07    48.17    0.00    0.00  1e-07\n" +
			"          16             4   float     sum    48.61    0.00    0.00  6e-08    49.16    0.00    0.00  6e-08\n",
			"all_gather", 2, 2},
		{"no hashes", "# scaleplan: op all_gather ranks 16 nodes 2\n" +
			"nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 200 agg iters: 1 validation: 0 graph: 0\n" +
			"                                   out-of-place                       in-place\n" + strings.TrimPrefix(hdr, "#") +
			"       (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n" +
			"           8             0     float    none      -1    45.49    0.00    0.00    N/A    45.29    0.00    0.00    N/A\n" +
			"          16             0     float    none      -1    45.52    0.00    0.00    N/A    45.37    0.00    0.00    N/A\n" +
			"Out of bounds values : 0 OK\nAvg bus bandwidth    : 0.0001\n",
			"all_gather", 16, 2},
	} {
		lg, err := Read(strings.NewReader(tc.log), tc.name)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if lg.Format != NCCLTests || lg.Malformed != 0 || len(lg.Collectives) != 1 {
			t.Fatalf("%s: format %s, %s, %d collectives", tc.name, lg.Format, lg.MalformedSummary(), len(lg.Collectives))
		}
		c := lg.Collectives[0]
		if c.Op != tc.op || c.Ranks != tc.ranks || c.Nodes != tc.nod || len(c.Points) != 2 || c.Points[0].Bytes != 8 || c.Points[1].Bytes != 16 {
			t.Errorf("%s: %+v", tc.name, c)
		}
		if unnamed := slices.ContainsFunc(lg.Notes, func(n string) bool { return strings.Contains(n, "without a") }); unnamed != (tc.op == "") {
			t.Errorf("%s: notes %q", tc.name, lg.Notes)
		}
	}
}
