package cmd

import (
	"strings"
	"testing"
)

// TestValidateFabricFrom checks validate --fabric-from on the synthetic
// tables (simulated at known links): the level inside a node fitted to
// the one-node test alone (FILE:LINE) predicts that test within 1 % and
// leaves the two-node test off (its level between nodes stays the
// catalogue's), both levels fitted to the file predict both within 1 %,
// and the output names the fit it took.
func TestValidateFabricFrom(t *testing.T) {
	mae := collectiveMAE(t, "--fabric-from", synthetic+":4")
	if mae[0] > 1 || mae[1] <= 1 {
		t.Errorf("fitted to the one-node test: mean errors %.2f%% and %.2f%%, want the first at most 1%%, the second above", mae[0], mae[1])
	}
	for i, m := range collectiveMAE(t, "--fabric-from", synthetic) {
		if m > 1 {
			t.Errorf("fitted to both tests: test %d mean error %.2f%%, want at most 1%%", i, m)
		}
	}
	stdout, stderr, code := runCLI("validate", "--format", "md", "--measured", synthetic, "--system", "dgx-h100", "--allreduce", "ring", "--fabric-from", synthetic+":4")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"- fit of " + synthetic + ":4: intra of dgx-h100, ", "(calibrated: intra from fit of " + synthetic + ":4)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output does not say %q:\n%s", want, stdout)
		}
	}
}

// TestValidateFabricFromErrors checks that --fabric-from refuses what it
// cannot fit, naming the flag.
func TestValidateFabricFromErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--measured", synthetic, "--fabric-from", synthetic}, "give it with --system"},
		{[]string{"--measured", synthetic, "--system", "dgx-h100", "--fabric-from", synthetic + ":3"}, "no collective test starts at line 3"},
		{[]string{"--measured", synthetic, "--system", "dgx-h100", "--fabric-from", synthetic + ":0"}, "want a line >= 1"},
		{[]string{"--measured", synthetic, "--system", "dgx-h100", "--fabric-from", "no-such-file.txt"}, "--fabric-from"},
		{[]string{"--fabric-from", synthetic}, "applies to --measured logs"},
	} {
		_, stderr, code := runCLI(append([]string{"validate"}, c.args...)...)
		if code == exitOK || !strings.Contains(stderr, c.want) {
			t.Errorf("validate %v: exit %d, stderr %q; want an error saying %q", c.args, code, stderr, c.want)
		}
	}
}
