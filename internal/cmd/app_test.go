package cmd

import (
	"runtime"
	"strings"
	"testing"
)

// TestAppVersion: --version prints one line from the build information.
func TestAppVersion(t *testing.T) {
	out, stderr, code := runCLI("--version")
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "scaleplan ") || !strings.HasSuffix(out, ", "+runtime.Version()+"\n") {
		t.Errorf("--version printed %q, want one line: scaleplan VERSION, ..., %s", out, runtime.Version())
	}
}

// TestAppSuggest: a mistyped command, subcommand or flag is an error of
// two lines at most that names it and suggests the nearest, exit 2, and
// never the whole help text.
func TestAppSuggest(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"predcit"}, "scaleplan: unknown command \"predcit\"; did you mean \"predict\"?\nrun 'scaleplan --help' for the commands\n"},
		{[]string{"simulat", "x"}, "scaleplan: unknown command \"simulat\"; did you mean \"simulate\"?\n"},
		{[]string{"xyzzy"}, "scaleplan: unknown command \"xyzzy\"\nrun 'scaleplan --help' for the commands\n"},
		{[]string{"bench", "thruput"}, "scaleplan: bench: unknown command \"thruput\"; did you mean \"throughput\"?\nrun 'scaleplan bench --help' for the commands\n"},
		{[]string{"catalog", "shwo", "dgx1"}, "scaleplan: catalog: unknown command \"shwo\"; did you mean \"show\"?\n"},
		{[]string{"catalog", "--formt", "json"}, "scaleplan: catalog: unknown flag --formt; did you mean --format?\nrun 'scaleplan catalog --help' for its flags\n"},
		{[]string{"simulate", "seed003-resnet50-2gpu-nop2p", "--formt", "json"}, "scaleplan: simulate: unknown flag --formt; did you mean --format?\n"},
		{[]string{"bench", "throughput", "--wrkers", "2"}, "scaleplan: bench throughput: unknown flag --wrkers; did you mean --workers?\n"},
		{[]string{"--catalogue", "x.yaml", "catalog"}, "scaleplan: unknown flag --catalogue; did you mean --catalog?\nrun 'scaleplan --help' for its flags\n"},
		{[]string{"plan", "--stepz", "3"}, "scaleplan: plan: unknown flag --stepz; did you mean --steps?\n"},
		{[]string{"plan", "--steps", "abc"}, "scaleplan: plan: invalid value \"abc\" for flag -steps: parse error\nrun 'scaleplan plan --help' for its flags\n"},
	} {
		stdout, stderr, code := runCLI(tc.args...)
		if code != exitUsage || !strings.HasPrefix(stderr, tc.want) || strings.Count(stderr, "\n") > 2 || stdout != "" {
			t.Errorf("scaleplan %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(tc.args, " "), code, stdout, stderr, tc.want)
		}
	}
	// Without a command, the help; a command's own checks still speak for
	// an argument that is near no subcommand.
	if out, _, code := runCLI(); code != exitOK || !strings.Contains(out, "COMMANDS:") {
		t.Errorf("no arguments: exit %d:\n%s", code, out)
	}
	if _, stderr, code := runCLI("catalog", "extra"); code != exitUsage || !strings.Contains(stderr, "catalog takes no argument") {
		t.Errorf("catalog extra: exit %d: %s", code, stderr)
	}
}
