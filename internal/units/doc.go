// Package units holds the typed physical quantities of scaleplan: Bytes,
// Seconds, FLOPs, FLOPsPerSec, BytesPerSec, BitsPerSec, Hertz and Watts.
//
// Each is a float64 in its base unit (bytes, seconds, operations, bits per
// second, ...), so that mixing bytes with FLOPs fails to compile while
// arithmetic stays plain:
//
//	t := units.Seconds(float64(n) / float64(bw)) // n Bytes over bw BytesPerSec
//
// # Text form
//
// Every quantity parses and prints as a number, optional space, and a unit.
// Decimal (SI) prefixes k, M, G, T, P, E are powers of 1000; binary prefixes
// Ki, Mi, Gi, Ti, Pi are powers of 1024. Bits and bytes differ by case:
// "100 Gbit/s" (also "Gb/s", "Gbps") is 12.5 GB/s. Accepted forms:
//
//	bytes       B kB MB GB TB PB EB KiB MiB GiB TiB PiB
//	seconds     ns us µs ms s sec min h d
//	FLOPs       FLOP kFLOP ... EFLOP (also FLOPs)
//	FLOP/s      FLOP/s kFLOP/s ... EFLOP/s (also FLOPS, FLOPs/s)
//	bytes/s     B/s ... EB/s, KiB/s ... PiB/s, and bit rates
//	bits/s      bit/s ... Pbit/s, b/s, bps, and byte rates
//	hertz       Hz kHz MHz GHz THz
//	watts       mW W kW MW GW
//
// A number without a unit is an error, except 0. String picks the largest
// unit that keeps the number at least 1 and prints four significant digits;
// byte quantities use a binary unit when that gives an exact number and the
// decimal one does not ("32 GiB", but "80 GB").
//
// All types implement encoding.TextMarshaler, encoding.TextUnmarshaler,
// yaml.Marshaler and yaml.Unmarshaler, so they can be YAML scalars and JSON
// strings. YAML errors are yaml.TypeErrors that name the line.
package units
