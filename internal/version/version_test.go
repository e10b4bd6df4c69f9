package version

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestLine: the line's parts from build information written by hand, one
// without VCS settings, and none at all.
func TestLine(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "scaleplan", Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-11-28T23:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	for _, tc := range []struct {
		bi   *debug.BuildInfo
		want string
	}{
		{bi, "scaleplan v1.2.3, revision 0123456789abcdef0123456789abcdef01234567, 2026-11-28T23:00:00Z, modified, go1.26.8"},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "scaleplan (devel), revision unknown, go1.26.8"},
		{nil, "scaleplan (no build information), " + runtime.Version()},
	} {
		if got := Line(tc.bi); got != tc.want {
			t.Errorf("Line: %q, want %q", got, tc.want)
		}
	}
	bi.Settings[3].Value = "false"
	if got := Line(bi); strings.Contains(got, "modified") {
		t.Errorf("a clean tree: %q", got)
	}
}
