// Package version says which build of scaleplan is running, from the
// build information the Go toolchain stamps into the binary: the main
// module's version, the VCS revision and time of the commit built, whether
// the work tree had changes, and the Go version.
//
// A build made with -buildvcs=false (or outside a repository) has no VCS
// settings; Line then says "revision unknown".
package version
