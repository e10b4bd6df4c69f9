// Package atomicfile writes files so that a reader never sees a half-written
// one and a failed write never destroys what was there before: the bytes go
// to a temporary file in the destination's directory, which is synced and
// then renamed over the destination (a rename within one directory is
// atomic on POSIX file systems); on any error the temporary file is removed.
package atomicfile
