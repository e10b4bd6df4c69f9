package tables

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"scaleplan/internal/units"
)

// This file turns a table's display headers and cells into what the
// machine formats (json, csv) carry: a snake_case key per column and cells
// as numbers in SI base units, as docs/output.md documents.
//
// A column's key is its header made snake_case (Snake), with the
// suffix of its unit (joinKey). The unit comes, in this order, from the table's
// Units, from declaredUnits (by "TABLE.header" or "header"), from a unit
// in parentheses at the end of the header ("step (ms)"), or from a unit
// word at the end of a snake_case header ("step_ms"). A column without a
// unit keeps JSON numbers as numbers and the rest as text.

// quantityKind is a kind of quantity a column may hold.
type quantityKind struct {
	name   string // as declarations name it: "seconds"
	suffix string // of the key: "s"
	parse  func(string) (float64, error)
}

// kinds are the quantities columns hold, by name. The SI base unit of
// each is the unit of its numbers in the machine formats.
var kinds = map[string]quantityKind{
	"seconds":   {"seconds", "s", func(s string) (float64, error) { v, err := units.ParseSeconds(s); return float64(v), err }},
	"bytes":     {"bytes", "bytes", func(s string) (float64, error) { v, err := units.ParseBytes(s); return float64(v), err }},
	"flops":     {"flops", "flop", func(s string) (float64, error) { v, err := units.ParseFLOPs(s); return float64(v), err }},
	"flop_rate": {"flop_rate", "flop_per_s", func(s string) (float64, error) { v, err := units.ParseFLOPsPerSec(s); return float64(v), err }},
	"byte_rate": {"byte_rate", "bytes_per_s", func(s string) (float64, error) { v, err := units.ParseBytesPerSec(s); return float64(v), err }},
	"bit_rate":  {"bit_rate", "bits_per_s", func(s string) (float64, error) { v, err := units.ParseBitsPerSec(s); return float64(v), err }},
	"watts":     {"watts", "w", func(s string) (float64, error) { v, err := units.ParseWatts(s); return float64(v), err }},
	"hertz":     {"hertz", "hz", func(s string) (float64, error) { v, err := units.ParseHertz(s); return float64(v), err }},
	"percent":   {"percent", "percent", parsePercent},
}

// headerUnits are the units in a header's parentheses that internal/units
// does not know: the key's suffix and the factor to the number it writes.
var headerUnits = map[string]struct {
	suffix string
	scale  float64
}{
	"%":         {"percent", 1},
	"$":         {"usd", 1},
	"kWh":       {"j", 3.6e6},
	"samples/s": {"samples_per_s", 1},
	"updates":   {"updates", 1},
}

// unitWords are the units a snake_case header may end with ("step_ms"):
// only the ones that cannot be a word of the name.
var unitWords = map[string]float64{"ms": 1e-3, "us": 1e-6, "ns": 1e-9}

// declaredUnits names the quantity held by the columns whose header does
// not say its unit, because each cell carries its own ("56.5 min",
// "32 GiB"): by "TABLE.header" where a header means different things in
// different tables, else by header. "text" is a column that is not a
// quantity where the header alone would declare one; "label" one whose
// cells stay strings even where they are digits (a placement "1234").
var declaredUnits = map[string]string{
	// catalog
	"devices.fp32":          "flop_rate",
	"devices.fp16":          "flop_rate",
	"devices.memory":        "bytes",
	"devices.memory bw":     "byte_rate",
	"devices.TDP":           "watts",
	"models.forward/sample": "flops",
	// predict, plan
	"time to train":      "seconds",
	"time to train low":  "seconds",
	"time to train high": "seconds",
	// fit
	"runs.step":            "seconds",
	"runs.data wait":       "seconds",
	"t":                    "seconds",
	"t 95%":                "seconds",
	"t_fixed":              "seconds",
	"t_comm":               "seconds",
	"t_comm 95%":           "seconds",
	"comm.t":               "text", // t at each device count: "53.56 ms, 147.8 ms"
	"comm.S":               "bytes",
	"bandwidth β":          "byte_rate",
	"β 95%":                "byte_rate",
	"residual":             "percent",
	"latency α":            "seconds",
	"bus bandwidth":        "byte_rate",
	"avg busbw (log)":      "byte_rate",
	"peak busbw (at size)": "byte_rate",
	"worst point":          "percent",
	// validate --measured, bench --framework torch
	"peak memory":      "bytes",
	"memory model":     "bytes",
	"collectives.size": "bytes",
	"peak_memory":      "bytes",
}

// field is one key of a column in the machine formats and how its value
// is read from the column's cell.
type field struct {
	key  string
	cell func(c string) any // nil, jsonNum or string
}

// columnFields returns the fields of the column headed h in the table
// scope (its key in the JSON object; "" for a command's only table),
// with units the table's own declarations.
func columnFields(scope, h string, own map[string]string) []field {
	base, conv := columnUnit(scope, h, own)
	name := strings.TrimSuffix(h, " 95%")
	if name != h {
		// A 95% confidence interval "[low, high]": two fields.
		k := Snake(strings.TrimSuffix(base, " 95%"))
		return []field{
			{joinKey(k+"_ci95_low", conv.suffix), intervalCell(conv, 0)},
			{joinKey(k+"_ci95_high", conv.suffix), intervalCell(conv, 1)},
		}
	}
	return []field{{joinKey(Snake(base), conv.suffix), conv.cell}}
}

func joinKey(k, suffix string) string {
	if suffix == "" || k == suffix || strings.HasSuffix(k, "_"+suffix) {
		return k
	}
	return k + "_" + suffix
}

// converter reads the cells of a column with a unit.
type converter struct {
	suffix string
	cell   func(c string) any
}

// columnUnit returns the header without its unit, and the unit's converter.
func columnUnit(scope, h string, own map[string]string) (string, converter) {
	kind, ok := own[h]
	if !ok {
		kind, ok = declaredUnits[scope+"."+h]
	}
	if !ok {
		kind, ok = declaredUnits[h]
	}
	if ok && kind == "text" {
		return h, converter{"", plainCell}
	}
	if ok && kind == "label" {
		return h, converter{"", func(c string) any { return c }}
	}
	if ok {
		q, known := kinds[kind]
		if !known {
			panic(fmt.Sprintf("column %q: unknown quantity kind %q", h, kind))
		}
		return h, converter{q.suffix, func(c string) any { return wholeBytes(q.suffix, quantityCell(q, c)) }}
	}
	if i := strings.LastIndex(h, " ("); i > 0 && strings.HasSuffix(h, ")") {
		if suffix, scale, ok := parenUnit(h[i+2 : len(h)-1]); ok {
			return h[:i], converter{suffix, func(c string) any { return wholeBytes(suffix, scaledCell(c, scale)) }}
		}
	}
	if i := strings.LastIndex(h, "_"); i > 0 {
		if scale, ok := unitWords[h[i+1:]]; ok {
			return h[:i], converter{"s", func(c string) any { return scaledCell(c, scale) }}
		}
	}
	return h, converter{"", plainCell}
}

// parenUnit returns the key suffix and factor of a unit written in a
// header's parentheses: one of headerUnits, or one internal/units reads.
func parenUnit(u string) (string, float64, bool) {
	if hu, ok := headerUnits[u]; ok {
		return hu.suffix, hu.scale, true
	}
	bits := strings.Contains(u, "bit") || strings.Contains(u, "bps") || strings.Contains(u, "b/s")
	for _, name := range []string{"seconds", "bytes", "flops", "flop_rate", "bit_rate", "byte_rate", "watts", "hertz"} {
		q := kinds[name]
		if (name == "bit_rate" && !bits) || (name == "byte_rate" && bits) {
			continue
		}
		if v, err := q.parse("1 " + u); err == nil {
			return q.suffix, v, true
		}
	}
	return "", 0, false
}

// wholeBytes rounds v to a whole number of bytes when suffix is "bytes"
// (a size shown as "0.27 GiB" is 289910292 bytes, not a fraction of one).
func wholeBytes(suffix string, v any) any {
	if n, ok := v.(jsonNum); ok && suffix == "bytes" {
		return siNumber(math.Round(mustFloat(string(n))))
	}
	return v
}

// nullCells are the cells that hold no value.
var nullCells = map[string]bool{"": true, "-": true, "—": true, "–": true, "n/a": true}

// jsonNumber matches the cells written as JSON numbers: JSON's own number
// syntax, so that "1,234", "0x10", "+1", "NaN" and "16–64" stay strings.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// plainCell is a cell of a column without a unit: null, a number when
// the cell is a JSON number, else the text.
func plainCell(c string) any {
	if nullCells[strings.TrimSpace(c)] {
		return nil
	}
	if jsonNumber.MatchString(c) {
		return siNumber(mustFloat(c))
	}
	return c
}

// groupedNumber matches a number of a column with a unit: a sign and
// thousands separated by commas are allowed ("+1,234.5").
var groupedNumber = regexp.MustCompile(`^[+-]?[0-9]{1,3}(,[0-9]{3})*(\.[0-9]+)?$|^[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// scaledCell is a cell of a column whose header gives the unit: the
// number times scale, null, or the text when it is not a number (an
// error row's message).
func scaledCell(c string, scale float64) any {
	t := strings.TrimSpace(c)
	if nullCells[t] {
		return nil
	}
	if !groupedNumber.MatchString(t) {
		return c
	}
	return siNumber(mustFloat(strings.ReplaceAll(t, ",", "")) * scale)
}

// quantityCell is a cell of a column declared to hold quantities of q:
// the quantity in q's base unit, a remark in parentheses after it
// ignored ("83 s (1.38 min)"); null; or the text when it is not one.
func quantityCell(q quantityKind, c string) any {
	t := strings.TrimSpace(c)
	if nullCells[t] {
		return nil
	}
	if i := strings.Index(t, " ("); i > 0 && strings.HasSuffix(t, ")") {
		t = t[:i]
	}
	v, err := q.parse(strings.ReplaceAll(t, ",", ""))
	if err != nil {
		return c
	}
	return siNumber(v)
}

// intervalCell reads bound i (0 low, 1 high) of an interval cell
// "[low, high]" with conv; null when the cell is not an interval.
func intervalCell(conv converter, i int) func(string) any {
	return func(c string) any {
		t := strings.TrimSpace(c)
		if lo, ok := strings.CutPrefix(t, ">= "); ok {
			// An interval with no upper limit: its low end, and null.
			if i == 1 {
				return nil
			}
			return conv.cell(strings.TrimSpace(lo))
		}
		if !strings.HasPrefix(t, "[") || !strings.HasSuffix(t, "]") {
			if nullCells[t] {
				return nil
			}
			return c
		}
		parts := strings.Split(t[1:len(t)-1], ", ")
		if len(parts) != 2 {
			return c
		}
		return conv.cell(strings.TrimSpace(parts[i]))
	}
}

// QuantityKind returns the kind of quantity ("seconds", "bytes", ...) s
// is when it is text that internal/units reads as one ("32 GiB"), else "":
// the text a column of that kind would turn into a number.
func QuantityKind(s string) string {
	for name, q := range kinds {
		if _, err := q.parse(s); err == nil {
			return name
		}
	}
	return ""
}

// parsePercent reads "12.5%" or "+12.5 %" as 12.5.
func parsePercent(s string) (float64, error) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	if !groupedNumber.MatchString(t) {
		return 0, fmt.Errorf("%q is not a percentage", s)
	}
	return mustFloat(strings.ReplaceAll(t, ",", "")), nil
}

// mustFloat parses a string a regexp above has matched as a number.
func mustFloat(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(fmt.Sprintf("mustFloat(%q): %v", s, err))
	}
	return v
}

// siNumber is v as a JSON number, to 15 significant digits so that the
// factors of the units leave no binary noise (0.1672, not
// 0.16720000000000002); null when v is not finite.
func siNumber(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return jsonNum(strconv.FormatFloat(v, 'g', 15, 64))
}

// jsonNum is a number as the machine formats write it.
type jsonNum string

// snakeWords are the spellings Snake replaces before it lowercases.
var snakeWords = strings.NewReplacer(
	"'", "", "’", "", "$/", " usd per ", "$", " usd ", "%", " percent ", "/", " per ",
	"²", "2", "³", "3", "α", " alpha ", "β", " beta ", "µ", "u", "μ", "u", "×", " x ", "–", " to ",
)

// nonKey matches the runs of characters a key does not have.
var nonKey = regexp.MustCompile(`[^a-z0-9]+`)

// Snake returns text as a key: the replacements of snakeWords, lower
// case, and every run of other characters than a-z and 0-9 one "_".
func Snake(text string) string {
	return strings.Trim(nonKey.ReplaceAllString(strings.ToLower(snakeWords.Replace(text)), "_"), "_")
}
