package plots

import (
	"fmt"
	"os"
	"strings"
	"unicode"
)

// Progress is told what is being drawn and counts what is done: Item names
// the chart in hand, Add counts those written. *progress.Bar satisfies it;
// a nil Progress counts nothing.
type Progress interface {
	Item(s string)
	Add(n int)
}

// WriteCharts writes each chart as dir/BASE.png and dir/BASE.svg,
// creating dir, and returns the paths written, also those written before
// an error. BASE is the chart's Kind, followed by a slug of its subject
// when several charts have that kind, and by a number when names still
// clash. p, which may be nil, counts one per chart.
func WriteCharts(dir string, charts []*Chart, p Progress) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	perKind := map[string]int{}
	for _, ch := range charts {
		perKind[ch.Kind]++
	}
	used := map[string]int{}
	var paths []string
	for _, ch := range charts {
		base := ch.Kind
		if perKind[ch.Kind] > 1 {
			if s := Slug(subjectOf(ch)); s != "" {
				base += "-" + s
			}
		}
		if used[base]++; used[base] > 1 {
			base = fmt.Sprintf("%s-%d", base, used[base])
		}
		if p != nil {
			p.Item(base)
		}
		ps, err := WriteAll(dir, base, ch.Plot)
		paths = append(paths, ps...)
		if err != nil {
			return paths, err
		}
		if p != nil {
			p.Add(1)
		}
	}
	return paths, nil
}

// subjectOf is what follows ": " in a chart's title.
func subjectOf(ch *Chart) string {
	_, s, _ := strings.Cut(ch.Plot.Title.Text, ": ")
	return s
}

// Slug turns s into a file-name part: lower-case letters, digits, '.'
// and '-'.
func Slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.'):
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-.")
}
