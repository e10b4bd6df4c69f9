package units

import (
	"errors"
	"math"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}

func TestParse(t *testing.T) {
	cases := []struct {
		in    string
		parse func(string) (float64, error)
		want  float64
	}{
		// SI vs binary.
		{"32 GiB", bytesF, 32 * 1024 * 1024 * 1024},
		{"32 GB", bytesF, 32e9},
		{"900MB", bytesF, 900e6},
		{"1.5 KiB", bytesF, 1536},
		{"0", bytesF, 0},
		// Bits vs bytes.
		{"100 Gbit/s", byteRateF, 12.5e9},
		{"100 Gb/s", byteRateF, 12.5e9},
		{"100 Gbps", byteRateF, 12.5e9},
		{"12.5 GB/s", byteRateF, 12.5e9},
		{"12.5 GB/s", bitRateF, 100e9},
		{"100 Gbit/s", bitRateF, 100e9},
		{"1 GiB/s", byteRateF, 1 << 30},
		// Durations.
		{"5 us", secondsF, 5e-6},
		{"5 µs", secondsF, 5e-6},
		{"54 ms", secondsF, 0.054},
		{"1.5 h", secondsF, 5400},
		{"2 min", secondsF, 120},
		{"1e-3 s", secondsF, 1e-3},
		// Compute.
		{"15.7 TFLOP/s", flopRateF, 15.7e12},
		{"125 TFLOPS", flopRateF, 125e12},
		{"4.1 GFLOP", flopsF, 4.1e9},
		{"4.1 GFLOPs", flopsF, 4.1e9},
		// Others.
		{"2.4 GHz", hertzF, 2.4e9},
		{"300 W", wattsF, 300},
		{"6.5 kW", wattsF, 6500},
		{" -3 W ", wattsF, -3},
	}
	for _, c := range cases {
		got, err := c.parse(c.in)
		if err != nil {
			t.Errorf("parse %q: %v", c.in, err)
			continue
		}
		if !near(got, c.want, 1e-12) {
			t.Errorf("parse %q = %v, want %v", c.in, got, c.want)
		}
	}
}

func bytesF(s string) (float64, error)    { v, err := ParseBytes(s); return float64(v), err }
func secondsF(s string) (float64, error)  { v, err := ParseSeconds(s); return float64(v), err }
func flopsF(s string) (float64, error)    { v, err := ParseFLOPs(s); return float64(v), err }
func flopRateF(s string) (float64, error) { v, err := ParseFLOPsPerSec(s); return float64(v), err }
func byteRateF(s string) (float64, error) { v, err := ParseBytesPerSec(s); return float64(v), err }
func bitRateF(s string) (float64, error)  { v, err := ParseBitsPerSec(s); return float64(v), err }
func hertzF(s string) (float64, error)    { v, err := ParseHertz(s); return float64(v), err }
func wattsF(s string) (float64, error)    { v, err := ParseWatts(s); return float64(v), err }

func TestString(t *testing.T) {
	cases := []struct {
		got  string
		want string
	}{
		{(32 * GiB).String(), "32 GiB"},
		{(80 * GB).String(), "80 GB"},
		{Bytes(900e6).String(), "900 MB"},
		{Bytes(25 * MiB).String(), "25 MiB"},
		{Bytes(110e3).String(), "110 kB"},
		{Bytes(512).String(), "512 B"},
		{Bytes(0).String(), "0 B"},
		{BytesPerSec(12.5e9).String(), "12.5 GB/s"},
		{BitsPerSec(100e9).String(), "100 Gbit/s"},
		{Seconds(5e-6).String(), "5 us"},
		{Seconds(0.054).String(), "54 ms"},
		{Seconds(5989).String(), "5989 s"},
		{Seconds(604987).String(), "604987 s"},
		{FLOPsPerSec(15.7e12).String(), "15.7 TFLOP/s"},
		{FLOPs(4.1e9).String(), "4.1 GFLOP"},
		{Hertz(2.4e9).String(), "2.4 GHz"},
		{Watts(300).String(), "300 W"},
		{Seconds(1.0 / 3).String(), "333.3 ms"},
		{Seconds(1.7373e-16).String(), "1.737e-07 ns"}, // below the smallest unit: an exponent, not 20 digits
		{Seconds(2.5e-13).String(), "0.00025 ns"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("String = %q, want %q", c.got, c.want)
		}
	}
}

// TestRoundTrip checks that String's output parses back to within its four
// significant digits, over many magnitudes.
func TestRoundTrip(t *testing.T) {
	for e := -9.0; e <= 16; e += 0.37 {
		v := 1.2345678 * math.Pow(10, e)
		checks := []struct {
			s     string
			parse func(string) (float64, error)
		}{
			{Bytes(v).String(), bytesF}, {Seconds(v).String(), secondsF}, {FLOPs(v).String(), flopsF},
			{FLOPsPerSec(v).String(), flopRateF}, {BytesPerSec(v).String(), byteRateF},
			{BitsPerSec(v).String(), bitRateF}, {Hertz(v).String(), hertzF}, {Watts(v).String(), wattsF},
		}
		for _, c := range checks {
			got, err := c.parse(c.s)
			if err != nil {
				t.Errorf("%g: %q does not parse: %v", v, c.s, err)
				continue
			}
			if !near(got, v, 5e-4) {
				t.Errorf("%g printed as %q parses to %g", v, c.s, got)
			}
		}
	}
	// Exact spellings survive unchanged.
	for _, s := range []string{"32 GiB", "12.5 GB/s", "100 Gbit/s", "15.7 TFLOP/s", "2.4 GHz", "5 us", "300 W"} {
		var out string
		switch {
		case strings.HasSuffix(s, "bit/s"):
			v, _ := ParseBitsPerSec(s)
			out = v.String()
		case strings.HasSuffix(s, "B/s"):
			v, _ := ParseBytesPerSec(s)
			out = v.String()
		case strings.HasSuffix(s, "B"):
			v, _ := ParseBytes(s)
			out = v.String()
		case strings.HasSuffix(s, "FLOP/s"):
			v, _ := ParseFLOPsPerSec(s)
			out = v.String()
		case strings.HasSuffix(s, "Hz"):
			v, _ := ParseHertz(s)
			out = v.String()
		case strings.HasSuffix(s, "W"):
			v, _ := ParseWatts(s)
			out = v.String()
		default:
			v, _ := ParseSeconds(s)
			out = v.String()
		}
		if out != s {
			t.Errorf("%q round-trips to %q", s, out)
		}
	}
}

func TestBadUnits(t *testing.T) {
	cases := []struct {
		in, want string
		parse    func(string) (float64, error)
	}{
		{"100 Gbps/s", `"100 Gbps/s" is not a quantity of bytes/s: want a number and one of the units B/s, kB/s`, byteRateF},
		{"32 gib", `"32 gib" is not a quantity of bytes: want a number and one of the units B, kB, MB`, bytesF},
		{"32", `"32" is not a quantity of bytes`, bytesF},
		{"GiB", `"GiB" is not a quantity of bytes`, bytesF},
		{"5 W", `"5 W" is not a quantity of seconds: want a number and one of the units ns, us, ms, s, µs, sec, min, h, d`, secondsF},
		{"1e999 s", `"1e999 s": bad number "1e999"`, secondsF},
		{"", `"" is not a quantity of hertz`, hertzF},
	}
	for _, c := range cases {
		_, err := c.parse(c.in)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("parse %q: got %v, want prefix %q", c.in, err, c.want)
		}
	}
	_, err := ParseBytes("3 parsecs")
	var ue *UnitError
	if !errors.As(err, &ue) || ue.Kind != "bytes" || len(ue.Accepted) == 0 {
		t.Errorf("ParseBytes error %v is not a *UnitError listing the units", err)
	}
}

func TestYAML(t *testing.T) {
	var v struct {
		Mem   Bytes       `yaml:"mem"`
		BW    BitsPerSec  `yaml:"bw"`
		Peak  FLOPsPerSec `yaml:"peak"`
		Alpha Seconds     `yaml:"alpha"`
	}
	src := "mem: 16 GiB\nbw: 100 Gbit/s\npeak: 15.7 TFLOP/s\nalpha: 5 us\n"
	if err := yaml.Unmarshal([]byte(src), &v); err != nil {
		t.Fatal(err)
	}
	if v.Mem != 16*GiB || v.BW != 100*Gbps || v.Peak != 15.7*TFLOPPS || !near(float64(v.Alpha), 5e-6, 1e-15) {
		t.Errorf("decoded %+v", v)
	}
	out, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != src {
		t.Errorf("marshal:\n%s\nwant\n%s", out, src)
	}
	// Every bad value is reported, each with its line.
	bad := "mem: 16 GiBs\nbw: 100 Gbit/s\npeak: [1]\nalpha: 5\n"
	err = yaml.Unmarshal([]byte(bad), &v)
	for _, want := range []string{"line 1: \"16 GiBs\" is not a quantity of bytes", "line 3: want FLOP/s as a scalar such as \"1 FLOP/s\"", "line 4: \"5\" is not a quantity of seconds"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not contain %q", err, want)
		}
	}
}

func TestConvert(t *testing.T) {
	if got := (100 * Gbps).Bytes(); got != 12.5*GBps {
		t.Errorf("100 Gbit/s = %v, want 12.5 GB/s", got)
	}
	if got := (12.5 * GBps).Bits(); got != 100*Gbps {
		t.Errorf("12.5 GB/s = %v, want 100 Gbit/s", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"32 GiB", "100 Gbit/s", "1e-3 s", "-0", "+.5e+3 kW", "1.2.3 GB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, q := range []quantity{bytesQ, secondsQ, flopsQ, flopRateQ, byteRateQ, bitRateQ, hertzQ, wattsQ} {
			v, err := q.parse(s)
			if err != nil {
				continue
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%q parsed to %v", s, v)
			}
			back, err := q.parse(q.format(v))
			if err != nil {
				t.Fatalf("%q -> %v -> %q does not parse: %v", s, v, q.format(v), err)
			}
			if !near(back, v, 5e-4) && math.Abs(v) > 1e-300 {
				t.Fatalf("%q -> %v -> %q -> %v", s, v, q.format(v), back)
			}
		}
	})
}

// FormatNumber keeps four significant digits, drops them from 10⁴ up, and
// writes an exponent only below 10⁻⁴, where fixed notation would print a
// fitted zero's rounding error as fifteen digits.
func TestFormatNumber(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{
		{0, "0"},
		{1000, "1000"},
		{2333.3333, "2333"},
		{12345.6, "12346"},
		{-0.5, "-0.5"},
		{0.00012346, "0.0001235"},
		{5.93e-13, "5.93e-13"},
		{1e-5, "1e-05"},
		{math.NaN(), ""},
	} {
		if got := FormatNumber(c.x); got != c.want {
			t.Errorf("FormatNumber(%g) = %q, want %q", c.x, got, c.want)
		}
	}
}

// Decimal never picks a binary unit, where String does for a size exact in
// one: 438.6 MiB, a peak memory measured in whole 2 MiB segments, reads as
// MB beside the other measured sizes of its column.
func TestBytesDecimal(t *testing.T) {
	for _, c := range []struct {
		b        Bytes
		str, dec string
	}{
		{Bytes(438.6 * float64(MiB)), "438.6 MiB", "459.9 MB"},
		{32 * GiB, "32 GiB", "34.36 GB"},
		{Bytes(288.1e6), "288.1 MB", "288.1 MB"},
		{512, "512 B", "512 B"},
		{0, "0 B", "0 B"},
	} {
		if got := c.b.String(); got != c.str {
			t.Errorf("%v B: String %q, want %q", float64(c.b), got, c.str)
		}
		if got := c.b.Decimal(); got != c.dec {
			t.Errorf("%v B: Decimal %q, want %q", float64(c.b), got, c.dec)
		}
	}
}

// BytesPerSec.Decimal never picks a binary unit, where String does for a
// rate exact in one: 420.2 GiB/s is 451.2 GB/s, the upper end of an
// interval whose lower end String writes in GB/s.
func TestBytesPerSecDecimal(t *testing.T) {
	for _, c := range []struct {
		r        BytesPerSec
		str, dec string
	}{
		{BytesPerSec(420.2 * float64(GiB)), "420.2 GiB/s", "451.2 GB/s"},
		{BytesPerSec(448.8e9), "448.8 GB/s", "448.8 GB/s"},
		{0, "0 B/s", "0 B/s"},
	} {
		if got := c.r.String(); got != c.str {
			t.Errorf("%v B/s: String %q, want %q", float64(c.r), got, c.str)
		}
		if got := c.r.Decimal(); got != c.dec {
			t.Errorf("%v B/s: Decimal %q, want %q", float64(c.r), got, c.dec)
		}
	}
}
