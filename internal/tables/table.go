package tables

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
)

// Formats are the output formats a table prints in.
var Formats = []string{"text", "csv", "json", "md"}

// Table is rows of cells under a header, printed in one of Formats.
type Table struct {
	Title  string // printed above text and md tables; omitted from csv and json
	Header []string
	Rows   [][]string
	// Units names the quantity (a key of kinds: "seconds", "bytes", ...)
	// of the columns, by header, whose cells carry their own unit and
	// whose header declaredUnits cannot name (a variant's label).
	Units map[string]string
}

// CheckFormat returns an error for a format not in Formats.
func CheckFormat(f string) error {
	for _, v := range Formats {
		if f == v {
			return nil
		}
	}
	return fmt.Errorf("unknown format %q (valid: %s)", f, strings.Join(Formats, ", "))
}

// Write prints t to w in format f; in csv and json as the only table of
// its command.
func (t *Table) Write(w io.Writer, f string) error {
	switch f {
	case "csv", "json":
		return t.writeMachine(w, f, "")
	case "md":
		t.writeMD(w)
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

// writeMD prints t as a Markdown table, "|" in cells escaped.
func (t *Table) writeMD(w io.Writer) {
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
}

// fields returns the keys of t's columns in the machine formats and, for
// each, the column it reads and how. scope is t's key in its command's
// JSON object. Two columns with one key (two variants whose labels
// differ only in punctuation) are an error.
func (t *Table) fields(scope string) ([]field, []int, error) {
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
func (t *Table) writeMachine(w io.Writer, f, scope string) error {
	fs, cols, err := t.fields(scope)
	if err != nil {
		return err
	}
	if f == "csv" {
		return t.writeCSV(w, fs, cols)
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

// writeCSV prints t's fields fs, read from the columns cols, in csv.
func (t *Table) writeCSV(w io.Writer, fs []field, cols []int) error {
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

// Named is a table with the key it has in JSON output.
type Named struct {
	Key string
	T   *Table
}

// Chooser is a writer that carries the choice of one table among those
// Write prints (a command's --table flag): Chosen returns its key, "" for
// the default. Write asks when it prints, so a choice made after the
// writer is (flags parsed late) counts.
type Chooser interface {
	io.Writer
	Chosen() string
}

// UnknownTableError is the error of Write for a Chooser that names none of
// its tables.
type UnknownTableError struct {
	Name  string   // the table chosen
	Valid []string // the keys of the tables there are
}

func (e *UnknownTableError) Error() string {
	return fmt.Sprintf("no such table %q (valid: %s)", e.Name, strings.Join(e.Valid, ", "))
}

// choose returns the tables of ts that format f prints to w: every table
// in json, unless w is a Chooser of one; in csv the one chosen, by
// default the first; every table in text and md.
func choose(w io.Writer, f string, ts []Named) ([]Named, error) {
	if f != "csv" && f != "json" {
		return ts, nil
	}
	name := ""
	if c, ok := w.(Chooser); ok {
		name = c.Chosen()
	}
	if name == "" {
		if f == "csv" && len(ts) > 0 {
			return ts[:1], nil
		}
		return ts, nil
	}
	keys := make([]string, len(ts))
	for i, nt := range ts {
		if nt.Key == name {
			return ts[i : i+1], nil
		}
		keys[i] = nt.Key
	}
	return nil, &UnknownTableError{Name: name, Valid: keys}
}

// Write prints the tables in format f: text and md one after the other;
// csv one table, the first or the one w chooses (a Chooser); json as one
// object keyed by table, or the array of the table w chooses.
func Write(w io.Writer, f string, ts []Named) error {
	ts, err := choose(w, f, ts)
	if err != nil {
		return err
	}
	if f == "csv" || (f == "json" && len(ts) == 1 && isChosen(w)) {
		return ts[0].T.writeMachine(w, f, ts[0].Key)
	}
	if f == "json" {
		return writeJSON(w, ts)
	}
	for i, nt := range ts {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := nt.T.Write(w, f); err != nil {
			return err
		}
	}
	return nil
}

// writeJSON prints ts as one JSON object keyed by table.
func writeJSON(w io.Writer, ts []Named) error {
	var b bytes.Buffer
	b.WriteString("{")
	for i, nt := range ts {
		var tb bytes.Buffer
		if err := nt.T.writeMachine(&tb, "json", nt.Key); err != nil {
			return err
		}
		if i > 0 {
			b.WriteString(",")
		}
		k, _ := json.Marshal(nt.Key)
		fmt.Fprintf(&b, "\n  %s: %s", k, bytes.ReplaceAll(bytes.TrimSpace(tb.Bytes()), []byte("\n"), []byte("\n  ")))
	}
	b.WriteString("\n}\n")
	_, err := w.Write(b.Bytes())
	return err
}

// isChosen reports whether w carries the choice of a table.
func isChosen(w io.Writer) bool {
	c, ok := w.(Chooser)
	return ok && c.Chosen() != ""
}

// WholeCell formats a throughput or a time in seconds for a table cell: a
// whole number from 10 up, as the tables always had it, and three
// significant digits below, where a whole number would round a slow
// configuration (0.001 samples/s) or a short run (0.43 s) to 0.
func WholeCell(v float64) string {
	if math.Abs(v) >= 9.5 || v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// WriteReport writes tables and then the summary lines: in json and csv
// as one more table, "summary", a line a row; in text and md after the
// tables and a blank line, a line each (a bullet in md), notes first,
// lines that the machine formats leave out.
func WriteReport(w io.Writer, format string, ts []Named, notes, lines []string) error {
	if format == "json" || format == "csv" {
		s := &Table{Header: []string{"summary"}}
		for _, l := range lines {
			s.Rows = append(s.Rows, []string{l})
		}
		return Write(w, format, append(ts, Named{Key: "summary", T: s}))
	}
	if err := Write(w, format, ts); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, l := range append(notes, lines...) {
		fmt.Fprintf(w, "%s%s\n", Bullet(format), l)
	}
	return nil
}

// Bullet is what starts a line of a list in format: "- " in md, else "".
func Bullet(format string) string {
	if format == "md" {
		return "- "
	}
	return ""
}
