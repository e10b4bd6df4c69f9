package version

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Read returns debug.ReadBuildInfo's answer, nil without one.
func Read() *debug.BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	return bi
}

// Line is the one line `scaleplan --version` prints: the main module's
// version, then from the build settings the VCS revision, the commit's
// time and "modified" when the work tree had changes, then the Go
// version. A build without that information says so for each part.
//
//	scaleplan (devel), revision 1a2b…, 2026-11-28T23:00:00Z, modified, go1.26.8
func Line(bi *debug.BuildInfo) string {
	if bi == nil {
		return "scaleplan (no build information), " + runtime.Version()
	}
	version := bi.Main.Version
	if version == "" {
		version = "(unknown version)"
	}
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	parts := []string{"scaleplan " + version}
	if r := set["vcs.revision"]; r != "" {
		parts = append(parts, "revision "+r)
	} else {
		parts = append(parts, "revision unknown")
	}
	if t := set["vcs.time"]; t != "" {
		parts = append(parts, t)
	}
	if set["vcs.modified"] == "true" {
		parts = append(parts, "modified")
	}
	goVersion := bi.GoVersion
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	return strings.Join(append(parts, goVersion), ", ")
}
