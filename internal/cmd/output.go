package cmd

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
)

// Output formats.
var formats = []string{"text", "csv", "json", "md"}

// formatFlag is the --format flag every command that prints tables has.
func formatFlag() cli.Flag {
	return &cli.StringFlag{Name: "format", Value: "text", Usage: "output `FORMAT`: text, csv, json or md"}
}

// table is rows of cells under a header, printed in one of formats.
type table struct {
	Title  string // printed above text and md tables; omitted from csv and json
	Header []string
	Rows   [][]string
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

// write prints t to w in format f.
func (t *table) write(w io.Writer, f string) error {
	switch f {
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write(t.Header)
		cw.WriteAll(t.Rows)
		return cw.Error()
	case "json":
		out := make([]map[string]any, len(t.Rows))
		for i, r := range t.Rows {
			m := make(map[string]any, len(t.Header))
			for j, h := range t.Header {
				if j < len(r) {
					m[h] = jsonCell(r[j])
				}
			}
			out[i] = m
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
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

// jsonNumber matches the cells written as JSON numbers: JSON's own number
// syntax, so that "1,234", "0x10", "+1", "NaN" and "16–64" stay strings.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// jsonCell returns a table cell as JSON output holds it: a number when the
// cell is one, else the text.
func jsonCell(c string) any {
	if jsonNumber.MatchString(c) {
		return json.Number(c)
	}
	return c
}

// namedTable is a table with the key it has in JSON output.
type namedTable struct {
	key string
	t   *table
}

// writeTables prints the tables in format f: text and md one after the
// other, csv separated by blank lines, json as one object keyed by table.
func writeTables(w io.Writer, f string, ts []namedTable) error {
	if f == "json" {
		var b bytes.Buffer
		b.WriteString("{")
		for i, nt := range ts {
			var tb bytes.Buffer
			if err := nt.t.write(&tb, "json"); err != nil {
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
