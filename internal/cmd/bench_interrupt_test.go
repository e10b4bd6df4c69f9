package cmd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"scaleplan/internal/benchlog"
)

// cancelWriter cancels a context at the first write that contains
// trigger, and keeps everything written.
type cancelWriter struct {
	mu      sync.Mutex
	b       bytes.Buffer
	trigger string
	cancel  context.CancelFunc
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if strings.Contains(string(p), w.trigger) {
		w.cancel()
	}
	return w.b.Write(p)
}

func (w *cancelWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// bench throughput cancelled after its first measurement leaves --out
// holding the header, that measurement and an end record that marks the
// log incomplete; fit reads it, saying it is incomplete.
func TestBenchThroughputInterrupted(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "tp.jsonl")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stderr := &cancelWriter{trigger: "samples/s", cancel: cancel}
	var stdout bytes.Buffer
	err := newApp(&stdout, stderr).RunContext(ctx, []string{"scaleplan", "bench", "throughput", "--data", "synthetic", "--workers", "1",
		"--batch", "4,8,16", "--steps", "2", "--warmup", "0", "--warm-rounds", "0", "--run", "t1", "--out", out, "--core-guard=false"})
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want the cancellation", err)
	}
	recs := readLog(t, out)
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3 (header, one measurement, end):\n%+v", len(recs), recs)
	}
	checkHeader(t, recs, "t1", "bench throughput")
	if m := recs[1]; m.Kind != benchlog.KindMeasurement || m.Batch != 4 || m.Steps != 2 {
		t.Errorf("record 2 %+v, want the measurement of batch 4 over 2 steps", m)
	}
	if reason, ok := recs[2].Incomplete(); !ok || reason != "interrupted" {
		t.Errorf("last record %+v, want an end record: incomplete, interrupted", recs[2])
	}
	if !strings.Contains(stderr.String(), "bench throughput: "+out+" holds the 2 records written before it stopped, marked incomplete (interrupted)") {
		t.Errorf("stderr does not say where the partial log is:\n%s", stderr.String())
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".*")); len(tmps) != 0 {
		t.Errorf("temporary files left: %q", tmps)
	}
	// fit reads it and says it is incomplete; one batch is too few to fit
	// the law, which fit says with exit 1.
	fout, ferr, code := runCLI("fit", out)
	if code != exitRuntime || !strings.Contains(fout+ferr, "the log is incomplete (line 3: interrupted)") || !strings.Contains(ferr, "fewer than two distinct batch sizes") {
		t.Errorf("fit: exit %d, want 1, a note that the log is incomplete, and why no group fits\n%s\n%s", code, fout, ferr)
	}
}

// A run that ends normally leaves only its log: no temporary file, no end
// record.
func TestBenchThroughputLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "tp.jsonl")
	_, stderr, code := runCLI("bench", "throughput", "--data", "synthetic", "--workers", "1", "--batch", "4", "--steps", "2",
		"--warmup", "0", "--warm-rounds", "0", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := readLog(t, out)
	if len(recs) != 2 || recs[1].Kind != benchlog.KindMeasurement {
		t.Errorf("records %+v, want the header and one measurement", recs)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files in the directory, want the log alone", len(entries))
	}
}
