// Package config holds what the YAML loaders of hw, model and scenarios share:
// strict decoding, problems that name their YAML path and line, and "did you
// mean" suggestions for unknown names.
//
// A loader follows four steps: a Default, Decode (go.yaml.in/yaml/v3 with
// KnownFields), a Validate that collects every problem into Problems, and
// Problems.Locate, which finds each problem's line from the document's node
// tree. A thin ReadFile adds the file name with InFile; DecodeFile reads a
// file through the size limit MaxFileSize and decodes it in one call.
//
// Every input is bounded: a document is read through MaxFileSize, a mapping
// may have MaxMappingKeys keys, an error lists MaxListed problems and counts
// the rest, and a panic of the YAML decoder is returned as an error.
package config
