package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Bytes is an amount of data in bytes.
type Bytes float64

// Seconds is a duration in seconds.
type Seconds float64

// FLOPs is a count of floating-point operations.
type FLOPs float64

// FLOPsPerSec is a compute rate in floating-point operations per second.
type FLOPsPerSec float64

// BytesPerSec is a data rate in bytes per second.
type BytesPerSec float64

// BitsPerSec is a data rate in bits per second, the unit of network links.
type BitsPerSec float64

// Hertz is a frequency in cycles per second.
type Hertz float64

// Watts is a power in watts.
type Watts float64

// Decimal and binary multiples of Bytes.
const (
	Byte Bytes = 1
	KB   Bytes = 1e3
	MB   Bytes = 1e6
	GB   Bytes = 1e9
	TB   Bytes = 1e12
	PB   Bytes = 1e15
	KiB  Bytes = 1 << 10
	MiB  Bytes = 1 << 20
	GiB  Bytes = 1 << 30
	TiB  Bytes = 1 << 40
	PiB  Bytes = 1 << 50
)

// Multiples of Seconds.
const (
	Nanosecond  Seconds = 1e-9
	Microsecond Seconds = 1e-6
	Millisecond Seconds = 1e-3
	Second      Seconds = 1
	Minute      Seconds = 60
	Hour        Seconds = 3600
	Day         Seconds = 86400
)

// Multiples of FLOPs and FLOPsPerSec.
const (
	GFLOP   FLOPs       = 1e9
	TFLOP   FLOPs       = 1e12
	GFLOPPS FLOPsPerSec = 1e9
	TFLOPPS FLOPsPerSec = 1e12
)

// Multiples of the rates.
const (
	GBps BytesPerSec = 1e9
	GiBs BytesPerSec = 1 << 30
	Gbps BitsPerSec  = 1e9
	GHz  Hertz       = 1e9
)

// unit is one spelling of a unit and its size in the quantity's base unit.
type unit struct {
	name string
	mult float64
}

// quantity describes how one kind of value is written.
type quantity struct {
	kind   string // "bytes", "seconds", ...
	units  []unit // every accepted spelling
	si     []unit // the spellings String uses, ascending
	binary []unit // binary spellings String may use, ascending; nil if none
}

func siPrefixed(suffix string, base float64, prefixes string) []unit {
	mults := map[byte]float64{'n': 1e-9, 'u': 1e-6, 'm': 1e-3, ' ': 1, 'k': 1e3, 'M': 1e6, 'G': 1e9, 'T': 1e12, 'P': 1e15, 'E': 1e18}
	var us []unit
	for i := 0; i < len(prefixes); i++ {
		p := prefixes[i]
		name := suffix
		if p != ' ' {
			name = string(p) + suffix
		}
		us = append(us, unit{name, mults[p] * base})
	}
	return us
}

func binaryPrefixed(suffix string, base float64) []unit {
	var us []unit
	for i, p := range []string{"Ki", "Mi", "Gi", "Ti", "Pi"} {
		us = append(us, unit{p + suffix, math.Pow(1024, float64(i+1)) * base})
	}
	return us
}

func concat(lists ...[]unit) []unit {
	var out []unit
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

var (
	bytesQ = func() quantity {
		si := siPrefixed("B", 1, " kMGTPE")
		bin := binaryPrefixed("B", 1)
		return quantity{kind: "bytes", units: concat(si, bin), si: si, binary: bin}
	}()
	secondsQ = func() quantity {
		si := siPrefixed("s", 1, "num ")
		extra := []unit{{"µs", 1e-6}, {"sec", 1}, {"min", 60}, {"h", 3600}, {"d", 86400}}
		return quantity{kind: "seconds", units: concat(si, extra), si: si}
	}()
	flopsQ = func() quantity {
		si := siPrefixed("FLOP", 1, " kMGTPE")
		return quantity{kind: "FLOPs", units: concat(si, siPrefixed("FLOPs", 1, " kMGTPE")), si: si}
	}()
	flopRateQ = func() quantity {
		si := siPrefixed("FLOP/s", 1, " kMGTPE")
		return quantity{kind: "FLOP/s", units: concat(si, siPrefixed("FLOPS", 1, " kMGTPE"), siPrefixed("FLOPs/s", 1, " kMGTPE")), si: si}
	}()
	byteRateQ = func() quantity {
		si := siPrefixed("B/s", 1, " kMGTPE")
		bin := binaryPrefixed("B/s", 1)
		bits := concat(siPrefixed("bit/s", 1.0/8, " kMGT"), siPrefixed("b/s", 1.0/8, " kMGT"), siPrefixed("bps", 1.0/8, " kMGT"))
		return quantity{kind: "bytes/s", units: concat(si, bin, bits), si: si, binary: bin}
	}()
	bitRateQ = func() quantity {
		si := siPrefixed("bit/s", 1, " kMGTP")
		bits := concat(siPrefixed("b/s", 1, " kMGT"), siPrefixed("bps", 1, " kMGT"))
		bytes := concat(siPrefixed("B/s", 8, " kMGTP"), binaryPrefixed("B/s", 8))
		return quantity{kind: "bits/s", units: concat(si, bits, bytes), si: si}
	}()
	hertzQ = func() quantity {
		si := siPrefixed("Hz", 1, " kMGT")
		return quantity{kind: "hertz", units: si, si: si}
	}()
	wattsQ = func() quantity {
		si := siPrefixed("W", 1, "m kMG")
		return quantity{kind: "watts", units: si, si: si}
	}()
)

// UnitError reports a value whose unit is missing or not one of the accepted units.
type UnitError struct {
	Input    string   // the text that was parsed
	Kind     string   // the kind of quantity expected, such as "bytes"
	Accepted []string // the accepted unit spellings
}

func (e *UnitError) Error() string {
	return fmt.Sprintf("%q is not a quantity of %s: want a number and one of the units %s",
		e.Input, e.Kind, strings.Join(e.Accepted, ", "))
}

func (q *quantity) names() []string {
	ns := make([]string, len(q.units))
	for i, u := range q.units {
		ns[i] = u.name
	}
	return ns
}

// parse reads "number unit". A bare 0 is accepted without a unit.
func (q *quantity) parse(s string) (float64, error) {
	t := strings.TrimSpace(s)
	n := numberPrefix(t)
	if n == 0 {
		return 0, &UnitError{Input: s, Kind: q.kind, Accepted: q.names()}
	}
	v, err := strconv.ParseFloat(t[:n], 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q: bad number %q", s, t[:n])
	}
	name := strings.TrimSpace(t[n:])
	if name == "" {
		if v == 0 {
			return 0, nil
		}
		return 0, &UnitError{Input: s, Kind: q.kind, Accepted: q.names()}
	}
	for _, u := range q.units {
		if u.name == name {
			x := v * u.mult
			if math.IsInf(x, 0) {
				return 0, fmt.Errorf("%q: out of range", s)
			}
			return x, nil
		}
	}
	return 0, &UnitError{Input: s, Kind: q.kind, Accepted: q.names()}
}

// numberPrefix returns the length of the decimal number at the start of s.
func numberPrefix(s string) int {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			i = k
		}
	}
	return i
}

// format writes v with the largest unit that keeps the number at least 1,
// to four significant digits. Binary units are used when they give an exact
// short number and the decimal ones do not.
func (q *quantity) format(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64) + " " + q.si[indexOfBase(q.si)].name
	}
	a := math.Abs(v)
	si := pick(q.si, a)
	m := v / si.mult
	if q.binary != nil && a >= q.binary[0].mult {
		b := pick(q.binary, a)
		mb := v / b.mult
		if exact(mb) && !exact(m) {
			return trimNumber(mb) + " " + b.name
		}
	}
	return trimNumber(m) + " " + si.name
}

// formatSI is format with the decimal units only.
func (q *quantity) formatSI(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return q.format(v)
	}
	si := pick(q.si, math.Abs(v))
	return trimNumber(v/si.mult) + " " + si.name
}

func indexOfBase(us []unit) int {
	for i, u := range us {
		if u.mult == 1 || (u.mult > 0.1 && u.mult < 10) {
			return i
		}
	}
	return 0
}

// pick returns the largest unit not greater than a, or the smallest unit.
func pick(us []unit, a float64) unit {
	best := us[0]
	for _, u := range us {
		if u.mult <= a*(1+1e-12) {
			best = u
		}
	}
	return best
}

// exact reports whether m has at most two decimals.
func exact(m float64) bool {
	r := m * 100
	return math.Abs(r-math.Round(r)) < 1e-6*math.Max(1, math.Abs(r))
}

// FormatNumber prints m to four significant digits, as an integer from
// 10000 up, and with an exponent only below 0.0001 ("1.737e-07" rather
// than twenty digits); NaN is the empty string.
func FormatNumber(m float64) string {
	if math.IsNaN(m) {
		return ""
	}
	return trimNumber(m)
}

// trimNumber is FormatNumber of a number that is not NaN; quantities use it
// below their smallest unit, "1.737e-07 ns".
func trimNumber(m float64) string {
	a := math.Abs(m)
	if a >= 1e4 {
		return strconv.FormatFloat(math.Round(m), 'f', -1, 64)
	}
	s := strconv.FormatFloat(m, 'g', 4, 64)
	if strings.ContainsAny(s, "e") {
		return s
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	return s
}

func unmarshal[T ~float64](x *T, q quantity, s string) error {
	v, err := q.parse(s)
	if err != nil {
		return err
	}
	*x = T(v)
	return nil
}

// unmarshalYAML decodes a scalar node. Its errors are yaml.TypeErrors so that
// a decoder reports every bad value of a document at once, each with its line.
func unmarshalYAML[T ~float64](x *T, q quantity, n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: want %s as a scalar such as \"%s\"", n.Line, q.kind, q.format(1))}}
	}
	if err := unmarshal(x, q, n.Value); err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v", n.Line, err)}}
	}
	return nil
}

// Bytes returns r in bytes per second.
func (r BitsPerSec) Bytes() BytesPerSec { return BytesPerSec(r / 8) }

// Bits returns r in bits per second.
func (r BytesPerSec) Bits() BitsPerSec { return BitsPerSec(r * 8) }
