// Package config holds what the YAML loaders of hw, model and scenarios share:
// strict decoding, problems that name their YAML path and line, and "did you
// mean" suggestions for unknown names.
//
// A loader follows four steps: a Default, Decode (yaml.v3 with KnownFields),
// a Validate that collects every problem into Problems, and Problems.Locate,
// which finds each problem's line from the document's node tree. A thin
// ReadFile adds the file name with InFile.
package config
