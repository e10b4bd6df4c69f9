// Package procout holds the writers that collect a child process's
// output: Locked, which lets several processes (or a process's stdout and
// stderr) write to one writer without interleaving within a write, and
// Tail, which keeps the last bytes of an output for an error message.
package procout
