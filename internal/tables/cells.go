package tables

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"

	"scaleplan/internal/units"
)

// Num prints x to four significant digits, whole from 10⁴ up, with an
// exponent below 10⁻⁴ (units.FormatNumber).
func Num(x float64) string { return units.FormatNumber(x) }

// NumInterval prints the interval [lo, hi] with Num: "—" when a bound is
// unknown (NaN), "∞" when lo is +Inf, ">= lo" when only hi is.
func NumInterval(lo, hi float64) string {
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return "—"
	case math.IsInf(lo, 1):
		return "∞"
	case math.IsInf(hi, 1):
		return ">= " + Num(lo)
	}
	return "[" + Num(lo) + ", " + Num(hi) + "]"
}

// SecondsInterval prints an interval of times, "—" when a bound is NaN.
func SecondsInterval(iv [2]units.Seconds) string {
	if math.IsNaN(float64(iv[0])) || math.IsNaN(float64(iv[1])) {
		return "—"
	}
	return "[" + iv[0].String() + ", " + iv[1].String() + "]"
}

// FmtZ prints a z-score to one decimal, "—" when it is NaN.
func FmtZ(z float64) string {
	if math.IsNaN(z) {
		return "—"
	}
	return fmt.Sprintf("%.1f", z)
}

// Target prints a target value with Num, "-" for 0 (none).
func Target(x float64) string {
	if x == 0 {
		return "-"
	}
	return Num(x)
}

// JoinInts prints xs separated by ", ".
func JoinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// Dash is s, or "-" when s is empty.
func Dash(s string) string { return cmp.Or(s, "-") }

// Plural is one when n is 1, else many.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
