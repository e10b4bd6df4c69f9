package cmd

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"scaleplan/internal/benchlog"
)

// validate --engine cancelled during its second round leaves --engine-out
// holding the first round, what it measured of the second and an end
// record; --engine-from replays the whole round and says so. Cancelled
// during its first round, the log holds no whole round and the replay
// refuses it, saying why.
func TestValidateEngineInterrupted(t *testing.T) {
	dir := t.TempDir()
	args := []string{"scaleplan", "validate", "--engine", "--engine-core-guard=false", "--engine-data", "synthetic", "--engine-batch", "4,8",
		"--engine-workers", "2", "--engine-transport", "inproc", "--engine-steps", "2", "--engine-warmup", "0", "--engine-rounds", "2", "--engine-warm-rounds", "0"}
	run := func(name, trigger string) []benchlog.Record {
		out := filepath.Join(dir, name)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		stderr := &cancelWriter{trigger: trigger, cancel: cancel}
		var stdout bytes.Buffer
		err := newApp(&stdout, stderr).RunContext(ctx, append(args, "--engine-out", out))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: error %v, want the cancellation\n%s", name, err, stderr.String())
		}
		if want := "validate --engine: " + out + " holds the "; !strings.Contains(stderr.String(), want) {
			t.Errorf("%s: stderr lacks %q:\n%s", name, want, stderr.String())
		}
		recs := readLog(t, out)
		if reason, ok := recs[len(recs)-1].Incomplete(); !ok || reason != "interrupted" {
			t.Errorf("%s: last record %+v, want an end record: incomplete, interrupted", name, recs[len(recs)-1])
		}
		return recs
	}

	recs := run("round2.jsonl", "validate: round 2: ")
	var meas, links int
	for _, r := range recs[1 : len(recs)-1] {
		switch r.Kind {
		case benchlog.KindMeasurement:
			meas++
		case benchlog.KindLink:
			links++
		}
	}
	if links != 1 || meas < 2 || meas+links != len(recs)-2 {
		t.Errorf("%d measurements and %d link probes between header and end, want a round's and one more measurement", meas, links)
	}
	_, stderr, code := runCLI("validate", "--engine", "--engine-from", filepath.Join(dir, "round2.jsonl"))
	if want := "round2.jsonl: the log is incomplete (interrupted): replaying the 1 whole round of the 2 it was to measure"; code != exitOK || !strings.Contains(stderr, want) {
		t.Errorf("replay of round2.jsonl: exit %d, want 0 with %q:\n%s", code, want, stderr)
	}

	run("round1.jsonl", "samples/s")
	_, stderr, code = runCLI("validate", "--engine", "--engine-from", filepath.Join(dir, "round1.jsonl"))
	if want := "round1.jsonl: the log is incomplete (interrupted) and holds 1 record after the header, fewer than one round's"; code != exitRuntime || !strings.Contains(stderr, want) {
		t.Errorf("replay of round1.jsonl: exit %d, want %d with %q:\n%s", code, exitRuntime, want, stderr)
	}
}
