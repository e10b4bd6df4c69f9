package version_test

import (
	"fmt"
	"runtime/debug"

	"scaleplan/internal/version"
)

// The line of a release build from a clean tree.
func ExampleLine() {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "scaleplan", Version: "v1.0.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "1a2b3c"}, {Key: "vcs.time", Value: "2026-11-28T23:00:00Z"}}}
	fmt.Println(version.Line(bi))
	// Output:
	// scaleplan v1.0.0, revision 1a2b3c, 2026-11-28T23:00:00Z, go1.26.8
}
