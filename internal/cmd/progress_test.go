package cmd

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// countdownLine matches a countdown's text.
var countdownLine = regexp.MustCompile(`\b\d+ of \d+ \w+(, about .* left)?\x1b`)

// Long commands print no progress line when stderr is not a terminal:
// only whole lines, without carriage returns or escapes.
func TestLongCommandsNoProgressOnPipe(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"bench", "throughput", "--data", "synthetic", "--workers", "1", "--batch", "4,8", "--steps", "2", "--warmup", "0", "--warm-rounds", "0"},
		{"bench", "train", "--data", "synthetic", "--hidden", "64", "--epochs", "0.05", "--batch", "16", "--target", "0.2"},
		{"validate", "--engine", "--engine-core-guard=false", "--engine-data", "synthetic", "--engine-batch", "4,8", "--engine-workers", "2",
			"--engine-transport", "inproc", "--engine-steps", "2", "--engine-warmup", "0", "--engine-rounds", "1", "--engine-warm-rounds", "0",
			"--engine-out", filepath.Join(dir, "v.jsonl")},
	} {
		_, stderr, code := runCLI(args...)
		if code != exitOK {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
		if strings.ContainsAny(stderr, "\r\x1b") || countdownLine.MatchString(stderr) {
			t.Errorf("%v: stderr has a progress line:\n%q", args, stderr)
		}
	}
}
