// The methods below are the same for every quantity; each type differs only in its table of units.

package units

import "go.yaml.in/yaml/v3"

// ParseBytes parses bytes such as "32 GiB" or "12.5 GB".
func ParseBytes(s string) (Bytes, error) {
	v, err := bytesQ.parse(s)
	return Bytes(v), err
}

// String formats x with the largest unit that keeps the number at least 1.
func (x Bytes) String() string { return bytesQ.format(float64(x)) }

// Decimal formats x in decimal units only (kB, MB, GB, ...), never the
// binary ones String picks for a size that is exact in them: a column of
// measured sizes reads in one kind of unit, whichever sizes happen to be
// whole MiB.
func (x Bytes) Decimal() string { return bytesQ.formatSI(float64(x)) }

// MarshalText implements encoding.TextMarshaler.
func (x Bytes) MarshalText() ([]byte, error) { return []byte(x.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (x *Bytes) UnmarshalText(b []byte) error { return unmarshal(x, bytesQ, string(b)) }

// UnmarshalYAML implements yaml.Unmarshaler; errors carry the line.
func (x *Bytes) UnmarshalYAML(n *yaml.Node) error { return unmarshalYAML(x, bytesQ, n) }

// MarshalYAML implements yaml.Marshaler.
func (x Bytes) MarshalYAML() (any, error) { return x.String(), nil }

// ParseSeconds parses a duration such as "5 us" or "1.5 h".
func ParseSeconds(s string) (Seconds, error) {
	v, err := secondsQ.parse(s)
	return Seconds(v), err
}

// String formats x with the largest unit that keeps the number at least 1.
func (x Seconds) String() string { return secondsQ.format(float64(x)) }

// MarshalText implements encoding.TextMarshaler.
func (x Seconds) MarshalText() ([]byte, error) { return []byte(x.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (x *Seconds) UnmarshalText(b []byte) error { return unmarshal(x, secondsQ, string(b)) }

// UnmarshalYAML implements yaml.Unmarshaler; errors carry the line.
func (x *Seconds) UnmarshalYAML(n *yaml.Node) error { return unmarshalYAML(x, secondsQ, n) }

// MarshalYAML implements yaml.Marshaler.
func (x Seconds) MarshalYAML() (any, error) { return x.String(), nil }

// ParseFLOPs parses an operation count such as "4.1 GFLOP".
func ParseFLOPs(s string) (FLOPs, error) {
	v, err := flopsQ.parse(s)
	return FLOPs(v), err
}

// String formats x with the largest unit that keeps the number at least 1.
func (x FLOPs) String() string { return flopsQ.format(float64(x)) }

// MarshalText implements encoding.TextMarshaler.
func (x FLOPs) MarshalText() ([]byte, error) { return []byte(x.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (x *FLOPs) UnmarshalText(b []byte) error { return unmarshal(x, flopsQ, string(b)) }

// UnmarshalYAML implements yaml.Unmarshaler; errors carry the line.
func (x *FLOPs) UnmarshalYAML(n *yaml.Node) error { return unmarshalYAML(x, flopsQ, n) }

// MarshalYAML implements yaml.Marshaler.
func (x FLOPs) MarshalYAML() (any, error) { return x.String(), nil }

// ParseFLOPsPerSec parses a compute rate such as "15.7 TFLOP/s".
func ParseFLOPsPerSec(s string) (FLOPsPerSec, error) {
	v, err := flopRateQ.parse(s)
	return FLOPsPerSec(v), err
}

// String formats x with the largest unit that keeps the number at least 1.
func (x FLOPsPerSec) String() string { return flopRateQ.format(float64(x)) }

// MarshalText implements encoding.TextMarshaler.
func (x FLOPsPerSec) MarshalText() ([]byte, error) { return []byte(x.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (x *FLOPsPerSec) UnmarshalText(b []byte) error { return unmarshal(x, flopRateQ, string(b)) }

// UnmarshalYAML implements yaml.Unmarshaler; errors carry the line.
func (x *FLOPsPerSec) UnmarshalYAML(n *yaml.Node) error { return unmarshalYAML(x, flopRateQ, n) }

// MarshalYAML implements yaml.Marshaler.
func (x FLOPsPerSec) MarshalYAML() (any, error) { return x.String(), nil }

// ParseBytesPerSec parses a data rate in bytes per second such as "900 GB/s" or "100 Gbit/s".
func ParseBytesPerSec(s string) (BytesPerSec, error) {
	v, err := byteRateQ.parse(s)
	return BytesPerSec(v), err
}

// String formats x with the largest unit that keeps the number at least 1.
func (x BytesPerSec) String() string { return byteRateQ.format(float64(x)) }

// Decimal formats x in decimal units only (kB/s, MB/s, GB/s, ...), never
// the binary ones String picks for a rate that is exact in them: the two
// ends of an interval read in one kind of unit.
func (x BytesPerSec) Decimal() string { return byteRateQ.formatSI(float64(x)) }

// MarshalText implements encoding.TextMarshaler.
func (x BytesPerSec) MarshalText() ([]byte, error) { return []byte(x.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (x *BytesPerSec) UnmarshalText(b []byte) error { return unmarshal(x, byteRateQ, string(b)) }

// UnmarshalYAML implements yaml.Unmarshaler; errors carry the line.
func (x *BytesPerSec) UnmarshalYAML(n *yaml.Node) error { return unmarshalYAML(x, byteRateQ, n) }

// MarshalYAML implements yaml.Marshaler.
func (x BytesPerSec) MarshalYAML() (any, error) { return x.String(), nil }

// ParseBitsPerSec parses a data rate in bits per second such as "100 Gbit/s".
func ParseBitsPerSec(s string) (BitsPerSec, error) {
	v, err := bitRateQ.parse(s)
	return BitsPerSec(v), err
}

// String formats x with the largest unit that keeps the number at least 1.
func (x BitsPerSec) String() string { return bitRateQ.format(float64(x)) }

// MarshalText implements encoding.TextMarshaler.
func (x BitsPerSec) MarshalText() ([]byte, error) { return []byte(x.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (x *BitsPerSec) UnmarshalText(b []byte) error { return unmarshal(x, bitRateQ, string(b)) }

// UnmarshalYAML implements yaml.Unmarshaler; errors carry the line.
func (x *BitsPerSec) UnmarshalYAML(n *yaml.Node) error { return unmarshalYAML(x, bitRateQ, n) }

// MarshalYAML implements yaml.Marshaler.
func (x BitsPerSec) MarshalYAML() (any, error) { return x.String(), nil }

// ParseHertz parses a frequency such as "2.4 GHz".
func ParseHertz(s string) (Hertz, error) {
	v, err := hertzQ.parse(s)
	return Hertz(v), err
}

// String formats x with the largest unit that keeps the number at least 1.
func (x Hertz) String() string { return hertzQ.format(float64(x)) }

// MarshalText implements encoding.TextMarshaler.
func (x Hertz) MarshalText() ([]byte, error) { return []byte(x.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (x *Hertz) UnmarshalText(b []byte) error { return unmarshal(x, hertzQ, string(b)) }

// UnmarshalYAML implements yaml.Unmarshaler; errors carry the line.
func (x *Hertz) UnmarshalYAML(n *yaml.Node) error { return unmarshalYAML(x, hertzQ, n) }

// MarshalYAML implements yaml.Marshaler.
func (x Hertz) MarshalYAML() (any, error) { return x.String(), nil }

// ParseWatts parses a power such as "300 W".
func ParseWatts(s string) (Watts, error) {
	v, err := wattsQ.parse(s)
	return Watts(v), err
}

// String formats x with the largest unit that keeps the number at least 1.
func (x Watts) String() string { return wattsQ.format(float64(x)) }

// MarshalText implements encoding.TextMarshaler.
func (x Watts) MarshalText() ([]byte, error) { return []byte(x.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (x *Watts) UnmarshalText(b []byte) error { return unmarshal(x, wattsQ, string(b)) }

// UnmarshalYAML implements yaml.Unmarshaler; errors carry the line.
func (x *Watts) UnmarshalYAML(n *yaml.Node) error { return unmarshalYAML(x, wattsQ, n) }

// MarshalYAML implements yaml.Marshaler.
func (x Watts) MarshalYAML() (any, error) { return x.String(), nil }
