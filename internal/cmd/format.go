package cmd

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"

	"scaleplan/internal/units"
)

// num prints x to four significant digits, whole from 10⁴ up, with an
// exponent below 10⁻⁴ (units.FormatNumber).
func num(x float64) string { return units.FormatNumber(x) }

func numInterval(lo, hi float64) string {
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return "—"
	case math.IsInf(lo, 1):
		return "∞"
	case math.IsInf(hi, 1):
		return ">= " + num(lo)
	}
	return "[" + num(lo) + ", " + num(hi) + "]"
}

func secondsInterval(iv [2]units.Seconds) string {
	if math.IsNaN(float64(iv[0])) || math.IsNaN(float64(iv[1])) {
		return "—"
	}
	return "[" + iv[0].String() + ", " + iv[1].String() + "]"
}

func fmtZ(z float64) string {
	if math.IsNaN(z) {
		return "—"
	}
	return fmt.Sprintf("%.1f", z)
}

func target(x float64) string {
	if x == 0 {
		return "-"
	}
	return num(x)
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

func dash(s string) string { return cmp.Or(s, "-") }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
