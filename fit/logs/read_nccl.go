package logs

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"scaleplan/internal/units"
)

// Lines of nccl-tests (src/common.cu) and of ROCm's rccl-tests, which
// print the same.
var (
	ncRank = regexp.MustCompile(`^#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s+(.*?)\s*$`)
	ncOp   = regexp.MustCompile(`# Collective test starting: (\w+?)(?:_perf)?(?:_mpi)?\s*$`) // all_reduce_perf_mpi: the binary built with MPI=1 in releases that name it so
	ncAvg  = regexp.MustCompile(`# Avg bus bandwidth\s*:\s*([\d.]+)`)
	ncHead = regexp.MustCompile(`^# nThread\s+(\d{1,6})\s+nGpus\s+(\d{1,6})(?:\s|$)`)
	// ncLabel is what a launcher puts before each line of a rank's
	// output: Slurm's srun --label ("0: ") and Open MPI's mpirun
	// --tag-output ("[1,0]<stdout>:").
	ncLabel = regexp.MustCompile(`^(?:\d+: |\[\d+,\d+\]<std(?:out|err)>:)`)
	// ncCommand is a command line that runs a test binary
	// ("./build/all_reduce_perf -b 8 ...", "mpirun ... all_reduce_perf_mpi
	// ...").
	ncCommand = regexp.MustCompile(`(?:^|[\s/])([a-z_]+?)_perf(?:_mpi)?(?:\s|$)`)
	// ncNote is the annotation "# scaleplan: op OP ranks N nodes M" (any
	// of the three) that a published excerpt without its device list or
	// test name is given from what its source states.
	ncNote = regexp.MustCompile(`^#\s*scaleplan:((?:\s+(?:op\s+[a-z_]+|ranks\s+\d+|nodes\s+\d+))+)\s*$`)
)

// ncUnlabel returns line s without a launcher's label.
func ncUnlabel(s string) string {
	if m := ncLabel.FindString(s); m != "" {
		return strings.TrimSpace(s[len(m):])
	}
	return s
}

// ncBare are the starts of nccl-tests' comment lines that a page
// rendering the output may print without their "#" (dstack's README
// examples do).
var ncBare = []string{"nThread ", "Avg bus bandwidth", "Out of bounds values", "Collective test starting:", "(B) "}

// ncComment returns line s, a launcher's label taken off, with the "#"
// of nccl-tests' comment lines put back where a page dropped it: the
// lines starting as ncBare does, and the results' header ("size count
// type ... algbw busbw ...").
func ncComment(s string) string {
	s = ncUnlabel(s)
	if strings.HasPrefix(s, "#") {
		return s
	}
	for _, b := range ncBare {
		if strings.HasPrefix(s, b) {
			return "# " + s
		}
	}
	if strings.HasPrefix(s, "size ") && strings.Contains(s, "algbw") && strings.Contains(s, "busbw") {
		return "# " + s
	}
	return s
}

// ncColumns are the columns of a result row that readNCCL reads, by the
// names of the header line.
var ncColumns = []string{"size", "time", "algbw", "busbw"}

// readNCCL reads the output of nccl-tests (all_reduce_perf, all_gather_perf,
// reduce_scatter_perf, alltoall_perf, broadcast_perf, ...; under MPI, rank
// 0's):
//
//	# Collective test starting: all_reduce_perf
//	# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
//	#
//	# Using devices
//	#  Rank  0 Group  0 Pid  41107 on     node01 device  0 [0x18] NVIDIA H100 80GB HBM3
//	...
//	#                                                              out-of-place                       in-place
//	#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
//	#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
//	           8             2     float     sum      -1    28.41    0.00    0.00      0    27.90    0.00    0.00      0
//	...
//	# Out of bounds values : 0 OK
//	# Avg bus bandwidth    : 220.921
//
// Each "# nThread" line starts a test (Collective): its ranks are the
// "Rank" lines, its threads and devices a thread the header's nThread
// and nGpus, its nodes their distinct hosts, its device rank 0's name,
// its op the "Collective test starting" line (newer releases; older ones
// name it only in the command: a line before the test that runs
// NAME_perf gives it, and where there is none Op is "" and a note says
// so). Each row
// is a point: the size, and the out-of-place time (µs), algorithm and bus
// bandwidths (GB/s of 10^9 bytes); the columns are found by the header's
// names, so a release with other columns reads alike. A row whose data
// did not validate (#wrong above 0) is malformed, and so is one whose
// numbers do not parse or whose time is not above 0. Other lines (NCCL's
// INFO lines, the in-place half) are not read. A launcher's label before
// each line (srun --label's "0: ", mpirun --tag-output's
// "[1,0]<stdout>:") is dropped, and a page that printed the comment lines
// without their "#" reads alike (ncComment). An excerpt published without its device
// list or test name (a README that shows the table alone) takes them
// from a line "# scaleplan: op all_reduce ranks 16 nodes 2" before it,
// written from what its source states: the test's own lines win.
func readNCCL(data []byte, lg *Log) {
	r := &ncReader{lg: lg}
	lines(data, r.line)
	r.flush()
	if r.unnamed > 0 {
		lg.notef("%d %s without a \"# Collective test starting\" line (older releases print none): the op is not known, and no bus bandwidth factor is applied to the fit", r.unnamed, plural(r.unnamed, "test", "tests"))
	}
}

// ncReader is the state of readNCCL: the test it is in and its header.
type ncReader struct {
	lg      *Log
	cur     *Collective
	col     map[string]int // column index by header name; nil before the header
	need    int            // fields a row needs for the columns read
	op      string         // the op of the next test
	hosts   []string
	unnamed int
	// note is the last "# scaleplan:" annotation: op, ranks and nodes
	// for tests whose lines do not give them.
	note struct {
		op           string
		ranks, nodes int
	}
}

// flush adds the test, if it has a point, to the log.
func (r *ncReader) flush() {
	if r.cur == nil {
		return
	}
	if len(r.cur.Points) > 0 {
		r.cur.Nodes = len(r.hosts)
		if r.cur.Ranks == 0 {
			r.cur.Ranks, r.cur.Nodes = r.note.ranks, r.note.nodes
		}
		r.cur.Op = cmp.Or(r.cur.Op, r.note.op)
		if r.cur.Op == "" {
			r.unnamed++
		}
		r.lg.Collectives = append(r.lg.Collectives, *r.cur)
	}
	r.cur, r.col, r.hosts = nil, nil, nil
}

// begin starts a test at line n.
func (r *ncReader) begin(n int) {
	r.flush()
	r.cur = &Collective{Line: n, Op: r.op}
	r.op = ""
}

// line reads line n of the tests' output.
func (r *ncReader) line(n int, l []byte) {
	s := ncComment(strings.TrimSpace(string(l)))
	switch {
	case s == "":
	case ncNote.MatchString(s):
		r.annotate(s)
	case strings.HasPrefix(s, "# Collective test starting:"):
		r.flush()
		if m := ncOp.FindStringSubmatch(s); m != nil {
			r.op = m[1]
		}
	case strings.HasPrefix(s, "# nThread "):
		r.begin(n)
		if m := ncHead.FindStringSubmatch(s); m != nil {
			r.cur.Threads, _ = strconv.Atoi(m[1])
			r.cur.GPUs, _ = strconv.Atoi(m[2])
		}
	case strings.HasPrefix(s, "#") && strings.Contains(s, " Rank ") && strings.Contains(s, " Pid "):
		r.rank(n, s)
	case strings.HasPrefix(s, "#") && strings.Contains(s, "algbw") && strings.Contains(s, "busbw"):
		r.header(n, l, s)
	case strings.HasPrefix(s, "# Avg bus bandwidth"):
		if m := ncAvg.FindStringSubmatch(s); m != nil && r.cur != nil {
			if v, err := strconv.ParseFloat(m[1], 64); err == nil && v >= 0 && v < 1e12 {
				r.cur.AvgBusBW = units.BytesPerSec(v * 1e9)
			}
		}
	case strings.HasPrefix(s, "#"):
	case r.col != nil && s[0] >= '0' && s[0] <= '9':
		r.row(n, l, s)
	default:
		if m := ncCommand.FindStringSubmatch(s); m != nil {
			// The command that ran a test: its op, until a
			// "Collective test starting" line says otherwise.
			r.op = m[1]
		}
	}
}

// annotate reads a "# scaleplan:" annotation's op, ranks and nodes.
func (r *ncReader) annotate(s string) {
	f := strings.Fields(s[strings.Index(s, ":")+1:])
	for i := 0; i+1 < len(f); i += 2 {
		switch f[i] {
		case "op":
			r.note.op = f[i+1]
		case "ranks":
			r.note.ranks, _ = strconv.Atoi(f[i+1])
		case "nodes":
			r.note.nodes, _ = strconv.Atoi(f[i+1])
		}
	}
}

// rank reads a "# Rank" line: a rank, its host and its device.
func (r *ncReader) rank(n int, s string) {
	m := ncRank.FindStringSubmatch(s)
	if m == nil {
		return
	}
	if r.cur == nil {
		r.begin(n)
	}
	r.cur.Ranks++
	if !slices.Contains(r.hosts, m[2]) {
		r.hosts = append(r.hosts, m[2])
	}
	if m[1] == "0" || r.cur.Device == "" {
		r.cur.Device = m[3]
	}
}

// header reads the columns of the results' header.
func (r *ncReader) header(n int, l []byte, s string) {
	if r.cur == nil {
		r.begin(n)
	}
	r.col = map[string]int{}
	for i, f := range strings.Fields(strings.TrimPrefix(s, "#")) {
		if _, ok := r.col[f]; !ok { // the out-of-place half comes first
			r.col[f] = i
		}
	}
	r.need = 0
	for _, c := range ncColumns {
		i, ok := r.col[c]
		if !ok {
			r.lg.malformed(n, l, fmt.Errorf("a header without a %q column", c))
			r.col = nil
			return
		}
		r.need = max(r.need, i+1)
	}
}

// row reads a result row into a point of the test.
func (r *ncReader) row(n int, l []byte, s string) {
	f := strings.Fields(s)
	if len(f) < r.need {
		// A row cut short: a log that ends inside the test.
		r.lg.malformed(n, l, fmt.Errorf("have %d fields, want at least %d (the header's %s)", len(f), r.need, strings.Join(ncColumns, ", ")))
		return
	}
	p, typ, err := ncPoint(f, r.col)
	if err != nil {
		r.lg.malformed(n, l, err)
		return
	}
	p.Line = n
	if r.cur.Type == "" {
		r.cur.Type = typ
	}
	r.cur.Points = append(r.cur.Points, p)
}

// ncPoint reads a result row's fields by the header's columns.
func ncPoint(f []string, col map[string]int) (CollectivePoint, string, error) {
	get := func(name string) string {
		if i, ok := col[name]; ok && i < len(f) {
			return f[i]
		}
		return ""
	}
	size, err := strconv.ParseInt(get("size"), 10, 64)
	if err != nil || size < 0 || size > 1<<50 {
		return CollectivePoint{}, "", fmt.Errorf("size %s: want bytes", quote(get("size")))
	}
	num := func(name string) (float64, error) {
		v, err := strconv.ParseFloat(get(name), 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%s %s: want a number >= 0", name, quote(get(name)))
		}
		return v, nil
	}
	us, err1 := num("time")
	alg, err2 := num("algbw")
	bus, err3 := num("busbw")
	if err := oneLine([]error{err1, err2, err3}); err != nil {
		return CollectivePoint{}, "", err
	}
	if us == 0 {
		return CollectivePoint{}, "", fmt.Errorf("time %s: want a time above 0", quote(get("time")))
	}
	if w := get("#wrong"); w != "" && w != "0" && w != "N/A" {
		return CollectivePoint{}, "", fmt.Errorf("#wrong %s: the result did not validate", w)
	}
	return CollectivePoint{Bytes: units.Bytes(size), Time: units.Seconds(us * 1e-6),
		AlgBW: units.BytesPerSec(alg * 1e9), BusBW: units.BytesPerSec(bus * 1e9)}, get("type"), nil
}

// plural returns one or many by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
