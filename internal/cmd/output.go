package cmd

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
)

// Output formats.
var formats = []string{"text", "csv", "json", "md"}

// formatFlag is the --format flag every command that prints tables has.
func formatFlag() cli.Flag {
	return &cli.StringFlag{Name: "format", Value: "text", Usage: "output `FORMAT`: text, csv, json or md; csv and json have snake_case keys and SI numbers (docs/output.md)"}
}

// tableFlag is the --table flag of a command that prints several tables:
// names lists them, main is the one csv prints when the flag is left out.
func tableFlag(names, main string) cli.Flag {
	return &cli.StringFlag{Name: "table", Usage: "with --format csv or json, print only the table `NAME`: " + names + " (csv default: " + main + ")"}
}

// table is rows of cells under a header, printed in one of formats.
type table struct {
	Title  string // printed above text and md tables; omitted from csv and json
	Header []string
	Rows   [][]string
	// Units names the quantity (a key of kinds: "seconds", "bytes", ...)
	// of the columns, by header, whose cells carry their own unit and
	// whose header declaredUnits cannot name (a variant's label).
	Units map[string]string
}

// checkFormat returns a usage error for an unknown format.
func checkFormat(f string) error {
	for _, v := range formats {
		if f == v {
			return nil
		}
	}
	return usagef("unknown format %q (valid: %s)", f, strings.Join(formats, ", "))
}

// write prints t to w in format f; in csv and json as the only table of
// its command.
func (t *table) write(w io.Writer, f string) error {
	switch f {
	case "csv", "json":
		return t.writeMachine(w, f, "")
	case "md":
		if t.Title != "" {
			fmt.Fprintf(w, "### %s\n\n", t.Title)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(t.Header, " | "))
		seps := make([]string, len(t.Header))
		for i := range seps {
			seps[i] = "---"
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(seps, " | "))
		for _, r := range t.Rows {
			cells := make([]string, len(r))
			for i, c := range r {
				cells[i] = strings.ReplaceAll(c, "|", `\|`)
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
		}
		return nil
	default:
		if t.Title != "" {
			fmt.Fprintf(w, "%s\n\n", t.Title)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(t.Header, "\t"))
		for _, r := range t.Rows {
			fmt.Fprintln(tw, strings.Join(r, "\t"))
		}
		return tw.Flush()
	}
}

// fields returns the keys of t's columns in the machine formats and, for
// each, the column it reads and how. scope is t's key in its command's
// JSON object. Two columns with one key (two variants whose labels
// differ only in punctuation) are an error.
func (t *table) fields(scope string) ([]field, []int, error) {
	var fs []field
	var cols []int
	seen := map[string]string{}
	for j, h := range t.Header {
		for _, f := range columnFields(scope, h, t.Units) {
			if prev, dup := seen[f.key]; dup {
				return nil, nil, fmt.Errorf("table %q: columns %q and %q both have the key %q in csv and json: rename one", scope, prev, h, f.key)
			}
			seen[f.key] = h
			fs = append(fs, f)
			cols = append(cols, j)
		}
	}
	return fs, cols, nil
}

// values returns row r's values in the order of fs.
func values(fs []field, cols []int, r []string) []any {
	vs := make([]any, len(fs))
	for i, f := range fs {
		if cols[i] < len(r) {
			vs[i] = f.cell(r[cols[i]])
		}
	}
	return vs
}

// writeMachine prints t in csv (a header line of keys, then a line a row,
// an empty field for null) or json (an array of objects, keys in the
// columns' order).
func (t *table) writeMachine(w io.Writer, f, scope string) error {
	fs, cols, err := t.fields(scope)
	if err != nil {
		return err
	}
	if f == "csv" {
		cw := csv.NewWriter(w)
		keys := make([]string, len(fs))
		for i, fl := range fs {
			keys[i] = fl.key
		}
		cw.Write(keys)
		for _, r := range t.Rows {
			vs := values(fs, cols, r)
			rec := make([]string, len(vs))
			for i, v := range vs {
				switch v := v.(type) {
				case jsonNum:
					rec[i] = string(v)
				case string:
					rec[i] = v
				}
			}
			cw.Write(rec)
		}
		cw.Flush()
		return cw.Error()
	}
	var b bytes.Buffer
	b.WriteString("[")
	for i, r := range t.Rows {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  {")
		for k, v := range values(fs, cols, r) {
			if k > 0 {
				b.WriteString(",")
			}
			key, _ := json.Marshal(fs[k].key)
			fmt.Fprintf(&b, "\n    %s: %s", key, jsonValue(v))
		}
		b.WriteString("\n  }")
	}
	if len(t.Rows) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("]\n")
	_, err = w.Write(b.Bytes())
	return err
}

// jsonValue is v as JSON text.
func jsonValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case jsonNum:
		return string(v)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<" and ">" as they are: "> 480"
	enc.Encode(v)            // a string does not fail
	return strings.TrimSuffix(b.String(), "\n")
}

// namedTable is a table with the key it has in JSON output.
type namedTable struct {
	key string
	t   *table
}

// tableChoice is the writer a command with a --table flag writes to: it
// carries the command's context, from which writeTables reads the flag
// once the command's flags are all parsed.
type tableChoice struct {
	io.Writer
	ctx *cli.Context
}

// tableFormat returns a usage error for --table given with a format
// that prints every table (text, md).
func tableFormat(ctx *cli.Context) error {
	if !hasFlag(ctx.Command, "table") || ctx.String("table") == "" {
		return nil
	}
	if f := ctx.String("format"); f != "csv" && f != "json" {
		return usagef("%s: --table applies to --format csv or json; --format %s prints every table", commandPath(ctx), f)
	}
	return nil
}

// choose returns the tables of ts that format f prints to w: every table
// in json, unless --table names one; in csv the one --table names, by
// default the first; every table in text and md.
func choose(w io.Writer, f string, ts []namedTable) ([]namedTable, error) {
	if f != "csv" && f != "json" {
		return ts, nil
	}
	name := ""
	if tc, ok := w.(*tableChoice); ok {
		name = tc.ctx.String("table")
	}
	if name == "" {
		if f == "csv" && len(ts) > 0 {
			return ts[:1], nil
		}
		return ts, nil
	}
	keys := make([]string, len(ts))
	for i, nt := range ts {
		if nt.key == name {
			return ts[i : i+1], nil
		}
		keys[i] = nt.key
	}
	return nil, usagef("--table %q: no such table in this output (valid: %s)", name, strings.Join(keys, ", "))
}

// writeTables prints the tables in format f: text and md one after the
// other; csv one table, the first or the one --table names; json as one
// object keyed by table, or the array of the table --table names.
func writeTables(w io.Writer, f string, ts []namedTable) error {
	ts, err := choose(w, f, ts)
	if err != nil {
		return err
	}
	if f == "csv" || (f == "json" && len(ts) == 1 && isChosen(w)) {
		return ts[0].t.writeMachine(w, f, ts[0].key)
	}
	if f == "json" {
		var b bytes.Buffer
		b.WriteString("{")
		for i, nt := range ts {
			var tb bytes.Buffer
			if err := nt.t.writeMachine(&tb, "json", nt.key); err != nil {
				return err
			}
			if i > 0 {
				b.WriteString(",")
			}
			k, _ := json.Marshal(nt.key)
			fmt.Fprintf(&b, "\n  %s: %s", k, bytes.ReplaceAll(bytes.TrimSpace(tb.Bytes()), []byte("\n"), []byte("\n  ")))
		}
		b.WriteString("\n}\n")
		_, err := w.Write(b.Bytes())
		return err
	}
	for i, nt := range ts {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := nt.t.write(w, f); err != nil {
			return err
		}
	}
	return nil
}

// isChosen reports whether w carries a --table choice.
func isChosen(w io.Writer) bool {
	tc, ok := w.(*tableChoice)
	return ok && tc.ctx.String("table") != ""
}

// wholeCell formats a throughput or a time in seconds for a table cell: a
// whole number from 10 up, as the tables always had it, and three
// significant digits below, where a whole number would round a slow
// configuration (0.001 samples/s) or a short run (0.43 s) to 0.
func wholeCell(v float64) string {
	if math.Abs(v) >= 9.5 || v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// writeReport writes tables and then the summary lines: in json and csv
// as one more table, "summary", a line a row; in text and md after the
// tables and a blank line, a line each (a bullet in md), notes first,
// lines that the machine formats leave out.
func writeReport(w io.Writer, format string, tables []namedTable, notes, lines []string) error {
	if format == "json" || format == "csv" {
		s := &table{Header: []string{"summary"}}
		for _, l := range lines {
			s.Rows = append(s.Rows, []string{l})
		}
		return writeTables(w, format, append(tables, namedTable{"summary", s}))
	}
	if err := writeTables(w, format, tables); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, l := range append(notes, lines...) {
		fmt.Fprintf(w, "%s%s\n", mdBullet(format), l)
	}
	return nil
}
